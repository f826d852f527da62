"""Stage 4, predict: the observed write stream replayed through a design.

The live sample in cell-timestamp order is the table's write stream (the real keys at their
real times); each key carries the rows it stands for. Replayed through a design: each record
re-keyed by the design's schema, the stream fed to keyshape's split simulation
(``core.regions.simulate_auto_split``) from the design's own pre-split, splitting as the real
table did (rows a region: the observed table's rows per region, when it has more than one), and
the writes binned over time into a heat map (intervals x the design's regions) scaled to the
measured write rate. The busiest share is the mean over intervals of the busiest region's share:
the number the plan shows is this replay's.

``choose`` takes advise's ranking and keeps the first design a migration can produce (one row
per row, no index tables, no time buckets) whose replayed busiest share is near fair
(``NEAR_FAIR`` x 1 / its regions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from keyshape.analysis.advise.score import Score
from keyshape.core.regions import simulate_auto_split
from keyshape.ops.autopilot.learn import Learned
from keyshape.schema import KeySchema

__all__ = ["BINS", "NEAR_FAIR", "Replay", "choose", "migratable", "replay"]

NEAR_FAIR = 1.5  # a replayed busiest share at most this many fair shares is "near fair"
BINS = 20  # intervals of the replayed heat map, at most
MIN_WINDOW_KEYS = 50  # sampled keys written inside the observed window needed to replay that window alone


@dataclass
class Replay:
    """``values``: intervals x regions (``starts``), writes a second; ``times`` the intervals'
    starts (epoch s); ``busiest_share`` the mean busiest-region share, ``fair`` 1 / regions."""

    name: str
    label: str
    starts: list[bytes]
    times: np.ndarray
    values: np.ndarray
    busiest_share: float
    splits: int
    keys: int

    @property
    def fair(self) -> float:
        return 1.0 / max(len(self.starts), 1)

    @property
    def near_fair(self) -> bool:
        return self.busiest_share <= NEAR_FAIR * self.fair + 1e-9

    def to_dict(self) -> dict[str, Any]:
        from keyshape.core.hbytes import to_string_binary

        return {
            "name": self.name,
            "design": self.label,
            "regions": len(self.starts),
            "busiest_share": round(self.busiest_share, 4),
            "fair_share": round(self.fair, 4),
            "splits": self.splits,
            "keys_replayed": self.keys,
            "starts": [to_string_binary(s) for s in self.starts],
            "times": [float(t) for t in self.times],
            "values": np.round(self.values, 3).tolist(),
        }


def _window(learned: Learned, since_s: float | None, until_s: float | None) -> np.ndarray:
    """Indices of the sampled keys to replay, in write order: those written in the observed
    window when enough of them were, else every one."""
    order = np.argsort(learned.times, kind="stable")
    if since_s is not None and until_s is not None:
        t = learned.times[order]
        inside = order[(t >= since_s * 1000) & (t <= until_s * 1000)]
        if len(inside) >= MIN_WINDOW_KEYS:
            return inside
    return order


def replay(learned: Learned, schema: KeySchema, name: str, label: str, since_s: float | None = None, until_s: float | None = None) -> Replay:
    """``learned``'s write stream replayed through ``schema`` (module docstring)."""
    idx = _window(learned, since_s, until_s)
    fields = schema.field_names
    keys: list[bytes] = []
    kept: list[int] = []
    for i in idx.tolist():
        try:
            keys.append(schema.encode({f: learned.records[f][i] for f in fields}))
        except Exception:  # noqa: BLE001 - a value the design cannot hold: not replayed (counted by keys)
            continue
        kept.append(i)
    splits = schema.split_keys()
    observed_regions = len(learned.regions)
    limit = max(2, len(keys) // observed_regions) if observed_regions > 1 else None
    sim = simulate_auto_split(keys, initial_splits=splits, max_rows=limit)
    region = sim.region_map.assign(keys) if keys else np.zeros(0, dtype=np.int64)
    t = learned.times[kept].astype(np.float64) / 1000.0
    w = learned.weights[kept]
    nreg = len(sim.region_map)
    if len(t) == 0:
        return Replay(name, label, list(sim.region_map.starts), np.zeros(0), np.zeros((0, nreg)), 0.0, 0, 0)
    lo, hi = float(t.min()), float(t.max())
    bins = max(1, min(BINS, len(t) // 20))
    edges = np.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1)
    b = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, bins - 1)
    m = np.zeros((bins, nreg))
    np.add.at(m, (b, region), w)
    seconds = (edges[1] - edges[0]) or 1.0
    total = m.sum()
    scale = (learned.write_rate * seconds * bins / total) if total > 0 and learned.write_rate > 0 else 1.0 / seconds
    values = m * scale / seconds
    totals = m.sum(axis=1)
    keep = totals > 0
    share = float((m[keep].max(axis=1) / totals[keep]).mean()) if keep.any() else 0.0
    return Replay(name, label, list(sim.region_map.starts), edges[:-1], values, share, len(sim.splits), len(keys))


def migratable(score: Score) -> str:
    """Why a migration cannot produce ``score``'s design ("" when it can)."""
    d = score.design
    if d.hand:
        return "the current design"
    if d.shape.bucket_ms:
        return "a time-bucketed design packs many records into one row; a migration moves one row to one row"
    if d.indexes:
        return "it needs index tables, which the online migration does not build"
    return ""


def choose(scores: list[Score], replays: dict[str, Replay]) -> tuple[Score | None, list[str]]:
    """The first of ``scores`` (advise's order) that a migration can produce and whose replay is
    near fair; the notes say why each one before it was passed over."""
    notes: list[str] = []
    for s in scores:
        why = migratable(s)
        if why:
            continue
        r = replays.get(s.design.name)
        if r is None:
            continue
        if not r.near_fair:
            notes.append(
                f"{s.design.name} ({s.design.label}, rank {s.rank}): replayed busiest share {r.busiest_share:.0%}, "
                f"above {NEAR_FAIR:g} x fair ({r.fair:.0%}): it does not relieve the hot spot"
            )
            continue
        return s, notes
    return None, notes
