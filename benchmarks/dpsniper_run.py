"""Run DP-Sniper on one mechanism and one input pair, from DP-Sniper's own checkout; print its bound and wall time as JSON.

DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev, IEEE S&P 2021) is not a
dependency of dpaudit: `dpsniper_comparison.py --dpsniper PATH` runs this
script in a subprocess with PATH (a checkout of github.com/eth-sri/dp-sniper,
plus whatever its imports need) on PYTHONPATH. It runs DP-Sniper's attack on
the given pair as its paper's logistic-regression experiments configure it
(`dpsniper/experiments/exp_default.py`: SGD, 10 epochs), its default sample
sizes (`DDConfig`: 1.07·10⁷ to train, 1.07·10⁷ for the threshold, 2·10⁸ for
the final estimate, 90% confidence) on every core, then its final estimate
(`DDWitness.compute_eps_high_precision`). The pair is the one DP-Sniper's
DD-search chose in its reference results, so the search itself is not timed.

Run: PYTHONPATH=CHECKOUT python benchmarks/dpsniper_run.py '{"mechanism": "LaplaceMechanism", ...}'
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import time


def run(spec: dict) -> dict:
    """Return DP-Sniper's certified lower bound (eps_lcb), its estimate and the wall seconds of attack and final estimate.

    `spec`: mechanism (a class of `dpsniper.mechanisms`), kwargs, a1, a2,
    output_size, flags (special values for `FlagsFeatureTransformer`, or None).
    """
    import numpy as np
    from dpsniper.attack.dpsniper import DPSniper
    from dpsniper.classifiers.classifier_factory import LogisticRegressionFactory
    from dpsniper.classifiers.feature_transformer import FlagsFeatureTransformer
    from dpsniper.classifiers.torch_optimizer_factory import SGDOptimizerFactory
    from dpsniper.mechanisms import laplace, noisy_hist, report_noisy_max, sparse_vector_technique
    from dpsniper.search.ddconfig import DDConfig
    from dpsniper.search.ddwitness import DDWitness
    from dpsniper.utils.initialization import initialize_dpsniper

    modules = (laplace, noisy_hist, report_noisy_max, sparse_vector_technique)
    cls = next(getattr(m, spec["mechanism"]) for m in modules if hasattr(m, spec["mechanism"]))
    mechanism = cls(**spec.get("kwargs", {}))
    flags = spec.get("flags")
    factory = LogisticRegressionFactory(
        feature_transform=None if flags is None else FlagsFeatureTransformer(flags),
        in_dimensions=spec["output_size"],
        optimizer_factory=SGDOptimizerFactory(learning_rate=0.3, momentum=0.3, step_size=500),
        regularization_weight=0.001, epochs=10, label=spec["mechanism"])
    config = DDConfig(n_processes=multiprocessing.cpu_count())
    a1, a2 = np.array(spec["a1"], dtype=float), np.array(spec["a2"], dtype=float)
    with tempfile.TemporaryDirectory() as out, initialize_dpsniper(config, out_dir=out):
        start = time.perf_counter()
        attack = DPSniper(mechanism, factory, config).best_attack(a1, a2)
        witness = DDWitness(a1, a2, attack)
        witness.compute_eps_high_precision(mechanism, config)
        seconds = time.perf_counter() - start
    return {"eps_lcb": float(witness.lower_bound), "eps": float(witness.eps), "seconds": seconds,
            "processes": config.n_processes}


def main(argv: list[str] | None = None) -> None:
    """Parse the one argument, the spec as JSON (argparse: --help, and one sentence for a spec that is not JSON); print the result."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", type=_spec, help='the run as JSON: {"mechanism": "LaplaceMechanism", "kwargs": {...}, '
                                                 '"a1": [...], "a2": [...], "output_size": 1, "flags": null}')
    print(json.dumps(run(parser.parse_args(argv).spec)))


def _spec(text: str) -> dict:
    """Return the spec of the command line, or raise argparse's error when it is not a JSON object."""
    try:
        spec = json.loads(text)
    except json.JSONDecodeError:
        spec = None
    if not isinstance(spec, dict):
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not a JSON object such as '{{\"mechanism\": \"LaplaceMechanism\"}}'")
    return spec


if __name__ == "__main__":
    main()
