"""The local key-file engine: Arrow buffers <-> KeyArray, files / directories / globs, and the
parallel row-group engine giving exactly the numbers of one pass over Python bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.analysis import Analyzer, analyze
from keyshape.analysis.keyfiles import feed_key_files, units
from keyshape.analysis.signals import WriteOrder
from keyshape.core.arrowkeys import from_arrow, to_arrow
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.schema.keycheck import KeyCheck
from keyshape.workload import count_key_rows, generate, key_files, read_key_arrays, read_keys

ORDERS = Path(__file__).resolve().parents[2] / "examples" / "orders.toml"

keys_strategy = st.lists(st.binary(max_size=12), max_size=60)


@settings(max_examples=150, deadline=None)
@given(keys_strategy, st.integers(0, 5))
def test_arrow_round_trip_is_exact(keys: list[bytes], cut: int) -> None:
    """Trailing NUL bytes, empty keys and sliced arrays (a non-zero offset) all survive."""
    for typ in (pa.binary(), pa.large_binary()):
        arr = pa.array(keys, type=typ)[min(cut, len(keys)) :]
        ka = from_arrow(arr)
        assert ka.tolist() == keys[min(cut, len(keys)) :]
        assert to_arrow(ka).to_pylist() == keys[min(cut, len(keys)) :]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.lists(st.binary(min_size=9, max_size=9), max_size=40))
def test_fixed_size_binary_is_taken_as_the_matrix(width: int, raw: list[bytes]) -> None:
    keys = [k[:width] for k in raw]
    arr = pa.array(keys, type=pa.binary(width))
    assert from_arrow(arr).tolist() == keys
    assert from_arrow(arr[1:]).tolist() == keys[1:]


def test_fixed_width_binary_keys_are_read_without_a_copy() -> None:
    arr = pa.array([b"abc", b"def", b"ghi"])
    ka = from_arrow(arr)
    assert np.shares_memory(ka.matrix, np.frombuffer(arr.buffers()[2], dtype=np.uint8))


def test_text_keys_by_format() -> None:
    text = pa.array(["a\\x00b", "plain", "\\xFF"])
    assert from_arrow(text).tolist() == [b"a\x00b", b"plain", b"\xff"]
    assert from_arrow(pa.array(["plain", "x"])).tolist() == [b"plain", b"x"]
    assert from_arrow(text, "raw").tolist() == [b"a\\x00b", b"plain", b"\\xFF"]
    assert from_arrow(pa.array(["00ff", "41"]), "hex").tolist() == [b"\x00\xff", b"A"]
    with pytest.raises(ValueError, match="null"):
        from_arrow(pa.array([b"a", None]))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.binary(max_size=10), min_size=1, max_size=80), st.data())
def test_write_order_merges_pieces_into_one_pass(keys: list[bytes], data: st.DataObject) -> None:
    whole = WriteOrder()
    whole.update(keys)
    assert whole.up == sum(b > a for a, b in zip(keys, keys[1:]))
    assert whole.down == sum(b < a for a, b in zip(keys, keys[1:]))
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(keys) - 1)), max_size=4)))
    bounds = [0, *[c for c in cuts if c < len(keys)], len(keys)]
    pieces = []
    for a, b in zip(bounds, bounds[1:]):
        w = WriteOrder()
        w.update(KeyArray.from_keys(keys[a:b]), positions=np.arange(a, b))
        pieces.append(w)
    merged = WriteOrder()
    for w in data.draw(st.permutations(pieces)):
        merged.merge(w)
    assert (merged.up, merged.down, merged.pairs) == (whole.up, whole.down, whole.pairs)


def _keys(n: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    salt = rng.integers(0, 16, n)
    # Mostly increasing within a salt, variable width, some trailing NULs.
    return [b"%02d_" % s + i.to_bytes(4, "big") + b"\x00" * (i % 3) for s, i in zip(salt, range(n))]


def _write_parts(tmp_path: Path, keys: list[bytes]) -> Path:
    d = tmp_path / "export"
    d.mkdir()
    # Three files (Spark part-file names), row groups of 700 rows, plus files readers must skip.
    for i, chunk in enumerate((keys[:2500], keys[2500:2600], keys[2600:])):
        pq.write_table(pa.table({"rowkey": pa.array(chunk, pa.binary()), "v": range(len(chunk))}), d / f"part-{i:05d}.parquet", row_group_size=700)
    (d / "_SUCCESS").write_text("")
    (d / ".part-00000.parquet.crc").write_text("x")
    return d


def test_parallel_engine_equals_one_pass_over_bytes(tmp_path: Path) -> None:
    keys = _keys(6000)
    d = _write_parts(tmp_path, keys)
    assert [f.name for f in key_files(d)] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    assert count_key_rows(d) == 6000
    assert len(units(d)) == 4 + 1 + 5
    splits = [b"%02d" % i for i in range(2, 16, 2)]
    reference = analyze(keys, splits, windows=7).to_dict()  # a flat list: exact windows
    for workers in (1, 2, 3):
        acc = Analyzer(splits, windows=7, total_rows=6000)
        got = feed_key_files(acc, d, "rowkey", workers=workers).finish().to_dict()
        assert got == reference
    by_glob = Analyzer(splits, windows=7, total_rows=6000)
    assert feed_key_files(by_glob, str(d / "part-*.parquet")).finish().to_dict() == reference
    assert [k for chunk in read_keys(d, "rowkey", chunk_rows=999) for k in chunk] == keys
    assert sum(len(a) for a in read_key_arrays(d)) == 6000


def test_threads_sharing_a_unit_count_what_one_pass_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches smaller than the row groups, and more threads than unread units: the threads
    left without a unit join one still being read and take its batches in turn. Every key is
    counted once at its stream position, the check's counts and earliest examples too, and the
    progress climbs to the row count."""
    import keyshape.analysis.keyfiles as keyfiles

    monkeypatch.setattr(keyfiles, "CHUNK_ROWS", 64)
    schema = KeySchema.load(ORDERS)
    keys = [k for cols in generate(schema, 6000, chunk_rows=6000) for k in schema.encode_many(cols, as_array=True).tolist()]
    keys[4100] = b"odd"  # one key of another shape: the check's example, whichever thread saw it
    d = _write_parts(tmp_path, keys)
    one = tmp_path / "one.parquet"  # one row group only: every thread reads the same unit
    pq.write_table(pa.table({"rowkey": pa.array(keys, pa.binary())}), one)
    assert len(units(one)) == 1
    splits = schema.split_keys()
    reference = analyze(keys, splits, windows=7).to_dict()
    seen = []
    for path in (d, one):
        for workers in (1, 2, 4):
            shown: list[int] = []
            check = KeyCheck.of(schema)
            acc = Analyzer(splits, windows=7, total_rows=6000)
            got = feed_key_files(acc, path, "rowkey", workers=workers, progress=shown.append, check=check).finish().to_dict()
            assert got == reference
            assert shown == sorted(shown) and shown[-1] == 6000
            seen.append(check.to_dict())
    assert all(c == seen[0] for c in seen)
    assert (seen[0]["checked"], seen[0]["foreign"]) == (6000, 1) and seen[0]["foreign_examples"] == [{"row": 4100, "key": "odd"}]


