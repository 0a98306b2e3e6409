"""One-run canaries stay inside the width a mechanism declares (issue 47): distinct up to 2·width, refused beyond."""

import numpy as np
import pytest
from dpaudit.attacks.canary_design import DEFAULT_DIM
from dpaudit.attacks.games import OneRun
from dpaudit.audit.audits.canaries import audit_canaries
from dpaudit.mechanisms import InvalidParameterError, blackbox
from dpaudit.mechanisms.records import VectorRecords

WIDTH = 10


def _recording_sum(widths: list[int]):
    """Return an ℓ1 sum over records of any width, noting each dataset's record width in `widths`."""

    def noisy_sum(d, rng, size):
        d = np.asarray(d, dtype=float)
        widths.append(d.shape[1])
        return d.sum(axis=0) + rng.laplace(0.0, 1.0, (size, d.shape[1]))
    return noisy_sum


@pytest.mark.parametrize("canaries", [2, WIDTH, 2 * WIDTH])
def test_one_run_canaries_keep_the_declared_width(canaries):
    widths: list[int] = []
    mech = blackbox(_recording_sum(widths), epsilon=1.0, records=VectorRecords(order=1, width=WIDTH))
    result = audit_canaries(mech, game=OneRun(canaries), seed=0)
    assert widths and set(widths) == {WIDTH}
    assert result.observations.size == canaries


def test_more_canaries_than_the_width_allows_are_refused_naming_the_most():
    widths: list[int] = []
    mech = blackbox(_recording_sum(widths), epsilon=1.0, records=VectorRecords(order=1, width=WIDTH))
    with pytest.raises(InvalidParameterError, match=f"at most {2 * WIDTH} distinct"):
        audit_canaries(mech, game=OneRun(100), seed=0)
    assert widths == []
    with pytest.raises(InvalidParameterError, match=f"at most {2 * WIDTH} distinct"):
        audit_canaries(blackbox(_recording_sum(widths), epsilon=1.0, records=VectorRecords(order=1)),
                       game=OneRun(100), dim=WIDTH, seed=0)


def test_an_undeclared_width_grows_with_the_canaries():
    widths: list[int] = []
    mech = blackbox(_recording_sum(widths), epsilon=1.0, records=VectorRecords(order=1))
    audit_canaries(mech, game=OneRun(DEFAULT_DIM + 5), seed=0)
    assert set(widths) == {DEFAULT_DIM + 5}
