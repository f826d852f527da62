"""The flagship schema, examples/orders.toml, takes its own ordinary values (issue 39 item 16).

The order number was a string field of width 6 with a '0' pad: ``order_id=0`` and ``000042``
were refused (each would share its key with the value without its leading zeros) while
``1000042`` (cut to the same ``000042``) and ``42`` (padded to it) were taken. It is now what it
is, a typed integer written as zero-padded decimal text, its last 6 digits; and a padded string
refuses only two values that meet in one run and pad to one key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "examples" / "orders.toml"
REC = {"user_id": "user0000042", "order_time": 1767225600000}
HEAD = b"39_user0000042_9223370269629175807_"


def test_order_id_is_a_typed_integer_of_six_digits() -> None:
    f = KeySchema.load(ORDERS).layout.field("order_id")
    assert (f.type, f.encoding, f.width, f.truncate) == ("int64", "text", 6, "keep-last")


@pytest.mark.parametrize(
    "given,key,back",
    [(0, b"000000", 0), ("0", b"000000", 0), ("000042", b"000042", 42), (42, b"000042", 42), (1000042, b"000042", 42), (999999, b"999999", 999999)],
)
def test_the_readme_values_are_never_refused(given: object, key: bytes, back: int) -> None:
    schema = KeySchema.load(ORDERS)
    rec = {**REC, "order_id": given}
    assert schema.encode(rec) == schema.layout.encode_generic(rec) == HEAD + key
    assert schema.encode_many({k: [v] for k, v in rec.items()}) == [HEAD + key]
    assert schema.decode(HEAD + key) == {**REC, "order_id": back}
    assert schema.decode_many([HEAD + key])["order_id"].tolist() == [back]


def test_a_run_of_order_numbers_with_full_width_values_and_zero() -> None:
    schema = KeySchema.load(ORDERS)
    ids = np.array([0, 42, 999_999, 1_000_000, 1_000_042, 123_456_789], dtype=np.int64)
    cols = {"user_id": ["user0000042"] * len(ids), "order_time": np.full(len(ids), REC["order_time"]), "order_id": ids}
    keys = schema.encode_many(cols)
    assert [k[-6:] for k in keys] == [b"000000", b"000042", b"999999", b"000000", b"000042", b"456789"]
    assert keys == [schema.encode({**REC, "order_id": int(i)}) for i in ids]
    assert schema.decode_many(keys)["order_id"].tolist() == [0, 42, 999999, 0, 42, 456789]
    with pytest.raises(KeyshapeError, match=r"-1 is outside \[0, "):
        schema.encode({**REC, "order_id": -1})


def test_keep_last_does_not_mix_with_desc_and_is_not_range_scanned() -> None:
    base = {"name": "o", "type": "int64", "encoding": "text", "width": 6, "truncate": "keep-last"}
    with pytest.raises(KeyshapeError, match="keep-last cuts the value"):
        KeySchema.from_dict({"table": {"name": "t"}, "key": {"fields": [{**base, "order": "desc"}]}})
    s = KeySchema.from_dict({"table": {"name": "t"}, "key": {"fields": [base]}})
    assert not s.layout.field("o").order_preserving


def _padded() -> KeySchema:
    return KeySchema.from_dict({"table": {"name": "t"}, "key": {"separator": "_", "fields": [{"name": "code", "type": "string", "width": 6}]}})


def test_a_padded_string_takes_zero_and_full_width_values() -> None:
    s = _padded()
    for v in ("0", "000042", "42", "abcdef"):
        assert s.encode({"code": v}) == s.encode_many({"code": [v]})[0] == s.encode_many({"code": np.array([v, "x"])})[0]
    assert s.encode_many({"code": ["000042", "000043", "0"]}) == [b"000042", b"000043", b"000000"]


def test_a_padded_string_refuses_two_values_of_one_run_that_share_a_key() -> None:
    s = _padded()
    for run in (["000042", "x", "42"], ["0", ""], np.array(["42", "000042"])):
        with pytest.raises(KeyshapeError, match="of one run share one key"):
            s.encode_many({"code": run})


def test_the_readme_commands_on_orders() -> None:
    def ks(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)

    for order_id in ("0", "000042", "1000042"):
        got = ks("key", "encode", "examples/orders.toml", "user_id=user0000042", "order_time=1767225600000", f"order_id={order_id}")
        assert got.returncode == 0, got.stderr
        assert got.stdout.split()[0].endswith("000000" if order_id == "0" else "000042"), got.stdout
    got = ks("key", "decode", "examples/orders.toml", "39_user0000042_9223370269629175807_000042")
    assert got.returncode == 0 and "order_id=42" in got.stdout, (got.stdout, got.stderr)
