"""DP synthetic-data generators, called as their users call them, INSIDE the generator's own environment: never imported by dpaudit.

SmartNoise Synth pins its own OpenDP and brings torch, so it lives in an
environment of its own (`dpaudit env create smartnoise-synth-1.0.8`), and
so does DataSynthesizer (`datasynthesizer-0.1.13`, `datasynthesizer-0.1.4`);
dpaudit's adapters (`dpaudit.mechanisms.adapters.synth`) reach this module
through dpaudit's external worker (`external_python(...,
"synth_side:serve", path=[this folder])`). It imports the standard library,
numpy, pandas and the generator's library only.

Each request's data is a dict of columns: `spec` (one JSON string, fixed by
the adapter: the generator, its parameters, the declared domain (column
names and each column's number of categories), the rows to sample, the
release, the target) and `rows` (the dataset: one integer code per column
and record). `serve(data, size, seed)` fits a fresh generator `size` times
and returns one release per fit:

- release "table": `Synthesizer.create(NAME, epsilon=..., delta=...)`, then
  `fit(frame, transformer=T)` with T a `TableTransformer` of one
  `LabelTransformer` per column fitted on the declared domain (every
  category, never the data), or, with domain "data", `fit(frame,
  categorical_columns=...)` (SmartNoise infers the categories from the
  data, its default); then `sample(rows)` (rows None: `sample()`, which
  SmartNoise sizes as the input). Outputs: (size, rows, columns) codes.
- release "measurements" (MST, AIM: white-box): every noisy marginal the
  generator measured, read as it measured it (MST's `measure`, on the
  original and on the compressed domain, the fit stopped after its last
  measurement, since MST's final estimation is post-processing of them;
  AIM's `LinearMeasurement`s), and the exponential-mechanism draws (MST's
  tree, AIM's choice of the marginal to measure next). One number per
  fit: the log-likelihood ratio, target against base, of what was drawn:
  Σ_m ((y_m − x0_m)·t_m − ‖t_m‖²/2)/σ_m² over the measurements (x0 the
  base's marginal, `spec["base"]`, t the target's cell), plus, for MST,
  each draw's c·s_k − log mean exp(c·s) (its probabilities ∝ exp(c ·
  score), s how much the target moves each candidate's score, from the
  base alone: `_selection_signs`), and for AIM each draw's log p₁ − log p₀
  with the errors of both datasets against the model AIM drew with
  (`_chosen_llr`). It reads the draws and the spec, never which dataset
  was fitted. MST on a dataset whose one-way counts its compression
  keeps (the selection pair) is served in batches by `mst_white_box`
  (which see): MST's own draws, without the 1,000-iteration estimate
  compiled afresh per fit, milliseconds a run instead of a second, and
  each draw scored exactly (each dataset with its own total).

Library "datasynthesizer" (release "table"): PrivBayes as its README shows
(`_privbayes`), each fit seeded from the batch's seed (SeedSequence), or
with DataSynthesizer's default seed 0 when the spec says so.

Library "dpmm" (release "table"): its MST or PrivBayes pipeline as its
README shows (`_dpmm`): `MSTPipeline(epsilon=..., delta=...)`, `fit(df,
domain)` with every column categorical and its categories declared in
the domain, then `generate(n_records=rows)`; each fit and each table
seeded from the batch's seed (SeedSequence).

Randomness: SmartNoise draws its noise through OpenDP's own generator (no
public seed); MST's selection draws from numpy's global generator, seeded
with the batch's seed. Every draw is fresh, so an audit is sound; it does
not repeat bit for bit.
"""

import os
import sys

# This file is loaded with its folder (dpaudit's mechanisms/scripts/) at the front of sys.path; take it off
# again before anything else is imported here, so no script of that folder shadows a module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import importlib.util  # noqa: E402
import json  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

__all__ = ["describe", "serve"]

def _sibling(name):
    """Return the module `name` of this folder, loaded by path (the folder is no longer on sys.path)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(_HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BATCH = _sibling("mst_white_box")
RELEASES = ("table", "measurements")
WHITE_BOX = ("mst", "aim")


def _spec(data):
    """Return the request's spec (a dict) from its `spec` column of one JSON string."""
    value = np.asarray(data["spec"]).ravel()
    if value.size != 1:
        raise ValueError("the spec must be one JSON string; got %d values" % value.size)
    return json.loads(str(value[0]))


def _frame(rows, columns):
    import pandas as pd

    return pd.DataFrame(np.asarray(rows, dtype=np.int64).reshape(-1, len(columns)), columns=list(columns))


