"""What a membership game produced, as its play returns it to the one membership path (`dpaudit.audit.audits.membership`)."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from dpaudit.attacks.observations import Observations
from dpaudit.execution.run_store import RunStore

__all__ = ["Played"]


@dataclasses.dataclass(frozen=True)
class Played:
    """What a membership game produced: its evidence (the scores and truth), the scorer's name, and facts about the attack.

    A ladder of canaries played in the same runs gives one `Observations`
    per canary, certified together by the audit's `certify_best`. (The
    two-dataset game's counterpart is `two_dataset_play.PlayedPair`: its
    evidence is held-out counts or a histogram.) `store`: where the runs
    were saved, so that the result is saved beside them.
    """

    evidence: Observations | tuple[Observations, ...]
    scorer: str
    attack: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    store: RunStore | None = None
