"""Tumult Analytics queries, run INSIDE Analytics' own environment (`make tumult-analytics`): never imported by dpaudit.

Tumult Analytics 0.21 needs Tumult Core 0.19 (and with it numpy 1.26,
pandas 1.5, pyspark 3.5), so it lives in `.venv-tumult-analytics`, apart
from dpaudit and from the Core 0.20 of `.venv-tumult`. dpaudit's
`tumult_analytics_adapters` reach it through its external worker, which
serves `tumult_analytics_side:serve` (`external_python` with `path=` this
folder; dpaudit is not installed there, and this module imports numpy,
pandas, pyspark and tmlt only). One long-lived process answers two kinds of
request, each a dict of columns:

- `kind` = `describe`, with `query` (a KIND) and `params` (JSON): one
  output, the JSON text of what Analytics states for that query: the
  Session's budget, as `remaining_privacy_budget` reports it before the
  query runs, and the noise `Session._noise_info` lists for the query
  (mechanism and parameter of each noise draw). Through the same process,
  so Spark starts once a run;
- `kind` = a KIND, `rows` (the dataset: the present records, or group
  labels for `grouped_count`) and one column per parameter: N outputs of
  that query (counts as int64, the others as float64; a grouped count is
  one row of counts per output, nan for a group its KeySet lacks).

The kinds are the queries people write with `QueryBuilder`: `count`,
`sum`, `average`, `quantile` (of a float column `x`, with the clamping
bounds `lower`, `upper`) and `grouped_count` (a count per group of an
integer column `group`, over a KeySet of the groups 0 .. groups - 1, or,
with `keys` = "private", the groups found in the data). The budget is
`epsilon` (PureDPBudget) or `rho` (RhoZCDPBudget); the Session is made with
it, protects AddOneRow (Analytics' default protected change), and the query
is evaluated with all of it.

One batch of N outputs is ONE `Session.evaluate` on N copies of the
dataset, the query grouped by a public `copy` key (a KeySet of 0 .. N - 1,
crossed with the groups for `grouped_count`): each copy gets the noisy
answer of the query audited, independently. This is the query Analytics
compiles for the ungrouped one with a KeySet of more keys (an ungrouped
query is a GroupBy over an empty KeySet, and one row added changes one
group), and `_copies` checks that the noise Analytics lists for the copies
is the single query's before answering.

Randomness: Tumult draws from its own generator, which has no public seed
(see tumult_side.py), so the request's seed is not used.
"""

import os
import sys

# This file is loaded with its folder (dpaudit's mechanisms/scripts/) at the front of sys.path; take it off
# again before anything else is imported here, so no script of that folder shadows a module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import importlib.util  # noqa: E402
import json  # noqa: E402

import numpy as np  # noqa: E402

__all__ = ["KINDS", "describe", "serve"]

KINDS = ("count", "sum", "average", "quantile", "grouped_count")
# Counts are integers; a grouped count is float64 so that a group missing from the KeySet can be nan.
_DTYPES = {"count": np.int64, "sum": np.float64, "average": np.float64, "quantile": np.float64, "grouped_count": np.float64}
SOURCE = "records"  # the private table's name in the Session
VALUE = "value"  # the name given to every query's output column
_CORE_SIDE = {}  # tumult_side, loaded once
_DESCRIBED = {}  # describe's answers by (kind, parameters)