def _domain_frame(columns, categories):
    """Return a frame holding every category of every column (the declared domain), to fit the transformer on."""
    longest = max(categories)
    return _frame([[min(i, k - 1) for k in categories] for i in range(longest)], columns)


def _transformer(spec):
    """Return SmartNoise's TableTransformer fitted on the declared domain (one LabelTransformer per column)."""
    from snsynth.transform import LabelTransformer, TableTransformer

    transformer = TableTransformer([LabelTransformer(nullable=False) for _ in spec["columns"]])
    transformer.fit(_domain_frame(spec["columns"], spec["categories"]))
    return transformer


def _fit(spec, frame):
    """Return a SmartNoise synthesizer fitted on `frame` as the spec says (declared domain, or the data's)."""
    from snsynth import Synthesizer

    synth = Synthesizer.create(spec["generator"], **spec["params"])
    if spec.get("domain", "declared") == "data":
        synth.fit(frame, categorical_columns=list(spec["columns"]))
    else:
        synth.fit(frame, transformer=_transformer(spec))
    return synth


def _table(spec, frame):
    """Return one synthetic table (rows, columns) of integer codes from a fresh fit on `frame`."""
    synth = _fit(spec, frame)
    out = synth.sample(spec["rows"]) if spec.get("rows") else synth.sample()
    if hasattr(out, "columns"):
        out = out[list(spec["columns"])].to_numpy()
    return np.asarray(out, dtype=np.int64).reshape(-1, len(spec["columns"]))


MST_MEASURES = 2  # MST measures twice: the one-way marginals, then the selected two-way ones


class _Measured(Exception):
    """Raised inside an MST fit once its last measurement is made: the white-box release is complete."""


class _Recorder:
    """What a white-box fit saw: noisy marginals (y, clique, σ, the Dataset whose domain they are on) and selections.

    `selected` holds MST's exponential-mechanism draws in order: (the index drawn, the scale c of its
    probabilities ∝ exp(c · score)); `choice` the (ε, sensitivity, monotonic) of the last draw; `sigmas`
    the σ of each `measure` call, in order.
    """

    def __init__(self):
        self.measured = []
        self.selected = []
        self.choice = None
        self.sigmas = []
        self.choices = []
        self.supports = None
        self.calls = 0


def _speed_up():
    """Make repeated fits cheaper without changing one draw: SmartNoise's `cdp_rho(ε, δ)` is computed once.

    It is a deterministic binary search (0.4 s a fit), memoised in MST's module. (mbi compiles its
    mirror-descent step afresh in every fit, its measurements baked in, so a compilation cache never hits.)
    """
    import functools

    import snsynth.mst.mst as mst

    if not hasattr(mst.cdp_rho, "cache_info"):
        mst.cdp_rho = functools.lru_cache(maxsize=None)(mst.cdp_rho)


def _record_mst(synth, recorder):
    """Wrap this MST's `measure`, `exponential_mechanism` and `transform_data` so what they drew is kept."""
    measure, transform, choose = synth.measure, synth.transform_data, synth.exponential_mechanism

    def recording_measure(data, cliques, sigma, weights=None):
        out = measure(data, cliques, sigma, weights)
        recorder.measured += [(np.asarray(m.noisy_measurement, float), tuple(m.clique), float(m.stddev), data) for m in out]
        recorder.sigmas.append(float(out[0].stddev))
        recorder.calls += 1
        if recorder.calls == MST_MEASURES:
            raise _Measured()  # every measurement is made; the estimation after it reads only them (and the total)
        return out

    def recording_choice(q, eps, sensitivity, prng=np.random, monotonic=False):
        index = choose(q, eps, sensitivity, prng=prng, monotonic=monotonic)
        recorder.selected.append((int(index), (1.0 if monotonic else 0.5) * eps / sensitivity))
        recorder.choice = (float(eps), float(sensitivity), bool(monotonic))
        return index

    def recording_transform(data, supports):
        recorder.supports = supports
        return transform(data, supports)

    synth.measure, synth.transform_data, synth.exponential_mechanism = recording_measure, recording_transform, recording_choice
    synth.original_transform_data = transform


def _record_aim(recorder):
    """Return a stand-in for AIM's LinearMeasurement that keeps each measurement (on the original domain)."""
    import snsynth.aim.aim as aim

    original = aim.LinearMeasurement

    def recording(y, clique, stddev, *args, **kwargs):
        recorder.measured.append((np.asarray(y, float), tuple(clique), float(stddev), None))
        return original(y, clique, stddev, *args, **kwargs)

    return aim, original, recording


