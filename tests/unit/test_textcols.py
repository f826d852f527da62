"""numpy-built text columns against str.format / uuid, value for value."""

from __future__ import annotations

import uuid

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core.textcols import format_ints, uuid_bytes_matrix, uuid_strings

FORMATS = [
    "{}",
    "{:d}",
    "user{:07d}",
    "u{:011d}",
    "{:016x}",
    "dev{:07d}-x",
    "{:X}",
    "é{0:03d}ß",
    "{:02d}",
    "{:30d}",
    "{!r}",
    "{{x}}{}",
    "{:>5}",
    "{:+d}",
    "a{}b{}",
]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FORMATS), st.lists(st.integers(0, 2**63 - 1) | st.integers(0, 5000), max_size=30))
def test_format_ints_equals_str_format(fmt, values):
    a = np.array(values, dtype=np.int64)
    got = format_ints(fmt, a)
    if got is None:  # the formats it declines: braces, conversions, alignment, signs, two fields
        assert fmt in ("{!r}", "{{x}}{}", "{:>5}", "{:+d}", "a{}b{}", "{:30d}")
        return
    assert got.tolist() == [fmt.format(v) for v in values]


def test_negative_values_are_left_to_str_format():
    assert format_ints("{}", np.array([3, -1])) is None


def test_uuid_columns_equal_the_uuid_module():
    raw = np.random.default_rng(3).bytes(16 * 50)
    m = uuid_bytes_matrix(raw)
    expected = [uuid.UUID(bytes=raw[i : i + 16], version=4) for i in range(0, len(raw), 16)]
    assert [bytes(r) for r in m] == [u.bytes for u in expected]
    assert uuid_strings(m).tolist() == [str(u) for u in expected]
