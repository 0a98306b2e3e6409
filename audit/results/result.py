"""The frozen results of audits: one base with one verdict rule, a two-dataset result and a membership result."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Mapping

from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.projected_runs import withheld_reason
from dpaudit.audit.results.phases import Phases
from dpaudit.audit.results.provenance import Recertified, Selection
from dpaudit.audit.results.render import NO_THEORY, fact_name, fmt, guesses_text, key_value_table, plain_text, upper_bound_text
from dpaudit.audit.theory.upper_bound import UpperBound
from dpaudit.json_values import jsonable
from dpaudit.mechanisms.base import Claim

if TYPE_CHECKING:
    from dpaudit.attacks.games import Game
    from dpaudit.attacks.held_out_counts import HeldOutCounts
    from dpaudit.attacks.output_histogram import OutputHistogram
    from dpaudit.audit.estimators.certify import Bound
    from matplotlib.figure import Figure
    from rich.table import Table

__all__ = ["CONSISTENT", "VERDICTS", "VIOLATION", "VIOLATION_UNDER_ASSUMPTION", "VIOLATION_UNDER_GDP", "AuditResult", "MembershipResult",
           "Result", "refutes", "verdict_text"]

VIOLATION = "violation"
CONSISTENT = "consistent"
VIOLATION_UNDER_ASSUMPTION = "violation-under-assumption"
VIOLATION_UNDER_GDP = "violation under the GDP assumption"
VERDICTS = (CONSISTENT, VIOLATION, VIOLATION_UNDER_ASSUMPTION)
"""The one verdict vocabulary of every audit: only an assumption-free bound above the claim is a "violation"."""


def refutes(lower: LowerBound, claim: Claim) -> bool:
    """Return True when `lower` shows that the mechanism is not (claim.epsilon, claim.delta)-DP."""
    return lower.epsilon > claim.epsilon and lower.delta >= claim.delta


@dataclasses.dataclass(frozen=True, kw_only=True)
class Result:
    """What every audit reports: claim, theory upper bound, certified lower bound, verdict, provenance.

    One verdict rule for every audit (`verdict`); each kind of audit adds
    its evidence (`rows`, `to_dict`) and its plot (`figure`). `summary()`
    and `str()` render the same table as the terminal report; in Jupyter a
    result shows that table with its verdict and plot (`_repr_html_`).

    Attributes:
        lower_bound: the certified lower bound (ε, δ, confidence, estimator, the rates it read).
        seconds: the wall-clock time of the audit.
        seed: the seed it was played with (the same seed gives the same result on any backend).
        mechanism: the audited mechanism's name.
        params: the parameters the mechanism was built with.
        claim: the (ε, δ) claimed and its neighbouring relation; None when nothing was claimed.
        upper_bound: the theory upper bound (the claim itself when nothing more is known).
        selection: the candidates an evidence-based choice compared (rounds of `trials="auto"`, arms of a
            ladder), each with its share of β, kept so that `recertify` pays for the choice again.
        recertified: under which bound the result was first certified, when `recertify` made it.
    """

    lower_bound: LowerBound
    seconds: float
    seed: int
    mechanism: str | None = None
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    claim: Claim | None = None
    upper_bound: UpperBound | None = None
    selection: Selection | None = dataclasses.field(default=None, repr=False, compare=False)
    recertified: Recertified | None = None

    def recertify(self, bound: Bound) -> Result:
        """Return this result's kept evidence certified under `bound`, paying for any selection it made.

        The method form of `dpaudit.audit.recertify` (which see).
        """
        from dpaudit.audit import recertify  # the public name: the audits layer sits above the results

        return recertify(self, bound)

    @property
    def verdict(self) -> str | None:
        """Return the verdict against the claim.

        None without a claim; "violation" when an assumption-free lower bound
        refutes the claim (`refutes`: above its ε, at a δ' ≥ its δ);
        "violation-under-assumption" when only a bound that needs an
        assumption (e.g. the Gaussian trade-off) refutes it; else "consistent".
        """
        if self.claim is None:
            return None
        if not refutes(self.lower_bound, self.claim):
            return CONSISTENT
        return VIOLATION_UNDER_ASSUMPTION if self.lower_bound.assumption else VIOLATION

    @property
    def tightness(self) -> float | None:
        """Return lower/upper bound, or None when the upper bound is unknown, infinite or 0, or only the claim (`NO_THEORY`)."""
        if self.upper_bound is None or self.upper_bound.method in NO_THEORY:
            return None
        upper = self.upper_bound.epsilon
        if not math.isfinite(upper) or upper <= 0:
            return None
        return self.lower_bound.epsilon / upper

    @property
    def title(self) -> str:
        """Return the title of the audit's table and report."""
        return f"dpaudit: {self.mechanism}"

    def rows(self) -> list[tuple[str, str]]:
        """Return the audit as (field, value) rows, in the order of the table."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON of the audit; keys are only ever added."""
        raise NotImplementedError

    def provenance(self) -> dict[str, Any]:
        """Return the JSON keys of the bound's provenance: `selection` (the selection it won) and `recertified`
        (the bound it was first certified under), each only when there is one."""
        out = {}
        if self.selection is not None:
            out["selection"] = self.selection.to_dict()
        if self.recertified is not None:
            out["recertified"] = self.recertified.to_dict()
        return out

    def provenance_rows(self) -> list[tuple[str, str]]:
        """Return the table row saying that the result was certified again, and how it was first (none otherwise)."""
        return [] if self.recertified is None else [("recertified", self.recertified.describe())]

    def table(self) -> Table:
        """Return a rich table of the audit, with the sentence of what the bound means."""
        return key_value_table(self.title, self.rows(), self.lower_bound.meaning())

    def summary(self) -> str:
        """Return the audit as a plain-text table with the sentence of what the bound means."""
        return plain_text(self.table())

    def __str__(self) -> str:
        return self.summary()

    def figure(self) -> Figure | None:
        """Return the audit's plot as a matplotlib Figure, or None when this kind of result has none."""
        return None

    def _repr_html_(self) -> str:
        """Return the audit as HTML for Jupyter: verdict, the rows of `summary()`, what the bound means, the plot."""
        from dpaudit.audit.results.notebook import result_html

        return result_html(title=self.title, verdict=verdict_text(self.verdict),
                           flagged=self.verdict in (VIOLATION, VIOLATION_UNDER_ASSUMPTION),
                           meaning=self.lower_bound.meaning(), rows=self.rows(), figure=self.figure())


@dataclasses.dataclass(frozen=True, kw_only=True)
class AuditResult(Result):
    """The result of a two-dataset audit (`audit_mechanism`): a test's errors on the pair, certified.

    `evidence` is what was certified (held-out counts of the chosen test,
    or the histogram of every output), kept so that `recertify` can certify
    it under another `Bound`; `phases` says what the audit's phases did.
    `beside` holds further bounds computed from the same evidence under
    an assumption (e.g. Gaussian DP), labelled so; they never decide the
    verdict (the name `MembershipResult` gives its bound under an
    assumption; `secondary` is kept as an alias, and the JSON key stays
    "secondary_bounds").

    It has every attribute of `Result` (`lower_bound`, `upper_bound`,
    `seconds`, `seed`, `mechanism`, `params`, `claim`, `selection`,
    `recertified`) and these.

    Attributes:
        test: the distinguishing test chosen on the selection draws, in words.
        beside: bounds under an assumption from the same evidence (never the verdict).
        evidence: the held-out counts of the chosen test, or the histogram of every output.
        bound: how the evidence was certified (`Bound`).
        phases: what each phase of the audit did (pair search, selection, rounds of `trials="auto"`).
    """

    mechanism: str
    claim: Claim
    upper_bound: UpperBound
    test: str = ""
    beside: tuple[LowerBound, ...] = ()
    evidence: HeldOutCounts | OutputHistogram | None = dataclasses.field(default=None, repr=False, compare=False)
    bound: Bound | None = None
    phases: Phases | None = None

    @property
    def secondary(self) -> tuple[LowerBound, ...]:
        """Return `beside`, by the name it had before one name served both families (an alias kept for old code)."""
        return self.beside

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON of one audit; keys are only ever added."""
        lower = self.lower_bound.to_dict()
        if self.phases is not None:
            lower.update(jsonable(self.phases.to_dict()))
        out = {
            "mechanism": self.mechanism,
            "params": jsonable(self.params),
            "claim": self.claim.to_dict(),
            "upper_bound": self.upper_bound.to_dict(),
            "lower_bound": lower,
            "verdict": self.verdict,
            "tightness": self.tightness,
            "seconds": round(self.seconds, 4),
            "seed": self.seed,
            "test": self.test,
            "meaning": self.lower_bound.meaning(),
        }
        if self.beside:
            out["secondary_bounds"] = [b.to_dict() for b in self.beside]
        return {**out, **self.provenance()}

    def rows(self) -> list[tuple[str, str]]:
        """Return claim, bounds, test, observed rates, tightness, verdict and provenance."""
        lb, ub, phases = self.lower_bound, self.upper_bound, self.phases
        method = ", ".join([lb.method] + ([phases.interval] if phases is not None else []))
        held = lb.trials if phases is None else phases.held_out
        return [
            ("claim", self.claim.describe()),
            ("upper bound (theory)", upper_bound_text(ub)),
            ("lower bound (certified)", f"ε = {lb.epsilon:.4f} at confidence {lb.confidence:g} [{method}]"),
            *[("  under an assumption", f"ε = {b.epsilon:.4f} [{b.method}: {b.assumption}]") for b in self.beside],
            ("test", self.test),
            ("observed rates", f"FPR = {fmt(lb.fpr)}, FNR = {fmt(lb.fnr)} on {held:,} "
             f"held-out trials per dataset ({lb.trials:,} drawn)"),
            *([] if phases is None else _phase_rows(phases)),
            ("tightness", fmt(self.tightness)),
            *self.provenance_rows(),
            ("verdict", verdict_text(self.verdict)),
            ("seed / seconds", f"{self.seed} / {self.seconds:.2f}"),
        ]

    def figure(self) -> Figure:
        """Return the privacy-region plot (`plot_privacy_region`): the claimed region, the observed rates and their box."""
        from dpaudit.audit.results.plots import plot_privacy_region

        return plot_privacy_region(self)


@dataclasses.dataclass(frozen=True, kw_only=True)
class MembershipResult(Result):
    """The result of a membership audit (canaries, saved scores, DP-SGD, tracing): a game's scores, certified.

    `game` is "multi-run" or "one-run"; `observations` are the game's scores
    and truth (save them with `Observations.save`, re-audit them with
    `audit_scores`, or `recertify` under another bound). `attack` holds
    facts about the attack beyond the game (e.g. a tracing attack's rows,
    columns and true-positive rate); `game_spec` and `bound` are the game
    played and how its scores were certified. `beside` is a bound under an
    assumption reported next to the assumption-free one (a DP-SGD audit's
    GDP bound), never part of the verdict; `projected_runs` the runs an
    assumption-free audit would need if that assumption held (a plan, not a bound).

    It has every attribute of `Result` (`lower_bound`, `upper_bound`,
    `seconds`, `seed`, `mechanism`, `params`, `claim`, `selection`,
    `recertified`) and these.

    Attributes:
        game: "multi-run" or "one-run".
        scorer: the score read from each release, in words.
        observations: the game's scores and membership truth (the evidence).
        attack: facts about the attack beyond the game.
        game_spec: the game played (`MultiRun`, `OneRun`).
        bound: how the scores were certified (`Bound`).
        beside: a bound under an assumption, reported next to the assumption-free one.
        projected_runs: the runs an assumption-free audit would need if that assumption held.
    """

    game: str
    scorer: str
    observations: Observations | None = dataclasses.field(default=None, repr=False, compare=False)
    attack: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    game_spec: Game | None = None
    bound: Bound | None = None
    beside: LowerBound | None = None
    projected_runs: int | None = None

    @property
    def beside_verdict(self) -> str | None:
        """Return "violation under the GDP assumption" when the GDP bound beside refutes the claim, else "consistent" (None without one)."""
        if self.beside is None or self.claim is None:
            return None
        return VIOLATION_UNDER_GDP if refutes(self.beside, self.claim) else CONSISTENT

    @property
    def estimator(self) -> str:
        """Return the estimator's name (the lower bound's method)."""
        return self.lower_bound.method

    @property
    def assumption(self) -> str | None:
        """Return the assumption the ε needs, or None when it is assumption-free."""
        return self.lower_bound.assumption

    @property
    def confidence(self) -> float:
        """Return the confidence of the bound."""
        return self.lower_bound.confidence

    @property
    def canaries(self) -> int:
        """Return the number of canaries scored (runs in a multi-run game)."""
        return self.observations.size if self.observations is not None else self.lower_bound.trials

    @property
    def guesses(self) -> int:
        """Return the number of membership guesses the bound counts (r = k+ + k−, or the runs)."""
        return self.lower_bound.trials if self.lower_bound.guesses is None else self.lower_bound.guesses

    @property
    def correct(self) -> int:
        """Return how many of those guesses were right."""
        return self.lower_bound.correct or 0

    @property
    def title(self) -> str:
        """Return the title of the audit's table and report."""
        return f"dpaudit {self.game}: {self.mechanism or 'saved scores'}"

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON of the audit; keys are only ever added."""
        return {
            "game": self.game, "mechanism": self.mechanism, "params": dict(self.params),
            "claim": self.claim.to_dict() if self.claim else None,
            "upper_bound": self.upper_bound.to_dict() if self.upper_bound else None,
            "lower_bound": self.lower_bound.to_dict(), "estimator": self.estimator,
            "assumption": self.assumption, "confidence": self.confidence, "canaries": self.canaries,
            "guesses": self.guesses, "correct": self.correct, "scorer": self.scorer,
            "verdict": self.verdict, "seconds": round(self.seconds, 4), "seed": self.seed,
            "meaning": self.lower_bound.meaning(),
            **({"attack": dict(self.attack)} if self.attack else {}),
            **self._beside_dict(),
            **self.provenance(),
        }

    def _beside_dict(self) -> dict[str, Any]:
        """Return the JSON of the bound reported beside the verdict's (none when there is none)."""
        if self.beside is None:
            return {}
        return {"beside": {"lower_bound": self.beside.to_dict(), "verdict": self.beside_verdict,
                           "projected_runs": self.projected_runs}}

    def rows(self) -> list[tuple[str, str]]:
        """Return claim, bounds, estimator, evidence, verdict and provenance."""
        lb = self.lower_bound
        return [
            ("claim", self.claim.describe() if self.claim else "none given"),
            ("upper bound (theory)", upper_bound_text(self.upper_bound, at_delta=False)),
            ("lower bound", f"ε = {lb.epsilon:.4f} at δ = {lb.delta:g}, confidence {lb.confidence:g}"),
            ("estimator", self.estimator),
            ("assumption", self.assumption or "none"),
            ("canaries / guesses / correct", guesses_text(self.canaries, self.guesses, self.correct, lb.epsilon)),
            ("scorer", self.scorer),
            *_attack_rows(self.attack),
            *self._beside_rows(),
            *self.provenance_rows(),
            ("verdict", verdict_text(self.verdict)),
            ("seed / seconds", f"{self.seed} / {self.seconds:.2f}"),
        ]

    def _beside_rows(self) -> list[tuple[str, str]]:
        """Return the rows of the bound reported beside the verdict's: its ε, what it says, the runs a proof would need."""
        if self.beside is None:
            return []
        lb = self.beside
        rows = [(f"beside: {lb.method}", f"ε = {lb.epsilon:.4f} at δ = {lb.delta:g}, confidence {lb.confidence:g} "
                                         f"(assumes {lb.assumption}; not the verdict)"),
                ("under that assumption", verdict_text(self.beside_verdict))]
        if self.projected_runs is not None:
            rows.append(("projected runs", f"about {self.projected_runs:,} runs would certify above the claim "
                                           "without the assumption, if it held (a projection)"))
        elif self.claim is not None and not refutes(self.lower_bound, self.claim):
            rows.append(("projected runs", withheld_reason(None if self.selection else self.observations,
                                                           claim_epsilon=self.claim.epsilon, delta=lb.delta,
                                                           confidence=lb.confidence)))
        return rows

    def figure(self) -> Figure | None:
        """Return the IN/OUT score histograms and ROC curve (`score_figure`), or None when the scores were not kept."""
        if self.observations is None:
            return None
        from dpaudit.audit.results.score_report import score_figure

        return score_figure(self)


