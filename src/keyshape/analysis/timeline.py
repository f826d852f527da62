"""Writes over time: the write stream cut into windows, counted per region (the heat map data).

A design can spread rows evenly in total and still send every write of a given moment to one
region (a timestamp-leading key over time-range splits). Only a per-window view shows that, so the
analyzer keeps a ``windows x regions`` matrix of write counts, built chunk by chunk in O(W x R)
memory whatever the number of rows.
"""

from __future__ import annotations

import numpy as np

from keyshape.errors import KeyshapeError


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
            raise KeyshapeError(f"windows must be at least 1, got {windows}")
        if regions < 1:
            raise KeyshapeError(f"regions must be at least 1, got {regions}")
        if total_rows is not None and total_rows < 0:
            raise KeyshapeError(f"total_rows must not be negative, got {total_rows}")
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
            raise KeyshapeError(f"region index out of range 0..{self.regions - 1}")
        if positions is not None and self.total_rows is None:
            raise KeyshapeError("write positions need total_rows: windows of a stream counted in "
                             "pieces can only be cut when its length is known")
        pos = (np.arange(self.rows, self.rows + n, dtype=np.int64) if positions is None
               else np.asarray(positions, dtype=np.int64))
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
        if (self.total_rows is None or other.total_rows != self.total_rows
                or other._counts.shape != self._counts.shape):
            raise ValueError("only timelines of the same stream length, windows and regions merge")
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
