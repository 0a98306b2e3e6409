"""run_suite returns a SuiteTable, which its callers use as they used the list of rows: in order, indexed, as JSON."""

import json

from dpaudit.audit.audits.suite import SuiteRow, SuiteTable, run_suite, write
from dpaudit.audit.cli import main

ENTRIES = [("laplace", 20_000), ("histogram_wrong_sensitivity", 20_000)]


def test_the_suite_table_is_a_sequence_of_its_rows_in_order(tmp_path):
    seen = []
    table = run_suite(ENTRIES, seed=0, on_row=seen.append)
    assert isinstance(table, SuiteTable) and all(isinstance(row, SuiteRow) for row in table)
    assert len(table) == 2 and list(table) == seen and table[0] is seen[0] and table[-1] is seen[1]
    assert [row.result.mechanism for row in table] == [name for name, _ in ENTRIES]
    write(table, tmp_path)
    assert json.loads((tmp_path / "suite.json").read_text()) == [row.to_dict() for row in seen]


def test_the_suite_json_is_a_list_of_one_audit_per_mechanism(capsys):
    assert main(["suite", "--only", "laplace", "--json", "--quiet"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["mechanism"] == "laplace" and row["verdict"] == row["expected"] == "consistent" and row["as_expected"]
