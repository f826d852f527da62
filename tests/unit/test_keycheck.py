"""Real keys checked against the schema (issue 28, item 3): every key of a --keys file is decoded
(salt re-derived) or, where nothing decodes, checked for the form it must have; keys of another
format, or with a salt their fields do not give, are counted with examples, and past the limits
(any wrong salt, more than 1% not fitting) the analysis refuses unless told to go on.

The C route (``Reader.fits``) is held to the decoder itself, key by key, on mutated keys of many
layouts (hypothesis)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from keyshape.analysis import Analyzer
from keyshape.analysis.designs import analyze_schema
from keyshape.analysis.keyfiles import feed_key_files
from keyshape.core import native
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeysDoNotFit
from keyshape.schema import load_schema
from keyshape.schema import KeySchema
from keyshape.schema import keycheck
from keyshape.schema.keycheck import FITS, FOREIGN, WRONG_SALT, KeyCheck, fit_codes
from keyshape.workload import generate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ORDERS = EXAMPLES / "orders.toml"


def _schema(prefix: dict[str, Any], fields: list[dict[str, Any]], sep: str = "_", hash_fields: list[str] | None = None) -> KeySchema:
    key: dict[str, Any] = {"separator": sep, "prefix": prefix, "fields": fields}
    if hash_fields:
        key["hash_fields"] = hash_fields
    return KeySchema.from_dict({"table": {"name": "i28_3"}, "key": key})


_FIELDS: list[dict[str, Any]] = [
    {"name": "u", "type": "string"},
    {"name": "t", "type": "timestamp", "encoding": "text", "order": "desc"},
    {"name": "o", "type": "string", "width": 6, "truncate": "keep-last"},
]
_BIN: list[dict[str, Any]] = [
    {"name": "d", "type": "bytes", "width": 4},
    {"name": "n", "type": "int64", "encoding": "hbase"},
    {"name": "s", "type": "string"},
]

LAYOUTS = {
    "mod": _schema({"strategy": "mod", "buckets": 100}, _FIELDS, hash_fields=["u"]),
    "mod-k": _schema({"strategy": "mod", "buckets": 7}, _FIELDS),
    "md5": _schema({"strategy": "md5", "length": 4}, _FIELDS, hash_fields=["u"]),
    "crc32": _schema({"strategy": "crc32"}, _FIELDS, hash_fields=["u", "o"]),
    "java-hash-short": _schema({"strategy": "java-hash-short"}, _FIELDS, hash_fields=["u"]),
    "phoenix": _schema({"strategy": "phoenix", "buckets": 16}, _BIN, sep=""),
    "none": _schema({"strategy": "none"}, _FIELDS),
    "none-binary": _schema({"strategy": "none"}, _BIN, sep=""),
    "padded": _schema(
        {"strategy": "mod", "buckets": 10},
        [
            {"name": "c", "type": "string", "width": 5, "pad": "right", "pad_char": " "},
            {"name": "v", "type": "int32", "encoding": "text", "width": 10},
        ],
        hash_fields=["c"],
    ),
    # a value that ends at a separator (searched for), descending text (inverted bytes) and a
    # descending padded one, the salt from the second field
    "var-desc": _schema(
        {"strategy": "mod", "buckets": 100},
        [
            {"name": "u", "type": "string"},
            {"name": "v", "type": "string", "order": "desc"},
            {"name": "t", "type": "timestamp", "encoding": "text", "order": "desc"},
            {"name": "w", "type": "string", "width": 4, "order": "desc", "pad": "right", "pad_char": "x"},
        ],
        hash_fields=["v"],
    ),
    # keys of 8-15 bytes: the template's 8-byte word route (16 bytes and more go 16 at a time)
    "short": _schema(
        {"strategy": "mod", "buckets": 10}, [{"name": "c", "type": "string", "width": 3}, {"name": "u", "type": "string"}], hash_fields=["u"]
    ),
    **{p.stem: KeySchema.load(p) for p in sorted(EXAMPLES.glob("*.toml"))},
}


def _records(schema: KeySchema, n: int, seed: int) -> list[bytes]:
    if schema.workload is not None:
        return schema.encode_many(next(generate(schema, n, seed=seed, chunk_rows=n)))
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        rec: dict[str, Any] = {}
        for f in schema.fields:
            if f.type == "string":
                text = f"user{int(rng.integers(1000)):04d}" + ("é" if i % 7 == 0 else "")
                rec[f.name] = text if f.width is None else f"u{int(rng.integers(1000)):03d}"[: f.width - 1]
            elif f.type == "bytes":
                rec[f.name] = bytes(rng.integers(0, 256, size=f.width or 3, dtype=np.uint8))
            else:
                rec[f.name] = int(rng.integers(0, 2**31 - 1))
        out.append(schema.encode(rec))
    return out


def _mutate(key: bytes, kind: int, at: int, byte: int) -> bytes:
    if not key:
        return bytes([byte])
    at %= len(key)
    if kind == 0:
        return key[:at] + bytes([byte]) + key[at + 1 :]  # one byte changed (salt, digit, separator)
    if kind == 1:
        return key[:at]  # cut short
    if kind == 2:
        return key + bytes([byte])  # a byte too many
    if kind == 3:
        return key[:at] + key[at + 1 :]  # a byte dropped
    if kind == 4:
        return bytes([48 + byte % 10, 48 + (byte // 10) % 10]) + key[2:]  # another salt's digits
    return key


@pytest.mark.skipif(not native.AVAILABLE, reason="the C kernels are not built")
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(LAYOUTS)),
    st.integers(0, 10_000),
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 200), st.integers(0, 255)), min_size=1, max_size=40),
)
@example("iot", 0, [(0, 14, 128)])  # a negative hbase timestamp: decode_many's vector route took it (issue 43)
def test_the_c_route_equals_the_decoder_key_by_key(name: str, seed: int, edits: list[tuple[int, int, int]]) -> None:
    """Every code of Reader.fits (and of the decode_many route) is what decode itself says of
    the key: fits, does not fit, or reads with a wrong salt."""
    schema = LAYOUTS[name]
    good = _records(schema, len(edits), seed)
    keys = good + [_mutate(k, *e) for k, e in zip(good, edits)]
    ka = KeyArray.from_keys(keys)
    want = np.array([keycheck._classify(schema, k) for k in keys], dtype=np.uint8)
    assert (want[: len(good)] == FITS).all()
    batch = keycheck._batch_codes(schema, ka)
    if schema.prefix.name == "random":  # nothing to re-derive: the bucket must be one it writes
        for codes in (want, batch):
            codes[(codes == FITS) & ~keycheck._prefix_form(schema, ka)] = WRONG_SALT
    assert fit_codes(schema, ka).tolist() == want.tolist()
    assert batch.tolist() == want.tolist()
    assert fit_codes(schema, ka, threads=4).tolist() == want.tolist()
    # The C route takes its template of the common key shape from a batch's first key: the
    # mutated keys first, so that a key that does not fit can be the template too.
    back = KeyArray.from_keys(keys[::-1])
    assert fit_codes(schema, back).tolist() == want[::-1].tolist()
    # ... and a key without the non-ASCII text _records puts in every 7th (another length) first
    turn = KeyArray.from_keys(keys[1:] + keys[:1])
    assert fit_codes(schema, turn).tolist() == want[1:].tolist() + want[:1].tolist()


@pytest.mark.skipif(not native.AVAILABLE, reason="the C kernels are not built")
def test_the_c_template_route_keeps_every_limit_of_the_decoder() -> None:
    """Keys of the template's length are checked by word masks and digit bounds (Reader.fits'
    common-shape route): each limit at and past its edge gives the decoder's own code."""
    schema = LAYOUTS["orders"]
    good = schema.encode({"user_id": "user0000042", "order_time": 1_700_000_000_000, "order_id": "123456"})
    t = good.index(b"_", 3) + 1  # the 19 reverse-time digits

    def at(key: bytes, i: int, b: bytes) -> bytes:
        return key[:i] + b + key[i + len(b) :]

    keys = [good]
    for digits in (
        b"9223372036854775807",
        b"9223372036854775808",
        b"9999999999999999999",
        b"0000000000000000000",
        b"9223372036854775706",
        b"922337203685477580/",
        b"922337203685477580:",
        b"9223372036854775\x807",
    ):
        keys.append(at(good, t, digits))
    for i in range(len(good)):  # every position: a separator, a digit, a high byte, a letter
        for b in (b"_", b"0", b"\x80", b"\xff", b"a", b"\x00"):
            keys.append(at(good, i, b))
    want = [keycheck._classify(schema, k) for k in keys]
    assert {FITS, FOREIGN, WRONG_SALT} <= set(want)
    got = fit_codes(schema, KeyArray.from_keys(keys))
    assert got.tolist() == want
    # the same at every position of keys under 16 bytes (words of 8) and of 16 exactly (one vector)
    short = LAYOUTS["short"]
    for user in ("us", "user00042"):
        good = short.encode({"c": "abc", "u": user})
        assert len(good) in (9, 16)
        keys = [good] + [at(good, i, b) for i in range(len(good)) for b in (b"_", b"0", b"\x80", b"a", b"\x00")]
        want = [keycheck._classify(short, k) for k in keys]
        assert {FITS, FOREIGN, WRONG_SALT} <= set(want)
        assert fit_codes(short, KeyArray.from_keys(keys)).tolist() == want


