"""Streaming detectors for the two classic causes of hotspots: monotonic keys and heavy entities.

Both see the stream chunk by chunk and keep O(1) / O(k) state, so they run on 10M keys as easily
as on 1,000.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from keyshape.core.keyarray import KeyArray
from keyshape.core.regions import bytes_order, prefix64


def _successor_order(ka: KeyArray) -> tuple[np.ndarray, np.ndarray]:
    """(key i+1 > key i, key i+1 < key i) for consecutive keys, in unsigned bytes order."""
    n, width = len(ka), ka.width
    if width == 0:
        return np.zeros(n - 1, dtype=bool), np.zeros(n - 1, dtype=bool)
    # The first 8 bytes as integers settle most pairs; only pairs that share them compare their
    # whole keys, encoded so that numpy's order is bytes order (as region assignment does).
    p = prefix64(ka.matrix)
    gt, lt = p[1:] > p[:-1], p[1:] < p[:-1]
    tie = np.flatnonzero(p[1:] == p[:-1])
    if tie.size:
        after = bytes_order(ka.matrix[tie + 1], ka.lengths[tie + 1], width)
        before = bytes_order(ka.matrix[tie], ka.lengths[tie], width)
        gt[tie], lt[tie] = after > before, after < before
    return gt, lt


class WriteOrder:
    """Fraction of consecutive writes whose key is greater (or smaller) than the previous key.

    Sequential ids and leading timestamps give ~1.0 increasing; reverse timestamps ~1.0
    decreasing; a hash or salt prefix ~0.5 each. Keys compare as HBase does (unsigned bytes, a
    prefix sorts first). Every consecutive pair is compared, in numpy.

    Mergeable: each key may come with its position in the write stream, and pieces of the stream
    seen by different workers (Spark partitions, worker processes) are joined with :meth:`merge`.
    Only the ends of each contiguous run of positions are kept, so the pair across two pieces is
    counted once both are in, whatever order they arrive in.
    """

    def __init__(self) -> None:
        self.pairs = 0
        self.up = 0
        self.down = 0
        # Contiguous runs of positions seen: [first_pos, first_key, last_pos, last_key].
        self._runs: list[list] = []

    def update(self, keys: Sequence[bytes] | KeyArray, start: int = 0, positions: np.ndarray | None = None) -> None:
        """Count the order of one chunk of keys, at write positions ``start, start + 1, ...``
        (or at ``positions``, ascending within each contiguous stretch)."""
        ka = keys if isinstance(keys, KeyArray) else KeyArray.from_keys(list(keys))
        n = len(ka)
        if n == 0:
            return
        pos = None if positions is None else np.asarray(positions, dtype=np.int64)
        if n > 1:
            gt, lt = _successor_order(ka)
            if pos is None:
                self.up += int(np.count_nonzero(gt))
                self.down += int(np.count_nonzero(lt))
                self.pairs += n - 1
                breaks = np.zeros(0, dtype=np.int64)
            else:
                adjacent = np.diff(pos) == 1
                self.up += int(np.count_nonzero(gt & adjacent))
                self.down += int(np.count_nonzero(lt & adjacent))
                self.pairs += int(np.count_nonzero(adjacent))
                breaks = np.flatnonzero(~adjacent) + 1
        else:
            breaks = np.zeros(0, dtype=np.int64)
        firsts = np.concatenate([[0], breaks])
        lasts = np.concatenate([breaks - 1, [n - 1]])
        for f, last in zip(firsts.tolist(), lasts.tolist()):
            head, tail = ka[f : f + 1].tolist()[0], ka[last : last + 1].tolist()[0]
            first_pos, last_pos = (start + f, start + last) if pos is None else (pos[f], pos[last])
            self._runs.append([int(first_pos), head, int(last_pos), tail])
        self._join()

    def merge(self, other: WriteOrder) -> None:
        """Add another piece of the same write stream (disjoint positions)."""
        self.pairs += other.pairs
        self.up += other.up
        self.down += other.down
        self._runs.extend(list(r) for r in other._runs)
        self._join()

    def _join(self) -> None:
        """Join runs that touch (one ends at p, the next starts at p + 1), counting that pair."""
        if len(self._runs) < 2:
            return
        self._runs.sort(key=lambda r: r[0])
        joined = [self._runs[0]]
        for run in self._runs[1:]:
            prev = joined[-1]
            if prev[2] + 1 == run[0]:
                self.pairs += 1
                if run[1] > prev[3]:
                    self.up += 1
                elif run[1] < prev[3]:
                    self.down += 1
                prev[2], prev[3] = run[2], run[3]
            else:
                joined.append(run)
        self._runs = joined

    @property
    def increasing(self) -> float:
        return self.up / self.pairs if self.pairs else 0.0

    @property
    def decreasing(self) -> float:
        return self.down / self.pairs if self.pairs else 0.0


class HeavyHitters:
    """The most frequent values of one field, estimated from up to ``sample`` values per chunk.

    Per chunk the top ``k`` values of the sample are merged into a running table, which is pruned
    to the ``4k`` largest; a value that takes a few percent of the rows is in every chunk's top
    list, so its share is estimated well. Shares are of the sampled values.
    """

    def __init__(self, k: int = 32, sample: int = 65_536) -> None:
        self.k = k
        self.sample = sample
        self.seen = 0
        self.counts: dict[object, int] = {}

    def update(self, values: Sequence[object] | np.ndarray) -> None:
        """Count one chunk of values of the field (its first ``sample`` values)."""
        arr = np.asarray(values[: self.sample])
        if arr.size == 0:
            return
        uniq, cnt = _value_counts(arr)
        top = np.argsort(-cnt, kind="stable")[: self.k]  # largest first
        for i in top:
            value = uniq[i].item() if hasattr(uniq[i], "item") else uniq[i]
            self.counts[value] = self.counts.get(value, 0) + int(cnt[i])
        self.seen += int(arr.size)
        if len(self.counts) > 4 * self.k:
            keep = sorted(self.counts.items(), key=lambda kv: kv[1], reverse=True)[: 2 * self.k]
            self.counts = dict(keep)

    def top(self, n: int = 3) -> list[tuple[object, float]]:
        """The ``n`` most frequent values with their estimated share of all rows, largest first."""
        if not self.seen:
            return []
        best = sorted(self.counts.items(), key=lambda kv: kv[1], reverse=True)[:n]
        return [(value, count / self.seen) for value, count in best]


def _value_counts(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, their counts) of a 1-d array. Fixed-width text (numpy ``U``/``S``) is
    counted by Arrow's hash table over the rows' bytes, equal bytes equal values as numpy compares
    them (a sort of strings, what ``np.unique`` does, cost most of the analyzer's time per chunk);
    anything else by ``np.unique``."""
    if arr.ndim == 1 and arr.dtype.kind in "US" and arr.dtype.itemsize:
        rows = np.ascontiguousarray(arr)
        width = rows.dtype.itemsize
        counted = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(rows), [None, pa.py_buffer(rows)]).value_counts()
        values = counted.field("values")
        data = np.frombuffer(values.buffers()[1], dtype=rows.dtype, count=len(values) + values.offset)[values.offset :]
        return data, counted.field("counts").to_numpy(zero_copy_only=False)
    return np.unique(arr, return_counts=True)
