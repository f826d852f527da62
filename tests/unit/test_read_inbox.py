"""The inbox pattern: index families inside one row, subjects byte-inverted via OrderedBytes."""

from __future__ import annotations

import pytest

from keyshape.read.inbox import FAMILIES, inbox_by, message_cells
from keyshape.schema import FamilySpec, TableSpec
from keyshape.store import EmbeddedStore, ensure_table

MESSAGES = [  # id, sender, subject, received
    ("m1", "bob", "ab", 1000),
    ("m2", "alice", "abc", 2000),
    ("m3", "bob", "zeta", 3000),
    ("m4", "alice", "ab", 4000),
    ("m5", "carol", "", 5000),
]


@pytest.fixture
def store() -> EmbeddedStore:
    s = EmbeddedStore()
    ensure_table(s, TableSpec("inbox", families=[FamilySpec(f) for f in FAMILIES]))
    cells: dict[bytes, bytes] = {}
    for mid, sender, subject, ts in MESSAGES:
        cells.update(message_cells(mid, sender, subject, ts, f"body of {mid}".encode()))
    s.put("inbox", b"user42", cells)
    return s


def test_by_sender_ascending_newest_first_among_equals(store: EmbeddedStore) -> None:
    want = [m[0] for m in sorted(MESSAGES, key=lambda m: (m[1], -m[3]))]
    assert inbox_by(store, "inbox", b"user42", "from") == want
    assert inbox_by(store, "inbox", b"user42", "from", equals="bob") == ["m3", "m1"]


def test_by_subject_descending_handles_prefixes(store: EmbeddedStore) -> None:
    """'abc' before 'ab' before '': plain byte inversion of the UTF-8 would put 'ab' first."""
    want = [m[0] for m in sorted(MESSAGES, key=lambda m: (m[2], m[3]), reverse=True)]
    assert want[:4] == ["m3", "m2", "m4", "m1"]
    assert inbox_by(store, "inbox", b"user42", "subject") == want
    assert inbox_by(store, "inbox", b"user42", "subject", equals="ab") == ["m4", "m1"]
    assert inbox_by(store, "inbox", b"user42", "subject", limit=2) == ["m3", "m2"]


def test_message_and_index_live_in_the_same_row(store: EmbeddedStore) -> None:
    assert store.get("inbox", b"user42", columns=[b"m:m2"]) == {b"m:m2": b"body of m2"}
    with pytest.raises(ValueError):
        inbox_by(store, "inbox", b"user42", "date")