def _attack_rows(attack: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Return the table rows of an attack's facts: one per fact, and one per item of a list of records (e.g. each screened arm)."""
    rows = []
    for key, value in attack.items():
        name = fact_name(key)
        if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
            rows += [(f"{name} {i + 1}", "; ".join(f"{k.replace('_', ' ')} {_text(v)}" for k, v in item.items()))
                     for i, item in enumerate(value)]
        else:
            rows.append((name, _text(value)))
    return rows


def _text(value: Any) -> str:
    return fmt(value) if isinstance(value, float) else str(value)


def verdict_text(verdict: str | None) -> str:
    """Return the verdict as the table shows it: a violation in capitals, "n/a (no claim)" without a claim."""
    if verdict is None:
        return "n/a (no claim)"
    return verdict if verdict == CONSISTENT else verdict.upper()


def _phase_rows(phases: Phases) -> list[tuple[str, str]]:
    """Return the table rows on the trials: the rounds of `trials="auto"` or the epochs of "sequential" (and why, when the
    default chose it), a warning, how many trials would likely decide."""
    rows = []
    if phases.auto is not None:
        rows.append(("trials auto", f"{len(phases.auto.rounds)} rounds, {phases.auto.trials_drawn:,} trials per dataset in all; "
                                    f"stopped: {phases.auto.stopped}"))
    if phases.sequential is not None:
        seq = phases.sequential
        why = f" (the default: {seq.default})" if seq.default else ""
        rows.append(("trials sequential", f"{seq.trials_drawn:,} of at most {seq.max_trials:,} per dataset{why}; "
                                          f"stopped: {seq.stopped}"))
    if phases.warning:
        rows.append(("warning", phases.warning))
    if phases.trials_for_violation is not None:
        rows.append(("more trials", f"about {phases.trials_for_violation:,} per dataset would likely certify a "
                                    "violation at the observed rates (a projection; try --trials auto)"))
    return rows