def test_wrong_salts_and_foreign_keys_are_counted_with_examples() -> None:
    s = LAYOUTS["orders"]
    keys = _records(s, 20_000, 1)
    salt00 = [b"00" + k[2:] for k in keys]
    evt = [b"evt-%08d" % i for i in range(5_000)]
    check = KeyCheck.of(s)
    check.check(KeyArray.from_keys(keys))
    assert (check.checked, check.foreign, check.wrong_salt) == (20_000, 0, 0) and not check.refused
    # every key whose true bucket is not 00 is a wrong salt: about 99%
    check = KeyCheck.of(s)
    check.check(KeyArray.from_keys(salt00))
    truly_00 = sum(k[:2] == b"00" for k in keys)
    assert check.wrong_salt == 20_000 - truly_00 and check.foreign == 0 and check.refused
    assert check.wrong_salt_examples[0][1].startswith("00_user")
    check = KeyCheck.of(s)
    check.check(KeyArray.from_keys(evt))
    assert check.foreign == 5_000 and check.foreign_examples[:2] == [(0, "evt-00000000"), (1, "evt-00000001")]
    assert "5,000 of 5,000 (100.0%) do not fit" in check.summary()


def test_partial_checks_merge_into_one_pass() -> None:
    s = LAYOUTS["orders"]
    keys = _records(s, 9_000, 2)
    keys[100] = b"junk"
    keys[7_000] = b"00" + keys[7_000][2:] if keys[7_000][:2] != b"00" else b"01" + keys[7_000][2:]
    keys[8_000] = b"junk2"
    whole = KeyCheck.of(s)
    whole.check(KeyArray.from_keys(keys))
    parts = [KeyCheck.of(s) for _ in range(3)]
    for i, p in reversed(list(enumerate(parts))):  # merged in any order, the examples stay earliest
        p.check(KeyArray.from_keys(keys[3000 * i : 3000 * (i + 1)]), 3000 * i)
    merged = KeyCheck.of(s)
    for p in reversed(parts):
        merged.merge(p)
    assert merged.to_dict() == whole.to_dict()
    assert whole.foreign_examples == [(100, "junk"), (8_000, "junk2")]
    assert [r for r, _ in whole.wrong_salt_examples] == [7_000]


