"""Phoenix row keys: keyshape's per-record encode, batch encode_many and decode against a hand-written
loop (struct packing, separators and Arrays.hashCode for the salt, the way a user writes it), and
decode (salt byte re-checked, and with verify=False) against a hand-written parse of the same layout
(salt byte skipped, no checks), beside the key schemas of examples/ encoded per record, in one run.

Run: .venv/bin/python benchmarks/bench_phoenix.py [--rows N] [--quick]
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, best_of, parser, print_table, write_json  # noqa: E402

from keyshape.phoenix import parse_ddl  # noqa: E402
from keyshape.schema import KeySchema  # noqa: E402
from keyshape.workload import generate  # noqa: E402

DDL = (
    "CREATE TABLE EVENTS (U VARCHAR NOT NULL, T BIGINT NOT NULL, K INTEGER NOT NULL, V VARCHAR "
    "CONSTRAINT PK PRIMARY KEY (U, T DESC, K)) SALT_BUCKETS=16"
)
_Q, _I = struct.Struct(">Q"), struct.Struct(">I")


def hand_written(record: dict) -> bytes:
    """What a user writes without keyshape for this table (checked equal to keyshape's bytes)."""
    rest = (
        record["U"].encode()
        + b"\x00"
        + bytes(255 - c for c in _Q.pack((record["T"] ^ -(1 << 63)) & (2**64 - 1)))
        + _I.pack((record["K"] ^ -(1 << 31)) & (2**32 - 1))
    )
    h = 1
    for c in rest:
        h = (31 * h + (c - 256 if c > 127 else c)) & 0xFFFFFFFF
    h = h - (1 << 32) if h & 0x80000000 else h
    salt = abs(h - int(h / 16) * 16)
    return bytes((salt,)) + rest


_FLIP = bytes(range(255, -1, -1))


def hand_decode(key: bytes) -> dict:
    """What a user writes to read this table's keys back (the salt byte skipped, nothing checked)."""
    e = key.index(b"\x00", 1)
    return {
        "U": key[1:e].decode(),
        "T": _Q.unpack(key[e + 1 : e + 9].translate(_FLIP))[0] - (1 << 63),
        "K": _I.unpack(key[e + 9 : e + 13])[0] - (1 << 31),
    }


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=200_000)
    args = p.parse_args()
    rows = 2_000 if args.quick else args.rows
    key = parse_ddl(DDL).key
    records = [{"U": f"user{i % 5000:05d}", "T": 1_767_225_600_000 + i, "K": i % 97} for i in range(rows)]
    assert [hand_written(r) for r in records[:1000]] == key.encode_many(records[:1000])
    repeat = 1 if args.quick else 3
    t_hand, _ = best_of(repeat, lambda: [hand_written(r) for r in records])
    t_enc, keys = best_of(repeat, lambda: [key.encode(r) for r in records])
    t_many, _ = best_of(repeat, lambda: key.encode_many(records))
    t_dec, decoded = best_of(repeat, lambda: [key.decode(k) for k in keys])
    t_plain, _ = best_of(repeat, lambda: [key.decode(k, False) for k in keys])
    t_hand_dec, by_hand = best_of(repeat, lambda: [hand_decode(k) for k in keys])
    assert by_hand == decoded
    results = [
        ("hand-written loop (per record)", rows / t_hand, 1.0),
        ("PhoenixKey.encode (per record)", rows / t_enc, t_hand / t_enc),
        ("PhoenixKey.encode_many (batch salt)", rows / t_many, t_hand / t_many),
        ("hand-written parse (per record)", rows / t_hand_dec, None),
        ("PhoenixKey.decode (per record, salt re-checked) vs the hand parse", rows / t_dec, t_hand_dec / t_dec),
        ("PhoenixKey.decode(verify=False) vs the hand parse", rows / t_plain, t_hand_dec / t_plain),
    ]
    for path in sorted((ROOT / "examples").glob("*.toml")):
        schema = KeySchema.load(path)
        if schema.workload is None:
            continue
        n = min(rows, 50_000)
        columns = next(generate(schema, n, seed=0, chunk_rows=n))
        names = list(columns)
        sample = [dict(zip(names, values)) for values in zip(*(list(columns[c]) for c in names))]
        t, _ = best_of(repeat, lambda: [schema.encode(r) for r in sample])
        results.append((f"KeySchema.encode {path.stem} (per record)", len(sample) / t, None))
    print_table(
        "Phoenix row keys beside the example schemas",
        ["path", "keys/s", "vs hand-written"],
        [[name, f"{rate:,.0f}", "" if ratio is None else f"{ratio:.2f}x"] for name, rate, ratio in results],
    )
    write_json(
        "bench_phoenix", args.out, {"rows": rows, "ddl": DDL, "results": [{"path": n, "keys_per_s": r, "vs_hand_written": x} for n, r, x in results]}
    )


if __name__ == "__main__":
    main()
