"""Adapters that audit DP synthetic-data generators (SmartNoise Synth 1.0.8, DataSynthesizer, dpmm) on the worst-case table.

SmartNoise Synth pins its own OpenDP and brings torch, so it never shares
dpaudit's environment: it runs in the environment "smartnoise-synth-1.0.8"
declared here (`dpaudit env create smartnoise-synth-1.0.8`; built on the
first audit when absent, about 6 GB with torch's CUDA wheels), reached
through dpaudit's external-process protocol (`external_python`), where
`mechanisms/scripts/synth_side.py` (which see) fits the generator as its
users do. Registration builds nothing; building a mechanism builds its
environment when it is missing.

- **Generators**: `synth_mst`, `synth_aim` ((ε, δ): zCDP Gaussian
  measurements), `synth_mwem` (ε), each `Synthesizer.create(NAME, epsilon,
  delta)` fitted with a `TableTransformer` fitted on the declared domain
  (never on the data), sampling `sample_rows` rows (a public number).
- **Claim**: the generator's own parameters, (ε, δ) for adding or removing
  one row (MWEM: (ε, 0)).
- **Dataset and pair**: the declared domain (`columns` columns of
  `categories` categories each) and the worst-case pair of Annamalai,
  Ganev and De Cristofaro (USENIX Security 2024:
  `dpaudit.mechanisms.worst_case_tables`): `rows` records at category 0,
  and the same with the target (the last category of every column) added.
- **Black-box** (threat model "black-box: the synthetic table"): each
  released table becomes the features of the target
  (`dpaudit.mechanisms.table_features.tabulate`).
- **White-box** (`synth_mst_white_box`, `synth_aim_white_box`; threat
  model "white-box: the noisy measurements"): the release is the
  log-likelihood ratio, target against base, of what the generator drew:
  its noisy marginals (Gaussian, so the ratio is linear in them) and its
  exponential-mechanism choices: MST's two-way marginals, AIM's next
  marginal (`synth_side._measured_llr`, `_selected_llr`, `_chosen_llr`).
  MST's measurements carry 2ρ/3 of its ρ (μ = √(4ρ/3), 0.371 at (1, 10⁻²)
  against the 0.455 of the claim); its selection the other ρ/3, which only
  a dataset on which the target moves the choice exposes:
  `synth_mst_white_box` plays `selection_pair` (4 binary columns, 1,000
  base records) by default, in batches (`mst_white_box.py` beside
  `synth_side.py`: MST's own draws without the estimation that follows
  them, about ten milliseconds a run, mostly OpenDP's Gaussian sampler).
- **Variants as users run them** (finding candidates): `synth_mst_data_domain`
  lets SmartNoise infer the categories from the data (its default when no
  transformer is given); `synth_mst_input_size` samples `sample()` rows,
  SmartNoise's default, which is the input's number of rows.

DataSynthesizer's PrivBayes (`synth_privbayes`, at 0.1.13 and at 0.1.4 as
`synth_privbayes_0_1_4`, each in an environment of its own) is called as
its README shows (`synth_side._privbayes`), ε-DP for replacing one row
(its sensitivities use the number of rows), on the replace-one worst-case
pair; `synth_privbayes_default_seed` keeps its default `seed=0`.

dpmm 0.1.9's MST and PrivBayes pipelines (`dpmm_mst`, `dpmm_privbayes`, in
the environment "dpmm-0.1.9") are called as its README shows
(`synth_side._dpmm`): every column a category whose categories are
declared in the domain passed to `fit`, (ε, δ) for adding or removing one
row, `n_iters` (its estimation's iterations) 100 by default so that a fit
takes seconds, MST without its domain compression (`DPMM_COMPRESS`). Its
`TableBinner` drops every column that holds one value in the data, so the
all-zero base of `worst_case_pair` fails to fit; the pair is
`spread_pair` (the base spread over the non-target categories, the target
an outlier in every marginal). Not replayed (`DPMM_UNREPLAYED`).

Randomness: SmartNoise draws its noise through OpenDP (no public seed), so
an audit is sound but does not repeat bit for bit.

Replay (`dpaudit replay synth_privbayes`, `synth_mst`, ...): one fit on D
with every draw recorded, one on D′ with the same draws
(`Fits.replay`, `synth_replay_side.py`): numpy's global functions and
Python's `random` routed to a recording state, and SmartNoise's OpenDP
noise recorded at its two primitives (`snsynth.utils.gaussian_noise`,
`laplace_noise`), its output on D handed back on D′. The white-box
releases declare `not_replayable` (`WHITE_BOX_SCORE`): their table
release's replay holds the same draws.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Mechanism, Relation
from dpaudit.mechanisms.environments import Environment, declare, environment_python
from dpaudit.mechanisms.external.processes import ExternalProcess, SideRequests, external_python, side_process
from dpaudit.mechanisms.registry import register
from dpaudit.mechanisms.table_features import tabulate
from dpaudit.mechanisms.worst_case_tables import TableDomain, selection_pair, spread_pair, worst_case_pair
from dpaudit.validation import check_int, check_real

__all__ = ["DATASYNTHESIZER", "DPMM", "ENVIRONMENT", "Fits", "dpmm_generator", "privbayes", "synth_generator",
           "synth_mst_white_box"]

ENVIRONMENT = declare(Environment(
    name="smartnoise-synth-1.0.8",
    packages=("smartnoise-synth==1.0.8",),
    python="3.11",
    description="SmartNoise Synth 1.0.8 (MST, AIM, MWEM; with its OpenDP, private-pgm and torch): the synth_* adapters",
    check="import snsynth, mbi",
))
DATASYNTHESIZER = {
    "0.1.13": declare(Environment(
        name="datasynthesizer-0.1.13", packages=("DataSynthesizer==0.1.13", "numpy==2.4.6", "pandas==3.1.1"), python="3.11",
        description="DataSynthesizer 0.1.13 (October 2023, the latest): PrivBayes for the synth_privbayes adapters",
        check="import DataSynthesizer.DataDescriber")),
    "0.1.4": declare(Environment(
        name="datasynthesizer-0.1.4", packages=("DataSynthesizer==0.1.4", "numpy==2.4.6", "pandas==3.1.1"), python="3.11",
        description="DataSynthesizer 0.1.4 (the older release synth-audit audits): PrivBayes for synth_privbayes_0_1_4",
        check="import DataSynthesizer.DataDescriber")),
}
DPMM = declare(Environment(
    name="dpmm-0.1.9", packages=("dpmm==0.1.9",), python="3.11",
    description="dpmm 0.1.9 (its MST, AIM and PrivBayes pipelines, with its own pins: numpy 1.26.4, pandas 2.1.0, OpenDP 0.12.1)",
    check="import dpmm.pipelines"))
SIDE = Path(__file__).resolve().parents[1] / "scripts" / "synth_side.py"
BATCH_TIMEOUT = 7200.0  # seconds for one batch: an MST fit takes seconds, AIM's tens of seconds on a busy CPU
BLACK_BOX, WHITE_BOX = "black-box: the synthetic table", "white-box: the noisy measurements"
WHITE_BOX_SCORE = ("its release is a score of the generator's measurements, computed in the side process; replay its table "
                   "release (synth_mst, synth_aim), whose record holds each of those measurements' draws")
"""Why a white-box release is not replayed (read by `dpaudit.attacks.replay` as the sampler's `not_replayable`)."""


def _process(python: str) -> ExternalProcess:
    """Return the one generator process of `python` (`synth_side:serve`), shared by every adapter of this process."""
    return side_process(python, "synth_side:serve", name="synthetic-data generator", folder=str(SIDE.parent),
                        timeout=BATCH_TIMEOUT)


def _replayer(python: str) -> ExternalProcess:
    """Return the process of `python` that replays DataSynthesizer's fits (`synth_replay_side:serve`), apart from the audits'."""
    return side_process(python, "synth_replay_side:serve", name="synthetic-data replay", folder=str(SIDE.parent),
                        timeout=BATCH_TIMEOUT)


class Fits(SideRequests):
    """`sampler(data, size, rng)` of a generator: sends the spec and the dataset, returns `size` releases (tables or scores).

    With a `replayer` (a table release's), `replay` records one fit and
    replays it on a neighbour there; a release without one says why it is
    not replayed (`not_replayable`: `unreplayed`, a white-box score's by default). Picklable (a copy starts its own
    process, as `ExternalProcess` does).
    """

    def __init__(self, process: ExternalProcess, spec: dict[str, Any], replayer: ExternalProcess | None = None,
                 unreplayed: str = WHITE_BOX_SCORE) -> None:
        self.process, self.spec, self.replayer, self.unreplayed = process, spec, replayer, unreplayed

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return `size` releases of fresh fits on `data` (an (n, columns) array of category codes)."""
        request = {"spec": [json.dumps(self.spec, sort_keys=True)], "rows": np.asarray(data, dtype=np.int64)}
        return self.process(request, size, rng)

    @property
    def not_replayable(self) -> str | None:
        """Return why this release is not replayed (a white-box score, or `unreplayed`), or None when it is."""
        return None if self.replayer is not None else self.unreplayed

    def replay(self, d0: Any, d1: Any, rng: np.random.Generator) -> dict[str, Any]:
        """Return the side's record of one fit on d0 with its draws recorded and one on d1 with them replayed.

        The keys of `replay_side.replay` (release0 and release1: the two
        tables; failure, tape, divergences, outside). The seed comes from `rng`.
        """
        if self.replayer is None:
            raise InvalidParameterError(f"{self.spec['generator'].upper()} is not replayed: {self.unreplayed}.")
        request = {"spec": [json.dumps(self.spec, sort_keys=True)], "rows": np.asarray(d0, dtype=np.int64),
                   "rows1": np.asarray(d1, dtype=np.int64)}
        return json.loads(str(self.replayer(request, 1, rng)[0]))


def synth_generator(generator: str, *, epsilon: float, delta: float, domain: TableDomain, rows: int,
                    sample_rows: int | None, white_box: bool = False, data_domain: bool = False,
                    name: str | None = None, dataset: str = "outlier") -> Mechanism:
    """Return SmartNoise Synth's `generator` on a worst-case pair of `domain`, releasing the target's features or white-box score.

    `sample_rows` None samples SmartNoise's default (the input's size);
    `data_domain` lets SmartNoise read the categories from the data;
    `dataset` "outlier" is `worst_case_pair` (the target alone in every
    cell), "selection" `selection_pair` (the target also moves MST's
    choice of two-way marginals).
    """
    label = name or f"synth_{generator}"
    pair = selection_pair(domain, rows) if dataset == "selection" else worst_case_pair(domain, rows)
    params = {"epsilon": epsilon} if generator == "mwem" else {"epsilon": epsilon, "delta": delta}
    spec = {"generator": generator, "params": params, "columns": list(domain.columns),
            "categories": list(domain.categories), "rows": sample_rows, "target": domain.target().tolist(),
            "base": pair[0].tolist(), "release": "measurements" if white_box else "table", "domain": "data" if data_domain else "declared"}
    python = str(environment_python(ENVIRONMENT.name))
    mech = external_python(python, "synth_side:serve", epsilon=epsilon, delta=params.get("delta", 0.0),
                           relation=Relation.ADD_REMOVE, name=label, default_pair=pair, neighbours=domain.neighbours(),
                           timeout=BATCH_TIMEOUT, path=[str(SIDE.parent)], check=False)
    facts = {"columns": domain.width, "categories": domain.categories[0], "rows": rows, "sample_rows": sample_rows,
             "dataset": dataset, "threat_model": WHITE_BOX if white_box else BLACK_BOX, "environment": ENVIRONMENT.name}
    mech = dataclasses.replace(
        mech, sampler=Fits(_process(python), spec, None if white_box else _replayer(python)), params={**params, **facts},
        description=f"SmartNoise Synth 1.0.8 {generator.upper()} on the worst-case table ({WHITE_BOX if white_box else BLACK_BOX})",
    )
    return mech if white_box else tabulate(mech, domain.target(), columns=domain.columns)


def _checked(name: str, epsilon: float, delta: float, columns: int, categories: int, rows: int,
             sample_rows: int | None) -> tuple[float, float, TableDomain, int, int | None]:
    """Return the validated parameters of a registered generator (one sentence on bad input)."""
    e = check_real(epsilon, "epsilon", name, low=0.0, low_open=True)
    d = check_real(delta, "delta", name, low=0.0, high=1.0, high_open=True)
    domain = TableDomain.uniform(check_int(columns, "columns", name), check_int(categories, "categories", name, low=2))
    n = check_int(rows, "rows", name)
    return e, d, domain, n, None if sample_rows is None else check_int(sample_rows, "sample_rows", name)


def _factory(generator: str, *, white_box: bool = False, data_domain: bool = False, input_size: bool = False,
             delta: float = 1e-2, doc: str = "") -> Any:
    """Return the registered factory of one generator variant, its parameters as keywords."""
    name = "synth_" + generator + ("_white_box" if white_box else "") + ("_data_domain" if data_domain else "") + (
        "_input_size" if input_size else "")

    def factory(*, epsilon: float = 1.0, delta: float = delta, columns: int = 3, categories: int = 3, rows: int = 10,
                sample_rows: int = 100) -> Mechanism:
        e, d, domain, n, m = _checked(name, epsilon, delta, columns, categories, rows, sample_rows)
        return synth_generator(generator, epsilon=e, delta=d, domain=domain, rows=n, sample_rows=None if input_size else m,
                               white_box=white_box, data_domain=data_domain, name=name)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"Return SmartNoise Synth's {generator.upper()} at (epsilon, delta) on the worst-case table: {doc}"
    return factory


DATASETS = ("selection", "outlier")


def synth_mst_white_box(*, epsilon: float = 1.0, delta: float = 1e-2, columns: int = 4, categories: int = 2,
                        rows: int = 1000, dataset: str = "selection") -> Mechanism:
    """Return SmartNoise Synth's MST at (epsilon, delta), white-box: the log-likelihood ratio of its measurements and selections.

    `dataset` "selection" (default; `selection_pair`, `rows` base records)
    lets the target move MST's choice of two-way marginals as well as every
    measured cell; "outlier" is `worst_case_pair` (`rows` records at 0),
    on which the choice does not depend on the target.
    """
    name = "synth_mst_white_box"
    if dataset not in DATASETS:
        raise InvalidParameterError(f"The 'dataset' parameter of {name} must be one of {', '.join(DATASETS)}; got {dataset!r} instead.")
    e, d, domain, n, _ = _checked(name, epsilon, delta, columns, categories, rows, None)
    if dataset == "selection":
        n = check_int(n, "rows", name, low=2)
    return synth_generator("mst", epsilon=e, delta=d, domain=domain, rows=n, sample_rows=None, white_box=True,
                           name=name, dataset=dataset)


def privbayes(*, epsilon: float, k: int, domain: TableDomain, rows: int, sample_rows: int, version: str = "0.1.13",
              default_seed: bool = False, name: str | None = None) -> Mechanism:
    """Return DataSynthesizer's PrivBayes (correlated attribute mode, degree `k`) on the replace-one worst-case pair.

    Claim: ε-DP for replacing one row (PrivBayes' sensitivities use the
    number of rows, so the length is public). Every column is declared
    categorical with its categories in `categorical_attribute_domain_file`.
    `default_seed` keeps DataSynthesizer's `seed=0` in every fit, as a user
    who never sets it does.
    """
    label = name or "synth_privbayes"
    environment = DATASYNTHESIZER[version]
    pair = worst_case_pair(domain, rows, relation="replace-one")
    spec = {"library": "datasynthesizer", "generator": "privbayes", "params": {"epsilon": epsilon, "k": k},
            "columns": list(domain.columns), "categories": list(domain.categories), "rows": sample_rows,
            "target": domain.target().tolist(), "release": "table", "seed": "default" if default_seed else "fresh"}
    python = str(environment_python(environment.name))
    mech = external_python(python, "synth_side:serve", epsilon=epsilon, relation=Relation.REPLACE_ONE, name=label,
                           default_pair=pair, neighbours=domain.neighbours("replace-one"), timeout=BATCH_TIMEOUT,
                           path=[str(SIDE.parent)], check=False)
    facts = {"k": k, "columns": domain.width, "categories": domain.categories[0], "rows": rows, "sample_rows": sample_rows,
             "seed": "DataSynthesizer's default, 0" if default_seed else "fresh per fit", "threat_model": BLACK_BOX,
             "environment": environment.name}
    mech = dataclasses.replace(mech, sampler=Fits(_process(python), spec, _replayer(python)), params={"epsilon": epsilon, **facts},
                               description=f"DataSynthesizer {version} PrivBayes on the worst-case table ({BLACK_BOX})")
    return tabulate(mech, domain.target(), columns=domain.columns)


def _privbayes_factory(version: str = "0.1.13", *, default_seed: bool = False, doc: str = "") -> Any:
    """Return the registered factory of one PrivBayes variant."""
    name = "synth_privbayes" + ("_" + version.replace(".", "_") if version != "0.1.13" else "") + (
        "_default_seed" if default_seed else "")

    def factory(*, epsilon: float = 1.0, k: int = 1, columns: int = 3, categories: int = 3, rows: int = 10,
                sample_rows: int = 100) -> Mechanism:
        e, _, domain, n, m = _checked(name, epsilon, 0.0, columns, categories, rows, sample_rows)
        return privbayes(epsilon=e, k=check_int(k, "k", name), domain=domain, rows=check_int(n, "rows", name, low=2),
                         sample_rows=m, version=version, default_seed=default_seed, name=name)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"Return DataSynthesizer {version}'s PrivBayes at epsilon on the worst-case table: {doc}"
    return factory


DPMM_COMPRESS = {"mst": False, "privbayes": True}
"""dpmm's `compress` per pipeline: True is its pipelines' default; MST's fit with it stopped once on the spread pair
("probabilities contain NaN" in its exponential mechanism), so MST runs without, as dpmm's own audit of MST does."""
DPMM_UNREPLAYED = ("dpmm draws its Gaussian noise through OpenDP (dpmm.models.base.utils.gaussian_noise), "
                   "which the synthetic-data replay does not intercept")


