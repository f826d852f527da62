"""GBIF maps' ModulusSalt (gbif/maps common/src/main/java/org/gbif/maps/common/hbase/ModulusSalt.java
at c6a0864): ``salt(key)`` = zero-padded ``(key.hashCode() & 0xfffffff) % modulus``, ":", key, UTF-8;
``getTableRegions()`` = the padded numbers 1..modulus-1.

Expected values are rebuilt here from that source with String.hashCode written out (never with
keyshape.core.hashing), plus the vectors of GBIF's own ModulusSaltTest.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyshape.core.hashing import gbif_modulus_salt
from keyshape.core.splits import bucket_splits


def string_hash_code(s: str) -> int:
    """java.lang.String.hashCode: h = 31*h + c over UTF-16 code units, signed int."""
    h = 0
    units = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def test_modulus_salt_test_vectors() -> None:
    """ModulusSaltTest.testSaltToString: "bingo" with modulus 8, 1000 and 28 ("03:bingo")."""
    h = string_hash_code("bingo")
    assert gbif_modulus_salt("bingo", 8) == f"{h % 8}:bingo".encode()
    assert gbif_modulus_salt("bingo", 1000) == f"{h % 1000}:bingo".encode()
    assert gbif_modulus_salt("bingo", 28) == b"03:bingo"


def test_hash_is_masked_to_28_bits_not_made_absolute() -> None:
    """ModulusSalt.saltToString masks with 0xfffffff: "polygenelubricants".hashCode() is
    Integer.MIN_VALUE, whose low 28 bits are zero, so it lands in salt 0 for every modulus."""
    assert string_hash_code("polygenelubricants") == -(2**31)
    assert gbif_modulus_salt("polygenelubricants", 10) == b"0:polygenelubricants"
    assert gbif_modulus_salt("polygenelubricants", 7) == b"0:polygenelubricants"


@given(st.text(max_size=20), st.integers(2, 100_000))
def test_salt_matches_the_source_formula(key: str, modulus: int) -> None:
    """saltToString: leftPadZeros(salt, digitCount(modulus - 1)) + ":" + key, as UTF-8."""
    digits = len(str(modulus - 1))  # ModulusSalt.digitCount: (int) (log10(n) + 1)
    salt = (string_hash_code(key) & 0x0FFFFFFF) % modulus
    want = (str(salt).rjust(digits, "0") + ":" + key).encode("utf-8", "replace")
    assert gbif_modulus_salt(key, modulus) == want


@pytest.mark.parametrize("modulus", [1, 0, -3, True, 2**31])
def test_bad_modulus_is_refused(modulus: int) -> None:
    with pytest.raises(ValueError, match="modulus"):
        gbif_modulus_salt("k", modulus)


def test_table_regions_are_decimal_bucket_splits() -> None:
    """ModulusSalt.getTableRegions: leftPadZeros(i, digitCount) for i in 1..modulus-1."""
    assert bucket_splits(10, "decimal") == [b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"8", b"9"]
    assert bucket_splits(100, "decimal")[:2] == [b"01", b"02"] and bucket_splits(100, "decimal")[-1] == b"99"
    assert bucket_splits(101, "decimal")[0] == b"001" and bucket_splits(101, "decimal")[-1] == b"100"
    assert len(bucket_splits(101, "decimal")) == 100


@given(st.text(max_size=12), st.integers(2, 5000))
def test_every_salted_key_falls_in_the_region_of_its_salt(key: str, modulus: int) -> None:
    """The salt prefix is one of the table's buckets: the key sorts at or after its bucket's
    split key and before the next one, which is what the pre-split is for."""
    salted = gbif_modulus_salt(key, modulus)
    salt = int(salted.split(b":", 1)[0])
    splits = bucket_splits(modulus, "decimal")
    if salt > 0:
        assert salted >= splits[salt - 1]
    if salt < modulus - 1:
        assert salted < splits[salt]
