"""keyshape's public API: every name in ``keyshape.__all__`` imports and says what it does."""

from __future__ import annotations

import inspect

import pytest

import keyshape


@pytest.mark.parametrize("name", keyshape.__all__)
def test_public_name_imports_and_has_a_docstring(name: str) -> None:
    obj = getattr(keyshape, name)
    if name == "MAX_LONG":  # a constant: its documentation is the hbytes module's
        assert obj == 2**63 - 1
        return
    assert (inspect.getdoc(obj) or "").strip(), f"keyshape.{name} has no docstring"


def test_all_lists_each_name_once() -> None:
    assert len(keyshape.__all__) == len(set(keyshape.__all__))


def test_bytes_compare_is_hbase_byte_order() -> None:
    """``keyshape.bytes_compare`` is Bytes.BYTES_COMPARATOR (unsigned, a prefix first); designs are
    compared with ``keyshape.compare_designs``."""
    from keyshape.analysis.designs import compare

    assert keyshape.bytes_compare(b"\x7f", b"\x80") < 0 and keyshape.bytes_compare(b"ab", b"a") > 0
    assert keyshape.compare_designs is compare


@pytest.mark.parametrize(
    "generic", ["compare", "decode", "split", "get", "scan", "scan_page", "generate", "short", "int32", "int64", "encode_string", "encode_int64"]
)
def test_no_generic_top_level_names(generic: str) -> None:
    """One name per thing, and it says what it is: ``keyshape.decode`` looked like key decoding but
    was OrderedBytes decoding."""
    assert not hasattr(keyshape, generic)


def test_renamed_names_are_what_they_say() -> None:
    from keyshape.core import hbytes, ordered
    from keyshape.read import get, scan, scan_page
    from keyshape.workload import generate

    assert keyshape.ordered_decode is ordered.decode
    assert keyshape.ordered_encode_string is ordered.encode_string
    assert keyshape.bytes_split is hbytes.split and keyshape.bytes_short is hbytes.short
    assert (keyshape.salted_get, keyshape.salted_scan, keyshape.salted_scan_page) == (get, scan, scan_page)
    assert keyshape.generate_workload is generate
    assert keyshape.ordered_decode(keyshape.ordered_encode_int64(-5)) == (-5, b"")
