"""`dpaudit bounds KIND ...`: a calculator printing every applicable theory bound side by side.

Each KIND is one entry of `KINDS`: its help line, the function adding its
arguments, and the function computing its rows. A new calculator is one
entry. The theory and `dp_accounting` load only when a calculator runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from dpaudit.audit.cli.common import Container
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_delta, check_epsilon, check_int, check_real

if TYPE_CHECKING:
    from rich.table import Table

_DEFAULT_ALPHAS = (2.0, 5.0, 10.0, 32.0)


@dataclasses.dataclass(frozen=True)
class Row:
    """One bound: `quantity` (ε, σ, ρ, ...) equals `value` at `delta`, by `theorem`; value None if n/a."""

    bound: str
    value: float | None
    theorem: str
    delta: float | None = None
    quantity: str = "ε"

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form (value None when not applicable or infinite)."""
        value = self.value if self.value is not None and math.isfinite(self.value) else None
        return {"bound": self.bound, "quantity": self.quantity, "value": value, "delta": self.delta,
                "theorem": self.theorem}


def _owner(args: argparse.Namespace) -> str:
    return f"dpaudit bounds {args.bounds_command}"


def _compose_rows(args: argparse.Namespace) -> list[Row]:
    """k-fold composition of an (ε, δ0)-DP mechanism, at total δ."""
    from dpaudit.audit import theory

    owner = _owner(args)
    eps = check_epsilon(args.epsilon, "--epsilon", owner)
    k = check_int(args.k, "--k", owner)
    d0 = check_delta(args.delta_each, "--delta-each", owner)
    target = check_real(args.delta, "--delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    basic_eps, basic_delta = theory.basic_composition(epsilon=eps, delta=d0, k=k)
    rows = [Row("basic", basic_eps, "basic composition (Dwork et al. 2006)", basic_delta)]
    slack = target - k * d0
    if slack > 0:
        adv_eps, adv_delta = theory.advanced_composition(epsilon=eps, delta=d0, k=k, delta_prime=slack)
        rows.append(Row("advanced", adv_eps, "Dwork, Rothblum, Vadhan 2010, Thm III.3", adv_delta))
    else:
        rows.append(Row("advanced", None, f"needs --delta > k·δ0 = {k * d0:g}"))
    survive = (1.0 - d0) ** k
    kov_slack = 1.0 - (1.0 - target) / survive
    if kov_slack > 0:
        kov_eps, kov_total = theory.kov_closed_form(epsilon=eps, delta=d0, k=k, delta_prime=kov_slack)
        rows.append(Row("KOV closed form", kov_eps, "Kairouz, Oh, Viswanath 2015, Thm 3.4", kov_total))
    else:
        rows.append(Row("KOV closed form", None, f"needs --delta > 1 − (1 − δ0)^k = {1 - survive:g}"))
    rows.append(Row("KOV exact", theory.kov_epsilon(epsilon=eps, delta=d0, k=k, target_delta=target),
                    "Kairouz, Oh, Viswanath 2015, Thm 3.3 (optimal)", target))
    rows.append(_numerical_row(
        "PLD", k, lambda: theory.pld_composition_epsilon(epsilon=eps, delta=d0, k=k, target_delta=target),
        "dp_accounting privacy loss distribution (numerical)", target))
    if d0 == 0:
        rows.append(Row("RDP", theory.rdp_composition_epsilon(epsilon=eps, k=k, target_delta=target),
                        "pure → RDP (Steinke 2024) + Canonne–Kamath–Steinke 2020 conversion", target))
    return rows


PLD_MAX_K = 1000


def _numerical_row(bound: str, k: int, compute: Callable[[], float], theorem: str, delta: float) -> Row:
    """Return the row of a numerical accountant, or an empty row saying why it was not computed.

    Above PLD_MAX_K compositions the PLD takes minutes; a discretisation the
    accountant cannot hold (e.g. a tiny σ) is reported, not raised.
    """
    if k > PLD_MAX_K:
        return Row(bound, None, f"not computed for k > {PLD_MAX_K} (slow); the exact rows hold", delta)
    try:
        return Row(bound, float(compute()), theorem, delta)
    except (ValueError, MemoryError, OverflowError) as exc:
        return Row(bound, None, f"not computed: {exc}", delta)


def _gaussian_rows(args: argparse.Namespace) -> list[Row]:
    """ε at δ of k compositions of the Gaussian mechanism with noise σ and ℓ2-sensitivity Δ."""
    from dp_accounting import dp_event
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant
    from dpaudit.audit import theory

    owner = _owner(args)
    sigma = check_real(args.sigma, "--sigma", owner, low=0.0, low_open=True)
    sens = check_real(args.sensitivity, "--sensitivity", owner, low=0.0, low_open=True)
    k = check_int(args.k, "--k", owner)
    delta = check_real(args.delta, "--delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    effective = sigma / math.sqrt(k)
    event = dp_event.GaussianDpEvent(sigma / sens)
    rdp = RdpAccountant()
    rdp.compose(event, k)
    rho = k * sens**2 / (2.0 * sigma**2)
    return [
        Row("exact", theory.gaussian_epsilon(delta=delta, sigma=effective, sensitivity=sens),
            "Balle & Wang 2018, Thm 8 (k-fold = σ/√k)", delta),
        _numerical_row("PLD", k, lambda: PLDAccountant().compose(event, k).get_epsilon(delta),
                      "dp_accounting PLD accountant", delta),
        Row("RDP", rdp.get_epsilon(delta), "dp_accounting RDP accountant", delta),
        Row("zCDP (CKS)", theory.zcdp_to_dp(rho=rho, delta=delta),
            f"ρ = kΔ²/(2σ²) = {rho:.5g}; Canonne, Kamath, Steinke 2020, Prop. 12", delta),
        Row("zCDP (BS)", theory.zcdp_to_dp_simple(rho=rho, delta=delta),
            "ρ + 2√(ρ log(1/δ)); Bun & Steinke 2016, Prop. 1.3", delta),
    ]


def _calibrate_gaussian_rows(args: argparse.Namespace) -> list[Row]:
    """σ needed for (ε, δ)-DP: analytic (exact) against the classical formula."""
    from dpaudit.audit import theory

    owner = _owner(args)
    eps = check_real(args.epsilon, "--epsilon", owner, low=0.0, low_open=True)
    delta = check_real(args.delta, "--delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    sens = check_real(args.sensitivity, "--sensitivity", owner, low=0.0, low_open=True)
    analytic = theory.gaussian_sigma(epsilon=eps, delta=delta, sensitivity=sens)
    classical = theory.classical_gaussian_sigma(epsilon=eps, delta=delta, sensitivity=sens)
    exact = theory.gaussian_epsilon(delta=delta, sigma=classical, sensitivity=sens)
    validity = "valid" if eps < 1 else "NOT valid for ε ≥ 1"
    return [
        Row("analytic", analytic, "Balle & Wang 2018, Thm 8 / Alg. 1 (smallest σ)", delta, "σ"),
        Row("classical", classical, f"Dwork & Roth 2014, Thm A.1 ({validity})", delta, "σ"),
        Row("classical σ's true ε", exact, "Balle & Wang 2018, Thm 8", delta),
    ]


def _subsample_rows(args: argparse.Namespace) -> list[Row]:
    """Amplification by Poisson subsampling with rate q."""
    from dpaudit.audit import theory

    owner = _owner(args)
    eps = check_epsilon(args.epsilon, "--epsilon", owner)
    d0 = check_delta(args.delta_each, "--delta-each", owner)
    q = check_real(args.q, "--q", owner, low=0.0, high=1.0)
    tight_eps, tight_delta = theory.poisson_subsampled(epsilon=eps, delta=d0, q=q)
    rows = [
        Row("no amplification", eps, "the mechanism itself", d0),
        Row("Poisson, tight", tight_eps, "log(1 + q(e^ε − 1)); Balle, Barthe, Gaboardi 2018, Thm 8", tight_delta),
    ]
    if eps <= 1 and d0 == 0:
        rows.append(Row("Smith 2qε", theory.smith_subsampled(epsilon=eps, q=q), "Smith 2009 (pure ε ≤ 1)", 0.0))
    else:
        rows.append(Row("Smith 2qε", None, "applies to pure ε ≤ 1 only"))
    return rows


def _shuffle_rows(args: argparse.Namespace) -> list[Row]:
    """Amplification by shuffling n reports of an ε0-LDP randomizer."""
    from dpaudit.audit import theory

    owner = _owner(args)
    eps0 = check_epsilon(args.epsilon0, "--epsilon0", owner)
    n = check_int(args.n, "--n", owner)
    delta = check_real(args.delta, "--delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    holds = theory.shuffling_condition(epsilon0=eps0, num_users=n, delta=delta)
    note = "" if holds else " — condition ε0 ≤ log(n/(16 log(4/δ))) fails, so ε0"
    return [
        Row("local (no shuffling)", eps0, "the randomizer itself", 0.0),
        Row("shuffled", theory.shuffled_epsilon(epsilon0=eps0, num_users=n, delta=delta),
            f"Feldman, McMillan, Talwar 2021, Thm 3.1{note}", delta),
    ]


def _group_rows(args: argparse.Namespace) -> list[Row]:
    """Group privacy for datasets k records apart."""
    from dpaudit.audit import theory

    owner = _owner(args)
    eps = check_epsilon(args.epsilon, "--epsilon", owner)
    delta = check_delta(args.delta, "--delta", owner)
    k = check_int(args.k, "--k", owner)
    group_eps, group_delta = theory.group_privacy(epsilon=eps, delta=delta, group_size=k)
    return [
        Row("one record", eps, "the mechanism itself", delta),
        Row(f"group of {k}", group_eps, "(kε, δ(e^{kε} − 1)/(e^ε − 1)); Vadhan 2017, Lemma 2.2", group_delta),
    ]


def _convert_rows(args: argparse.Namespace) -> list[Row]:
    """Pure ε → zCDP and RDP (tight), and zCDP → (ε, δ) in both forms: of --epsilon, of --rho, or of each."""
    owner = _owner(args)
    delta = None if args.delta is None else check_real(
        args.delta, "--delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    if args.rho is None and args.epsilon is None:
        raise InvalidParameterError(f"{owner} needs --epsilon (pure DP), --rho (zCDP), or both.")
    rows: list[Row] = []
    if args.rho is not None:
        if delta is None:
            raise InvalidParameterError(f"{owner} --rho needs --delta, the δ to convert to.")
        rows = _zcdp_rows(check_real(args.rho, "--rho", owner, low=0.0), delta, given=args.epsilon is not None)
    if args.epsilon is None:
        return rows
    return _pure_rows(check_epsilon(args.epsilon, "--epsilon", owner), args.alpha, delta, owner) + rows


def _pure_rows(eps: float, alphas_given: list[float] | None, delta: float | None, owner: str) -> list[Row]:
    """Pure ε → zCDP and RDP (tight), and with `delta` → (ε, δ) through each."""
    from dpaudit.audit import theory
    from dpaudit.audit.theory.composition import RDP_ORDERS

    alphas = [check_real(a, "--alpha", owner, low=1.0, low_open=True) for a in alphas_given or _DEFAULT_ALPHAS]
    rho = theory.pure_to_zcdp(epsilon=eps)
    rows = [
        Row("pure → zCDP (tight)", rho, "ε(e^ε − 1)/(e^ε + 1); Steinke 2024, Thm 5", quantity="ρ"),
        Row("pure → zCDP (ε²/2)", eps * eps / 2.0, "Bun & Steinke 2016, Prop. 1.4", quantity="ρ"),
        *[Row(f"pure → RDP (α = {a:g})", theory.pure_to_rdp(epsilon=eps, alpha=a), "Steinke 2024, Thm 4",
              quantity="ε̂(α)") for a in alphas],
    ]
    if delta is not None:
        rdp = [theory.pure_to_rdp(epsilon=eps, alpha=a) for a in RDP_ORDERS]
        rows.append(Row("exact (ε, δ)", theory.randomized_response_epsilon(delta=delta, epsilon0=eps),
                        "randomized response profile (KOV 2015, Thm 2.1)", delta))
        rows.append(Row("pure → RDP → (ε, δ)", theory.rdp_to_dp(alphas=RDP_ORDERS, rdp=rdp, delta=delta),
                        "Canonne, Kamath, Steinke 2020, Prop. 12", delta))
        rows.extend(_zcdp_rows(rho, delta))
    return rows


def _zcdp_rows(rho: float, delta: float, *, given: bool = False) -> list[Row]:
    """zCDP ρ → (ε, δ) in both forms; `given`: labelled as --rho's, beside the rows converted from --epsilon."""
    from dpaudit.audit import theory

    source = "--rho " if given else ""
    return [
        Row(f"{source}zCDP → (ε, δ) (CKS)", theory.zcdp_to_dp(rho=rho, delta=delta),
            f"ρ = {rho:.5g}; Canonne, Kamath, Steinke 2020, Cor. 13", delta),
        Row(f"{source}zCDP → (ε, δ) (BS)", theory.zcdp_to_dp_simple(rho=rho, delta=delta),
            "ρ + 2√(ρ log(1/δ)); Bun & Steinke 2016, Prop. 1.3", delta),
    ]


def render(title: str, rows: list[Row]) -> Table:
    """Return the rich table of `rows`."""
    from dpaudit.audit.results.render import fmt
    from rich.table import Table

    table = Table(title=title)
    for column, justify in (("bound", "left"), ("quantity", "left"), ("value", "right"), ("δ", "right"),
                            ("theorem", "left")):
        table.add_column(column, justify=justify)
    for row in rows:
        delta = "" if row.delta is None else f"{row.delta:.4g}"
        table.add_row(row.bound, row.quantity, fmt(row.value, decimals=5), delta, row.theorem)
    return table


def _epsilon_of_one(add: Callable[..., Any]) -> None:
    add("--epsilon", type=float, required=True, help="ε of one mechanism")


def _target_delta(add: Callable[..., Any], what: str = "target δ") -> None:
    add("--delta", type=float, default=1e-5, help=f"{what} (default 1e-5)")


def _sensitivity(add: Callable[..., Any]) -> None:
    add("--sensitivity", type=float, default=1.0, help="ℓ2-sensitivity (default 1)")


def _compose_arguments(add: Callable[..., Any]) -> None:
    _epsilon_of_one(add)
    add("--k", type=int, required=True, help="number of mechanisms composed")
    _target_delta(add, "target total δ")
    add("--delta-each", type=float, default=0.0, help="δ of each mechanism (default 0)")


def _gaussian_arguments(add: Callable[..., Any]) -> None:
    add("--sigma", type=float, required=True, help="standard deviation of the noise")
    _sensitivity(add)
    add("--k", type=int, default=1, help="number of compositions (default 1)")
    _target_delta(add)


def _calibrate_gaussian_arguments(add: Callable[..., Any]) -> None:
    add("--epsilon", type=float, required=True, help="target ε")
    _target_delta(add)
    _sensitivity(add)


def _subsample_arguments(add: Callable[..., Any]) -> None:
    _epsilon_of_one(add)
    add("--q", type=float, required=True, help="Poisson sampling rate")
    add("--delta-each", type=float, default=0.0, help="δ of the mechanism (default 0)")


def _shuffle_arguments(add: Callable[..., Any]) -> None:
    add("--epsilon0", type=float, required=True, help="ε0 of the local randomizer")
    add("--n", type=int, required=True, help="number of users")
    _target_delta(add)


def _group_arguments(add: Callable[..., Any]) -> None:
    _epsilon_of_one(add)
    add("--delta", type=float, default=0.0, help="δ of the mechanism (default 0)")
    add("--k", type=int, required=True, help="group size (records apart)")


def _convert_arguments(add: Callable[..., Any]) -> None:
    add("--epsilon", type=float, help="pure ε to convert")
    add("--rho", type=float, help="zCDP ρ to convert")
    add("--alpha", type=float, action="append", help="Rényi order (repeatable; default 2, 5, 10, 32)")
    add("--delta", type=float, help="δ for conversions to (ε, δ)")


class Kind(NamedTuple):
    """One calculator: its help line, the function adding its arguments, and the function computing its rows."""

    help: str
    add_arguments: Callable[[Callable[..., Any]], None]
    rows: Callable[[argparse.Namespace], list[Row]]


KINDS: dict[str, Kind] = {
    "compose": Kind("k-fold composition of an (ε, δ)-DP mechanism", _compose_arguments, _compose_rows),
    "gaussian": Kind("ε(δ) of the Gaussian mechanism (k-fold)", _gaussian_arguments, _gaussian_rows),
    "calibrate-gaussian": Kind("σ for (ε, δ)-DP: analytic vs classical", _calibrate_gaussian_arguments,
                               _calibrate_gaussian_rows),
    "subsample": Kind("amplification by Poisson subsampling", _subsample_arguments, _subsample_rows),
    "shuffle": Kind("amplification by shuffling (Feldman, McMillan, Talwar)", _shuffle_arguments, _shuffle_rows),
    "group": Kind("group privacy for k records", _group_arguments, _group_rows),
    "convert": Kind("pure → zCDP / RDP, zCDP → (ε, δ)", _convert_arguments, _convert_rows),
}
"""KIND of `dpaudit bounds KIND` → its calculator."""


def run(args: argparse.Namespace) -> int:
    """Print the bounds of the chosen calculator as a table (or JSON); return 0."""
    kind = KINDS[args.bounds_command]
    rows = kind.rows(args)
    if args.json:
        inputs = {k: v for k, v in vars(args).items() if k not in ("run", "json", "command", "bounds_command")}
        print(json.dumps({"command": args.bounds_command, "inputs": inputs,
                          "bounds": [row.to_dict() for row in rows]}, indent=2, ensure_ascii=False))
    else:
        from rich.console import Console

        Console().print(render(f"dpaudit bounds {args.bounds_command}: {kind.help}", rows))
    return 0


def _add_kind(parser: Container, kind: Kind) -> None:
    """Add `kind`'s arguments, then --json, to its parser."""
    kind.add_arguments(parser.add_argument)
    parser.add_argument("--json", action="store_true", help="print JSON")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the calculators of `dpaudit bounds` as its subcommands."""
    inner = parser.add_subparsers(dest="bounds_command", required=True, metavar="KIND")
    for name, kind in KINDS.items():
        _add_kind(inner.add_parser(name, help=kind.help, description=kind.help), kind)
    parser.set_defaults(run=run)
