"""`dpaudit bounds ...` reproduces the check values of REFERENCES §3 and rejects bad input."""

from __future__ import annotations

import json

import pytest
from dpaudit.audit.cli import main


def _json(capsys, *argv):
    assert main(["bounds", *argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    return {row["bound"]: row for row in out["bounds"]}


def test_compose_check_values(capsys):
    rows = _json(capsys, "compose", "--epsilon", "0.1", "--k", "100", "--delta", "1e-5")
    expected = {"basic": 10.0, "advanced": 5.850, "KOV closed form": 5.298, "KOV exact": 4.307, "PLD": 4.307}
    assert {name: round(rows[name]["value"], 3) for name in expected} == expected
    assert rows["KOV exact"]["value"] <= rows["RDP"]["value"]


def test_compose_table_prints_every_bound(capsys):
    assert main(["bounds", "compose", "--epsilon", "0.1", "--k", "100", "--delta", "1e-5"]) == 0
    out = capsys.readouterr().out
    for text in ("10.00000", "5.85024", "5.29811", "4.30679", "Kairouz"):
        assert text in out


def test_compose_with_per_mechanism_delta_marks_inapplicable_bounds(capsys):
    rows = _json(capsys, "compose", "--epsilon", "0.1", "--k", "100", "--delta", "1e-5", "--delta-each", "1e-6")
    assert rows["advanced"]["value"] is None and rows["KOV closed form"]["value"] is None
    assert rows["KOV exact"]["value"] is None  # 1 − (1 − 1e-6)^100 > 1e-5: no finite ε
    assert "RDP" not in rows


def test_gaussian_and_calibration(capsys):
    rows = _json(capsys, "gaussian", "--sigma", "1", "--delta", "1e-5")
    assert round(rows["exact"]["value"], 5) == 4.37718
    assert abs(rows["PLD"]["value"] - rows["exact"]["value"]) < 2e-3
    assert rows["exact"]["value"] <= rows["zCDP (CKS)"]["value"] <= rows["zCDP (BS)"]["value"]
    rows = _json(capsys, "calibrate-gaussian", "--epsilon", "1", "--delta", "1e-5")
    assert round(rows["analytic"]["value"], 5) == 3.73063
    assert round(rows["classical"]["value"], 5) == 4.84481


def test_subsample_shuffle_group_convert(capsys):
    rows = _json(capsys, "subsample", "--epsilon", "1", "--q", "0.01")
    assert rows["Poisson, tight"]["value"] < rows["Smith 2qε"]["value"] == pytest.approx(0.02)
    rows = _json(capsys, "shuffle", "--epsilon0", "1", "--n", "100000", "--delta", "1e-6")
    assert rows["shuffled"]["value"] < 1.0
    rows = _json(capsys, "group", "--epsilon", "0.5", "--delta", "1e-6", "--k", "4")
    assert rows["group of 4"]["value"] == pytest.approx(2.0)
    rows = _json(capsys, "convert", "--epsilon", "1", "--delta", "1e-5", "--alpha", "2")
    assert rows["pure → zCDP (tight)"]["value"] < rows["pure → zCDP (ε²/2)"]["value"]
    assert rows["exact (ε, δ)"]["value"] <= 1.0
    rows = _json(capsys, "convert", "--rho", "0.5", "--delta", "1e-5")
    assert rows["zCDP → (ε, δ) (CKS)"]["value"] < rows["zCDP → (ε, δ) (BS)"]["value"]


def test_convert_with_epsilon_and_rho_gives_the_rows_of_each(capsys):
    both = _json(capsys, "convert", "--epsilon", "1", "--rho", "0.5", "--delta", "1e-5")
    pure = _json(capsys, "convert", "--epsilon", "1", "--delta", "1e-5")
    zcdp = _json(capsys, "convert", "--rho", "0.5", "--delta", "1e-5")
    assert {name: row["value"] for name, row in pure.items()}.items() <= {n: r["value"] for n, r in both.items()}.items()
    assert [row["value"] for name, row in both.items() if name.startswith("--rho")] == [r["value"] for r in zcdp.values()]
    assert len(both) == len(pure) + len(zcdp)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["compose", "--epsilon", "-1", "--k", "3"], "'--epsilon' parameter of dpaudit bounds compose"),
        (["gaussian", "--sigma", "0"], "'--sigma'"),
        (["shuffle", "--epsilon0", "1", "--n", "0"], "'--n'"),
        (["subsample", "--epsilon", "1", "--q", "1.5"], "'--q'"),
        (["convert", "--rho", "0.5"], "needs --delta"),
    ],
)
def test_bad_input_exits_2_with_one_sentence(capsys, argv, needle):
    assert main(["bounds", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