def _record_aim_choices(synth, recorder):
    """Wrap this AIM's `_worst_approximated` so each draw keeps what its probabilities were made of.

    `recorder.choices` gains, per draw: the candidates in AIM's order, each one's weight, bias and the
    model's estimate of its marginal (a function of the measurements so far), the index drawn, ε and the
    sensitivity (the largest weight); AIM draws with probabilities ∝ exp(ε/(2·sensitivity) · error).
    """
    choose = synth._worst_approximated

    def recording(candidates, answers, model, eps, sigma):
        chosen = choose(candidates, answers, model, eps, sigma)
        keys = list(candidates)
        made = [(float(candidates[k]), float(np.sqrt(2 / np.pi) * sigma * model.domain.size(k)),
                 np.asarray(model.project(k).datavector(), float)) for k in keys]
        recorder.choices.append((keys, made, keys.index(chosen), float(eps), max(abs(candidates[k]) for k in keys)))
        return chosen

    synth._worst_approximated = recording


def _chosen_llr(synth, spec, recorder):
    """Return the log-likelihood ratio (target against base) of AIM's recorded draws of the marginal to measure next.

    Each candidate's error is weight · (‖x − x̂‖₁ − bias), x the hypothesis' marginal (the base's, or the
    base's plus the target's cell), x̂ and the bias as AIM drew with; a draw of index k contributes
    log p₁(k) − log p₀(k), p ∝ exp(ε/(2Δ) · error). Reads the draws and the spec only.
    """
    from scipy.special import logsumexp

    if not recorder.choices:
        return 0.0
    cell, base = (_as_dataset(synth, spec, rows, None) for rows in ([spec["target"]], spec["base"]))
    marginals, total = {}, 0.0
    for keys, made, index, eps, sensitivity in recorder.choices:
        for key in keys:
            if key not in marginals:  # (the base's marginal, the target's cell), once per candidate
                marginals[key] = tuple(np.asarray(d.project(list(key)).datavector(), float) for d in (base, cell))
        scores = [0.5 * eps / sensitivity * np.array(
            [weight * (np.abs(marginals[key][0] + shift * marginals[key][1] - estimate).sum() - bias)
             for key, (weight, bias, estimate) in zip(keys, made)]) for shift in (0.0, 1.0)]
        total += float((scores[1][index] - logsumexp(scores[1])) - (scores[0][index] - logsumexp(scores[0])))
    return total


def _as_dataset(synth, spec, rows, domain_data):
    """Return `rows` (spec codes) as an mbi Dataset on the domain of `domain_data` (the original, or MST's compressed one)."""
    from mbi import Dataset, Domain

    codes = np.asarray(synth._transformer.transform(_frame(rows, spec["columns"])), dtype=np.int64)
    names = ["col" + str(i) for i in range(codes.shape[1])]
    original = Dataset(_frame(codes, names), Domain(names, synth._transformer.cardinality))
    if domain_data is None or domain_data.domain == original.domain:
        return original
    return synth.original_transform_data(original, synth.recorded_supports)


def _measured_llr(synth, spec, recorder):
    """Return the log-likelihood ratio of the recorded Gaussian measurements: Σ_m (y_m − x0_m)[t]/σ_m² − ‖t‖²/(2σ_m²).

    x0_m is the base dataset's marginal (`spec["base"]`, fixed before the game), t the target's cell
    indicator; under the base each y_m is N(x0_m, σ_m²), with the target N(x0_m + t, σ_m²).
    """
    total, datasets = 0.0, {}
    for y, clique, sigma, data in recorder.measured:
        if id(data) not in datasets:  # one transform per domain (the original, MST's compressed one), not per marginal
            datasets[id(data)] = [_as_dataset(synth, spec, rows, data) for rows in ([spec["target"]], spec["base"])]
        cell, base = (np.asarray(d.project(list(clique)).datavector(), float) for d in datasets[id(data)])
        total += float((y - base) @ cell - 0.5 * cell @ cell) / sigma**2
    return total


