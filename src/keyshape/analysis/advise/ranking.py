"""Pareto ranking of scored designs, and the sentences that say why each sits where it does.

Objectives, all minimised: write concentration (the busiest server's share of the writes), the
weighted cost (reads and writes, ms of work per second) and storage at the horizon. Front 1 is
the designs no other design beats on all three; front 2 the same once front 1 is removed, and so
on. Inside a front the cheaper weighted cost ranks first (it already prices a hot spot into the
writes), so rank 1 is the design with the lowest weighted cost.
"""

from __future__ import annotations

from collections.abc import Sequence

from keyshape.analysis.advise.score import Score

__all__ = ["dominates", "pareto_fronts", "rank", "explain"]


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` is no worse than ``b`` on every objective and better on one."""
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))


def pareto_fronts(points: Sequence[Sequence[float]]) -> list[int]:
    """The front number (1 = non-dominated) of each point."""
    left = set(range(len(points)))
    front = [0] * len(points)
    k = 0
    while left:
        k += 1
        now = {i for i in left if not any(dominates(points[j], points[i]) for j in left if j != i)}
        for i in now:
            front[i] = k
        left -= now
    return front


def rank(scores: list[Score]) -> list[Score]:
    """``scores`` sorted by front, then weighted cost; ``front``, ``rank``, ``decided`` and
    ``reason`` filled in."""
    fronts = pareto_fronts([s.objectives for s in scores])
    for s, f in zip(scores, fronts):
        s.front = f
    ordered = sorted(scores, key=lambda s: (s.front, s.weighted_cost, s.concentration, s.storage_bytes, s.design.name))
    for i, s in enumerate(ordered):
        s.rank = i + 1
        s.decided = _decided(s)
    top = ordered[0]
    for s in ordered[1:]:
        s.reason = explain(s, top)
    return ordered


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _decided(s: Score) -> str:
    """Which pattern (or the writes) makes up most of the design's weighted cost."""
    parts = [(s.weighted(c.pattern), c.pattern) for c in s.patterns]
    parts.append((s.write_cost, "writes"))
    cost, what = max(parts)
    share = cost / s.weighted_cost if s.weighted_cost else 0.0
    if what == "writes":
        return f"writes are {_pct(share)} of its cost (busiest server {_pct(s.concentration)} of them, {s.write_amp:.2g}x amplification)"
    c = s.pattern(what)
    how = f"{c.route}, {c.scanners:.0f} scanners, {c.rows:,.0f} rows"
    return f"'{what}' is {_pct(share)} of its cost ({how}, {c.latency_ms:.1f} ms vs goal {c.goal_ms:g} ms)"


def _what(s: Score) -> str:
    sh = s.design.shape
    if s.design.hand:
        return f"the hand design {s.design.name}"
    if sh.bucket_ms:
        unit = "hour" if sh.bucket_ms == 3_600_000 else "day"
        return f"time bucketing by the {unit} ({sh.order[-1]})" + (f", salted {sh.buckets} ways," if sh.counted else "")
    if sh.counted:
        return f"salting {sh.buckets} ways over {', '.join(sh.hash_fields)}"
    if sh.salted:
        return f"a {sh.prefix} prefix ({sh.bucket_count:,} buckets) over {', '.join(sh.hash_fields)}"
    if s.design.indexes:
        return f"leading with {sh.order[0]} plus an index table"
    return f"leading with {sh.order[0]}" + (" (time descending)" if sh.desc_time else "")


def explain(s: Score, top: Score) -> str:
    """One sentence with numbers: why ``s`` ranks below ``top``."""
    worst = max(s.patterns, key=lambda c: s.weighted(c.pattern) - top.weighted(c.pattern))
    t = top.pattern(worst.pattern)
    ratio = worst.cost_ms / t.cost_ms if t.cost_ms else float("inf")
    how = {
        "fan-out": f"{worst.scanners:.0f} scanners",
        "full scan": f"a full scan of {worst.rows:,.0f} rows",
        "index": f"an index read then {worst.rows:,.0f} rows fetched",
        "range": f"one scan of {worst.rows:,.0f} rows",
        "get": "a get",
    }[worst.route]
    goal = f"{worst.over_goal:.1f}x its latency goal" if worst.over_goal > 1 else f"{worst.latency_ms:.1f} ms, within its goal"
    cost_gap = s.weighted_cost / top.weighted_cost if top.weighted_cost else 1.0
    if s.concentration < top.concentration - 0.01:
        return (
            f"{_what(s)} spreads writes better (busiest server {_pct(s.concentration)} vs {_pct(top.concentration)}) but turns "
            f"'{worst.pattern}' into {how}: {goal}, {ratio:.1f}x the top design's cost for it ({cost_gap:.1f}x overall)"
        )
    if ratio > 1.05:
        return f"{_what(s)} turns '{worst.pattern}' into {how}: {goal}, {ratio:.1f}x the top design's cost for it ({cost_gap:.1f}x overall)"
    if s.concentration > top.concentration + 0.01:
        hot = f"{_pct(s.concentration)} of the writes on the busiest server (top: {_pct(top.concentration)})"
        return f"{_what(s)} puts {hot}: {cost_gap:.2f}x the top design's cost"
    return f"{_what(s)} costs {cost_gap:.2f}x the top design and stores {s.storage_bytes / max(top.storage_bytes, 1):.2f}x its bytes"
