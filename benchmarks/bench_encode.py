"""Key encoding and decoding: keyshape against hand-written loops and DuckDB, side by side.

For every example schema (examples/*.toml) plus prefix variants (iot with md5-full and crc32,
orders with java-hash-short and phoenix), the same generated rows go through, interleaved round
by round (best of ``--repeat`` each, on a shared machine):

* ``encode``: keyshape's per-record ``KeySchema.encode`` (compiled per schema) on plain Python
  records, what application code calls per write; ``encode*``: the same with the salt-prefix memo
  switched off (every J hashed, as for all-distinct entities);
* ``seed``: a per-record loop written the way the seeds write keys (string formatting and
  concatenation, the hash per key in Python / hashlib), checked to give the same bytes;
* ``many`` / ``array``: ``encode_many(columns)`` as a list of bytes / as a KeyArray (text columns
  as Python lists); ``array_np``: the same from ``generate(..., text_arrays=True)`` columns (numpy
  str arrays, what the analyzer feeds it);
* ``duckdb1`` / ``duckdb2`` (md5 and md5-full, when the duckdb package is installed): DuckDB
  building the same keys from J and K binary columns with its ``md5``, on 1 and 2 threads, and
  ``from_jk``: keyshape building them from the same J and K columns (prefix_many + concat);
* ``decode``: per-record ``KeySchema.decode``; ``decode*``: the same with its memos switched off
  (the salt prefix re-hashed from J for every key, as for all-distinct entities); ``hand``: a hand-written split/parse of the same
  layout (no prefix check), checked to give the same values; ``decode_many``: the batch decoder
  (numpy columns); ``arrow``: ``decode_many(as_arrow=True)``, a pyarrow Table (no Python object per value);
  ``plain``: ``decode(key, verify=False)``, the like-for-like of the hand parse (the prefix stripped,
  not re-derived from the fields); ``many/plain``: ``decode_many(verify=False)`` against it;
  ``py`` / ``plain_py``: ``decode`` / ``plain`` on the pure-Python route (the compiled decoder
  without the C kernels of keyshape.core.native, what a machine without a C compiler runs).

Run: .venv/bin/python benchmarks/bench_encode.py [--rows N] [--repeat R] [--quick]
"""

from __future__ import annotations

import gc
import hashlib
import struct
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, parser, print_table, write_json  # noqa: E402

from keyshape.core import batchhash, native  # noqa: E402
from keyshape.core.keyarray import KeyArray  # noqa: E402
from keyshape.schema import KeySchema  # noqa: E402
from keyshape.schema.compiled_decode import compile_decoder  # noqa: E402
from keyshape.workload import generate  # noqa: E402

MAX_LONG, MAX_INT = 2**63 - 1, 2**31 - 1
_q, _i = struct.Struct(">q").unpack_from, struct.Struct(">i").unpack_from


# ------------------------------------------------------------------ hand-written, per record


