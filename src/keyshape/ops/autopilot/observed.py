"""What the autopilot saw of a table's load: requests per interval per key range.

The autopilot's stages read one shape of observation whatever it came from: serve's history
database (``--db``) or a bounded poll made for the run (both filled by serve's own poller; the
``serve`` layer builds this from them, ``ops`` cannot import it). ``times`` are the end of each
interval (epoch seconds); interval ``i`` covers ``times[i-1]..times[i]``; the first interval's start is not
recorded, so rates leave its requests out (a rate needs both ends of its interval)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Observed"]


@dataclass
class Observed:
    """``writes``/``reads``: intervals x key ranges (``starts[i]`` inclusive to ``ends[i]``),
    requests in the interval; ``verdict``: the poller's last verdict body for the table (verdict,
    pattern with cause and fix, busiest shares); ``source``: where it came from, for the report;
    ``servers``: live region servers then; ``events``: (time, kind, detail) splits, merges, moves."""

    table: str
    times: np.ndarray
    starts: list[bytes]
    ends: list[bytes]
    writes: np.ndarray
    reads: np.ndarray
    verdict: dict[str, Any]
    source: str
    servers: int = 1
    events: list[tuple[float, str, str]] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        """The span the requests were counted over."""
        return float(self.times[-1] - self.times[0]) if len(self.times) > 1 else 0.0

    def rates(self, metric: str = "write") -> np.ndarray:
        """Requests a second of each interval after the first (summed over the key ranges)."""
        m = self.writes if metric == "write" else self.reads
        if len(self.times) < 2:
            return np.zeros(0)
        dt = np.diff(self.times)
        return np.asarray(m[1:].sum(axis=1), dtype=np.float64) / np.maximum(dt, 1e-9)

    def region_rates(self, metric: str = "write") -> np.ndarray:
        """Requests a second of each key range over the whole span."""
        m = self.writes if metric == "write" else self.reads
        if self.seconds <= 0:
            return np.zeros(len(self.starts))
        return np.asarray(m[1:].sum(axis=0), dtype=np.float64) / self.seconds
