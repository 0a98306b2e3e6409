"""Opacus as a target, Dask workers, and the CLI's one-sentence errors."""

import json
import re
import shlex

import pytest
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.audit.cli import main
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig

pytest.importorskip("torch")

SMALL = ["--sample-rate", "1", "--steps", "5", "--noise-multiplier", "5", "--runs", "20", "--quiet", "--json"]


def test_opacus_claim_agrees_with_dpaudits_pld_bound():
    pytest.importorskip("opacus")
    from dpaudit.mechanisms.dpsgd.opacus_target import opacus_epsilon, opacus_rate

    config = DPSGDConfig(noise_multiplier=1.15, sample_rate=256 / 1797, steps=100)
    assert opacus_rate(config, 1797) == 1 / 8
    prv, rdp = opacus_epsilon(config, 1797), opacus_epsilon(config, 1797, accountant="rdp")
    pld = pld_epsilon(poisson_event(1.15, 1 / 8, 100), 1e-5)
    assert prv == pytest.approx(6.929, abs=0.02) and abs(prv - pld) < 0.05 and rdp > prv


@pytest.mark.parametrize("threat", ["black-box", "white-box"])
def test_opacus_trains_with_input_canaries_and_reports_its_own_accountant(threat):
    pytest.importorskip("opacus")
    result = audit_dpsgd(DPSGDConfig(steps=10), target="opacus", canary="crafted", threat=threat, runs=10)
    assert result.mechanism == "opacus" and result.claim.epsilon == result.attack["opacus_prv_epsilon"]
    assert result.attack["sample_rate"] == 1 / 8 and result.verdict == "consistent"
    assert result.upper_bound.epsilon == pytest.approx(result.claim.epsilon, abs=0.05)


def test_the_default_canary_is_one_the_target_takes(capsys):
    pytest.importorskip("opacus")
    plays = {}
    for target in ("opacus", "dpaudit"):
        assert main(["dpsgd", "--target", target, "--steps", "2", "--runs", "10", "--quiet", "--json"]) == 0
        plays[target] = json.loads(capsys.readouterr().out)["attack"]["canary"]
    assert plays == {"opacus": "crafted", "dpaudit": "dirac"}


@pytest.mark.slow
def test_opacus_is_not_flagged_over_20_seeds_of_its_docstring_command(capsys):
    pytest.importorskip("opacus")
    from dpaudit.mechanisms.dpsgd import opacus_target

    argv = shlex.split(re.search(r"`dpaudit (dpsgd [^`]+)`", opacus_target.__doc__).group(1))
    statuses = [main(argv + ["--seed", str(seed), "--json", "--quiet"]) for seed in range(20)]
    capsys.readouterr()
    assert statuses == [0] * 20


def test_dask_workers_give_the_in_process_result(capsys):
    pytest.importorskip("distributed")
    outs = []
    for extra in ([], ["--workers", "2"]):
        assert main(["dpsgd", *SMALL, *extra]) == 0
        out = json.loads(capsys.readouterr().out)
        out.pop("seconds")
        outs.append(out)
    assert outs[0] == outs[1]


@pytest.mark.parametrize("extra, message", [
    (["--target", "opacus", "--canary", "dirac"], "Opacus cannot take gradient-space (Dirac) canaries"),
    (["--target", "opacus", "--bug", "no-clipping"], "takes no bug option"),
    (["--runs", "3"], "'runs'"),
    (["--one-run", "--canaries", "1"], "'canaries'"),
    (["--one-run", "--estimator", "gdp"], "one-run game is certified by one-run or one-run-fdp"),
    (["--noise-multiplier", "-1"], "noise_multiplier"),
    (["--report", "r.pdf"], "must end in .html or .md"),
])
def test_bad_input_is_one_sentence_and_exit_2(extra, message, capsys):
    assert main(["dpsgd", "--steps", "2", "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
