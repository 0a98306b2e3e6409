"""What a user's module imports from `dpaudit.mechanisms` to write its own black box: every kind of record
`blackbox(..., records=)` takes is there, beside `blackbox` (the canaries guide imports them so)."""

import re

import dpaudit.mechanisms as mechanisms
import pytest
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.records import BoxRecords, CategoryRecords, VectorRecords


def test_every_record_kind_blackbox_takes_is_imported_beside_it():
    with pytest.raises(InvalidParameterError) as refused:
        mechanisms.blackbox(lambda data, rng: 0.0, epsilon=1.0, records=object())
    kinds = set(re.findall(r"\b[A-Z][a-z]+Records\b", str(refused.value)))
    assert {kind: getattr(mechanisms, kind, None) for kind in kinds} == {
        "BoxRecords": BoxRecords, "CategoryRecords": CategoryRecords, "VectorRecords": VectorRecords}
