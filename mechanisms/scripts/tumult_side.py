"""Tumult Core measurements, run INSIDE Tumult's own environment (`make tumult`): never imported by dpaudit.

Tumult Core 0.20 pins numpy 1.26 and pandas 1.5 and brings pyspark 3.5, so
it lives in its own virtual environment, `.venv-tumult`. dpaudit's
`tumult_adapters` reach it in two ways, both by this file's path (dpaudit
is not installed there; this module imports numpy, pandas, pyspark and
tmlt.core only):

- `python tumult_side.py describe KIND JSON-PARAMS` prints, as one JSON
  line, the claim Tumult's own privacy function makes at d_in = 1 and the
  noise parameter Tumult calibrated (a short-lived process, run when a
  mechanism is built);
- dpaudit's external worker serves `tumult_side:serve` (`external_python`
  with `path=` this folder): each request's data is a dict of columns,
  `kind`, `rows` (the dataset: the present records, or one query answer)
  and one column per parameter, and `KIND(data, size=N, seed=S)` returns N
  outputs (`tumult_side:KIND` serves one kind alone).

The kinds: `laplace`, `gaussian` (Tumult's `AddLaplaceNoise` and
`AddGaussianNoise` on a number; no Spark), `count` (create_count_measurement,
geometric or discrete Gaussian noise), `clipped_sum` (create_sum_measurement
on a float column, Laplace or Gaussian noise) and `grouped_count` (a count
per public group). The three aggregations take Spark DataFrames (so a Java runtime):
one batch of N outputs is ONE run of Tumult's measurement on N copies of
the dataset, grouped by a public `copy` key (and the group), so each copy
gets the noisy answer of the measurement audited, independently. The
copies' noise parameter is checked equal to the single measurement's
(`_noise_parameter`), since GroupBy under the symmetric difference has
stability d_in whatever the keys.

Randomness: Tumult Core draws from its own generator (RDRAND, else
os.urandom; `tmlt.core.random.rng.prng`), which has no public seed, so the
request's seed S is not used and an audit does not repeat bit for bit
(every draw is fresh, so the audit stays sound). Under Spark the noise is
drawn in Spark's Python workers, other processes with generators of their
own.

Replay (kind `replay`, with `inner` = laplace or gaussian, and `rows1`):
every draw of Tumult Core goes through `prng()`, a numpy Generator from
which its exact samplers take uniform integers (`integers(2**63)`, the
bits of the inverse CDF), and the sign of noise of infinite scale
through Python's `random`. For the run, `prng()` returns `replay_side.AsGenerator` of the
replay's state (`_drawing_from`), and Python's `random` and numpy's global
functions are routed to it too (`replay_side.routed`): the one point where
a Tumult Core measurement on a number draws. One output: the JSON record
of the measurement on `rows` recorded and on `rows1` replayed. The Spark
kinds are not replayed: their noise is drawn in Spark's workers, which
this process's `prng()` does not reach.
"""

import os
import sys

# This file is loaded with its folder (dpaudit's mechanisms/scripts/) at the front of sys.path; take it off
# again before anything else is imported here, so no script of that folder shadows a module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import atexit  # noqa: E402
import contextlib  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

__all__ = ["KINDS", "REPLAYED", "approx_dp_epsilon", "clipped_sum", "count", "describe", "gaussian", "grouped_count", "laplace",
           "replay", "serve", "spark_session"]

KINDS = ("laplace", "gaussian", "count", "clipped_sum", "grouped_count", "replay")
REPLAYED = ("laplace", "gaussian")
"""The kinds a replay records and replays: the measurements on a number, drawn in this process."""
_SPARK = {}  # the session and its warehouse folder, made on first use


# ---- parameters


def _param(data, name, kind=float):
    """Return the parameter `name` of a request (a column of one value)."""
    value = np.asarray(data[name]).ravel()
    if value.size != 1:
        raise ValueError("the parameter %r must be one value; got %d" % (name, value.size))
    return kind(value[0])


def _exact(value):
    """Return `value` (a float) as the exact rational Tumult takes (ExactNumber), so no rounding is introduced."""
    import sympy

    return sympy.Rational(value)


# ---- Tumult's measurements


def _laplace_measurement(scale):
    from tmlt.core.domains.numpy_domains import NumpyFloatDomain
    from tmlt.core.measurements.noise_mechanisms import AddLaplaceNoise

    return AddLaplaceNoise(NumpyFloatDomain(), _exact(scale))