def _java_string_hash(s: str) -> int:
    h = 0
    for ch in s:  # ASCII ids: one UTF-16 unit per character
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def _java_bytes_hash(b: bytes) -> int:
    h = 1
    for c in b:
        h = (31 * h + (c - 256 if c > 127 else c)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def seed_encoder(schema: KeySchema) -> Any:
    """A per-record function ``record -> bytes`` in the hand-written style, or None when the schema
    uses something this hand-written loop does not cover."""
    parts = []
    for f in schema.fields:
        t, enc, desc, w = f.type, f.encoding, f.order == "desc", f.width
        if t == "string" and enc in ("text", "hbase"):

            def part(v: Any, w: int | None = w, keep: bool = f.truncate == "keep-last", pad: str = f.pad_char, desc: bool = desc) -> bytes:
                s = str(v)
                if w is not None:
                    s = s[-w:] if keep else s
                    s = s.rjust(w, pad)
                b = s.encode()
                return bytes(255 - c for c in b) if desc else b
        elif t == "bytes" and enc == "hbase" and not desc:

            def part(v: Any) -> bytes:
                return bytes(v)
        elif t in ("timestamp", "int64", "int32") and enc == "hbase":
            fmt, top = (">i", MAX_INT) if t == "int32" else (">q", MAX_LONG)

            def part(v: Any, fmt: str = fmt, top: int = top, desc: bool = desc) -> bytes:
                return struct.pack(fmt, top - int(v) if desc else int(v))
        elif t in ("timestamp", "int64", "int32") and enc == "text":
            top = MAX_INT if t == "int32" else MAX_LONG
            digits = f.text_width

            def part(v: Any, top: int = top, desc: bool = desc, digits: int = digits, keep: bool = f.truncate == "keep-last") -> bytes:
                s = str(top - int(v) if desc else int(v))
                return (s[-digits:] if keep else s).zfill(digits).encode()  # keep-last: the last digits, as a %06d order number
        else:
            return None
        parts.append(part)
    names = schema.field_names
    sep = schema.separator
    p = schema.prefix
    hashed = [names.index(h) for h in schema.hash_fields]

    def body(r: dict[str, Any]) -> tuple[list[bytes], bytes]:
        ps = [fn(r[n]) for fn, n in zip(parts, names)]
        return ps, sep.join(ps)

    if p.name == "none":
        return lambda r: body(r)[1]
    if p.name == "mod":
        n, width = p.n, p.width

        def key(r: dict[str, Any]) -> bytes:
            ps, k = body(r)
            j = sep.join(ps[i] for i in hashed).decode()
            return ("%0*d" % (width, (_java_string_hash(j) & 0x7FFFFFFF) % n)).encode() + sep + k

        return key
    if p.name == "java-hash-short":

        def key(r: dict[str, Any]) -> bytes:
            ps, k = body(r)
            j = sep.join(ps[i] for i in hashed).decode()
            return struct.pack(">h", _java_string_hash(j) & 0x7FFF) + k

        return key
    if p.name in ("md5", "md5-full"):
        length = p.width
        full = p.name == "md5-full"

        def key(r: dict[str, Any]) -> bytes:
            ps, k = body(r)
            if full:
                return hashlib.md5(k).hexdigest().encode()
            j = sep.join(ps[i] for i in hashed)
            return hashlib.md5(j).hexdigest()[:length].encode() + sep + k

        return key
    if p.name == "crc32":

        def key(r: dict[str, Any]) -> bytes:
            ps, k = body(r)
            j = sep.join(ps[i] for i in hashed)
            return ("%04x" % (zlib.crc32(j) & 0xFFFF)).encode() + sep + k

        return key
    if p.name == "opentsdb" and p.width == 1:
        n, mw = p.n, p.metric_width

        def key(r: dict[str, Any]) -> bytes:
            ps, k = body(r)
            j = b"".join(ps[i] for i in hashed)
            if not any(j[:mw]):
                return b"\x00" + k
            h = _java_bytes_hash(j)
            return bytes([abs(h) % n if h >= 0 else abs(-(abs(h) % n))]) + k

        return key
    if p.name == "phoenix":
        n = p.n

        def key(r: dict[str, Any]) -> bytes:
            k = body(r)[1]
            h = _java_bytes_hash(k)
            return bytes([abs(h) % n if h >= 0 else abs(-(abs(h) % n))]) + k

        return key
    return None


# Hand-written split/parse of each example layout, as an application would write it.
def _orders(key: bytes) -> dict[str, Any]:
    _, u, t, o = key.split(b"_")
    return {"user_id": u.decode(), "order_time": MAX_LONG - int(t), "order_id": int(o)}  # an integer, its last 6 digits


def _inbox(key: bytes) -> dict[str, Any]:
    return {
        "user_id": key[2:14].decode().lstrip("0"),
        "received": MAX_LONG - _q(key, 14)[0],
        "message_id": key[22:38].decode(),
    }  # pad = "none": 16 hex digits, leading zeros kept


def _iot(key: bytes) -> dict[str, Any]:
    return {"device_id": key[4:14].decode().lstrip("0"), "hour": _q(key, 14)[0], "ts": MAX_LONG - _q(key, 22)[0], "metric": key[30:].decode()}


def _opentsdb(key: bytes) -> dict[str, Any]:
    return {"metric": key[1:4], "base_hour": _i(key, 4)[0], "tagk_host": key[8:11], "tagv_host": key[11:14]}


def _sequential(key: bytes) -> dict[str, Any]:
    return {"event_id": _q(key, 0)[0]}


def _timestamp_leading(key: bytes) -> dict[str, Any]:
    return {"event_time": _q(key, 0)[0], "event_id": _i(key, 8)[0]}


HAND_DECODERS: dict[str, Callable[[bytes], dict[str, Any]]] = {
    "orders": _orders,
    "inbox": _inbox,
    "iot": _iot,
    "opentsdb": _opentsdb,
    "sequential": _sequential,
    "timestamp-leading": _timestamp_leading,
}


# ------------------------------------------------------------------------------------ DuckDB


def j_and_k(schema: KeySchema, records: list[dict[str, Any]]) -> tuple[list[bytes], list[bytes]]:
    """The hashed material J and the unprefixed key K of every record (setup, not timed)."""
    sep = schema.separator
    j, k = [], []
    for r in records:
        parts = [f.encode(r[f.name]) for f in schema.fields]
        k.append(sep.join(parts))
        j.append(sep.join(parts[i] for i in schema.layout.hash_idx))
    return j, k


def keyshape_from_jk(schema: KeySchema, j: list[bytes], k: list[bytes]) -> Any:
    """keyshape assembling the same keys as DuckDB from the same J and K columns (as KeyArrays,
    built beforehand like DuckDB's Arrow input): the batch prefix plus one concatenation."""
    p = schema.prefix
    ja = KeyArray.from_keys(k if p.material == "K" else j)
    ka = KeyArray.from_keys(k)
    ja._list = ka._list = None  # no shortcut back to the source lists
    sep = KeyArray.constant(schema.separator, len(k)) if p.sep_after and schema.separator else None
    if p.name == "md5-full":
        return lambda: p.prefix_many(ja)
    return lambda: KeyArray.concat([p.prefix_many(ja)] + ([sep] if sep is not None else []) + [ka])


def duckdb_builder(schema: KeySchema, j: list[bytes], k: list[bytes], threads: int) -> Any:
    """A function building the keys with DuckDB's md5 from J and K binary columns (prepared, not
    timed), or None without duckdb or for other strategies."""
    p = schema.prefix
    if p.name not in ("md5", "md5-full"):
        return None
    try:
        import duckdb
        import pyarrow as pa
    except ImportError:
        return None
    sep = schema.separator
    table = pa.table({"j": pa.array(j, pa.binary()), "k": pa.array(k, pa.binary())})
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.register("t", table)
    if p.name == "md5-full":
        query = "SELECT encode(md5(k)) AS key FROM t"
    else:
        glue = f" || {_blob(sep)} " if p.sep_after and sep else " "
        query = f"SELECT encode(substr(md5(j), 1, {p.width})){glue}|| k AS key FROM t".replace("  ", " ")
    return lambda: con.sql(query).to_arrow_table()


def _blob(b: bytes) -> str:
    return "'" + "".join(f"\\x{c:02X}" for c in b) + "'::BLOB"


def duckdb_md5_kernel(materials: list[bytes], threads: int) -> Any:
    try:
        import duckdb
        import pyarrow as pa
    except ImportError:
        return None
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.register("t", pa.table({"j": pa.array(materials, pa.binary())}))
    return lambda: con.sql("SELECT md5(j) FROM t").to_arrow_table()


# ------------------------------------------------------------------------------------- timing


class _NoMemo(dict):
    """Stands in for a compiled encoder's prefix memo: never remembers anything."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def race(fns: dict[str, Callable[[], Any]], repeat: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Best wall time of each function over ``repeat`` rounds, the functions interleaved within
    each round so that load from other processes hits all of them alike."""
    best = {n: float("inf") for n in fns}
    last: dict[str, Any] = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            # As timeit does: no cyclic GC inside a timing (a full collection over the millions of
            # objects held here would land in the same function every round, by allocation
            # pattern), and the previous round's result is freed before the clock starts.
            last.pop(name, None)
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter()
                out = fn()
                best[name] = min(best[name], time.perf_counter() - t0)
            finally:
                gc.enable()
            last[name] = out
    return best, last


def cases() -> list[tuple[str, KeySchema]]:
    out = [(p.stem, KeySchema.load(p)) for p in sorted((ROOT / "examples").glob("*.toml"))]
    _EXAMPLES.update(dict(out))
    iot = KeySchema.load(ROOT / "examples" / "iot.toml")
    orders = KeySchema.load(ROOT / "examples" / "orders.toml")
    out += [
        ("iot", iot.with_prefix("md5-full", splits=None)),
        ("iot", iot.with_prefix("crc32", splits=None)),
        ("orders", orders.with_prefix("java-hash-short", splits=None)),
        ("orders", orders.with_prefix("phoenix", splits=None, buckets=16)),
    ]
    return out


def _py(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="rows per schema (default 200,000)")
    ap.add_argument("--repeat", type=int, default=5, help="rounds, best of (default 5)")
    args = ap.parse_args()
    rows_n = 2_000 if args.quick else args.rows
    repeat = 1 if args.quick else args.repeat
    results, table, dec_table, jk_table = [], [], [], []
    for stem, schema in cases():
        columns = next(generate(schema, rows_n, seed=0, chunk_rows=rows_n))
        np_columns = next(generate(schema, rows_n, seed=0, chunk_rows=rows_n, text_arrays=True))
        records = [{n: _py(columns[n][i]) for n in schema.field_names} for i in range(rows_n)]
        nomemo = schema.with_prefix(schema.prefix.name, splits=None, **_options(schema))
        enc_nomemo = nomemo._encoder()
        if "_MEMO" in enc_nomemo.__globals__:
            enc_nomemo.__globals__["_MEMO"] = _NoMemo()
        seed = seed_encoder(schema)
        fns: dict[str, Callable[[], Any]] = {
            "many": lambda: schema.encode_many(columns),
            "array": lambda: schema.encode_many(columns, as_array=True),
            "array_np": lambda: schema.encode_many(np_columns, as_array=True),
            "encode": lambda: [schema.encode(r) for r in records],
            "encode_nomemo": lambda: [enc_nomemo(r) for r in records],
        }
        if seed is not None:
            fns["seed"] = lambda: [seed(r) for r in records]
        if schema.prefix.name in ("md5", "md5-full", "crc32"):
            j, k = j_and_k(schema, records)
            fns["from_jk"] = keyshape_from_jk(schema, j, k)
            for th in (1, 2):
                d = duckdb_builder(schema, j, k, th)
                if d is not None:
                    fns[f"duckdb{th}"] = d
        t, out = race(fns, repeat)
        keys = out["many"]
        assert out["encode"] == keys and out["encode_nomemo"] == keys and out["array"].tolist() == keys
        assert out["array_np"].tolist() == keys
        if "seed" in out:
            assert out["seed"] == keys, f"{stem}: the seed-style loop disagrees with keyshape"
        if "from_jk" in out:
            assert out["from_jk"].tolist() == keys, f"{stem}: keyshape from J and K disagrees"
        for th in (1, 2):
            if f"duckdb{th}" in out:
                assert out[f"duckdb{th}"].column(0).to_pylist() == keys, f"{stem}: DuckDB disagrees"
        label = f"{stem} ({schema.prefix.name})"
        row: dict[str, Any] = {
            "schema": f"{stem}.toml",
            "case": label,
            "prefix": schema.prefix.name,
            "route": schema.prefix.route,
            "salted": bool(schema.prefix.salted),
            "fields": len(schema.fields),
            "rows": rows_n,
            "batch_keys_per_s": rows_n / t["many"],
            "batch_array_keys_per_s": rows_n / t["array"],
            "batch_array_np_keys_per_s": rows_n / t["array_np"],
            "encode_keys_per_s": rows_n / t["encode"],
            "encode_nomemo_keys_per_s": rows_n / t["encode_nomemo"],
            "seed_loop_keys_per_s": rows_n / t["seed"] if "seed" in t else None,
            "duckdb1_keys_per_s": rows_n / t["duckdb1"] if "duckdb1" in t else None,
            "duckdb2_keys_per_s": rows_n / t["duckdb2"] if "duckdb2" in t else None,
        }
        row["batch_over_seed"] = t["seed"] / t["many"] if "seed" in t else None
        row["array_over_seed"] = t["seed"] / t["array"] if "seed" in t else None
        row["encode_over_seed"] = t["seed"] / t["encode"] if "seed" in t else None
        row["encode_nomemo_over_seed"] = t["seed"] / t["encode_nomemo"] if "seed" in t else None
        row["batch_over_encode"] = t["encode"] / t["many"]
        row["array_over_duckdb1"] = t["duckdb1"] / t["array"] if "duckdb1" in t else None
        row["array_over_duckdb2"] = t["duckdb2"] / t["array"] if "duckdb2" in t else None
        row["array_np_over_duckdb1"] = t["duckdb1"] / t["array_np"] if "duckdb1" in t else None
        row["from_jk_keys_per_s"] = rows_n / t["from_jk"] if "from_jk" in t else None
        row["from_jk_over_duckdb1"] = t["duckdb1"] / t["from_jk"] if "duckdb1" in t else None
        row["from_jk_over_duckdb2"] = t["duckdb2"] / t["from_jk"] if "duckdb2" in t else None
        # Decoding: per record, hand-written, batch. The encoding race's results (millions of
        # objects, ~100 MB) are freed first: held, they leave the decoders a fragmented heap
        # whose fresh pages each cost a fault (the batch decoder measured 1.4x slower so).
        for big in (out, records, columns, np_columns, fns):
            big.clear()
        gc.collect()
        if schema.prefix.recoverable:
            hand = HAND_DECODERS.get(stem) if schema is _example(stem) else None
            dec_nomemo = nomemo._decoder()
            for memo in ("_MEMO", "_HM"):  # decode*: every key's prefix re-checked from its J
                if memo in getattr(dec_nomemo, "__globals__", {}):
                    dec_nomemo.__globals__[memo] = _NoMemo()
            py_dec = compile_decoder(schema.layout, use_native=False)
            dfns: dict[str, Callable[[], Any]] = {
                "decode": lambda: [schema.decode(k) for k in keys],
                "decode_plain": lambda: [schema.decode(k, False) for k in keys],
                "decode_many_plain": lambda: schema.decode_many(keys, verify=False),
                "decode_nomemo": lambda: [dec_nomemo(k) for k in keys],
                "decode_many": lambda: schema.decode_many(keys),
                "decode_arrow": lambda: schema.decode_many(keys, as_arrow=True),
            }
            if hand is not None:
                dfns["hand"] = lambda: [hand(k) for k in keys]
            dfns["decode_py"] = lambda: [py_dec(k) for k in keys]
            dfns["plain_py"] = lambda: [py_dec(k, False) for k in keys]
            dt, dout = race(dfns, repeat)
            per = dout["decode"]
            many = dout["decode_many"]
            assert {n: (v.tolist() if hasattr(v, "tolist") else v) for n, v in many.items()} == {n: [r[n] for r in per] for n in schema.field_names}
            assert dout["decode_nomemo"] == per and dout["decode_plain"] == per
            assert dout["decode_py"] == per and dout["plain_py"] == per
            assert {n: (v.tolist() if hasattr(v, "tolist") else v) for n, v in dout["decode_many_plain"].items()} == {
                n: (v.tolist() if hasattr(v, "tolist") else v) for n, v in many.items()
            }
            assert dout["decode_arrow"].to_pylist() == per
            if "hand" in dout:
                assert dout["hand"] == per, f"{stem}: the hand-written decoder disagrees"
            row.update(
                {
                    "decode_keys_per_s": rows_n / dt["decode"],
                    "decode_many_keys_per_s": rows_n / dt["decode_many"],
                    "hand_decode_keys_per_s": rows_n / dt["hand"] if "hand" in dt else None,
                    "decode_over_hand": dt["hand"] / dt["decode"] if "hand" in dt else None,
                    "decode_nomemo_keys_per_s": rows_n / dt["decode_nomemo"],
                    "decode_nomemo_over_hand": dt["hand"] / dt["decode_nomemo"] if "hand" in dt else None,
                    "decode_many_over_decode": dt["decode"] / dt["decode_many"],
                    "decode_arrow_keys_per_s": rows_n / dt["decode_arrow"],
                    "decode_arrow_over_decode": dt["decode"] / dt["decode_arrow"],
                    "decode_plain_keys_per_s": rows_n / dt["decode_plain"],
                    "decode_plain_over_hand": dt["hand"] / dt["decode_plain"] if "hand" in dt else None,
                    "decode_py_over_hand": dt["hand"] / dt["decode_py"] if "hand" in dt else None,
                    "plain_py_over_hand": dt["hand"] / dt["plain_py"] if "hand" in dt else None,
                    "decode_many_plain_over_decode_plain": dt["decode_plain"] / dt["decode_many_plain"],
                }
            )
            dec_table.append(
                [
                    label,
                    row["decode_keys_per_s"] / 1e6,
                    row["decode_nomemo_keys_per_s"] / 1e6,
                    row["hand_decode_keys_per_s"] and row["hand_decode_keys_per_s"] / 1e6,
                    row["decode_many_keys_per_s"] / 1e6,
                    row["decode_over_hand"],
                    row["decode_nomemo_over_hand"],
                    row["decode_many_over_decode"],
                    row["decode_arrow_keys_per_s"] / 1e6,
                    row["decode_arrow_over_decode"],
                    row["decode_plain_keys_per_s"] / 1e6,
                    row["decode_plain_over_hand"],
                    row["decode_many_plain_over_decode_plain"],
                    row["decode_py_over_hand"],
                    row["plain_py_over_hand"],
                ]
            )
        results.append(row)
        m = 1e6
        table.append(
            [
                label,
                row["encode_keys_per_s"] / m,
                row["encode_nomemo_keys_per_s"] / m,
                row["seed_loop_keys_per_s"] and row["seed_loop_keys_per_s"] / m,
                row["batch_keys_per_s"] / m,
                row["batch_array_keys_per_s"] / m,
                row["duckdb1_keys_per_s"] and row["duckdb1_keys_per_s"] / m,
                row["encode_over_seed"],
                row["encode_nomemo_over_seed"],
                row["array_over_seed"],
                row["array_over_duckdb1"],
            ]
        )
        if "from_jk" in t:
            jk_table.append(
                [
                    label,
                    row["batch_array_keys_per_s"] / m,
                    row["array_over_duckdb1"],
                    row["batch_array_np_keys_per_s"] / m,
                    row["array_np_over_duckdb1"],
                    row["from_jk_keys_per_s"] / m,
                    row["duckdb1_keys_per_s"] and row["duckdb1_keys_per_s"] / m,
                    row["duckdb2_keys_per_s"] and row["duckdb2_keys_per_s"] / m,
                    row["from_jk_over_duckdb1"],
                    row["from_jk_over_duckdb2"],
                ]
            )
    print_table(
        f"Key encoding, {rows_n:,} rows per case, best of {repeat} interleaved (M keys/s; ratios = speed-ups)",
        ["case", "encode", "encode*", "seed", "many", "array", "duckdb1", "enc/seed", "enc*/seed", "array/seed", "array/duckdb1"],
        table,
    )
    print_table(
        "md5/crc32 keys: keyshape from typed Python-list and numpy columns, and from the same J and K binary columns as DuckDB (M keys/s)",
        ["case", "array(list cols)", "/duckdb1", "array(np cols)", "/duckdb1", "from J,K", "duckdb1", "duckdb2", "J,K/duckdb1", "J,K/duckdb2"],
        jk_table,
    )
    print_table(
        "Key decoding (M keys/s; decode* = memo off: every prefix re-hashed; plain = verify=False: "
        "prefix stripped, not re-derived, as the hand parse does)",
        [
            "case",
            "decode",
            "decode*",
            "hand",
            "decode_many",
            "decode/hand",
            "decode*/hand",
            "many/decode",
            "arrow",
            "arrow/decode",
            "plain",
            "plain/hand",
            "many/plain (both verify=False)",
            "py/hand",
            "plain_py/hand",
        ],
        dec_table,
    )
    kernel = _kernel_race(rows_n, repeat)
    print_table(
        "MD5 of distinct 10-byte ids alone (M/s)",
        ["route", "M/s", "vs hashlib loop"],
        [[k, v / 1e6, v / kernel["hashlib loop"]] for k, v in kernel.items()],
    )
    verified = _verified_decode_race(repeat)
    print_table(
        "verified decode_many of 200,000 keys (ms; salt re-derived per key)",
        ["prefix", "ms", "vs mod"],
        [[k, v, v / verified["mod"]] for k, v in verified.items()],
    )
    print(
        "routes: "
        + "; ".join(sorted({f"{r['prefix']}: {r['route']}" for r in results}))
        + f"; per-record encode/decode: compiled per schema, {native.ROUTE}; threads: {batchhash.default_threads()}"
    )
    salted = [r for r in results if r["salted"] and r["fields"] > 1]
    summary = {
        "salted_composite_best_keys_per_s": max(r["batch_array_keys_per_s"] for r in salted),
        "salted_composite_worst_keys_per_s": min(r["batch_array_keys_per_s"] for r in salted),
        "min_batch_over_seed": min(r["batch_over_seed"] for r in results if r["batch_over_seed"]),
        "min_encode_over_seed": min(r["encode_over_seed"] for r in results if r["encode_over_seed"]),
        "md5_kernel_keys_per_s": kernel,
        "verified_decode_many_200k_ms": verified,
    }
    path = write_json(
        "bench_encode",
        args.out,
        {
            "rows": rows_n,
            "repeat": repeat,
            "threads": batchhash.default_threads(),
            "per_record_route": native.ROUTE,
            "results": results,
            "summary": summary,
        },
    )
    print(f"smallest encode/seed {summary['min_encode_over_seed']:.2f}x, smallest encode_many/seed {summary['min_batch_over_seed']:.1f}x  ->  {path}")


def _options(schema: KeySchema) -> dict[str, int]:
    p = schema.prefix
    if p.name in ("mod", "phoenix", "random"):
        return {"buckets": p.n}  # type: ignore[attr-defined]
    if p.name == "md5":
        return {"length": p.width}
    if p.name == "opentsdb":
        return {"buckets": p.n, "width": p.width}  # type: ignore[attr-defined]
    return {}


_EXAMPLES: dict[str, KeySchema] = {}


def _example(stem: str) -> KeySchema | None:
    """The schema object ``cases()`` loaded for example ``stem`` (variants are other objects)."""
    return _EXAMPLES.get(stem)


def _verified_decode_race(repeat: int) -> dict[str, float]:
    """ms for a verified decode_many of 200,000 keys (5,000 users) salted by each deterministic
    prefix: the C reader re-derives the salt where it has a check (issue 43: murmur3 had none)."""
    users = np.char.add("user", (np.arange(200_000) % 5000).astype("U5"))
    out: dict[str, float] = {}
    for strategy in ("mod", "murmur3", "md5", "crc32", "java-hash-short"):
        prefix: dict[str, Any] = {"strategy": strategy} | ({"buckets": 16} if strategy in ("mod", "murmur3") else {})
        schema = KeySchema.from_dict(
            {
                "table": {"name": "t"},
                "key": {
                    "separator": "_",
                    "prefix": prefix,
                    "hash_fields": ["user"],
                    "fields": [{"name": "user", "type": "string"}, {"name": "ts", "type": "timestamp", "order": "desc"}],
                },
            }
        )
        keys = schema.encode_many({"user": users, "ts": np.arange(200_000, dtype=np.int64)})
        t, _ = race({strategy: lambda: schema.decode_many(keys)}, repeat)  # noqa: B023 -- called at once
        out[strategy] = t[strategy] * 1000
    return out


def _kernel_race(rows_n: int, repeat: int) -> dict[str, float]:
    ids = [b"dev%07d" % i for i in range(rows_n)]  # all distinct: the kernel itself, no repeats to share
    ka = KeyArray.from_keys(ids)
    fns: dict[str, Callable[[], Any]] = {
        "hashlib loop": lambda: [hashlib.md5(x).hexdigest() for x in ids],
        "keyshape 1 thread": lambda: batchhash.md5_hex_many(ka, 32, threads=1),
        "keyshape 2 threads": lambda: batchhash.md5_hex_many(ka, 32, threads=2),
    }
    for th in (1, 2):
        d = duckdb_md5_kernel(ids, th)
        if d is not None:
            fns[f"duckdb {th} thread(s)"] = d
    t, _ = race(fns, repeat)
    return {k: rows_n / v for k, v in t.items()}


if __name__ == "__main__":
    main()
