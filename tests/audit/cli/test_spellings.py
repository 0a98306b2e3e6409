"""Every option of every Python entry point has its CLI spelling or a stated reason (`audit.cli.spellings`), and the
CLI reference shows them: a new parameter without a flag or a reason fails here."""

import dataclasses
import inspect
import re
from pathlib import Path

import pytest
from dpaudit.audit.cli import build_parser
from dpaudit.audit.cli.spellings import NO_FLAG, SPELLINGS, markdown

ROOT = Path(__file__).resolve().parents[3]


def _owner(name: str):
    from dpaudit.audit import Bound, Execution, audit_canaries, audit_dpsgd, audit_mechanism, audit_scores, audit_tracing
    from dpaudit.audit.audits.auto_trials import AutoBudget
    from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
    from dpaudit.mechanisms.external.processes import external, external_python

    return {"audit_mechanism": audit_mechanism, "AutoBudget": AutoBudget, "external": external,
            "external_python": external_python, "audit_canaries": audit_canaries, "audit_scores": audit_scores,
            "Bound": Bound, "audit_tracing": audit_tracing, "audit_dpsgd": audit_dpsgd, "DPSGDConfig": DPSGDConfig,
            "Execution": Execution}[name]


def _parameters(owner) -> set[str]:
    if dataclasses.is_dataclass(owner):
        return {field.name for field in dataclasses.fields(owner) if field.init}
    return set(inspect.signature(owner).parameters)


def _flags(command: str) -> set[str]:
    parser = build_parser([command])
    sub = next(a for a in parser._actions if isinstance(getattr(a, "choices", None), dict)).choices[command]
    return {flag for action in sub._actions for flag in action.option_strings}


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_every_parameter_has_a_flag_or_a_reason_and_every_flag_named_exists(name):
    command, rows = SPELLINGS[name]
    parameters = _parameters(_owner(name))
    assert parameters - set(rows) == set(), f"{name}: give these a flag, or a reason, in audit/cli/spellings.py"
    assert set(rows) - parameters == set(), f"{name} has no such parameters"
    flags = _flags(command)
    for parameter, spelling in rows.items():
        if spelling.startswith(NO_FLAG):
            assert len(spelling) > len(NO_FLAG) + 5, f"{name}.{parameter}: say why it has no flag"
            continue
        named = set(re.findall(r"--[a-z][a-z0-9-]*", spelling))
        assert named or "NAME" in spelling, f"{name}.{parameter}: {spelling!r} names no flag"
        assert named <= flags, f"{name}.{parameter}: dpaudit {command} has no {sorted(named - flags)}"


def test_the_cli_reference_holds_the_table():
    assert markdown() in (ROOT / "docs" / "cli.md").read_text()