def _selection_signs(spec):
    """Return, per pair of columns (i < j), how much the target moves MST's selection score of the pair.

    MST scores a pair by the L1 error ‖x − x̂‖₁ of its two-way marginal against the estimate from the
    one-way measurements; the target adds one to x at its cell t, which moves the error by
    clip(1 + 2(x0[t] − x̂[t]), −1, 1). x̂[t] is taken as n·p_i(t_i)·p_j(t_j), the independent estimate
    of the base's own marginals (fixed before the game; MST's x̂ is that up to its noise).
    """
    import itertools

    base, target = np.asarray(spec["base"], dtype=np.int64), np.asarray(spec["target"], dtype=np.int64)
    hits = base == target[None, :]
    n, signs = max(len(base), 1), {}
    for i, j in itertools.combinations(range(len(target)), 2):
        x0 = float(np.sum(hits[:, i] & hits[:, j]))
        estimate = n * hits[:, i].mean() * hits[:, j].mean() if len(base) else 0.0
        signs[i, j] = float(np.clip(1.0 + 2.0 * (x0 - estimate), -1.0, 1.0))
    return signs


def _selected_llr(spec, recorder):
    """Return the log-likelihood ratio of MST's recorded selections (target against base), step by step.

    MST draws a spanning tree one edge at a time among the pairs not yet connected (in the order of
    itertools.combinations), with probabilities ∝ exp(c · score). The scores of the two hypotheses
    differ by `_selection_signs` and are otherwise taken as equal, so a draw of index k contributes
    c·s_k − log mean exp(c·s) over that step's candidates. Reads only the draws and the spec.
    """
    from scipy.special import logsumexp

    signs, parent, total = _selection_signs(spec), list(range(len(spec["target"]))), 0.0

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for index, scale in recorder.selected:
        candidates = [e for e in signs if root(e[0]) != root(e[1])]
        s = scale * np.array([signs[e] for e in candidates])
        total += float(s[index] - logsumexp(s) + np.log(len(s)))
        i, j = candidates[index]
        parent[root(j)] = root(i)
    return total


def _mst_recorded(spec, frame):
    """Return an MST synthesizer fitted on `frame` up to its last measurement, and the `_Recorder` of what it drew."""
    from snsynth import Synthesizer

    recorder = _Recorder()
    synth = Synthesizer.create("mst", **spec["params"])
    _record_mst(synth, recorder)
    try:
        synth.fit(frame, transformer=_transformer(spec))
    except _Measured:
        pass
    synth.recorded_supports = recorder.supports
    return synth, recorder


def _mst_batch(spec, frame, size):
    """Return `size` white-box scores of MST from `mst_white_box.batch_scores`, or None where its batch path does not apply.

    One real fit on `frame` gives the σ and ε MST measures with (`Calibration`); the batch path serves
    datasets whose base keeps every category through MST's compression (`batch_applies`).
    """
    import snsynth.mst.mst as module

    synth, recorder = _mst_recorded(spec, frame)
    calibration = BATCH.Calibration(recorder.sigmas[0], recorder.sigmas[-1], *recorder.choice)
    transformer = synth._transformer
    cards = list(transformer.cardinality)
    base, target = (np.asarray(transformer.transform(_frame(r, spec["columns"])), dtype=np.int64)
                    for r in (spec["base"], [spec["target"]]))
    if not BATCH.batch_applies(base, cards, calibration):
        return None
    codes = np.asarray(transformer.transform(frame), dtype=np.int64)
    return BATCH.batch_scores(codes, base, target[0], cards, calibration, (synth, module), size)


def _measurements(spec, frame):
    """Return the white-box score of one fresh fit on `frame` (MST or AIM): the log-likelihood ratio of what it drew.

    MST: its measurements and its selections (`_measured_llr` + `_selected_llr`); AIM: its measurements.
    """
    from snsynth import Synthesizer

    if spec["generator"] == "mst":
        synth, recorder = _mst_recorded(spec, frame)
    else:
        recorder = _Recorder()
        synth = Synthesizer.create(spec["generator"], **spec["params"])
        _record_aim_choices(synth, recorder)
        aim, original, recording = _record_aim(recorder)
        aim.LinearMeasurement = recording
        try:
            synth.fit(frame, transformer=_transformer(spec))
        finally:
            aim.LinearMeasurement = original
    return _measured_llr(synth, spec, recorder) + _selected_llr(spec, recorder) + _chosen_llr(synth, spec, recorder)


