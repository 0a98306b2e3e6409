"""IBM diffprivlib, called as its users call it, INSIDE diffprivlib's own environment: never imported by dpaudit.

diffprivlib 0.6.6 imports with scikit-learn < 1.6 only, so it lives in an
environment of its own (`dpaudit env create diffprivlib-0.6.6`); dpaudit's
adapters (`dpaudit.mechanisms.adapters.diffprivlib`) reach this module
through dpaudit's external worker (`external_python(..., "diffprivlib_side:serve",
path=[this folder])`). It imports the standard library, numpy, threadpoolctl and
diffprivlib only.

Each request's data is a dict of columns: `spec` (one JSON string: what to
call and with which parameters, as the adapter fixed them) and `rows` (the
dataset: one query answer for a mechanism, the records for a tool, the
rows (features, then the label or target) for a model). `serve(data,
size, seed)` returns `size` outputs, each from a fresh call:

- kind "mechanism": `Class(**params, random_state=rs).randomise(rows[0])`
  (Exponential: `randomise()`, the utilities being the rows; Binary:
  the answer as "0"/"1"), `size` calls on one mechanism object;
- kind "tool": `diffprivlib.tools.NAME(rows, **params, random_state=rs)`
  (histogram: its counts);
- kind "model": `Model(**params, random_state=rs).fit(X, y)`, releasing
  what a user gets back (`_release`);
- kind "replay": one output, the JSON record (`replay_side.replay`) of
  the call of `spec["inner"]` on `rows` with a recording `random_state`
  and on `rows1` (`missing1`) with the same draws replayed.

Randomness: one `numpy.random.RandomState(seed)` per batch, handed to
diffprivlib through its `random_state=` parameter, so a batch repeats for a
seed and its draws are independent given it. That state is the one point
where every draw of diffprivlib 0.5 and later passes (its mechanisms take
`check_random_state(random_state, secure=True)`, which returns it as it
is), so a replay records and replays diffprivlib's draws there. Each call gets a fresh
`BudgetAccountant` with an infinite budget, so nothing is refused or kept
between draws.

Threads: the side pins BLAS and OpenMP to one thread (`_one_thread`).
Each call is a tiny fit (6 rows); with the default two threads a
LogisticRegression fit took 30-110 ms on a shared 2-CPU machine (up to
0.4 s loaded), its L-BFGS steps waiting on idle threads, against 2-4 ms
on one. Threads change no random draw, and the bounds docs/libraries.md
certifies at a seed stay the same.
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

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # read by BLAS libraries loaded later (scipy's)
    os.environ[_name] = "1"

import numpy as np  # noqa: E402

__all__ = ["KINDS", "describe", "mechanism", "model", "replay", "serve", "tool"]

KINDS = ("mechanism", "tool", "model", "replay")
BIT_VALUES = ("0", "1")  # Binary's two values; the answer 0 or 1 picks one


def _sibling(name):
    """Return the module `name` of this folder, loaded by path (the folder is no longer on sys.path)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(_HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REPLAY = _sibling("replay_side")


def _one_thread():
    """Limit the BLAS and OpenMP libraries already loaded (numpy's, by the worker) to one thread; return nothing.

    Libraries loaded later read the variables set above. threadpoolctl
    comes with scikit-learn, which diffprivlib requires.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)


_one_thread()


def _state(seed):
    """Return the random state of a batch: `RandomState(seed)`, or the state a replay hands in."""
    return seed if isinstance(seed, np.random.RandomState) else np.random.RandomState(seed)


def _spec(data):
    """Return the request's spec (a dict) from its `spec` column of one JSON string."""
    value = np.asarray(data["spec"]).ravel()
    if value.size != 1:
        raise ValueError("the spec must be one JSON string; got %d values" % value.size)
    return json.loads(str(value[0]))


def _call(fn, rs, **kwargs):
    """Return fn(**kwargs) with `random_state=rs` and a fresh `accountant=` where fn takes them.

    Releases before 0.5 take neither: they draw from their own generator
    (their audits do not repeat bit for bit; every draw is still fresh).
    """
    import inspect

    accepted = inspect.signature(fn).parameters
    if "random_state" in accepted:
        kwargs["random_state"] = rs
    if "accountant" in accepted:
        from diffprivlib.accountant import BudgetAccountant

        kwargs["accountant"] = BudgetAccountant()
    return fn(**kwargs)


def _parameters(fn):
    import inspect

    return inspect.signature(fn).parameters


def _rows(data):
    """Return the request's rows (floats) with NaN where its `missing` mask says (JSON carries no NaN)."""
    rows = np.array(data["rows"], dtype=float)
    if "missing" in data:
        rows[np.asarray(data["missing"]).reshape(rows.shape) != 0] = np.nan
    return rows


def _as_bounds(value):
    """Return diffprivlib's `bounds=(lower, upper)` from a JSON pair (lists become arrays, one per feature)."""
    if value is None:
        return None
    lower, upper = value
    if isinstance(lower, list):
        return np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    return lower, upper


# ---- mechanisms: randomise(value) on a query answer


def _mechanism_object(name, params, rs):
    import diffprivlib.mechanisms as mechanisms

    cls = getattr(mechanisms, name)
    if name == "Binary":
        return _call(cls, rs, value0=BIT_VALUES[0], value1=BIT_VALUES[1], **params)
    return _call(cls, rs, **params)


def mechanism(data, size, seed):
    """Return `size` draws of `spec["name"](**spec["params"]).randomise(answer)` (Exponential: randomise() on the rows as utilities)."""
    spec = _spec(data)
    rows = _rows(data).ravel()
    rs = _state(seed)
    name, params = spec["name"], dict(spec["params"])
    if name == "Exponential":
        mech = _mechanism_object(name, dict(params, utility=[float(u) for u in rows],
                                            candidates=list(range(rows.size))), rs)
        return np.array([mech.randomise() for _ in range(size)], dtype=np.int64)
    mech = _mechanism_object(name, params, rs)
    if name == "Binary":
        value = BIT_VALUES[int(rows[0])]
        return np.array([int(mech.randomise(value)) for _ in range(size)], dtype=np.int64)
    value = int(round(rows[0])) if spec.get("integer") else float(rows[0])
    out = [mech.randomise(value) for _ in range(size)]
    return np.asarray(out, dtype=np.int64 if spec.get("integer") else np.float64)


# ---- tools: diffprivlib.tools.NAME(array, epsilon=..., bounds=...)


def _tool_once(name, rows, params, rs):
    import diffprivlib.tools as tools

    out = _call(getattr(tools, name), rs, **{"array" if "array" in _parameters(getattr(tools, name)) else "sample": rows},
                **params)
    if name.startswith("histogram"):
        return np.asarray(out[0], dtype=np.float64).ravel()
    return out


def tool(data, size, seed):
    """Return `size` outputs of `diffprivlib.tools.NAME(rows, **params)` (histograms: their counts)."""
    spec = _spec(data)
    rows = _rows(data)
    rs = _state(seed)
    params = dict(spec["params"])
    if "bounds" in params:
        params["bounds"] = _as_bounds(params["bounds"])
    if "range" in params:
        params["range"] = tuple(params["range"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = [_tool_once(spec["name"], rows, params, rs) for _ in range(size)]
    return np.asarray(out, dtype=np.float64)


# ---- models: Model(**params).fit(X, y), releasing what a user reads back


def _padded(values, length):
    """Return `values` (flattened) followed by zeros up to `length` entries (a fixed-shape release)."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    if flat.size > length:
        raise ValueError("the model released %d numbers, more than the %d declared" % (flat.size, length))
    return np.concatenate([flat, np.zeros(length - flat.size)])


def _release(name, fitted, n_features, n_classes):
    """Return what a user gets back from the fitted model, as one vector of a fixed length.

    LinearRegression: coef_, intercept_. LogisticRegression: the number of
    classes_ it found, then coef_ and intercept_, padded with zeros to the
    declared classes. GaussianNB: the number of classes_, then theta_, var_,
    class_count_, padded likewise. KMeans:
    cluster_centers_. PCA: components_ and explained_variance_.
    StandardScaler: mean_, var_. RandomForestClassifier: its predictions
    on the corners of the feature box (a forest has no coefficients).
    """
    if name == "LinearRegression":
        return np.concatenate([np.ravel(fitted.coef_), np.ravel(fitted.intercept_)])
    if name == "LogisticRegression":
        length = n_classes * (n_features + 1)
        return np.concatenate([[len(fitted.classes_)], _padded(fitted.coef_, n_classes * n_features),
                               _padded(fitted.intercept_, length - n_classes * n_features)])
    if name == "GaussianNB":
        per_class = n_classes * n_features
        return np.concatenate([[len(fitted.classes_)], _padded(fitted.theta_, per_class), _padded(fitted.var_, per_class),
                               _padded(fitted.class_count_, n_classes)])
    if name == "KMeans":
        return np.ravel(fitted.cluster_centers_)
    if name == "PCA":
        return np.concatenate([np.ravel(fitted.components_), np.ravel(fitted.explained_variance_)])
    if name == "StandardScaler":
        return np.concatenate([np.ravel(fitted.mean_), np.ravel(fitted.var_)])
    raise ValueError("unknown model %r" % name)


def _forest_release(fitted, bounds):
    lower, upper = (np.asarray(b, dtype=float) for b in bounds)
    corners = np.array(np.meshgrid(*zip(lower, upper))).reshape(lower.size, -1).T
    return np.asarray(fitted.predict(corners), dtype=np.float64)


def _model_once(name, x, y, params, rs, n_classes):
    import diffprivlib.models as models

    kwargs = dict(params)
    for key in ("bounds", "bounds_X", "bounds_y"):
        if key in kwargs:
            kwargs[key] = _as_bounds(kwargs[key])
    fitted = _call(getattr(models, name), rs, **kwargs)
    if name in ("KMeans", "PCA", "StandardScaler"):
        fitted.fit(x)
    else:
        fitted.fit(x, y)
    if name == "RandomForestClassifier":
        return _forest_release(fitted, kwargs["bounds"])
    return _release(name, fitted, x.shape[1], n_classes)


def model(data, size, seed):
    """Return `size` releases of `Model(**params).fit(X, y)`: rows are features then the label (or target)."""
    spec = _spec(data)
    rows = _rows(data)
    rows = rows.reshape(rows.shape[0], -1) if rows.ndim != 2 else rows
    x, y = (rows[:, :-1], rows[:, -1]) if spec.get("supervised", True) else (rows, None)
    if spec.get("labels"):
        y = y.astype(np.int64)
    rs = _state(seed)
    n_classes = int(spec.get("classes", 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = [_model_once(spec["name"], x, y, spec["params"], rs, n_classes) for _ in range(size)]
    return np.asarray(out, dtype=np.float64)


def replay(data, size, seed):
    """Return one output: the JSON record of `spec["inner"]` recorded on `rows` and replayed on `rows1` (`replay_side`)."""
    if size != 1:
        raise ValueError("a replay is one run on each dataset; asked for %d" % size)
    inner = _spec(data)["inner"]
    if inner.get("kind") not in KINDS[:3]:
        raise ValueError("a replay replays a mechanism, tool or model; got kind %r" % inner.get("kind"))
    fn, spec = globals()[inner["kind"]], np.array([json.dumps(inner)])

    def run(suffix):
        request = {"spec": spec, "rows": data["rows" + suffix], "missing": data["missing" + suffix]}
        return lambda rs: fn(request, 1, rs)[0]

    return [REPLAY.replay(run(""), run("1"), seed)]


def serve(data, size, seed):
    """Return `size` outputs of the kind the request's spec names: one process serves every kind."""
    kind = _spec(data).get("kind")
    if kind not in KINDS:
        raise ValueError("unknown kind %r; the kinds are %s" % (kind, ", ".join(KINDS)))
    return globals()[kind](data, size, seed)


def describe():
    """Return the versions of diffprivlib, numpy and scikit-learn in this environment (a dict)."""
    import diffprivlib
    import sklearn

    return {"diffprivlib": diffprivlib.__version__, "numpy": np.__version__, "sklearn": sklearn.__version__}


if __name__ == "__main__":
    sys.stdout.write(json.dumps(describe()) + "\n")
