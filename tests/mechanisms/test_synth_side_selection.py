"""The white-box MST score's selection part (mechanisms/scripts/synth_side.py): a log-likelihood ratio of MST's tree draws.

The side script runs inside the generator's environment; its selection functions need numpy and scipy only,
so they are loaded here from the file and checked on every path of a small tree, exactly.
"""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np
from dpaudit.mechanisms.worst_case_tables import TableDomain, selection_pair, worst_case_pair

SIDE = Path(__file__).resolve().parents[2] / "mechanisms" / "scripts" / "synth_side.py"


def _side():
    spec = importlib.util.spec_from_file_location("synth_side_under_test", SIDE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spec(domain, pair):
    return {"target": domain.target().tolist(), "base": pair[0].tolist()}


class _Draws:
    def __init__(self, selected):
        self.selected = selected


def _paths(width):
    """Every sequence of MST's draws on `width` columns: index of the pair drawn among those still unconnected."""
    pairs = list(itertools.combinations(range(width), 2))

    def grow(path, components):
        if len(path) == width - 1:
            yield path, 1.0
            return
        candidates = [e for e in pairs if components[e[0]] != components[e[1]]]
        for k, (i, j) in enumerate(candidates):
            merged = [components[i] if c == components[j] else c for c in components]
            for rest, p in grow(path + [k], merged):
                yield rest, p / len(candidates)

    return list(grow([], list(range(width))))


def test_the_selection_pair_moves_same_parity_pairs_up_and_mixed_pairs_down():
    side, domain = _side(), TableDomain.uniform(4, 2)
    signs = side._selection_signs(_spec(domain, selection_pair(domain, 100)))
    assert signs == {(i, j): (1.0 if (i - j) % 2 == 0 else -1.0) for i, j in itertools.combinations(range(4), 2)}
    assert set(side._selection_signs(_spec(domain, worst_case_pair(domain, 10))).values()) == {1.0}


def test_the_selection_score_is_the_log_likelihood_ratio_of_every_path_of_draws():
    side, domain, c = _side(), TableDomain.uniform(3, 2), 0.4
    spec = _spec(domain, selection_pair(domain, 100))  # signs: (0, 1) −1, (0, 2) +1, (1, 2) −1
    llr = {tuple(path): side._selected_llr(spec, _Draws([(k, c) for k in path])) for path, _ in _paths(3)}
    mean = np.log((np.exp(c) + 2 * np.exp(-c)) / 3)
    assert np.isclose(llr[1, 0], c - mean) and np.isclose(llr[1, 1], c - mean)  # (0, 2) first; then both left are −1
    assert np.isclose(llr[0, 0], -c - mean + c - np.log(np.cosh(c)))  # (0, 1), then (0, 2) of (0, 2), (1, 2)
    assert np.isclose(llr[0, 1], -c - mean - c - np.log(np.cosh(c)))  # (0, 1), then (1, 2)
    total = sum(p * np.exp(llr[tuple(path)]) for path, p in _paths(3))
    assert np.isclose(total, 1.0, rtol=1e-12)  # the base's paths reweighted by the ratio are the target's: a distribution
    outlier = _spec(domain, worst_case_pair(domain, 10))  # the target moves every pair alike: the draws say nothing
    assert all(np.isclose(side._selected_llr(outlier, _Draws([(k, c) for k in path])), 0.0, atol=1e-12) for path, _ in _paths(3))
