"""Opacus' make_private on a few rows, as users call it: Opacus' own ε as the claim, the noise its divisor sets."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("opacus")

from dpaudit.audit.audits.two_dataset import audit_mechanism  # noqa: E402
from dpaudit.mechanisms import get_mechanism  # noqa: E402
from dpaudit.mechanisms.base import not_neighbours  # noqa: E402


def test_claim_is_opacus_accountant_at_both_sizes() -> None:
    from opacus.accountants import PRVAccountant

    mech = get_mechanism("opacus_make_private", rows=2, batch_size=2, noise_multiplier=3.0)
    # 2 rows in batches of 2: one step at rate 1; 3 rows: two steps at rate 1/2 (1/len(data_loader)).
    expected = {}
    for rows, rate, steps in ((2, 1.0, 1), (3, 0.5, 2)):
        accountant = PRVAccountant()
        accountant.history = [(3.0, rate, steps)]
        with np.errstate(divide="ignore"):
            expected[str(rows)] = accountant.get_epsilon(1e-5)
    assert mech.params["opacus_epsilon"] == pytest.approx(expected, rel=1e-6)
    assert mech.claim.epsilon == pytest.approx(max(expected.values()), rel=1e-6)


def test_default_pair_adds_a_record_at_the_bound() -> None:
    mech = get_mechanism("opacus_make_private")
    d0, d1 = mech.default_pair
    assert not_neighbours(mech, d0, d1) is None and d1[-1] == 1.0 and np.isnan(d0[-1])


def test_noise_in_the_weights_follows_the_divisor() -> None:
    mech = get_mechanism("opacus_make_private", rows=2, batch_size=2, noise_multiplier=3.0, dimension=16)
    d0, d1 = mech.default_pair
    n = 60
    w0 = mech.sample(d0, n, np.random.default_rng(0))
    w1 = mech.sample(d1, n, np.random.default_rng(1))
    # Records at 0 give no gradient: d0's weights are noise σC/expected_batch_size = 3/2 a coordinate (one step,
    # rate 1, divisor int(2·1) = 2). d1's two steps divide by int(3·½) = 1: noise 3√2 ≈ 4.2 a coordinate.
    # 960 coordinates each: 10% is more than 4 standard errors of a sample standard deviation (1/√(2·960) ≈ 2.3%).
    assert np.std(w0) == pytest.approx(1.5, rel=0.1)
    assert np.std(w1) > 1.5 * np.std(w0)


@pytest.mark.slow
def test_make_private_on_two_rows_is_flagged() -> None:
    """Opacus issues 571 and 819 from the released package: 500 trials certify about 4 against the claim 1.28 (35 s)."""
    result = audit_mechanism(get_mechanism("opacus_make_private"), trials=500, seed=0, confidence=0.95)
    assert result.verdict == "violation"


def _replay(mech, d0, d1, *, itself=False):
    from dpaudit.attacks.replay import replay_pair

    return replay_pair(mech, np.asarray(d0, float), np.asarray(d1, float), seed=np.random.SeedSequence(0), itself=itself)


def test_a_replay_records_opacus_noise_at_the_gradient_sum_and_freezes_it_on_the_neighbour() -> None:
    mech = get_mechanism("opacus_make_private", rows=2, batch_size=2, noise_multiplier=3.0)
    # Two rows at rate 1 (one step, every row sampled, divisor 2); the second record moves from 0 to 1. Its clipped
    # per-sample gradient of the mean squared error at w = 0 is -2x/32 in each of 32 coordinates (norm √32/16 < C = 1).
    r = _replay(mech, [0.0, 0.0], [0.0, 1.0], itself=True)
    assert [d.method for d in r.tape] == ["random", "normal"] and not r.divergences()
    [shift] = r.sensitivity().shifts
    assert (shift.where, shift.law, shift.scale) == ("argument", "normal", 3.0)
    assert shift.l2 == pytest.approx(np.sqrt(32) / 16, rel=1e-6)
    np.testing.assert_allclose(r.release1 - r.release0, 1 / 32, atol=1e-6)  # −lr·Δ(sum)/2 with the noise frozen
    assert r.sensitivity().gaussian_mu == pytest.approx(np.sqrt(32) / 16 / 3.0, rel=1e-6)


def test_a_replay_on_the_default_pair_sees_the_steps_and_the_sample_sized_by_the_private_dataset() -> None:
    mech = get_mechanism("opacus_make_private", rows=2, batch_size=2, noise_multiplier=3.0)
    r = _replay(mech, *mech.default_pair)  # 2 rows: one step at rate 1; 3 rows: two steps at rate 1/2
    assert [(d.index, d.kind) for d in r.divergences()] == [(0, "size"), (2, "count"), (3, "count")]
    assert r.sensitivity().l1 > 0 and r.tape[1].method == "normal"


def test_a_draw_that_goes_around_the_interception_point_is_refused(monkeypatch) -> None:
    import opacus.optimizers.optimizer as optimizer
    from dpaudit.attacks.replay import NotReplayable
    from dpaudit.mechanisms.adapters import opacus_draws

    real = optimizer._generate_noise
    monkeypatch.setattr(opacus_draws, "_noise", lambda torch, rng: real)  # noise from the generator Opacus is handed
    mech = get_mechanism("opacus_make_private", rows=2, batch_size=2, noise_multiplier=3.0)
    with pytest.raises(NotReplayable, match="a source besides the rng"):
        _replay(mech, [0.0, 0.0], [0.0, 1.0], itself=True)


@pytest.mark.slow
def test_audit_replay_of_make_private_flags_the_steps_set_by_the_dataset_and_certifies_the_violation() -> None:
    from dpaudit.audit import audit_replay

    res = audit_replay(get_mechanism("opacus_make_private"), trials=300, seed=0)
    [pair] = res.replay.certified
    assert res.replay.flagged == 1 and {"size", "count"} <= {getattr(f, "kind", "") for f in pair.findings}
    assert res.verdict == "violation"