def test_md5_full_keys_are_checked_for_their_form() -> None:
    s = _schema({"strategy": "md5-full"}, [{"name": "u", "type": "string"}])
    good = [s.encode({"u": f"u{i}"}) for i in range(50)]
    bad = [good[0][:31], good[1] + b"0", good[2].upper(), b"z" * 32]
    assert fit_codes(s, KeyArray.from_keys(good + bad)).tolist() == [FITS] * 50 + [FOREIGN] * 4


def test_encode_only_keys_are_checked_as_far_as_they_can_be() -> None:
    # "user" + "142" is also "user1" + "42": no decode, but the prefix and the length can be checked
    s = _schema(
        {"strategy": "mod", "buckets": 16},
        [{"name": "a", "type": "string"}, {"name": "b", "type": "string"}, {"name": "c", "type": "int32", "encoding": "hbase"}],
        sep="",
    )
    assert s.encode_only is not None
    good = [s.encode({"a": f"user{i}", "b": str(i), "c": i}) for i in range(40)]
    bad_prefix = [b"99" + good[0][2:], b"zz" + good[1][2:]]  # no bucket 99 of 16; not digits
    short = [good[2][:5]]
    codes = fit_codes(s, KeyArray.from_keys(good + bad_prefix + short)).tolist()
    assert codes == [FITS] * 40 + [WRONG_SALT] * 2 + [FOREIGN]
    assert "encode-only" in keycheck.check_route(s)


def test_random_prefix_buckets_must_be_ones_the_strategy_writes() -> None:
    s = _schema({"strategy": "random", "buckets": 16}, [{"name": "u", "type": "string"}])
    good = [s.encode({"u": f"u{i}"}) for i in range(40)]
    assert fit_codes(s, KeyArray.from_keys(good + [b"16_u1", b"x1_u1"])).tolist() == [FITS] * 40 + [WRONG_SALT] * 2


def test_a_phoenix_table_is_checked_by_its_own_decoder() -> None:
    s = load_schema(EXAMPLES / "phoenix" / "events.sql")
    keys = _records(s, 300, 3)
    wrong = bytes([(keys[0][0] + 1) % 256]) + keys[0][1:]
    codes = fit_codes(s, KeyArray.from_keys(keys + [wrong, b"evt-1"])).tolist()
    assert codes[:300] == [FITS] * 300 and codes[300:] == [WRONG_SALT, FOREIGN]


# ------------------------------------------------------------------ analyze --keys