def dpmm_generator(generator: str, *, epsilon: float, delta: float, domain: TableDomain, rows: int, sample_rows: int,
                   n_iters: int, name: str | None = None) -> Mechanism:
    """Return dpmm 0.1.9's `generator` pipeline ("mst" or "privbayes") on the spread pair of `domain`, releasing the target's features.

    Claim: (epsilon, delta) for adding or removing one row, dpmm's own
    parameters (its MST and PrivBayes measure with Gaussian noise of unit
    L2 sensitivity, as dpmm's own audit of MST, experimental/audit_dpmm,
    adds one record). The pair is `spread_pair`: dpmm's `TableBinner`
    drops every column holding one value in the data, so the all-zero base
    of `worst_case_pair` cannot be fitted. `n_iters` is the iterations of
    dpmm's estimation (post-processing of its measurements); `compress` is
    `DPMM_COMPRESS[generator]`.
    """
    label = name or f"dpmm_{generator}"
    pair = spread_pair(domain, rows)
    spec = {"library": "dpmm", "generator": generator,
            "params": {"epsilon": epsilon, "delta": delta, "n_iters": n_iters, "n_jobs": 1, "compress": DPMM_COMPRESS[generator]},
            "columns": list(domain.columns), "categories": list(domain.categories), "rows": sample_rows,
            "target": domain.target().tolist(), "release": "table"}
    python = str(environment_python(DPMM.name))
    mech = external_python(python, "synth_side:serve", epsilon=epsilon, delta=delta, relation=Relation.ADD_REMOVE, name=label,
                           default_pair=pair, neighbours=domain.neighbours(), timeout=BATCH_TIMEOUT, path=[str(SIDE.parent)],
                           check=False)
    facts = {"n_iters": n_iters, "compress": DPMM_COMPRESS[generator], "columns": domain.width,
             "categories": domain.categories[0], "rows": rows, "sample_rows": sample_rows, "dataset": "spread",
             "threat_model": BLACK_BOX, "environment": DPMM.name}
    mech = dataclasses.replace(mech, sampler=Fits(_process(python), spec, None, DPMM_UNREPLAYED),
                               params={"epsilon": epsilon, "delta": delta, **facts},
                               description=f"dpmm 0.1.9 {generator} pipeline on the spread worst-case table ({BLACK_BOX})")
    return tabulate(mech, domain.target(), columns=domain.columns)


