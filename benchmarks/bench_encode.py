"""Key encoding: KeySchema.encode_many against a seed-style per-record loop and per-record encode.

For every example schema (examples/*.toml) the same generated rows are encoded three ways, side by
side in one run: ``encode_many`` (list of bytes, and ``as_array=True`` as the analyzer uses it), a
loop written the way hand-written HBase key code does it (string formatting and concatenation per record, the
hash computed per key in Python / hashlib; written here independently of keyshape and checked to
give the same bytes), and keyshape's per-record ``encode``.

Run: .venv/bin/python benchmarks/bench_encode.py [--rows N] [--quick]
"""

from __future__ import annotations

import hashlib
import struct
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, best_of, parser, print_table, write_json  # noqa: E402

from keyshape.schema import KeySchema  # noqa: E402
from keyshape.workload import generate  # noqa: E402

MAX_LONG, MAX_INT = 2**63 - 1, 2**31 - 1


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
            def part(v: Any, w: int | None = w, keep: bool = f.truncate == "keep-last", pad: str = f.pad_char,
                     desc: bool = desc) -> bytes:
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
            def part(v: Any, top: int = top, desc: bool = desc, digits: int = digits) -> bytes:
                return str(top - int(v) if desc else int(v)).zfill(digits).encode()
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
    if p.name == "md5":
        length = p.width
        def key(r: dict[str, Any]) -> bytes:
            ps, k = body(r)
            j = sep.join(ps[i] for i in hashed)
            return hashlib.md5(j).hexdigest()[:length].encode() + sep + k
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
            return bytes([abs(h) % n]) + k
        return key
    return None


# ------------------------------------------------------------------------------------- main


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="rows per schema (default 200,000)")
    args = ap.parse_args()
    rows_n = 2_000 if args.quick else args.rows
    repeat = 1 if args.quick else 3
    results = []
    table = []
    for path in sorted((ROOT / "examples").glob("*.toml")):
        schema = KeySchema.load(path)
        columns = next(generate(schema, rows_n, seed=0, chunk_rows=rows_n))
        records = [{n: columns[n][i] for n in schema.field_names} for i in range(rows_n)]
        py_records = [{n: (v.item() if hasattr(v, "item") else v) for n, v in r.items()} for r in records]
        t_batch, keys = best_of(repeat, lambda: schema.encode_many(columns))
        t_array, _ = best_of(repeat, lambda: schema.encode_many(columns, as_array=True))
        t_encode, per = best_of(repeat, lambda: [schema.encode(r) for r in records])
        assert per == keys
        seed = seed_encoder(schema)
        t_seed = None
        if seed is not None:
            t_seed, seed_keys = best_of(repeat, lambda: [seed(r) for r in py_records])
            assert seed_keys == keys, f"{path.name}: the seed-style loop disagrees with keyshape"
        row = {
            "schema": path.name,
            "prefix": schema.prefix.name,
            "salted": bool(schema.prefix.salted),
            "fields": len(schema.fields),
            "rows": rows_n,
            "batch_keys_per_s": rows_n / t_batch,
            "batch_array_keys_per_s": rows_n / t_array,
            "seed_loop_keys_per_s": rows_n / t_seed if t_seed else None,
            "encode_keys_per_s": rows_n / t_encode,
            "batch_over_seed": t_seed / t_batch if t_seed else None,
            "array_over_seed": t_seed / t_array if t_seed else None,
            "batch_over_encode": t_encode / t_batch,
        }
        results.append(row)
        table.append([path.stem, row["prefix"], row["batch_keys_per_s"] / 1e6, row["batch_array_keys_per_s"] / 1e6,
                      row["seed_loop_keys_per_s"] and row["seed_loop_keys_per_s"] / 1e6,
                      row["encode_keys_per_s"] / 1e6, row["batch_over_seed"], row["array_over_seed"],
                      row["batch_over_encode"]])
    print_table(f"Key encoding, {rows_n:,} rows per schema, best of {repeat} (M keys/s; ratios = speed-ups)",
                ["schema", "prefix", "many", "array", "seed", "encode", "many/seed",
                 "array/seed", "many/enc"], table)
    salted = [r for r in results if r["salted"] and r["fields"] > 1]
    summary = {
        "salted_composite_best_keys_per_s": max(r["batch_array_keys_per_s"] for r in salted),
        "salted_composite_worst_keys_per_s": min(r["batch_array_keys_per_s"] for r in salted),
        "min_batch_over_seed": min(r["batch_over_seed"] for r in results if r["batch_over_seed"]),
    }
    path = write_json("bench_encode", args.out, {"rows": rows_n, "repeat": repeat, "results": results,
                                                 "summary": summary})
    print(f"salted composite keys/s (as_array): {summary['salted_composite_worst_keys_per_s']:,.0f} .. "
          f"{summary['salted_composite_best_keys_per_s']:,.0f}; smallest encode_many/seed ratio "
          f"{summary['min_batch_over_seed']:.1f}x  ->  {path}")


if __name__ == "__main__":
    main()