def _parquet(path: Path, keys: list[bytes], group: int = 50_000) -> Path:
    pq.write_table(pa.table({"rowkey": pa.array(keys, pa.binary())}), path, row_group_size=group)
    return path


@pytest.fixture(scope="module")
def orders_keys() -> list[bytes]:
    s = KeySchema.load(ORDERS)
    return s.encode_many(next(generate(s, 200_000, seed=5, chunk_rows=200_000)))


def test_a_file_salted_00_throughout_is_refused(tmp_path: Path, orders_keys: list[bytes]) -> None:
    f = _parquet(tmp_path / "salt00.parquet", [b"00" + k[2:] for k in orders_keys])
    with pytest.raises(KeysDoNotFit, match=r"carry a wrong salt .*'00_user") as got:
        analyze_schema(ORDERS, keys_file=f)
    check = got.value.check
    assert isinstance(check, KeyCheck)
    assert check.wrong_salt == sum(k[:2] != b"00" for k in orders_keys) and check.checked == 200_000
    a = analyze_schema(ORDERS, keys_file=f, allow_foreign_keys=True)
    assert a.key_check is not None and a.key_check.wrong_salt == check.wrong_salt
    assert a.reasons[0].startswith("keys checked against the schema") and "wrong salt" in a.reasons[0]
    assert a.to_dict()["key_check"]["wrong_salt"] == check.wrong_salt


@pytest.mark.parametrize("share,refused", [(0.01, False), (0.015, True)])
def test_foreign_keys_past_one_percent_are_refused(tmp_path: Path, orders_keys: list[bytes], share: float, refused: bool) -> None:
    keys = list(orders_keys)
    rng = np.random.default_rng(7)
    rows = sorted(rng.choice(len(keys), int(share * len(keys)), replace=False).tolist())
    for r in rows:
        keys[r] = b"evt-%08d" % r
    f = _parquet(tmp_path / "mixed.parquet", keys)
    if refused:
        with pytest.raises(KeysDoNotFit, match=r"3,000 of 200,000 \(1.5%\) do not fit"):
            analyze_schema(ORDERS, keys_file=f)
        return
    a = analyze_schema(ORDERS, keys_file=f)  # a few odd rows: counted, said first, judged on
    assert a.key_check is not None and a.key_check.foreign == len(rows)
    assert [r for r, _ in a.key_check.foreign_examples] == rows[:3]
    assert "2,000 of 200,000 (1.0%) do not fit" in a.reasons[0]


def test_csv_keys_and_auto_split_are_checked_too(tmp_path: Path, orders_keys: list[bytes]) -> None:
    csv = tmp_path / "keys.csv"
    csv.write_text("rowkey\n" + "".join(k.decode() + "\n" for k in orders_keys[:5_000]) + "evt-1\nevt-2\n")
    a = analyze_schema(ORDERS, keys_file=csv)
    assert a.key_check is not None and (a.key_check.checked, a.key_check.foreign) == (5_002, 2)
    with pytest.raises(KeysDoNotFit, match="do not fit"):
        csv.write_text("rowkey\n" + "".join(f"evt-{i}\n" for i in range(100)))
        analyze_schema(ORDERS, keys_file=csv, auto_split_rows=1000)


def test_parallel_units_give_the_one_pass_check(tmp_path: Path, orders_keys: list[bytes]) -> None:
    keys = list(orders_keys)
    for r in (5, 60_001, 120_003, 199_999):
        keys[r] = b"x%d" % r
    f = _parquet(tmp_path / "k.parquet", keys, group=25_000)
    s = KeySchema.load(ORDERS)
    results = []
    for workers in (1, 3):
        check = KeyCheck.of(s)
        feed_key_files(Analyzer(s.split_keys(), total_rows=len(keys)), f, workers=workers, check=check)
        results.append(check.to_dict())
    assert results[0] == results[1]
    assert [e["row"] for e in results[0]["foreign_examples"]] == [5, 60_001, 120_003]


def test_generated_workloads_carry_no_key_check() -> None:
    a = analyze_schema(ORDERS, rows=2_000)
    assert a.key_check is None and a.to_dict()["key_check"] is None


def test_analyze_keys_does_not_import_pandas(tmp_path: Path, orders_keys: list[bytes]) -> None:
    """pyarrow imports pandas on its first pa.array call only to ask whether the input is a
    pandas object (0.2 s, as long as reading 3M keys): the local engine's process keeps it out."""
    import subprocess
    import sys

    f = _parquet(tmp_path / "k.parquet", orders_keys[:10_000])
    code = (
        "import sys; from keyshape.cli.main import main; sys.argv = ['keyshape', 'analyze', sys.argv[1], "
        "'--keys', sys.argv[2]]\ntry:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "assert 'pandas' not in sys.modules, 'pandas imported'"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(ORDERS), str(f)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
