"""The error hierarchy (README: Errors): bad input is a ValueError, a failing store is not, and
every kind is a KeyshapeError the CLI prints as one line."""

from __future__ import annotations

import pickle
import socket

import pytest

from keyshape.errors import BadInput, KeyshapeError, KeysDoNotFit, Refused, SchemaError, StoreError, TableNotFound, WriteFailed
from keyshape.store import EmbeddedStore, open_store


def test_the_three_kinds_and_which_are_value_errors() -> None:
    for cls in (BadInput, SchemaError, StoreError, TableNotFound, WriteFailed, Refused, KeysDoNotFit):
        assert issubclass(cls, KeyshapeError)
    assert issubclass(BadInput, ValueError) and issubclass(SchemaError, BadInput)
    for cls in (StoreError, TableNotFound, WriteFailed, Refused):
        assert not issubclass(cls, ValueError), cls
    assert not issubclass(KeyshapeError, ValueError)
    assert issubclass(KeysDoNotFit, Refused) and issubclass(KeysDoNotFit, BadInput)


def test_keyshape_error_raised_directly_is_bad_input_and_survives_pickling() -> None:
    """0.1 code raises KeyshapeError for bad input; it stays a ValueError (a BadInput), also
    across a process boundary (Spark tasks pickle their exceptions)."""
    with pytest.raises(ValueError, match="wrong") as got:
        raise KeyshapeError("wrong")
    assert type(got.value) is BadInput
    assert type(pickle.loads(pickle.dumps(got.value))) is BadInput
    stored = pickle.loads(pickle.dumps(WriteFailed("lost", [b"k"])))
    assert type(stored) is WriteFailed and not isinstance(stored, ValueError)
    fit = KeysDoNotFit("keys do not fit", check={"bad": 3})
    assert fit.check == {"bad": 3} and str(fit) == "keys do not fit"


def test_a_lost_connection_is_not_caught_as_bad_input() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once the socket closes
    with pytest.raises(StoreError, match=f"127.0.0.1:{port}") as got:
        try:
            open_store(f"127.0.0.1:{port}")
        except ValueError:  # what a caller parsing input writes: must not swallow the store's failure
            pytest.fail("a store that cannot be reached was caught as a ValueError")
    assert not isinstance(got.value, ValueError)


def test_bad_input_to_a_store_is_a_value_error() -> None:
    with pytest.raises(BadInput, match="limit must be >= 0"):
        list(EmbeddedStore().scan("t", limit=-1))
    with pytest.raises(ValueError, match="unknown store"):
        open_store("ftp://nowhere")


def test_bad_input_to_the_byte_level_is_bad_input() -> None:
    """core/arrowkeys, core/splitmodel and core/splitsim refuse user input with BadInput (still a
    ValueError), so `except KeyshapeError` and the CLI's one-line errors catch them."""
    import numpy as np
    import pyarrow as pa

    from keyshape.core.arrowkeys import from_arrow
    from keyshape.core.splitmodel import SplitModel, parse_policy
    from keyshape.core.splitsim import SplitSimulator

    cases = [
        (lambda: from_arrow(pa.array([b"a"]), key_format="base64"), "unknown key_format 'base64'"),
        (lambda: from_arrow(pa.array([b"a", None])), "1 null value"),
        (lambda: from_arrow(pa.array(["zz"]), key_format="hex"), "not hex text"),
        (lambda: from_arrow(pa.array([1, 2])), "binary or text, got Arrow type int64"),
        (lambda: parse_policy("key-prefix:x"), "key-prefix:N"),
        (lambda: parse_policy("delimited"), "delimited:D"),
        (lambda: parse_policy("sometimes"), "unknown split policy 'sometimes'"),
        (lambda: SplitModel(policy="sometimes"), "unknown split policy 'sometimes'"),
        (lambda: SplitModel(write_rate=-1.0), "write_rate must be positive"),
        (lambda: SplitModel(servers=0), "servers must be at least 1"),
        (lambda: SplitSimulator(SplitModel(write_rate=None)).feed([b"a"]), "needs a write rate"),
        (lambda: SplitSimulator(SplitModel()).feed([b"a", b"b"], times=np.zeros(3)), "one time per key"),
    ]
    for call, message in cases:
        with pytest.raises(BadInput, match=message.replace("(", r"\(")):
            call()
