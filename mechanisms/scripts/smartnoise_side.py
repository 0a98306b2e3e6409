"""SmartNoise SQL queries, run INSIDE the "smartnoise-sql" environment (snsql 1.0.x): never imported by dpaudit.

dpaudit's `smartnoise_sql` adapters reach this module through the external
worker (`external_python` with `path=` this folder); dpaudit is not
installed here, and this module imports numpy, pandas and snsql only.
One process answers two kinds of request, each a dict of columns:

- `kind` = `describe`, with `query` (a QUERY) and `params` (JSON): one
  output, the JSON text of what SmartNoise states for that query: the
  Privacy given, the query's cost by its own accounting
  (`PrivateReader.get_privacy_cost`), and the mechanism of every noisy
  column of the rewritten query (class, ε, δ, sensitivity, scale, the
  censoring threshold τ of the key count);
- `kind` = `query`, with `query`, `params` and the dataset's present
  records `x` (floats; group labels for `grouped_count`): N outputs of that
  query, each what the user gets back: the one value of the result row, or
  NaN when SmartNoise returned no row (the key count fell below τ); for
  `grouped_count`, one count per group 0 .. groups - 1, NaN for a group
  without a row.

The queries are the ones SmartNoise's docs show, over a pandas reader,
`snsql.from_df(df, privacy=Privacy(epsilon=..., delta=...), metadata=META)`,
where META is a dict of the documented form: one table `T.T` with
`row_privacy: true`, `max_ids: 1`, and the column `x` of type float with
`lower` and `upper` (or `g` of type int): `count` is
`SELECT COUNT(*) AS v FROM T.T`, `sum` `SELECT SUM(x) ...`, `avg`
`SELECT AVG(x) ...`, `var` `SELECT VAR(x) ...`, `grouped_count`
`SELECT g, COUNT(*) AS v FROM T.T GROUP BY g`. The table keeps SmartNoise's
defaults otherwise (`censor_dims` on: a row is released only when its noisy
key count exceeds τ).

One batch of N outputs is ONE `execute` over N copies of the dataset, the
query grouped by a public column `copy` as well: SmartNoise adds noise row
by row and censors row by row, so each copy's row is the single query's
release, drawn independently. `_check_copies` compares the mechanisms and
the cost of the grouped query with the single one's before every batch.
An empty dataset is run one `execute` per output (no copy would have a row).

Randomness: SmartNoise draws through OpenDP's own generator, which has no
public seed, so the request's seed is not used.
"""

import os
import sys

# This file is loaded with its folder (dpaudit's mechanisms/scripts/) at the front of sys.path; take it off
# again before anything else is imported here, so no script of that folder shadows a module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import json  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

__all__ = ["QUERIES", "describe", "serve"]

TABLE = "T.T"
QUERIES = {
    "count": "COUNT(*)",
    "sum": "SUM(x)",
    "avg": "AVG(x)",
    "var": "VAR(x)",
    "grouped_count": "COUNT(*)",
}


def _sql(query, copies):
    """Return the SQL of QUERY, grouped by the public `copy` column as well when `copies`."""
    keys = (["copy"] if copies else []) + (["g"] if query == "grouped_count" else [])
    select = ", ".join(keys + ["%s AS v" % QUERIES[query]])
    return "SELECT %s FROM %s%s" % (select, TABLE, " GROUP BY " + ", ".join(keys) if keys else "")


def _metadata(query, params):
    """Return SmartNoise's metadata dict for the table `T.T` (the form its docs show: bounds, max_ids, row_privacy)."""
    columns = {"copy": {"type": "int"}}
    if query == "grouped_count":
        columns["g"] = {"type": "int"}
    else:
        columns["x"] = {"type": "float", "lower": float(params["lower"]), "upper": float(params["upper"])}
    table = {"row_privacy": True, "max_ids": int(params.get("max_ids", 1)), **columns}
    return {"": {"T": {"T": table}}}


