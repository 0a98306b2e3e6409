"""The self-contained HTML / Markdown report and `dpaudit audit --report`."""

from __future__ import annotations

import base64
import html
import re

import pytest
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.cli import main
from dpaudit.audit.results.report import render_html, write_report
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.registry import get_mechanism


@pytest.fixture(scope="module")
def audited():
    mech = get_mechanism("randomized_response", epsilon=1.0, k=3)
    return mech, audit_mechanism(mech, trials=30_000, seed=11)


def test_html_holds_meaning_table_counts_and_embedded_png(audited):
    mech, result = audited
    page = render_html(result, event=mech.event)
    text = html.unescape(page)
    assert result.lower_bound.meaning() in text
    assert page.count("<tr>") >= 10 and "<table>" in page
    details = result.to_dict()["lower_bound"]
    for value in (details["held_out"], details["false_positives"], details["false_negatives"]):
        assert f"{value:,}" in text
    assert "seed" in text and f"<td>{result.seed}</td>" in page
    match = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert match is not None
    assert base64.b64decode(match.group(1))[:8] == b"\x89PNG\r\n\x1a\n"


def test_markdown_report_writes_sibling_png(audited, tmp_path):
    mech, result = audited
    path = write_report(result, tmp_path / "audit.md", event=mech.event)
    text = path.read_text(encoding="utf-8")
    assert result.lower_bound.meaning() in text
    assert "![privacy-region plot](audit.png)" in text
    assert (tmp_path / "audit.png").read_bytes()[:4] == b"\x89PNG"
    assert "| verdict | consistent |" in text


def test_report_rejects_unknown_suffix(audited, tmp_path):
    _, result = audited
    with pytest.raises(InvalidParameterError, match=r"\.html or \.md"):
        write_report(result, tmp_path / "audit.pdf")


def test_cli_audit_writes_html_report(tmp_path, capsys):
    path = tmp_path / "rr.html"
    status = main(["audit", "randomized_response", "--trials", "20000", "--seed", "1", "--report", str(path)])
    assert status == 0
    page = path.read_text(encoding="utf-8")
    assert "dpaudit report: randomized_response" in page and "data:image/png;base64," in page
