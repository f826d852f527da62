"""Writes over time: the write stream cut into windows, counted per region (the heat map data).

A design can spread rows evenly in total and still send every write of a given moment to one
region (a timestamp-leading key over time-range splits). Only a per-window view shows that, so the
analyzer keeps a ``windows x regions`` matrix of write counts, built chunk by chunk in O(W x R)
memory whatever the number of rows.
"""

from __future__ import annotations

import numpy as np

from keyshape.errors import BadInput


class Timeline:
    """Accumulates a ``windows x regions`` matrix of writes from region indices in write order.

    When ``total_rows`` is known up front (a generated workload), window ``w`` holds exactly the
    writes ``[w * total / W, (w + 1) * total / W)``. When it is not (a file of keys), writes are
    counted in fine bins whose width doubles whenever they run out (adjacent bins are merged), and
    the fine bins are grouped into ``windows`` windows at the end; window sizes then differ by at
    most one fine bin (at most 1/32 of a window once there are many rows).
    """

    _FINE_PER_WINDOW = 32
    _FINE_CELLS_BUDGET = 4_000_000  # int64 cells: 32 MB whatever the region count

    def __init__(self, windows: int, regions: int, total_rows: int | None = None) -> None:
        if windows < 1:
            raise BadInput(f"windows must be at least 1, got {windows}")
        if regions < 1:
            raise BadInput(f"regions must be at least 1, got {regions}")
        if total_rows is not None and total_rows < 0:
            raise BadInput(f"total_rows must not be negative, got {total_rows}")
        self.windows = windows
        self.regions = regions
        self.total_rows = total_rows
        self.rows = 0
        if total_rows is not None:
            self._bins = max(1, min(windows, total_rows))
            self._width = 0
        else:
            budget = max(2 * windows, self._FINE_CELLS_BUDGET // regions)
            self._bins = max(2 * windows, min(self._FINE_PER_WINDOW * windows, budget))
            self._width = 1
        self._counts = np.zeros((self._bins, regions), dtype=np.int64)

    def update(self, region_index: np.ndarray, positions: np.ndarray | None = None) -> None:
        """Count one chunk of writes, given the region index of each write in write order.

        ``positions`` (with ``total_rows`` known) places each write at its position in the whole
        stream instead of after the writes counted so far: pieces of one stream counted apart
        then :meth:`merge` into exactly the matrix one pass would give.
        """
        idx = np.asarray(region_index, dtype=np.int64)
        n = idx.size
        if n == 0:
            return
        if idx.min() < 0 or idx.max() >= self.regions:
            raise BadInput(f"region index out of range 0..{self.regions - 1}")
        if positions is not None and self.total_rows is None:
            raise BadInput("write positions need total_rows: windows of a stream counted in pieces can only be cut when its length is known")
        pos = np.arange(self.rows, self.rows + n, dtype=np.int64) if positions is None else np.asarray(positions, dtype=np.int64)
        if self.total_rows is not None:
            # Rows past the announced total land in the last window rather than being lost.
            total = max(self.total_rows, 1)
            bins = np.minimum(pos * self._bins // total, self._bins - 1)
        else:
            while (self.rows + n - 1) // self._width >= self._bins:
                self._coarsen()
            bins = pos // self._width
        flat = np.bincount(bins * self.regions + idx, minlength=self._bins * self.regions)
        self._counts += flat.reshape(self._bins, self.regions)
        self.rows += n

    def merge(self, other: Timeline) -> None:
        """Add the writes another Timeline counted at other positions of the same stream."""
        if self.total_rows is None or other.total_rows != self.total_rows or other._counts.shape != self._counts.shape:
            raise BadInput("only timelines of the same stream length, windows and regions merge")
        self._counts += other._counts
        self.rows += other.rows

    def _coarsen(self) -> None:
        # Merge adjacent fine bins pairwise; the second half becomes free for later writes.
        half = self._bins // 2
        merged = self._counts[: 2 * half : 2] + self._counts[1 : 2 * half : 2]
        if self._bins % 2:
            merged = np.vstack([merged, self._counts[-1:]])
        self._counts[:] = 0
        self._counts[: merged.shape[0]] = merged
        self._width *= 2

    def matrix(self) -> np.ndarray:
        """The ``windows x regions`` write counts (fewer windows when there were fewer rows)."""
        if self.total_rows is not None:
            used = self._counts
            if self.rows < self.total_rows:
                # Fewer rows than announced: drop the windows that never filled.
                filled = np.flatnonzero(used.sum(axis=1))
                used = used[: filled[-1] + 1] if filled.size else used[:1]
            return used.copy()
        if self.rows == 0:
            return np.zeros((1, self.regions), dtype=np.int64)
        n_fine = (self.rows - 1) // self._width + 1
        fine = self._counts[:n_fine]
        w = min(self.windows, n_fine)
        edges = (np.arange(w, dtype=np.int64) * n_fine) // w
        return np.add.reduceat(fine, edges, axis=0)


def hot_shares(matrix: np.ndarray) -> np.ndarray:
    """Per window, the share of its writes taken by its busiest column (empty windows skipped)."""
    totals = matrix.sum(axis=1)
    keep = totals > 0
    if not np.any(keep):
        return np.zeros(0)
    return matrix[keep].max(axis=1) / totals[keep]


def hottest(matrix: np.ndarray) -> np.ndarray:
    """Per non-empty window, the index of its busiest column."""
    keep = matrix.sum(axis=1) > 0
    return matrix[keep].argmax(axis=1)


def by_server(matrix: np.ndarray, server_of_region: np.ndarray, servers: int) -> np.ndarray:
    """Fold a ``windows x regions`` matrix into ``windows x servers`` (region -> server map)."""
    onehot = np.zeros((matrix.shape[1], servers), dtype=np.int64)
    onehot[np.arange(matrix.shape[1]), np.asarray(server_of_region, dtype=np.int64)] = 1
    return matrix @ onehot


def hot_window_share(matrix: np.ndarray) -> float:
    """Mean over non-empty windows of the busiest column's share of that window's writes."""
    shares = hot_shares(matrix)
    return float(shares.mean()) if shares.size else 0.0


def moving_direction(hot: np.ndarray) -> float:
    """How steadily the hottest region walks through the key space: +1 always up, -1 always down.

    The fraction of window-to-window moves that go up minus the fraction that go down (moves that
    stay put are ignored); 0.0 when the hottest region never moves.
    """
    steps = np.diff(np.asarray(hot, dtype=np.int64))
    moved = steps[steps != 0]
    if moved.size == 0:
        return 0.0
    return float((np.count_nonzero(moved > 0) - np.count_nonzero(moved < 0)) / moved.size)


MIN_MOMENT_ROWS = 16


def moment_rows(total_rows: int, regions: int) -> int:
    """How many consecutive writes make one *moment* for the verdict: the largest power of two at
    most half a region's fair share of the rows (``total_rows / (2 * regions)``), and at least 16
    (``MIN_MOMENT_ROWS``: fewer writes cannot show one region's share; with so few rows per region
    the order of the writes speaks instead, see :func:`dwell`).

    The heat map's windows are for the eye and their number is the user's choice; a verdict read
    from them would change with that choice and with the region count (50 windows over 1,000
    regions of a sequential key put 20 regions in every window, and the busiest of them then
    seems to take only 5% of the writes). A moment shorter than the time one region takes to fill
    at a fair share sees what HBase sees: which regions take the writes *now*. It is a power of
    two so that the same stream always gives the same moments, however it is cut into pieces.
    """
    if total_rows < 1 or regions < 1:
        return MIN_MOMENT_ROWS
    target = max(MIN_MOMENT_ROWS, total_rows // (2 * regions))
    return 1 << (target.bit_length() - 1)


class Moments:
    """Per moment (``width`` consecutive writes; see :func:`moment_rows`), the writes taken by the
    busiest region and by the busiest server; and how many consecutive writes land in the same
    region as the write before (see :func:`dwell`).

    Only three numbers per moment are kept (O(rows / width) memory: about ``2 x regions``
    moments), never the keys. Pieces of one stream counted apart (with their write ``positions``)
    :meth:`merge` into exactly what one pass gives: a moment cut by a piece's edge keeps its writes'
    regions until the rest of it arrives.
    """

    def __init__(self, width: int, regions: int, server_of_region: np.ndarray) -> None:
        if width < 1:
            raise BadInput(f"a moment must hold at least one write, got {width}")
        self.width = width
        self.regions = regions
        self._server_of = np.asarray(server_of_region, dtype=np.int64)
        self._servers = int(self._server_of.max()) + 1 if self._server_of.size else 1
        # Complete moments, as arrays per batch: (ids, busiest region's writes, busiest server's
        # writes, writes); a Python object per moment would cost more than counting them.
        self._done: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        # Moments seen in part: id -> (write positions, region indices).
        self._partial: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # Consecutive write pairs (adjacent positions) and those in one region; the ends of every
        # run of positions seen, to join pairs across pieces.
        self.pairs = 0
        self.same = 0
        self._ends: list[tuple[int, int, int, int]] = []  # (first pos, its region, last pos, its region)

    def update(self, region_index: np.ndarray, positions: np.ndarray) -> None:
        """Count one chunk: each write's region index and its position in the write stream."""
        idx = np.asarray(region_index, dtype=np.int64)
        pos = np.asarray(positions, dtype=np.int64)
        if idx.size == 0:
            return
        if self._walk(idx, pos):
            self._update_run(idx, int(pos[0]))
            return
        mid = pos // self.width
        order = np.argsort(mid, kind="stable")
        if np.any(order != np.arange(order.size)):
            mid, pos, idx = mid[order], pos[order], idx[order]
        cuts = np.flatnonzero(np.diff(mid)) + 1
        starts = np.concatenate([[0], cuts])
        ends = np.concatenate([cuts, [mid.size]])
        sizes = ends - starts
        whole = sizes == self.width
        if np.any(whole):
            sel = np.repeat(whole, sizes)
            self._finish(mid[sel], idx[sel])
        for s, e in zip(starts[~whole].tolist(), ends[~whole].tolist()):
            self._add_partial(int(mid[s]), pos[s:e], idx[s:e])

    def _update_run(self, idx: np.ndarray, start: int) -> None:
        """:meth:`update` of writes at the consecutive positions ``start, start + 1, ...`` (what
        the key-file engine gives, a batch at a time): the moments are slices of ``idx``, found
        by arithmetic (no division, sort or grouping pass over the writes), and the whole ones
        are counted as rows of a (moments, width) view."""
        w, n = self.width, idx.size
        head = min(n, -start % w)  # the writes that end a moment begun before this run
        if head:
            self._add_partial(start // w, np.arange(start, start + head, dtype=np.int64), idx[:head])
        whole = (n - head) // w
        if whole:
            block = idx[head : head + whole * w].reshape(whole, w)
            first = np.arange((start + head) // w, (start + head) // w + whole, dtype=np.int64)
            self._done.append(
                (
                    first,
                    self._max_per_block(block, self.regions),
                    self._max_per_block(self._server_of[block], self._servers),
                    np.full(whole, w, dtype=np.int64),
                )
            )
        tail = head + whole * w
        if tail < n:
            self._add_partial((start + tail) // w, np.arange(start + tail, start + n, dtype=np.int64), idx[tail:])

    @classmethod
    def _max_per_block(cls, block: np.ndarray, cols: int) -> np.ndarray:
        """The largest count of one value per row of ``block`` (values in ``[0, cols)``)."""
        rows, width = block.shape
        if rows * cols <= max(4 * block.size, 1 << 16):
            shifted = block + (np.arange(rows, dtype=np.int64) * cols)[:, None]
            return np.bincount(shifted.ravel(), minlength=rows * cols).reshape(rows, cols).max(axis=1)
        return cls._max_per_row(np.repeat(np.arange(rows, dtype=np.int64), width), block.ravel(), rows, cols)

    def _finish(self, mid: np.ndarray, idx: np.ndarray) -> None:
        """Record the moments behind ``mid`` (grouped, ascending) with their writes' regions."""
        first = mid[np.concatenate([[True], mid[1:] != mid[:-1]])]
        local = np.searchsorted(first, mid)
        k = first.size
        region_max = self._max_per_row(local, idx, k, self.regions)
        server_max = self._max_per_row(local, self._server_of[idx], k, self._servers)
        self._done.append((first, region_max, server_max, np.bincount(local, minlength=k)))

    @staticmethod
    def _max_per_row(row: np.ndarray, col: np.ndarray, rows: int, cols: int) -> np.ndarray:
        """The largest count per row of the (row, col) pairs, dense when small, sorted otherwise."""
        if rows * cols <= max(4 * row.size, 1 << 16):
            return np.bincount(row * cols + col, minlength=rows * cols).reshape(rows, cols).max(axis=1)
        pair = np.sort(row * cols + col)
        edge = np.flatnonzero(np.concatenate([[True], pair[1:] != pair[:-1]]))
        counts = np.diff(np.append(edge, pair.size))
        out = np.zeros(rows, dtype=np.int64)
        np.maximum.at(out, pair[edge] // cols, counts)
        return out

    def _walk(self, idx: np.ndarray, pos: np.ndarray) -> bool:
        """Count the consecutive pairs of this chunk; True when its positions are one run."""
        adjacent = np.diff(pos) == 1
        pairs = int(np.count_nonzero(adjacent))
        self.pairs += pairs
        if pairs == idx.size - 1:  # one run of positions: every pair counts
            self.same += int(np.count_nonzero(idx[1:] == idx[:-1]))
            self._ends.append((int(pos[0]), int(idx[0]), int(pos[-1]), int(idx[-1])))
            self._join()
            return True
        self.same += int(np.count_nonzero(adjacent & (idx[1:] == idx[:-1])))
        breaks = np.flatnonzero(~adjacent) + 1
        for f, last in zip(np.concatenate([[0], breaks]).tolist(), np.concatenate([breaks - 1, [idx.size - 1]]).tolist()):
            self._ends.append((int(pos[f]), int(idx[f]), int(pos[last]), int(idx[last])))
        self._join()
        return False

    def _join(self) -> None:
        """Count the pair across two runs of positions that touch, and keep one run for both."""
        if len(self._ends) < 2:
            return
        self._ends.sort()
        joined = [self._ends[0]]
        for run in self._ends[1:]:
            prev = joined[-1]
            if prev[2] + 1 == run[0]:
                self.pairs += 1
                self.same += int(run[1] == prev[3])
                joined[-1] = (prev[0], prev[1], run[2], run[3])
            else:
                joined.append(run)
        self._ends = joined

    def merge(self, other: Moments) -> None:
        """Add the moments another accumulator counted at other positions of the same stream."""
        if other.width != self.width or other.regions != self.regions:
            raise BadInput("only moments of the same width over the same regions merge")
        self._done.extend(other._done)
        for m, (p, r) in other._partial.items():
            self._add_partial(m, p, r)
        self.pairs += other.pairs
        self.same += other.same
        self._ends.extend(other._ends)
        self._join()

    def _add_partial(self, m: int, p: np.ndarray, r: np.ndarray) -> None:
        """Add some writes of moment ``m``; it is recorded once all ``width`` of them are in."""
        have = self._partial.pop(m, None)
        if have is not None:
            p, r = np.concatenate([have[0], p]), np.concatenate([have[1], r])
        if p.size >= self.width:
            self._finish(np.full(p.size, m, dtype=np.int64), r)
        else:
            self._partial[m] = (p, r)

    def shares(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per moment in write order: the busiest region's share, the busiest server's share and
        the moment's writes. A moment left short (the stream's last) counts as it is."""
        parts = list(self._done)
        for m, (p, r) in self._partial.items():
            one = lambda v: np.asarray([v], dtype=np.int64)  # noqa: E731
            parts.append((one(m), one(np.bincount(r).max()), one(np.bincount(self._server_of[r]).max()), one(p.size)))
        if not parts:
            z = np.zeros(0)
            return z, z, z
        ids, region, server, writes = (np.concatenate(c) for c in zip(*parts))
        order = np.argsort(ids, kind="stable")
        w = writes[order].astype(np.float64)
        return region[order] / w, server[order] / w, w


def dwell(same: int, pairs: int, region_counts: np.ndarray) -> tuple[float, float]:
    """How much the writes *dwell* in a region before moving on, and what chance would give.

    Of the consecutive write pairs, the share that stay in one region, out of the most that could
    (every region taking all its writes in one run: pairs - touched regions + 1). A sequential or
    time-leading key fills one region after the other and dwells 1.0, with 2 rows per region as
    with 2 million; independent writes dwell only as often as two draws hit the same region
    (``sum p_r^2``); a salt cycling through its buckets never dwells. The second number is that
    chance level, on the same scale. Both are 0.0 when no region could be written twice in a row.
    """
    c = np.asarray(region_counts, dtype=np.float64)
    total = c.sum()
    most = pairs - int(np.count_nonzero(c)) + 1
    if total <= 0 or most < 1:
        return 0.0, 0.0
    p = c / total
    return same / most, min(1.0, float(np.dot(p, p)) * pairs / most)