def _gaussian_measurement(sigma_squared):
    from tmlt.core.domains.numpy_domains import NumpyFloatDomain
    from tmlt.core.measurements.noise_mechanisms import AddGaussianNoise

    return AddGaussianNoise(NumpyFloatDomain(), _exact(sigma_squared))


def _noise(name):
    from tmlt.core.measurements.aggregations import NoiseMechanism

    return {"geometric": NoiseMechanism.GEOMETRIC, "discrete_gaussian": NoiseMechanism.DISCRETE_GAUSSIAN,
            "laplace": NoiseMechanism.LAPLACE, "gaussian": NoiseMechanism.GAUSSIAN}[name]


def _budget(params):
    """Return (output measure, d_out): PureDP and ε, or RhoZCDP and ρ."""
    from tmlt.core.measures import PureDP, RhoZCDP

    if "rho" in params:
        return RhoZCDP(), _exact(params["rho"])
    return PureDP(), _exact(params["epsilon"])


def _domain(column, extra=()):
    """Return the domain of a DataFrame with one float (or, for `group`, integer) column and integer key columns."""
    from tmlt.core.domains.spark_domains import SparkDataFrameDomain, SparkFloatColumnDescriptor, SparkIntegerColumnDescriptor

    schema = {column: SparkIntegerColumnDescriptor() if column == "group"
              else SparkFloatColumnDescriptor(allow_nan=False, allow_inf=False, allow_null=False)}
    schema.update({key: SparkIntegerColumnDescriptor() for key in extra})
    return SparkDataFrameDomain(schema)


def _aggregation(kind, params, groupby=None, domain=None):
    """Return Tumult's count, clipped sum or grouped count measurement (d_in = 1, the symmetric difference)."""
    from tmlt.core.measurements.aggregations import create_count_measurement, create_sum_measurement
    from tmlt.core.metrics import SymmetricDifference

    measure, d_out = _budget(params)
    noise = _noise(params["noise"])
    if kind == "clipped_sum":
        return create_sum_measurement(
            domain or _domain("x"), SymmetricDifference(), measure, d_out, noise, "x",
            _exact(params["lower"]), _exact(params["upper"]), groupby_transformation=groupby, sum_column="sum")
    column = "group" if kind == "grouped_count" else "x"
    return create_count_measurement(domain or _domain(column), SymmetricDifference(), measure, d_out, noise,
                                    groupby_transformation=groupby, count_column="count")


def _groupby(domain, keys, use_l2):
    from tmlt.core.metrics import SymmetricDifference
    from tmlt.core.transformations.spark_transformations.groupby import GroupBy

    return GroupBy(input_domain=domain, input_metric=SymmetricDifference(), use_l2=use_l2, group_keys=keys)


def _group_keys(groups):
    spark = spark_session()
    return spark.createDataFrame([(g,) for g in range(groups)], schema="group long")


def _noise_parameter(measurement):
    """Return (class, parameter name, exact value) of the noise a measurement adds: its alpha, scale or sigma_squared.

    Follows Tumult's public properties down the chain: PostProcess and
    ChainTM `.measurement`, AddNoiseToColumn `.measurement`, AddNoiseToSeries
    `.noise_measurement`.
    """
    seen = measurement
    for _ in range(16):
        inner = getattr(seen, "measurement", None) or getattr(seen, "noise_measurement", None)
        if inner is None:
            for name in ("alpha", "scale", "sigma_squared"):
                if hasattr(seen, name):
                    return type(seen).__name__, name, getattr(seen, name)
            break
        seen = inner
    raise ValueError("no noise measurement found in %s" % type(measurement).__name__)


def _measurement(kind, params):
    """Return the measurement audited as KIND with `params` (for the aggregations: on one dataset, not on copies)."""
    if kind == "laplace":
        return _laplace_measurement(params["scale"])
    if kind == "gaussian":
        return _gaussian_measurement(params["sigma_squared"])
    if kind == "grouped_count":
        domain = _domain("group")
        groupby = _groupby(domain, _group_keys(int(params["groups"])), params["noise"] != "geometric")
        return _aggregation(kind, params, groupby, domain)
    if kind in ("count", "clipped_sum"):
        return _aggregation(kind, params)
    raise ValueError("unknown kind %r; the kinds are %s" % (kind, ", ".join(KINDS)))