def _reader(query, params, frame):
    import snsql
    from snsql import Privacy

    privacy = Privacy(epsilon=float(params["epsilon"]), delta=float(params["delta"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return snsql.from_df(frame, privacy=privacy, metadata=_metadata(query, params))


def _frame(query, rows, copies):
    """Return the pandas table: the records (`x`, or integer labels `g`), `copies` times with their copy number."""
    import pandas as pd

    values = np.asarray(rows, dtype=float).ravel()
    column = {"g": values.astype(np.int64)} if query == "grouped_count" else {"x": values}
    n = max(1, copies)
    frame = pd.DataFrame({name: np.tile(v, n) for name, v in column.items()})
    frame["copy"] = np.repeat(np.arange(n, dtype=np.int64), len(values))
    return frame


def _mechanisms(reader, sql):
    """Return the mechanism of every noisy column of the rewritten `sql`: name, class, ε, δ, sensitivity, scale, τ."""
    subquery, _ = reader._rewrite(sql)
    out = []
    for symbol in subquery._select_symbols:
        mech = symbol.mechanism
        if mech is None:
            continue
        try:
            tau = float(mech.threshold) if symbol.is_key_count else None
        except ValueError:
            tau = None
        out.append({"column": symbol.name.split("_alias_")[0], "class": type(mech).__name__,
                    "epsilon": float(mech.epsilon), "delta": float(mech.delta),
                    "sensitivity": float(mech.sensitivity), "scale": float(mech.scale), "threshold": tau})
    return out


def describe(query, params):
    """Return what SmartNoise states for QUERY: versions, the Privacy given, the query's cost, its noisy columns."""
    from importlib.metadata import version

    reader = _reader(query, params, _frame(query, [], 1))
    sql = _sql(query, copies=False)
    eps, delta = reader.get_privacy_cost(sql)
    return {"smartnoise_sql": version("smartnoise-sql"), "opendp": version("opendp"), "sql": sql,
            "privacy": {"epsilon": float(params["epsilon"]), "delta": float(params["delta"])},
            "cost": {"epsilon": float(eps), "delta": float(delta)}, "mechanisms": _mechanisms(reader, sql),
            "censor_dims": bool(reader._options.censor_dims)}


def _check_copies(query, reader):
    """Raise ValueError unless the query grouped by `copy` has the single query's mechanisms and cost."""
    single, batched = _sql(query, copies=False), _sql(query, copies=True)
    if _mechanisms(reader, single) != _mechanisms(reader, batched):
        raise ValueError("SmartNoise noises the copies' query otherwise than the single query")
    if tuple(reader.get_privacy_cost(single)) != tuple(reader.get_privacy_cost(batched)):
        raise ValueError("SmartNoise costs the copies' query otherwise than the single query")


def _outputs(query, params, result, size):
    """Return the released values of `result` (rows after the header) by copy: NaN where SmartNoise released no row."""
    groups = int(params.get("groups", 0)) if query == "grouped_count" else 0
    out = np.full((size, groups) if groups else size, np.nan)
    for row in result[1:]:
        copy, value = int(row[0]), row[-1]
        value = np.nan if value is None else float(value)
        if groups:
            group = int(row[1])
            if 0 <= group < groups:
                out[copy, group] = value
        else:
            out[copy] = value
    return out


def _one_by_one(query, params, size):
    """Return `size` releases of the query on the empty table, one `execute` each (no copy of it has a row)."""
    reader = _reader(query, params, _frame(query, [], 0))
    out = []
    for _ in range(size):
        result = reader.execute(_sql(query, copies=False))
        out.append(np.nan if len(result) < 2 or result[1][-1] is None else float(result[1][-1]))
    return np.array(out, dtype=float)


def _run(query, params, rows, size):
    if len(rows) == 0:
        if query == "grouped_count":  # no group has a row on an empty table, whatever the noise
            return np.full((size, int(params["groups"])), np.nan)
        return _one_by_one(query, params, size)
    reader = _reader(query, params, _frame(query, rows, size))
    _check_copies(query, reader)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = reader.execute(_sql(query, copies=True))
    return _outputs(query, params, result, size)


def serve(data, size, seed):
    """Return `size` outputs of the query the request names, or, for `describe`, one JSON text per output."""
    kind = str(np.asarray(data["kind"]).ravel()[0])
    query = str(np.asarray(data["query"]).ravel()[0])
    if query not in QUERIES:
        raise ValueError("unknown query %r; the queries are %s" % (query, ", ".join(QUERIES)))
    params = json.loads(str(np.asarray(data["params"]).ravel()[0]))
    if kind == "describe":
        return [json.dumps(describe(query, params))] * size
    if kind != "query":
        raise ValueError("unknown kind %r; the kinds are describe, query" % kind)
    rows = np.asarray(data.get("x", []), dtype=float).ravel()
    return _run(query, params, rows, size)


def main(argv):
    """`describe QUERY JSON`: print what SmartNoise states for QUERY with the parameters JSON, as one JSON line."""
    if len(argv) != 3 or argv[0] != "describe":
        sys.stderr.write("usage: smartnoise_side.py describe QUERY JSON-PARAMS\n")
        return 2
    sys.stdout.write(json.dumps(describe(argv[1], json.loads(argv[2]))) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
