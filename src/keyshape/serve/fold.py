"""The logical (de-salted) key axis of a salted table's heat map.

A salted key is ``bucket + K``: the same logical key range lives once in every bucket, so the
physical heat map shows N copies of one shape (a sequential id is N parallel diagonals). Folding
strips the prefix of every key-bucket start (the table's prefix strategy does it: ``buckets()``,
``head_width``, ``strip``; no strategy is known by name here) and adds the N copies up on one axis
of logical keys, where the shape shows once.

The physical axis must hold every bucket start (``History.heat``'s ``extra_bounds``) so that no
physical bucket straddles two salt buckets; each physical bucket then covers one logical range,
and its value is shared evenly over the logical buckets in that range.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from keyshape.schema.prefixes.base import Prefix

__all__ = ["bucket_starts", "first_head", "fold"]


def bucket_starts(prefix: Prefix) -> list[bytes]:
    """Every salt bucket's first key (the prefix, and the separator after it where the
    strategy writes one), the first one b"" (the table's first region starts there and a salted
    table has no key below its first bucket); [] when the strategy does not cut the key space
    into buckets."""
    try:
        heads = prefix.buckets()
    except Exception:  # noqa: BLE001 - too many buckets to list (md5 with a long prefix): no fold
        return []
    if not heads:
        return []
    tail = prefix.separator if prefix.sep_after else b""
    return [b""] + [h + tail for h in heads[1:]]


def first_head(prefix: Prefix) -> bytes:
    """The first bucket's prefix (and separator): put before a logical key, it makes a key the
    schema can label."""
    heads = prefix.buckets() or [b""]
    return heads[0] + (prefix.separator if prefix.sep_after else b"")


def _logical(prefix: Prefix, starts: Sequence[bytes], key: bytes) -> bytes:
    """``key`` without its prefix: the key's position in its own bucket (b"" at a bucket's
    start, or for a key shorter than the prefix)."""
    b = bisect.bisect_right(starts, key) - 1
    if b < 0 or len(key) <= prefix.head_width:
        return b""
    try:
        return prefix.strip(key)
    except Exception:  # noqa: BLE001 - not a key this strategy wrote: the bucket's start
        return b""


def fold(prefix: Prefix, starts: Sequence[bytes], values: np.ndarray) -> tuple[list[bytes], np.ndarray]:
    """``values`` (times x physical key buckets starting at ``starts``) on the logical axis:
    ``(logical bucket starts, times x logical buckets)``; every request is kept (columns sum to
    the same totals). ``starts`` as they are when the table is not salted."""
    salt = bucket_starts(prefix)
    if not salt or not len(starts):
        return list(starts), values
    nk = len(starts)
    # each physical bucket's logical range: [its start stripped, the next start stripped), or to
    # the end of the logical space when the next start opens another salt bucket
    lo_keys = [_logical(prefix, salt, s) for s in starts]
    bucket_of = [bisect.bisect_right(salt, s) - 1 for s in starts]
    hi_keys: list[bytes | None] = []
    for j in range(nk):
        nxt = j + 1
        if nxt < nk and bucket_of[nxt] == bucket_of[j] and lo_keys[nxt] > lo_keys[j]:
            hi_keys.append(lo_keys[nxt])
        else:
            hi_keys.append(None)  # to the end of the logical space
    axis = sorted(set(lo_keys) | {k for k in hi_keys if k is not None})
    nl = len(axis)
    lo = np.array([bisect.bisect_left(axis, k) for k in lo_keys], dtype=np.int64)
    hi = np.array([nl if k is None else bisect.bisect_left(axis, k) for k in hi_keys], dtype=np.int64)
    hi = np.maximum(hi, lo + 1)
    # difference array over the logical axis: +v/w at lo, -v/w at hi, summed along the axis
    per = np.asarray(values, dtype=np.float64) / (hi - lo)
    diff = np.zeros((per.shape[0], nl + 1))
    for target, sign in ((lo, 1.0), (hi, -1.0)):
        order = np.argsort(target, kind="stable")
        uniq, first = np.unique(target[order], return_index=True)
        diff[:, uniq] += sign * np.add.reduceat(per[:, order], first, axis=1)
    return axis, np.clip(np.cumsum(diff, axis=1)[:, :nl], 0, None)