def describe(kind, params):
    """Return Tumult's claim for KIND with `params` at d_in = 1, and the noise it calibrated.

    PureDP measurements: epsilon = privacy_function(1) rounded up, delta = 0.
    RhoZCDP ones: rho = privacy_function(1), and the epsilon of Tumult's own
    conversion `RhoZCDPToApproxDP` at the `delta` asked for (`approx_dp_epsilon`).
    (Its `privacy_relation`, which solves that equation with sympy, did not
    return within minutes here, so it is not called.)
    """
    import tmlt.core
    from tmlt.core.measures import PureDP
    from tmlt.core.utils.exact_number import ExactNumber

    measurement = _measurement(kind, params)
    d_out = ExactNumber(measurement.privacy_function(1))
    noise_class, noise_name, noise_value = _noise_parameter(measurement)
    out = {"kind": kind, "tmlt_core": tmlt.core.__version__, "measure": type(measurement.output_measure).__name__,
           "noise": noise_class, noise_name: float(ExactNumber(noise_value).to_float(round_up=False))}
    if measurement.output_measure == PureDP():
        out.update(epsilon=float(d_out.to_float(round_up=True)), delta=0.0)
        return out
    out.update(rho=float(d_out.to_float(round_up=True)), epsilon=approx_dp_epsilon(d_out.expr, params["delta"]),
               delta=float(params["delta"]))
    return out


def approx_dp_epsilon(rho, delta):
    """Return the least double >= rho + 2 sqrt(rho log(1/delta)): the epsilon Tumult's RhoZCDPToApproxDP accepts at delta.

    `rho` is exact (a sympy expression, as Tumult's ExactNumber holds it);
    `delta` the decimal asked for (1e-5 is taken as 1/100000). The formula is
    Bun & Steinke 2016, Prop. 1.3, as RhoZCDPToApproxDP's docstring states;
    computed exactly and rounded up, so the claim is never understated.
    The Analytics side (tumult_analytics_side.py) converts its zCDP budgets with it too.
    """
    import sympy

    exact = rho + 2 * sympy.sqrt(rho * sympy.log(1 / sympy.Rational(repr(float(delta)))))
    epsilon = float(sympy.N(exact, 40))
    if sympy.Rational(epsilon) < exact:
        epsilon = float(np.nextafter(epsilon, np.inf))
    return epsilon


# ---- draws


def laplace(data, size, seed):
    """Return `size` draws of Tumult's AddLaplaceNoise(scale) on the query answer rows[0] (float64)."""
    add_noise = _laplace_measurement(_param(data, "scale"))
    value = float(np.asarray(data["rows"], dtype=float).ravel()[0])
    return np.array([add_noise(value) for _ in range(size)], dtype=np.float64)


def gaussian(data, size, seed):
    """Return `size` draws of Tumult's AddGaussianNoise(sigma_squared) on the query answer rows[0] (float64)."""
    add_noise = _gaussian_measurement(_param(data, "sigma_squared"))
    value = float(np.asarray(data["rows"], dtype=float).ravel()[0])
    return np.array([add_noise(value) for _ in range(size)], dtype=np.float64)


