"""Streaming detectors for the two classic causes of hotspots: monotonic keys and heavy entities.

Both see the stream chunk by chunk and keep O(1) / O(k) state, so they run on 10M keys as easily
as on 1,000.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from keyshape.core.keyarray import KeyArray


class WriteOrder:
    """Fraction of consecutive writes whose key is greater (or smaller) than the previous key.

    Sequential ids and leading timestamps give ~1.0 increasing; reverse timestamps ~1.0
    decreasing; a hash or salt prefix ~0.5 each. Keys compare as HBase does (unsigned bytes, a
    prefix sorts first). At most ``sample`` pairs are compared per chunk (the first ones), which is
    plenty to tell these cases apart.
    """

    def __init__(self, sample: int = 50_000) -> None:
        self.sample = sample
        self.pairs = 0
        self.up = 0
        self.down = 0
        self._last: bytes | None = None

    def update(self, keys: Sequence[bytes] | KeyArray) -> None:
        """Count the order of consecutive keys in one chunk (and across the previous chunk's end)."""
        n = len(keys)
        if n == 0:
            return
        if isinstance(keys, KeyArray):
            self._update_array(keys)
            return
        else:
            head = list(keys[: self.sample + 1])
            last = keys[n - 1]
        if self._last is not None:
            head.insert(0, self._last)
        for a, b in zip(head, head[1:]):
            if b > a:
                self.up += 1
            elif b < a:
                self.down += 1
        self.pairs += max(0, len(head) - 1)
        self._last = last

    def _update_array(self, keys: KeyArray) -> None:
        """:meth:`update` for a KeyArray, comparing all consecutive pairs as matrix rows.

        On zero-padded rows the first differing column decides, as in an unsigned byte compare:
        where one key ends, its padding 0 sorts before any byte of the longer key and before
        nothing when the longer one continues with 0 (then the rows are equal and the shorter
        key, a prefix, sorts first: the lengths decide)."""
        n = len(keys)
        last = keys[n - 1 :].tolist()[0]
        head = keys[: self.sample + 1]
        if self._last is not None:
            prev = KeyArray.from_keys([self._last])
            head = KeyArray.concat_rows([prev, head])
        m, ln = head.matrix, head.lengths
        if len(m) > 1 and m.shape[1] == 0:
            self.pairs += len(m) - 1  # every key empty: all pairs equal
        elif len(m) > 1:
            a, b = m[:-1], m[1:]
            diff = a != b
            has = diff.any(axis=1)
            first = diff.argmax(axis=1)
            rows = np.arange(len(a))
            greater = np.where(has, b[rows, first] > a[rows, first], ln[1:] > ln[:-1])
            less = np.where(has, b[rows, first] < a[rows, first], ln[1:] < ln[:-1])
            self.up += int(greater.sum())
            self.down += int(less.sum())
            self.pairs += len(a)
        self._last = last

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
        uniq, cnt = np.unique(arr, return_counts=True)
        top = np.argsort(cnt)[::-1][: self.k]
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
