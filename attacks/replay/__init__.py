"""Replay: run a mechanism once on D with a recording random source, replay every draw on its neighbour D′.

The mechanism is handed a `numpy.random.Generator` that records every call
on D (`Recording`) and answers the same calls on D′ with the same noise
(`Replaying`); `replay_pair` compares the two runs and reports typed
findings (`Divergence`, `Sensitivity`, `DataDerivedShape`); `aimed` turns a
finding into a fixed post-processing of the release for the certificate's
test; `screen_pairs` replays many candidate neighbours at two runs each.
A finding is never a certificate: `dpaudit.audit.audit_replay` certifies
the findings it keeps with the two-dataset audit on fresh draws.
"""

from dpaudit.attacks.replay.findings import DataDerivedShape, Divergence, DrawShift, Finding, Sensitivity
from dpaudit.attacks.replay.generators import Recording, Replaying
from dpaudit.attacks.replay.outside import NotReplayable
from dpaudit.attacks.replay.replay_pair import Replay, replay_pair

__all__ = [
    "DataDerivedShape",
    "Divergence",
    "DrawShift",
    "Finding",
    "NotReplayable",
    "Recording",
    "Replay",
    "Replaying",
    "Sensitivity",
    "replay_pair",
]