def _privbayes(spec, frame, seed):
    """Return one synthetic table of DataSynthesizer's PrivBayes (correlated attribute mode), fitted with `seed`.

    As its README shows: `DataDescriber.describe_dataset_in_correlated_attribute_mode(CSV, k, epsilon, ...)`,
    every column categorical, the declared categories in `categorical_attribute_domain_file`, then
    `DataGenerator.generate_dataset_in_correlated_attribute_mode(rows, DESCRIPTION)`. Files live in a
    temporary folder. `seed` is the run's own, unless the spec asks for DataSynthesizer's default (0).
    """
    import contextlib
    import tempfile

    from DataSynthesizer.DataDescriber import DataDescriber
    from DataSynthesizer.DataGenerator import DataGenerator

    columns = list(spec["columns"])
    seed = 0 if spec.get("seed") == "default" else seed
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(sys.stderr):
        given, domain, description = (os.path.join(folder, f) for f in ("data.csv", "domain.json", "description.json"))
        frame.to_csv(given, index=False)
        with open(domain, "w") as handle:
            json.dump({c: list(range(k)) for c, k in zip(columns, spec["categories"])}, handle)
        describer = DataDescriber(category_threshold=max(spec["categories"]) + 1)
        describer.describe_dataset_in_correlated_attribute_mode(
            dataset_file=given, k=spec["params"]["k"], epsilon=spec["params"]["epsilon"],
            attribute_to_is_categorical={c: True for c in columns}, attribute_to_is_candidate_key={c: False for c in columns},
            categorical_attribute_domain_file=domain, seed=seed)
        describer.save_dataset_description_to_file(description)
        generator = DataGenerator()
        generator.generate_dataset_in_correlated_attribute_mode(spec["rows"], description, seed=seed)
        return generator.synthetic_dataset[columns].to_numpy(dtype=np.int64)


def _dpmm(spec, frame, seeds):
    """Return one synthetic table of dpmm's `spec["generator"]` pipeline (MST or PrivBayes), as codes (rows, columns).

    As its README shows: the pipeline made with the spec's epsilon, delta, `n_jobs`, `compress` and
    `gen_kwargs` (`n_iters`, the iterations of its estimation), `fit(df, domain)` with each column a
    pandas category whose categories the domain declares (`{column: {"categories": [0 .. k-1]}}`:
    dpmm's `TableBinner` then reads none from the data), then `generate(n_records=rows)`. `seeds` (two integers) seed the
    fit's and the generation's `random_state`; dpmm's Gaussian noise comes from OpenDP (no seed).
    """
    import contextlib

    import pandas as pd
    from dpmm.pipelines import MSTPipeline, PrivBayesPipeline

    pipeline = {"mst": MSTPipeline, "privbayes": PrivBayesPipeline}[spec["generator"]]
    columns, params = list(spec["columns"]), spec["params"]
    typed = frame.astype({c: pd.CategoricalDtype(list(range(k))) for c, k in zip(columns, spec["categories"])})
    domain = {c: {"categories": list(range(k))} for c, k in zip(columns, spec["categories"])}
    with contextlib.redirect_stdout(sys.stderr):
        model = pipeline(epsilon=params["epsilon"], delta=params["delta"], n_jobs=params["n_jobs"],
                         compress=params["compress"], gen_kwargs={"n_iters": params["n_iters"]})
        model.fit(typed, domain, random_state=int(seeds[0]))
        table = model.generate(n_records=spec["rows"], random_state=int(seeds[1]))
    return table[columns].astype(np.int64).to_numpy()


def serve(data, size, seed):
    """Return `size` releases of fresh fits on the request's rows: tables (size, rows, columns), or white-box scores (size,)."""
    spec = _spec(data)
    release = spec.get("release", "table")
    if release not in RELEASES or (release == "measurements" and spec["generator"] not in WHITE_BOX):
        raise ValueError("release %r is not served for %r" % (release, spec["generator"]))
    frame = _frame(np.asarray(data["rows"]), spec["columns"])
    np.random.seed(seed % 2**32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if release == "measurements":
            _speed_up()
            batch = _mst_batch(spec, frame, size) if spec["generator"] == "mst" else None
            if batch is not None:
                return batch
            return np.array([_measurements(spec, frame) for _ in range(size)], dtype=np.float64)
        if spec.get("library") == "dpmm":
            seeds = np.random.SeedSequence(seed).generate_state(2 * size).reshape(size, 2)
            return np.stack([_dpmm(spec, frame, pair) for pair in seeds])
        if spec.get("library") == "datasynthesizer":
            seeds = np.random.SeedSequence(seed).generate_state(size)
            return np.stack([_privbayes(spec, frame, int(s)) for s in seeds])
        return np.stack([_table(spec, frame) for _ in range(size)])


def describe():
    """Return the versions of the generators' libraries, numpy and pandas in this environment (a dict)."""
    import importlib.metadata as metadata

    found = {}
    for name in ("smartnoise-synth", "opendp", "DataSynthesizer", "dpmm", "numpy", "pandas"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


if __name__ == "__main__":
    sys.stdout.write(json.dumps(describe()) + "\n")