def _dpmm_factory(generator: str) -> Any:
    """Return the registered factory of dpmm's `generator` pipeline."""
    name = f"dpmm_{generator}"

    def factory(*, epsilon: float = 1.0, delta: float = 1e-2, columns: int = 3, categories: int = 3, rows: int = 10,
                sample_rows: int = 100, n_iters: int = 100) -> Mechanism:
        e, d, domain, n, m = _checked(name, epsilon, delta, columns, categories, rows, sample_rows)
        check_int(categories, "categories", name, low=3)
        return dpmm_generator(generator, epsilon=e, delta=d, domain=domain, rows=check_int(n, "rows", name, low=2),
                              sample_rows=m, n_iters=check_int(n_iters, "n_iters", name), name=name)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (f"Return dpmm 0.1.9's {generator} pipeline at (epsilon, delta) on the spread worst-case table "
                       "(categories declared in its domain, `n_iters` estimation iterations): the target's features of each table.")
    return factory


GENERATORS = (
    _factory("mst", doc="the features of the target in each synthetic table (black-box)."),
    _factory("aim", doc="the features of the target in each synthetic table (black-box)."),
    _factory("mwem", delta=0.0, doc="the features of the target in each synthetic table (black-box; MWEM claims (ε, 0))."),
    synth_mst_white_box,
    _factory("aim", white_box=True, doc="the log-likelihood ratio of its noisy marginals at the target's cells (white-box)."),
    _factory("mst", data_domain=True, doc="categories read from the data (SmartNoise's default without a transformer)."),
    _factory("mst", input_size=True, doc="`sample()` as many rows as the input holds (SmartNoise's default)."),
    _privbayes_factory(doc="each fit with a fresh seed, the target's features of each table (black-box)."),
    _privbayes_factory("0.1.4", doc="the older release, each fit with a fresh seed (black-box)."),
    _privbayes_factory(default_seed=True, doc="every fit with DataSynthesizer's default seed 0, as a user who never sets it."),
)
DPMM_GENERATORS = (_dpmm_factory("mst"), _dpmm_factory("privbayes"))

# Registration builds nothing (the environment is built when a mechanism is). Costs: seconds a fit (MST ~6 s,
# AIM ~12 s, MWEM ~1 s on a loaded 2-core machine; MST white-box on the selection pair ~10 ms a run), so the
# suite plays few trials.
for _generator in GENERATORS:
    register(_generator.__name__, expected=None, suite_trials=0.00005, environment=ENVIRONMENT.name)(_generator)
# dpmm: a fit takes about half a second (PrivBayes) to eight seconds (MST, whose selection estimates 2,500 iterations
# whatever n_iters) at n_iters 100 on these loaded cores.
for _generator in DPMM_GENERATORS:
    register(_generator.__name__, expected=None, suite_trials=0.00005, environment=DPMM.name)(_generator)