def test_a_failing_unit_stops_every_thread(tmp_path: Path) -> None:
    d = _write_parts(tmp_path, _keys(6000))
    for workers in (1, 3):
        with pytest.raises(KeyshapeError, match="no column 'nope'"):
            feed_key_files(Analyzer([b"05"], total_rows=6000), d, "nope", workers=workers)


def test_csv_keys_are_streamed_in_one_pass(tmp_path: Path) -> None:
    f = tmp_path / "keys.csv"
    f.write_text("rowkey\n" + "".join(f"k{i:05d}\n" for i in range(3000)))
    assert count_key_rows(f) is None
    acc = feed_key_files(Analyzer([b"k01000", b"k02000"], windows=5), f)
    a = acc.finish()
    assert [r.rows for r in a.regions] == [1000, 1000, 1000]
    assert a.increasing_fraction == 1.0


def test_missing_and_empty_sources_say_so(tmp_path: Path) -> None:
    with pytest.raises(KeyshapeError, match="does not exist"):
        key_files(tmp_path / "nothing-*.parquet")
    (tmp_path / "empty").mkdir()
    with pytest.raises(KeyshapeError, match="no Parquet, ORC or CSV"):
        key_files(tmp_path / "empty")


def test_spark_engine_without_pyspark_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    from click.testing import CliRunner

    from keyshape.cli.main import main as cli

    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark -> ImportError
    keys = tmp_path / "k.parquet"
    pq.write_table(pa.table({"k": pa.array([b"a"], pa.binary())}), keys)
    orders = Path(__file__).resolve().parents[2] / "examples" / "orders.toml"
    res = CliRunner().invoke(cli, ["analyze", str(orders), "--keys", str(keys), "--engine", "spark"], standalone_mode=False)
    assert res.exit_code == 2
    assert "keyshape[spark]" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_partials_pickle_without_lookup_tables_and_merge() -> None:
    import pickle

    keys = _keys(5000, seed=1)
    splits = [b"%02d" % i for i in range(1, 16)]
    whole = Analyzer(splits, windows=9, total_rows=5000)
    whole.update(keys)
    whole.map.assign(KeyArray.from_keys(keys[:10]))  # builds the 64k-entry head table
    halves = []
    for lo, hi in ((2000, 5000), (0, 2000)):
        part = whole.empty_like()
        part.update(KeyArray.from_keys(keys[lo:hi]), positions=np.arange(lo, hi))
        blob = pickle.dumps(part)
        assert len(blob) < 100_000
        halves.append(pickle.loads(blob))
    merged = whole.empty_like()
    for part in halves:
        merged.merge(part)
    assert merged.finish().to_dict() == whole.finish().to_dict()


def test_orc_files_count_by_footer(tmp_path: Path) -> None:
    import pyarrow.orc as porc

    keys = _keys(3000, seed=2)
    for i, part in enumerate((keys[:1000], keys[1000:])):
        porc.write_table(pa.table({"rowkey": pa.array(part, pa.binary())}), tmp_path / f"p{i}.orc")
    assert count_key_rows(tmp_path) == 3000
    splits = [b"%02d" % i for i in range(4, 16, 4)]
    want = analyze(keys, splits, windows=6).to_dict()
    got = feed_key_files(Analyzer(splits, windows=6, total_rows=3000), tmp_path, workers=2)
    assert got.finish().to_dict() == want
