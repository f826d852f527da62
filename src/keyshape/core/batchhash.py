"""MD5 and CRC-32 of many short keys at once, as numpy kernels over a :class:`KeyArray`.

The standard library hashes one message per call (``hashlib.md5``, ``zlib.crc32``); for row keys of
10-50 bytes the Python call around each hash costs more than the hash. Here every step of the
algorithm runs over all keys at once: MD5's 64 steps per 64-byte block are ~700 uint32 array
operations whatever the number of keys, and CRC-32 is one table lookup per byte column. numpy
releases the GIL inside each operation, so :func:`md5_many` and :func:`crc32_many` split large
inputs over threads (``threads``, default: every core) and both cores work. Results are
byte-identical to ``hashlib.md5(key).digest()`` and ``zlib.crc32(key)`` (tests/property/test_batchhash.py).
"""

from __future__ import annotations

import binascii
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa

from keyshape.core.keyarray import KeyArray

__all__ = ["md5_many", "md5_hex_many", "crc32_many", "default_threads", "distinct_rows", "gather_rows", "hex_matrix"]

# Rows per kernel call. Large enough that each numpy operation runs long against the GIL it must
# take back: at 8,192 rows two threads hashed MD5 slower than one (the threads queue for the GIL
# between ~2 µs operations); at 32,768, two threads gain 1.1x (MD5) and 1.5x (CRC-32) and one
# thread loses nothing to the larger working set (measured, 200,000 keys, 2 cores).
_CHUNK = 32768

_S = [7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + [6, 10, 15, 21] * 4
_K = [int(abs(np.sin(np.float64(i + 1))) * 2**32) & 0xFFFFFFFF for i in range(64)]
_G = (
    [i for i in range(16)]
    + [(5 * i + 1) % 16 for i in range(16, 32)]
    + [(3 * i + 5) % 16 for i in range(32, 48)]
    + [(7 * i) % 16 for i in range(48, 64)]
)
_INIT = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476)


def default_threads() -> int:
    """Threads the batch kernels use: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=default_threads(), thread_name_prefix="keyshape-hash")
    return _POOL


def _split_rows(n: int, fn: Callable[[int, int], None], threads: int | None) -> None:
    """Run ``fn(start, stop)`` over chunks of rows, on ``threads`` threads when that pays."""
    t = default_threads() if threads is None else max(1, threads)
    bounds = [(s, min(s + _CHUNK, n)) for s in range(0, n, _CHUNK)]
    if t == 1 or len(bounds) == 1:
        for s, e in bounds:
            fn(s, e)
        return
    for f in [_pool().submit(fn, s, e) for s, e in bounds]:
        f.result()


# ----------------------------------------------------------------------------------------- md5


def _md5_blocks(matrix: np.ndarray, lengths: np.ndarray, fixed: bool) -> tuple[np.ndarray, np.ndarray]:
    """The padded messages as little-endian words ``(n, blocks, 16)`` and each row's block count."""
    n, w = matrix.shape
    nblocks = (lengths + 8) // 64 + 1
    blocks = int(nblocks.max()) if n else 1
    buf = np.zeros((n, blocks * 64), dtype=np.uint8)
    cols = min(w, blocks * 64)  # a chunk of short keys in a wide KeyArray: the rest is padding
    buf[:, :cols] = matrix[:, :cols]  # the KeyArray's zero padding is MD5's zero padding
    bits = (lengths.astype(np.uint64) * np.uint64(8)).astype("<u8").view(np.uint8).reshape(n, 8)
    if fixed:
        buf[:, w] = 0x80
        end = int(nblocks[0]) * 64
        buf[:, end - 8 : end] = bits
    else:
        rows = np.arange(n)
        buf[rows, lengths] = 0x80
        buf[rows[:, None], (nblocks * 64 - 8)[:, None] + np.arange(8)] = bits
    return buf.view("<u4").reshape(n, blocks, 16), nblocks


