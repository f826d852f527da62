"""The numpy MD5 and CRC-32 kernels against hashlib / zlib, byte for byte, for keys of every
length around MD5's block boundaries (55/56/64 bytes), one thread and several."""

from __future__ import annotations

import hashlib
import zlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core import batchhash
from keyshape.core.keyarray import KeyArray


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=140), max_size=40), st.integers(1, 32), st.sampled_from([1, 2]))
def test_md5_and_crc32_equal_hashlib_and_zlib(keys, width, threads):
    ka = KeyArray.from_keys(keys)
    assert [bytes(r) for r in batchhash.md5_many(ka, threads)] == [hashlib.md5(k).digest() for k in keys]
    assert [bytes(r) for r in batchhash.md5_hex_many(ka, width, threads)] == [hashlib.md5(k).hexdigest()[:width].encode() for k in keys]
    assert batchhash.crc32_many(ka, threads).tolist() == [zlib.crc32(k) for k in keys]


def test_every_length_across_block_boundaries_and_chunks(monkeypatch):
    monkeypatch.setattr(batchhash, "_CHUNK", 7)  # many chunks, spread over the thread pool
    rng = np.random.default_rng(5)
    keys = [rng.bytes(n) for n in range(0, 200)]
    ka = KeyArray.from_keys(keys)
    for threads in (1, 3):
        assert [bytes(r) for r in batchhash.md5_many(ka, threads)] == [hashlib.md5(k).digest() for k in keys]
        assert batchhash.crc32_many(ka, threads).tolist() == [zlib.crc32(k) for k in keys]
    fixed = [rng.bytes(56) for _ in range(30)]  # one length: the fixed-width path, two blocks
    assert [bytes(r) for r in batchhash.md5_many(KeyArray.from_keys(fixed))] == [hashlib.md5(k).digest() for k in fixed]


def test_repeated_keys_hash_each_distinct_key_once_and_stay_exact():
    """Salt material repeats: md5_many hashes distinct keys once (Arrow dictionary encoding of
    rows plus lengths), so keys that differ only by trailing NULs must stay apart."""
    base = [b"dev%04d" % (i % 300) for i in range(20_000)]
    keys = [k + b"\x00" * (i % 3) for i, k in enumerate(base)]
    ka = KeyArray.from_keys(keys)
    assert batchhash.distinct_rows(ka) is not None
    got = batchhash.md5_many(ka)
    assert [bytes(r) for r in got] == [hashlib.md5(k).digest() for k in keys]
    unique = [b"%08d" % i for i in range(20_000)]
    assert batchhash.distinct_rows(KeyArray.from_keys(unique)) is None


@given(st.integers(0, 40), st.integers(0, 9), st.lists(st.integers(0, 39), max_size=60))
def test_gather_rows_equals_fancy_indexing(rows, width, picks):
    rng = np.random.default_rng(rows * 10 + width)
    matrix = rng.integers(0, 256, (rows, width), dtype=np.uint8)
    index = np.array([p % rows for p in picks] if rows else [], dtype=np.int64)
    got = batchhash.gather_rows(matrix[:, ::-1] if width else matrix, index)  # a strided view too
    want = (matrix[:, ::-1] if width else matrix)[index]
    assert got.shape == want.shape and (got == want).all()
