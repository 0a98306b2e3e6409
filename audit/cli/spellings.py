"""How each option of the Python entry points is spelled on the command line, or why it has no flag.

One row per parameter of each entry point (and per field of the objects
that carry options: `Bound`, `Execution`, `AutoBudget`, `DPSGDConfig`, the
external constructors): the flags that set it, or `NO_FLAG` and the
reason. `tests/audit/cli/test_spellings.py` checks that every parameter has
a row (so a new parameter without a flag or a stated reason fails), that
every flag a row names exists in its command's parser, and that the CLI
reference (docs/cli.md) holds the table `markdown()` writes.
"""

from __future__ import annotations

__all__ = ["NO_FLAG", "SPELLINGS", "markdown"]

NO_FLAG = "no flag"
"""The first word of a row whose parameter has no flag: the reason follows."""

_MECHANISM = "NAME (a built-in or module:attr)"
_BOUND = "--estimator, --confidence, --at-delta"
_STRATEGY = f"{NO_FLAG}: the estimator's default threshold strategy (Python: Bound(strategy=...))"

SPELLINGS: dict[str, tuple[str, dict[str, str]]] = {
    "audit_mechanism": ("audit", {
        "mechanism": f"{_MECHANISM}, --command 'CMD ARGS', or NAME with --python PATH; --param, --epsilon, --delta",
        "d0": "--d0 JSON", "d1": "--d1 JSON",
        "trials": "--trials N, auto or sequential (left out: sequential for expensive draws, else 10⁶)", "seed": "--seed",
        "confidence": "--confidence", "delta": f"{NO_FLAG}: δ of the bound is the claim's (--delta)",
        "progress": "on unless --quiet (a bar when stderr is a terminal)", "workers": "--workers N",
        "scheduler": "--scheduler ADDRESS", "search": "--search", "interval": "--interval KIND",
        "budget": "--max-trials, --max-seconds, --tight", "bound": "--confidence, --interval",
        "execution": "--workers, --scheduler, --quiet",
    }),
    "AutoBudget": ("audit", {
        "max_trials": "--max-trials", "max_seconds": "--max-seconds", "tight": "--tight",
        "give_up": f"{NO_FLAG}: the default stopping rule (Python: AutoBudget(give_up=...))",
    }),
    "external": ("audit", {
        "command": "--command 'CMD ARGS'", "epsilon": "--epsilon", "delta": "--delta", "relation": "--relation",
        "name": f"{NO_FLAG}: the command line names it", "default_pair": "--d0, --d1",
        "neighbours": f"{NO_FLAG}: a Python function (Python: external(..., neighbours=...))",
        "null_record": "--null-record JSON", "timeout": "--timeout SECONDS",
    }),
    "external_python": ("audit", {
        "python": "--python PATH", "module_attr": "NAME (module:attr)", "epsilon": "--epsilon", "delta": "--delta",
        "relation": "--relation", "name": f"{NO_FLAG}: NAME names it", "default_pair": "--d0, --d1",
        "neighbours": f"{NO_FLAG}: a Python function (Python: external_python(..., neighbours=...))",
        "null_record": "--null-record JSON", "timeout": "--timeout SECONDS",
        "path": f"{NO_FLAG}: the current folder (Python: path=[...])", "check": f"{NO_FLAG}: always checked",
        "binary": f"{NO_FLAG}: .npy replies whenever the function returns numbers",
    }),
    "audit_canaries": ("canary", {
        "mech": f"{_MECHANISM}; --param, --epsilon, --delta, --relation, --null-record",
        "game": "--runs R (multi-run), --runs sequential with --max-runs R (MultiRun(R, sequential=True)), "
                "or --one-run with --canaries M, --k-plus, --k-minus (dpaudit one-run)",
        "bound": _BOUND, "canary": "--canary MODE", "scorer": "--scorer", "dim": "--dim", "norm": "--norm",
        "seed": "--seed", "execution": "--workers, --scheduler, --quiet",
    }),
    "audit_scores": ("canary", {
        "obs": "--scores FILE", "game": "--one-run, --k-plus, --k-minus (the size is the scores')", "bound": _BOUND,
        "claim": "--epsilon, --delta", "seed": "--seed", "label": f"{NO_FLAG}: the file's name",
        "execution": f"{NO_FLAG}: nothing is played (--workers and --scheduler are refused with --scores)",
    }),
    "Bound": ("canary", {
        "estimator": "--estimator", "confidence": "--confidence", "delta": "--at-delta", "strategy": _STRATEGY,
    }),
    "audit_tracing": ("trace", {
        "mech": f"{_MECHANISM}; --param, --epsilon, --delta, --relation, --null-record",
        "game": "--runs R, or --one-run with --canaries M, --k-plus, --k-minus", "bound": _BOUND,
        "rows": "--rows", "dim": "--dim", "scorer": "--scorer", "reference_rows": "--reference-rows",
        "biases": "--biases", "fresh_data": "--fresh-data", "group_size": "--group", "seed": "--seed",
        "execution": "--workers, --scheduler, --quiet",
    }),
    "audit_dpsgd": ("dpsgd", {
        "config": "--model, --data, --noise-multiplier, --clip-norm, --sample-rate, --steps, --learning-rate, "
                  "--batching, --delta, --bug",
        "target": "--target", "game": "--runs R, --runs sequential with --max-runs R (MultiRun(R, sequential=True)), "
                                      "or --one-run with --canaries M, --k-plus, --k-minus",
        "bound": _BOUND, "canary": "--canary", "dirac_target": "--dirac-target", "threat": "--threat",
        "scorer": "--scorer", "runs": "--runs (R or sequential)", "dataset": "--data (a user's trainer)",
        "execution": "--workers, --scheduler, --store, --resume, --quiet", "seed": "--seed",
    }),
    "DPSGDConfig": ("dpsgd", {
        "model": "--model", "data": "--data", "noise_multiplier": "--noise-multiplier", "clip_norm": "--clip-norm",
        "sample_rate": "--sample-rate", "steps": "--steps", "learning_rate": "--learning-rate",
        "batching": "--batching", "delta": "--delta", "bug": "--bug",
    }),
    "Execution": ("dpsgd", {
        "workers": "--workers N", "scheduler": "--scheduler ADDRESS", "progress": "on unless --quiet",
        "store": "--store DIR", "resume": "--resume",
    }),
}
"""Entry point or options object → (the command whose parser has its flags, parameter → flags or NO_FLAG: reason)."""


def markdown() -> str:
    """Return the table of docs/cli.md: one row per parameter, its entry point, its command and its flags."""
    lines = ["| Python | parameter | command | on the command line |", "|---|---|---|---|"]
    for owner, (command, rows) in SPELLINGS.items():
        lines += [f"| `{owner}` | `{name}` | `dpaudit {command}` | {flags} |" for name, flags in rows.items()]
    return "\n".join(lines)