def _md5_rounds(words: np.ndarray, nblocks: np.ndarray, out: np.ndarray) -> None:
    """MD5 of the padded rows ``words`` into ``out`` (``(n, 4)`` uint32, little-endian digest words)."""
    n, blocks, _ = words.shape
    state = [np.full(n, v, dtype=np.uint32) for v in _INIT]
    t = np.empty(n, dtype=np.uint32)
    u = np.empty(n, dtype=np.uint32)
    for blk in range(blocks):
        m = np.ascontiguousarray(words[:, blk, :].T)  # (16, n): each message word contiguous
        a, b, c, d = (x.copy() for x in state)
        for i in range(64):
            if i < 16:  # F = d ^ (b & (c ^ d))
                np.bitwise_xor(c, d, out=t)
                np.bitwise_and(t, b, out=t)
                np.bitwise_xor(t, d, out=t)
            elif i < 32:  # G = c ^ (d & (b ^ c))
                np.bitwise_xor(b, c, out=t)
                np.bitwise_and(t, d, out=t)
                np.bitwise_xor(t, c, out=t)
            elif i < 48:  # H = b ^ c ^ d
                np.bitwise_xor(b, c, out=t)
                np.bitwise_xor(t, d, out=t)
            else:  # I = c ^ (b | ~d)
                np.invert(d, out=t)
                np.bitwise_or(t, b, out=t)
                np.bitwise_xor(t, c, out=t)
            t += a
            t += m[_G[i]]
            t += np.uint32(_K[i])
            s = _S[i]
            np.right_shift(t, np.uint32(32 - s), out=u)
            np.left_shift(t, np.uint32(s), out=t)
            t |= u
            t += b
            # Rotate the names: (a, b, c, d) <- (d, a+..., b, c); the old a's buffer becomes t.
            a, b, c, d, t = d, t, b, c, a
        if blocks == 1:
            for x, y in zip(state, (a, b, c, d)):
                x += y
        else:
            live = nblocks > blk
            for x, y in zip(state, (a, b, c, d)):
                np.add(x, y, out=x, where=live)
    for col, x in enumerate(state):
        out[:, col] = x


def distinct_rows(keys: KeyArray, sample: int = 2048) -> tuple[KeyArray, np.ndarray] | None:
    """The distinct keys of ``keys`` and, per key, the index of its distinct value, when at most
    half the keys are distinct; else None. Rows plus length go through Arrow's hash dictionary
    encoding, in C (~1/10 of hashing them). A sample with (nearly) no repeat skips the whole
    encoding, so all-distinct input pays ~nothing; a sample with some repeats does not prove the
    whole is mostly distinct (5,000 zipf-drawn devices: 1,126 distinct in the first 2,048 of
    200,000 rows), so the whole is encoded then. ``sample``: the keys looked at first (2048)."""
    n, w = keys.matrix.shape
    if n < 4 * sample or w == 0 or w >= 255:
        return None

    fixed = keys.is_fixed
    wl = w if fixed else w + 1  # "ab" and "ab\0" share zero-padded rows, not lengths

    def encode(rows: np.ndarray, lengths: np.ndarray) -> pa.DictionaryArray:
        if fixed:
            both = np.ascontiguousarray(rows)
        else:
            both = np.empty((len(rows), wl), dtype=np.uint8)
            both[:, :w] = rows
            both[:, w] = lengths
        return pa.FixedSizeBinaryArray.from_buffers(pa.binary(wl), len(rows), [None, pa.py_buffer(both)]).dictionary_encode()

    if len(encode(keys.matrix[:sample], keys.lengths[:sample]).dictionary) > sample * 15 // 16:
        return None
    enc = encode(keys.matrix, keys.lengths)
    d = enc.dictionary
    u = len(d)
    if u > n // 2:
        return None
    rows = np.frombuffer(d.buffers()[1], dtype=np.uint8)[d.offset * wl : (d.offset + u) * wl].reshape(u, wl)
    lengths = np.full(u, w, dtype=np.int64) if fixed else rows[:, w].astype(np.int64)
    return KeyArray(np.ascontiguousarray(rows[:, :w]), lengths), enc.indices.to_numpy(zero_copy_only=False)