def _core_side():
    """Return tumult_side.py (loaded by path): the home of the Spark session and of Tumult's zCDP conversion."""
    if "module" not in _CORE_SIDE:
        spec = importlib.util.spec_from_file_location("tumult_side", os.path.join(_HERE, "tumult_side.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _CORE_SIDE["module"] = module
    return _CORE_SIDE["module"]


# ---- parameters


def _params(data):
    """Return a request's parameters (every column but `kind` and `rows`, each one value) as a dict."""
    return {k: np.asarray(v).ravel()[0].item() for k, v in data.items() if k not in ("kind", "rows")}


def _budget(params):
    """Return the Session's budget: PureDPBudget(epsilon) or RhoZCDPBudget(rho)."""
    from tmlt.analytics import PureDPBudget, RhoZCDPBudget

    if "rho" in params:
        return RhoZCDPBudget(params["rho"])
    return PureDPBudget(params["epsilon"])


# ---- the table and the query


def _column(kind):
    return "group" if kind == "grouped_count" else "x"


def _table(kind, rows, copies):
    """Return the private Spark DataFrame: the rows (floats `x`, or integer `group` labels), with `copy` if `copies`."""
    import pandas as pd

    spark = _core_side().spark_session()
    column = _column(kind)
    values = np.asarray(rows, dtype=float).ravel()
    frame = pd.DataFrame({column: values.astype(np.int64) if column == "group" else values})
    table = spark.createDataFrame(frame, schema="%s %s" % (column, "long" if column == "group" else "double"))
    if copies is None:
        return table
    return table.crossJoin(spark.range(copies).withColumnRenamed("id", "copy"))


def _session(params, table):
    """Return a Session over `table` with the request's budget, protecting AddOneRow."""
    from tmlt.analytics import AddOneRow, Session

    return Session.from_dataframe(privacy_budget=_budget(params), source_id=SOURCE, dataframe=table,
                                  protected_change=AddOneRow())


def _keys(kind, params, table, copies):
    """Return the KeySet the query is grouped by: the copies, crossed with the groups for `grouped_count` (None: ungrouped).

    The groups are the public 0 .. groups - 1, or with `keys` = "private" those found in `table` (the private data).
    """
    from tmlt.analytics import KeySet

    spark = _core_side().spark_session()
    keys = None
    if kind == "grouped_count":
        if params.get("keys", "public") == "private":
            keys = KeySet.from_dataframe(table.select("group").distinct())
        else:
            keys = KeySet.from_dict({"group": list(range(int(params["groups"])))})
    if copies is not None:
        copy_keys = KeySet.from_dataframe(spark.range(copies).withColumnRenamed("id", "copy"))
        keys = copy_keys if keys is None else copy_keys * keys
    return keys


def _query(kind, params, keys):
    """Return the QueryBuilder query of KIND, grouped by `keys` (None: ungrouped), its output column named VALUE."""
    from tmlt.analytics import QueryBuilder

    builder = QueryBuilder(SOURCE)
    grouped = builder if keys is None else builder.groupby(keys)
    if kind in ("count", "grouped_count"):
        return grouped.count(name=VALUE)
    low, high = params["lower"], params["upper"]
    if kind == "sum":
        return grouped.sum("x", low, high, name=VALUE)
    if kind == "average":
        return grouped.average("x", low, high, name=VALUE)
    if kind == "quantile":
        return grouped.quantile("x", params["quantile"], low, high, name=VALUE)
    raise ValueError("unknown kind %r; the kinds are %s" % (kind, ", ".join(KINDS)))


def _noise(session, query, params):
    """Return the noise Analytics lists for `query`: [{"mechanism": name, "parameter": float}, ...] in its order."""
    return [{"mechanism": item["noise_mechanism"].name, "parameter": float(item["noise_parameter"])}
            for item in session._noise_info(query, _budget(params))]


# ---- what Analytics states


def describe(kind, params):
    """Return (cached, per KIND and `params`) what Analytics states for KIND: versions, the Session's budget, the query's noise."""
    key = (kind, json.dumps(params, sort_keys=True))
    if key not in _DESCRIBED:
        _DESCRIBED[key] = _describe(kind, params)
    return _DESCRIBED[key]


def _describe(kind, params):
    """Return what Analytics states for KIND with `params`: versions, the Session's budget, and the query's noise.

    PureDP: epsilon (the Session's, as it reports it), delta = 0. RhoZCDP:
    rho, and the epsilon Tumult's RhoZCDPToApproxDP accepts at the `delta`
    asked for (tumult_side.approx_dp_epsilon, rounded up). The noise is
    `Session._noise_info` of the ungrouped query (of the grouped one for
    `grouped_count`) on a one-row table: it depends on the budget and the
    query, not on the rows.
    """
    import tmlt.analytics
    import tmlt.core
    from tmlt.analytics import PureDPBudget

    rows = [0.0]
    table = _table(kind, rows, None)
    session = _session(params, table)
    budget = session.remaining_privacy_budget
    out = {"kind": kind, "tmlt_analytics": tmlt.analytics.__version__, "tmlt_core": tmlt.core.__version__,
           "noise": _noise(session, _query(kind, params, _keys(kind, params, table, None)), params)}
    if isinstance(budget, PureDPBudget):
        out.update(budget="PureDPBudget", epsilon=float(budget.value.to_float(round_up=True)), delta=0.0)
        return out
    out.update(budget="RhoZCDPBudget", rho=float(budget.value.to_float(round_up=True)),
               epsilon=_core_side().approx_dp_epsilon(budget.value.expr, params["delta"]), delta=float(params["delta"]))
    return out


# ---- draws


def _copies(kind, data, size):
    """Return one Session.evaluate of KIND on `size` copies of the rows, as an array with one row per copy (sorted by copy).

    Raises ValueError when the noise Analytics lists for the copies differs from the single query's.
    """
    params = _params(data)
    table = _table(kind, data["rows"], size)
    session = _session(params, table)
    grouped = _query(kind, params, _keys(kind, params, table, size))
    noise, single_noise = _noise(session, grouped, params), describe(kind, params)["noise"]
    if noise != single_noise:
        raise ValueError("Analytics calibrated the copies' noise (%s) unlike the single query's (%s)" % (noise, single_noise))
    result = session.evaluate(grouped, _budget(params)).toPandas()
    if kind != "grouped_count":
        return result.sort_values("copy")[VALUE].to_numpy()
    table = result.pivot(index="copy", columns="group", values=VALUE)
    return table.reindex(index=range(size), columns=range(int(params["groups"]))).to_numpy(dtype=float)


def serve(data, size, seed):
    """Return `size` outputs of the kind the request names (its column `kind`), or, for `describe`, one JSON text.

    dpaudit keeps one such process per interpreter, so Spark starts once for
    every query described and audited in one run.
    """
    kind = str(np.asarray(data["kind"]).ravel()[0])
    if kind == "describe":
        query = str(np.asarray(data["query"]).ravel()[0])
        return [json.dumps(describe(query, json.loads(str(np.asarray(data["params"]).ravel()[0]))))] * size
    if kind not in KINDS:
        raise ValueError("unknown kind %r; the kinds are describe, %s" % (kind, ", ".join(KINDS)))
    return np.asarray(_copies(kind, data, size), dtype=_DTYPES[kind])


def main(argv):
    """`describe KIND JSON`: print what Analytics states for KIND with the parameters JSON, as one JSON line."""
    if len(argv) != 3 or argv[0] != "describe":
        sys.stderr.write("usage: tumult_analytics_side.py describe KIND JSON-PARAMS\n")
        return 2
    sys.stdout.write(json.dumps(describe(argv[1], json.loads(argv[2]))) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
