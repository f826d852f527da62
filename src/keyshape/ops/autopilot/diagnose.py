"""Stage 1, diagnose: the table's verdict, the pattern behind it with its cause, and since when.

The verdict and the pattern are the poller's own (serve's ``Poller`` judged the table while it
filled the history): the autopilot repeats them, it does not judge again. "Since when" is read
off the history: the first interval of the run of intervals, up to the last one, in which the
busiest key range took at least ``HOT_FACTOR`` x its fair share of the writes (three quarters of
them with two ranges; with one, every interval with writes: the whole history is the hot spot).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from keyshape.errors import BadInput
from keyshape.ops.autopilot.observed import Observed

__all__ = ["HOT_FACTOR", "Diagnosis", "busiest_shares", "diagnose"]

HOT_FACTOR = 2.0  # a range is hot in an interval when it takes this many fair shares of the writes


@dataclass
class Diagnosis:
    """``verdict`` (balanced / skewed / hotspot / idle), ``pattern`` (serve's name), its ``cause``
    and ``fix`` in words, ``since`` (epoch s, 0 when not hot), the mean ``busiest_share`` of the
    write intervals, ``intervals`` counted and ``source``."""

    table: str
    verdict: str
    pattern: str
    cause: str
    fix: str
    since: float
    busiest_share: float
    intervals: int
    source: str

    @property
    def hot(self) -> bool:
        return self.verdict in ("hotspot", "skewed")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def busiest_shares(writes: np.ndarray) -> np.ndarray:
    """Each interval's busiest key range's share of its writes (NaN where nothing was written)."""
    m = np.asarray(writes, dtype=np.float64)
    totals = m.sum(axis=1)
    out = np.full(len(m), np.nan)
    keep = totals > 0
    if m.shape[1]:
        out[keep] = m[keep].max(axis=1) / totals[keep]
    return out


def diagnose(observed: Observed) -> Diagnosis:
    """The diagnosis of ``observed`` (see the module docstring); BadInput when the history holds
    no interval of the table (nothing to judge: poll longer or give serve's ``--db``)."""
    if len(observed.times) < 2:
        raise BadInput(
            f"{observed.source} holds {len(observed.times)} interval(s) of table {observed.table!r}: too few to judge; "
            "poll longer (--poll-seconds) or give the --db of a serve that watches it"
        )
    body = observed.verdict or {}
    pattern = body.get("pattern") or {}
    shares = busiest_shares(observed.writes)
    ranges = max(observed.writes.shape[1], 1)
    # one range takes every write by definition (hot whenever written); two: three quarters
    bar = HOT_FACTOR / ranges if ranges > 2 else (0.75 if ranges == 2 else 1.0)
    since = 0.0
    for i in range(len(shares) - 1, -1, -1):
        s = shares[i]
        if np.isnan(s):
            continue  # an idle interval neither starts nor ends a hot run
        if s < bar:
            break
        since = float(observed.times[i - 1] if i > 0 else observed.times[i])
    written = shares[~np.isnan(shares)]
    return Diagnosis(
        table=observed.table,
        verdict=str(body.get("verdict", "unknown")),
        pattern=str(pattern.get("name", "")),
        cause=str(pattern.get("cause", "")),
        fix=str(pattern.get("fix", "")),
        since=since,
        busiest_share=float(written.mean()) if written.size else 0.0,
        intervals=len(observed.times) - 1,
        source=observed.source,
    )