def gather_rows(matrix: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``matrix[index]`` for a uint8 ``matrix`` and row numbers ``index``, each row moved as one item (a ``V{width}`` view)
    rather than byte by byte."""
    n, w = matrix.shape
    if w == 0:
        return np.zeros((len(index), 0), dtype=np.uint8)
    rows = np.ascontiguousarray(matrix).view(f"V{w}")[:, 0]
    return rows[index].view(np.uint8).reshape(len(index), w)


def md5_many(keys: KeyArray, threads: int | None = None) -> np.ndarray:
    """``hashlib.md5(key).digest()`` of every key, as an ``(n, 16)`` uint8 matrix.

    Salt material repeats (users, devices, metrics): each distinct key is hashed once.
    ``keys``: the keys; ``threads``: threads to hash on (None: :func:`default_threads`)."""
    d = distinct_rows(keys)
    if d is not None:
        return gather_rows(_md5_all(d[0], threads), d[1])
    return _md5_all(keys, threads)


def _md5_all(keys: KeyArray, threads: int | None) -> np.ndarray:
    n = len(keys)
    out = np.empty((n, 4), dtype="<u4")
    if n == 0:
        return out.view(np.uint8)
    matrix, lengths, fixed = keys.matrix, keys.lengths, keys.is_fixed

    def run(s: int, e: int) -> None:
        words, nblocks = _md5_blocks(matrix[s:e], lengths[s:e], fixed)
        _md5_rounds(words, nblocks, out[s:e])

    _split_rows(n, run, threads)
    return out.view(np.uint8)


def md5_hex_many(keys: KeyArray, width: int = 32, threads: int | None = None) -> np.ndarray:
    """The first ``width`` lower-case hex digits of every key's MD5, as an ``(n, width)`` uint8
    matrix (``hashlib.md5(key).hexdigest()[:width]``). ``keys``: the keys; ``threads``: threads to hash on (None: :func:`default_threads`)."""
    d = distinct_rows(keys)
    if d is not None:  # the hex of each distinct key, then `width` bytes per row
        return gather_rows(hex_matrix(_md5_all(d[0], threads)[:, : (width + 1) // 2])[:, :width], d[1])
    return hex_matrix(_md5_all(keys, threads)[:, : (width + 1) // 2])[:, :width]


def hex_matrix(data: np.ndarray) -> np.ndarray:
    """Lower-case hex of every row of ``data``, an ``(n, k)`` uint8 matrix, as an ``(n, 2k)`` one.

    ``binascii.hexlify`` over the whole buffer in one C call: a 16-entry table lookup per nibble in
    numpy (fancy indexing) cost as much as the MD5 itself."""
    n, k = data.shape
    return np.frombuffer(binascii.hexlify(np.ascontiguousarray(data).data), dtype=np.uint8).reshape(n, 2 * k)


# --------------------------------------------------------------------------------------- crc32


def _crc_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(0xEDB88320), table >> 1).astype(np.uint32)
    return table


_CRC_TABLE = _crc_table()


def crc32_many(keys: KeyArray, threads: int | None = None) -> np.ndarray:
    """``zlib.crc32(key)`` of every key, as uint32 (CRC-32/ISO-HDLC, ``java.util.zip.CRC32``).

    ``keys``: the keys; ``threads``: threads to hash on (None: :func:`default_threads`)."""
    n = len(keys)
    out = np.empty(n, dtype=np.uint32)
    matrix, lengths, fixed = keys.matrix, keys.lengths, keys.is_fixed
    table = _CRC_TABLE

    def run(s: int, e: int) -> None:
        m, ln = matrix[s:e], lengths[s:e]
        crc = np.full(e - s, 0xFFFFFFFF, dtype=np.uint32)
        idx = np.empty(e - s, dtype=np.uint32)
        for col in range(m.shape[1]):
            np.bitwise_xor(crc, m[:, col], out=idx)
            idx &= np.uint32(0xFF)
            step = table[idx]
            step ^= crc >> np.uint32(8)
            if fixed:
                crc = step
            else:
                np.copyto(crc, step, where=ln > col)
        out[s:e] = crc ^ np.uint32(0xFFFFFFFF)

    _split_rows(n, run, threads)
    return out