def spark_session():
    """Return this process's local Spark session (one core, no UI, its warehouse in a temporary folder removed at exit)."""
    if "spark" not in _SPARK:
        os.environ["PYSPARK_PYTHON"] = sys.executable  # Spark's Python workers must run this environment
        from pyspark.sql import SparkSession

        warehouse = tempfile.mkdtemp(prefix="dpaudit-tumult-spark-")
        atexit.register(shutil.rmtree, warehouse, True)
        spark = (SparkSession.builder.master("local[1]").appName("dpaudit-tumult")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .config("spark.sql.shuffle.partitions", "1").config("spark.default.parallelism", "1")
                 .config("spark.sql.warehouse.dir", warehouse).config("spark.sql.execution.arrow.pyspark.enabled", "true")
                 .config("spark.driver.extraJavaOptions", "-Dio.netty.tryReflectionSetAccessible=true")
                 .getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        _SPARK["spark"] = spark
    return _SPARK["spark"]


def _copies(kind, data, size):
    """Return Tumult's measurement on `size` copies of the dataset and its output, as an array with one row per copy."""
    import pandas as pd

    spark = spark_session()
    params = {k: np.asarray(v).ravel()[0].item() for k, v in data.items() if k not in ("rows", "kind")}
    column = "group" if kind == "grouped_count" else "x"
    rows = np.asarray(data["rows"], dtype=float).ravel()
    domain = _domain(column, ["copy"])
    frame = pd.DataFrame({column: rows.astype(np.int64) if column == "group" else rows})
    dataset = spark.createDataFrame(frame, schema=domain.project([column]).spark_schema)
    copies = spark.range(size).withColumnRenamed("id", "copy")
    keys = copies if kind != "grouped_count" else copies.crossJoin(_group_keys(int(params["groups"])))
    use_l2 = params["noise"] in ("discrete_gaussian", "gaussian")
    measurement = _aggregation(kind, params, _groupby(domain, keys, use_l2), domain)
    single = _measurement(kind, params)
    if _noise_parameter(measurement) != _noise_parameter(single):
        raise ValueError("Tumult calibrated the copies' noise (%s) unlike the single measurement's (%s)"
                         % (_noise_parameter(measurement), _noise_parameter(single)))
    result = measurement(dataset.crossJoin(copies)).toPandas()
    value = "sum" if kind == "clipped_sum" else "count"
    if kind == "grouped_count":
        table = result.pivot(index="copy", columns="group", values=value).sort_index()
        return table.sort_index(axis=1).to_numpy()
    return result.sort_values("copy")[value].to_numpy()


def count(data, size, seed):
    """Return `size` noisy counts of the rows: create_count_measurement (params epsilon or rho, noise)."""
    return np.asarray(_copies("count", data, size), dtype=np.int64)


def clipped_sum(data, size, seed):
    """Return `size` noisy sums of the rows clipped to [lower, upper]: create_sum_measurement (epsilon or rho, lower, upper, noise)."""
    return np.asarray(_copies("clipped_sum", data, size), dtype=np.float64)


def grouped_count(data, size, seed):
    """Return `size` rows of noisy counts, one per public group 0 .. groups − 1 of the rows (group labels)."""
    return np.asarray(_copies("grouped_count", data, size), dtype=np.int64)


def _sibling(name):
    """Return the module `name` of this folder, loaded by path (the folder is no longer on sys.path)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(_HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REPLAY = _sibling("replay_side")


@contextlib.contextmanager
def _drawing_from(state):
    """Make every draw of Tumult Core in this process come from `state` for the block: its `prng()`, `random` and numpy's.

    `prng()` hands back its module's generator when the process id is the
    one it was made in, so both are set, and put back after.
    """
    from tmlt.core.random import rng

    saved = rng._core_privacy_prng, rng._core_privacy_prng_pid
    rng._core_privacy_prng, rng._core_privacy_prng_pid = REPLAY.AsGenerator(state), os.getpid()
    try:
        with REPLAY.routed(state):
            yield
    finally:
        rng._core_privacy_prng, rng._core_privacy_prng_pid = saved


def replay(data, size, seed):
    """Return one output: the JSON record of the `inner` measurement recorded on `rows` and replayed on `rows1`."""
    if size != 1:
        raise ValueError("a replay is one run on each dataset; asked for %d" % size)
    inner = str(np.asarray(data["inner"]).ravel()[0])
    if inner not in REPLAYED:
        raise ValueError("a replay replays %s; got kind %r" % (" or ".join(REPLAYED), inner))

    def run(suffix):
        request = dict(data, rows=data["rows" + suffix])

        def once(state):
            with _drawing_from(state):
                return float(globals()[inner](request, 1, None)[0])

        return once

    return [REPLAY.replay(run(""), run("1"), seed)]


def serve(data, size, seed):
    """Return `size` outputs of the kind the request names (its column `kind`): one process serves every kind.

    dpaudit keeps one such process per interpreter, so Spark starts once for
    all the aggregations audited in one run.
    """
    kind = str(np.asarray(data["kind"]).ravel()[0])
    if kind not in KINDS:
        raise ValueError("unknown kind %r; the kinds are %s" % (kind, ", ".join(KINDS)))
    return globals()[kind](data, size, seed)


def main(argv):
    """`describe KIND JSON`: print Tumult's claim and noise for KIND with the parameters JSON, as one JSON line."""
    if len(argv) != 3 or argv[0] != "describe":
        sys.stderr.write("usage: tumult_side.py describe KIND JSON-PARAMS\n")
        return 2
    out = describe(argv[1], json.loads(argv[2]))
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
