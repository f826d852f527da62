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


def test_compare_is_hbase_byte_order() -> None:
    """``keyshape.compare`` is Bytes.BYTES_COMPARATOR (unsigned, a prefix first); designs are
    compared with ``keyshape.compare_designs``."""
    from keyshape.analysis.designs import compare

    assert keyshape.compare(b"\x7f", b"\x80") < 0 and keyshape.compare(b"ab", b"a") > 0
    assert keyshape.compare_designs is compare
