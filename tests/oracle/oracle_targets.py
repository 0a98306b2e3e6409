"""The blind releases of `oracle_blind` as the targets the CLI names (`oracle_targets:NAME`), each with its claim and pair."""

from __future__ import annotations

import oracle_blind as blind
from dpaudit.mechanisms import Claim, blackbox
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer
from dpaudit.mechanisms.records import VectorRecords

NUMBER = blackbox(blind.number, epsilon=0.5, name="blind_number", default_pair=([0.0, 1.0], [0.0, 1.0, 1.0]))
VECTORS = blackbox(blind.vector, epsilon=0.5, name="blind_vectors", records=VectorRecords(width=blind.WIDTH), null_record=0.0,
                   default_pair=([[0.0] * blind.WIDTH], [[0.0] * blind.WIDTH, [1.0] * blind.WIDTH]))
MARGINALS = blackbox(blind.marginals, epsilon=0.5, name="blind_marginals", relation="replace-one")
BLIND_TRAINER = UserTrainer(train=blind.blind_train, losses=blind.losses, x=blind.data()[0], y=blind.data()[1],
                            claim=Claim(0.5, 1e-5), name="blind_loop")
