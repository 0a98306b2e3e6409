"""Results show themselves in Jupyter: verdict, the rows of summary(), the plot inline; every text escaped."""

from __future__ import annotations

import base64
import dataclasses
import html
import io
import re
import subprocess
import sys

import numpy as np
import pytest
from dpaudit.attacks.games import MultiRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import audit_scores
from dpaudit.audit.audits.suite import COLUMNS, SuiteRow, SuiteTable, cells
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.results.notebook import DPI
from dpaudit.audit.results.result import AuditResult, MembershipResult, Result
from dpaudit.audit.theory.upper_bound import UpperBound
from dpaudit.mechanisms import Claim, blackbox
from matplotlib.image import imread

HOSTILE = '<script>alert("$x$")</script> & co'
"""A mechanism name with markup, quotes, an ampersand and a pair of dollar signs (mathtext to matplotlib)."""


def _leaky(data, rng, size):
    return np.sum(data) + rng.laplace(0.0, 0.5, size)


@pytest.fixture(scope="module")
def two_dataset() -> AuditResult:
    """A two-dataset audit of a Laplace count with half the noise its claim needs: a violation, under a hostile name."""
    return audit_mechanism(blackbox(_leaky, epsilon=1.0, name=HOSTILE, null_record=0.0), [0.0], [1.0], trials=20_000, seed=0)


@pytest.fixture(scope="module")
def membership() -> MembershipResult:
    """A multi-run audit of saved scores that separate members, with a hostile name and a hostile attack fact."""
    rng = np.random.default_rng(0)
    obs = Observations(scores=np.concatenate([rng.normal(3.0, 1.0, 300), rng.normal(0.0, 1.0, 300)]),
                       truth=np.arange(600) < 300)
    result = audit_scores(obs, game=MultiRun(), bound=Bound("threshold"), claim=Claim(1.0, 1e-5))
    return dataclasses.replace(result, mechanism=HOSTILE, attack={"note": "<img src=x onerror=alert(1)>"})


def _images(page: str) -> list[np.ndarray]:
    """Return the PNG images embedded in `page` as data URIs, decoded."""
    return [imread(io.BytesIO(base64.b64decode(data))) for data in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]


def _shows_its_rows(result: Result, page: str) -> bool:
    return all(f"<tr><th>{html.escape(key)}</th><td>{html.escape(value)}</td></tr>" in page for key, value in result.rows())


def test_a_two_dataset_result_shows_its_verdict_rows_meaning_and_privacy_region_plot(two_dataset):
    page = two_dataset._repr_html_()
    assert two_dataset.verdict == "violation"
    assert '<span class="verdict flagged">VIOLATION</span>' in page
    assert _shows_its_rows(two_dataset, page)
    assert html.escape(two_dataset.lower_bound.meaning()) in page
    [image] = _images(page)
    width, height = two_dataset.figure().get_size_inches() * DPI
    assert image.shape[:2] == (round(height), round(width))


def test_a_membership_result_shows_its_verdict_rows_and_score_plot(membership):
    page = membership._repr_html_()
    assert membership.verdict == "violation"
    assert html.escape("<img src=x onerror=alert(1)>") in page
    assert '<span class="verdict flagged">VIOLATION</span>' in page
    assert _shows_its_rows(membership, page)
    assert len(_images(page)) == 1


def test_a_membership_result_without_its_scores_shows_no_plot(membership):
    bare = dataclasses.replace(membership, observations=None)
    page = bare._repr_html_()
    assert _shows_its_rows(bare, page) and "<img" not in page


@pytest.mark.parametrize("kind", ["two_dataset", "membership"])
def test_hostile_names_and_facts_are_escaped(kind, request):
    page = request.getfixturevalue(kind)._repr_html_()
    assert html.escape(HOSTILE) in page
    assert "<script" not in page and "<img src=x" not in page


def test_a_consistent_result_is_not_flagged_and_a_result_without_a_plot_shows_none():
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Plain(Result):
        def rows(self) -> list[tuple[str, str]]:
            return [("lower bound", f"ε = {self.lower_bound.epsilon:.4f}"), ("verdict", str(self.verdict))]

    result = Plain(lower_bound=LowerBound(0.5, 0.95, "test", trials=100), seconds=0.0, seed=0, mechanism="m",
                   claim=Claim(1.0), upper_bound=UpperBound(1.0, 0.0, "claim"))
    page = result._repr_html_()
    assert '<span class="verdict">consistent</span>' in page and _shows_its_rows(result, page) and "<img" not in page


def _row(name: str, epsilon: float, buggy: bool) -> SuiteRow:
    lower = LowerBound(epsilon, 0.95, "clopper-pearson", trials=1000)
    result = AuditResult(mechanism=name, claim=Claim(1.0), upper_bound=UpperBound(1.0, 0.0, "exact"), lower_bound=lower,
                         seconds=0.5, seed=0)
    return SuiteRow(result, "add-remove", "violation" if buggy else "consistent")


def test_the_suite_table_shows_every_cell_and_names_the_unexpected_verdicts():
    table = SuiteTable((_row(HOSTILE, 0.9, False), _row("missed_bug", 0.8, True), _row("found_bug", 2.0, True)))
    page = table._repr_html_()
    assert table.unexpected == ["missed_bug"]
    assert '<span class="verdict flagged">unexpected verdicts: missed_bug</span>' in page
    assert "".join(f"<th>{html.escape(column)}</th>" for column in COLUMNS) in page
    for row in table:
        assert "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells(row)) + "</tr>" in page
    assert html.escape(HOSTILE) in page and "<script" not in page


def test_a_suite_with_every_verdict_expected_is_not_flagged():
    page = SuiteTable((_row("laplace", 0.9, False), _row("found_bug", 2.0, True)))._repr_html_()
    assert '<span class="verdict">every verdict as expected (2 mechanisms)</span>' in page


def test_importing_dpaudit_audit_and_its_result_classes_loads_no_matplotlib():
    code = ("import sys\nfrom dpaudit.audit import AuditResult, MembershipResult, Result, SuiteTable\n"
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
