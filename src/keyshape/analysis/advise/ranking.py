"""Pareto ranking of scored designs, and the sentences that say why each sits where it does.

Objectives, all minimised: write concentration (the busiest server's share of the writes), the
weighted cost (reads and writes, ms of work per second) and storage at the horizon. Front 1 is
the designs no other design beats on all three; front 2 the same once front 1 is removed, and so
on. Inside a front the cheaper weighted cost ranks first (it already prices a hot spot into the
writes), so rank 1 is the design with the lowest weighted cost.

The model's precision: each objective is a number measured on a sample, so two designs are
compared within its noise (:func:`differences`): the write concentration within twice the combined
standard error of the two shares (a binomial error over the replayed rows); the weighted cost
within twice the combined error of the writes' part (it carries the share's error), each read
whose rows the two designs count differently scaled by a factor within [1/(1+e), 1+e], e twice
the relative error of the mean share over the queries (the same share prices both: the difference
keeps its sign), a read both count alike exact between them; storage within 1 %. One design
beats another only where it is better beyond that precision on one objective and not worse beyond
it on any; a design within it on all three of the design ranked just above it (or of the first of
a run of such) shares that design's rank and is shown as equal within the model's precision.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from keyshape.analysis.advise.score import Score

__all__ = ["dominates", "pareto_fronts", "differences", "beats", "equal_within_precision", "rank", "explain"]

STORAGE_PRECISION = 0.01  # storage is key and value bytes measured on every record: 1 % covers the value-size estimate
Z = 2.0  # standard errors that make a difference


def dominates(a: Sequence[float], b: Sequence[float], tolerance: Sequence[float] | None = None) -> bool:
    """``a`` is no worse than ``b`` on every objective and better on one (beyond ``tolerance``,
    per objective, when given)."""
    tol = tolerance if tolerance is not None else [0.0] * len(a)
    return all(x <= y + t for x, y, t in zip(a, b, tol)) and any(x < y - t for x, y, t in zip(a, b, tol))


def pareto_fronts(points: Sequence[Sequence[float]], beats: Callable[[int, int], bool] | None = None) -> list[int]:
    """The front number (1 = non-dominated) of each point; ``beats(j, i)``: whether point ``j``
    dominates point ``i`` (default :func:`dominates` without tolerance)."""
    better = beats if beats is not None else (lambda j, i: dominates(points[j], points[i]))
    left = set(range(len(points)))
    front = [0] * len(points)
    k = 0
    while left:
        k += 1
        now = {i for i in left if not any(better(j, i) for j in left if j != i)}
        if not now:  # a tolerance can make a cycle: what is left is one front
            now = set(left)
        for i in now:
            front[i] = k
        left -= now
    return front


def differences(a: Score, b: Score) -> list[tuple[float, float]]:
    """``a``'s objectives minus ``b``'s (concentration, weighted cost, storage), each as the
    interval the model's precision allows (see the module docstring)."""
    conc = a.concentration - b.concentration
    tol = Z * math.hypot(a.concentration_se, b.concentration_se)
    # The cost: a read both designs count alike is exact between them; one they count differently
    # comes from one share estimate (a factor >= 0 on the rows both read), so its difference
    # scales by at most 1 +- Z x its relative error but keeps its sign; the writes' part carries
    # the concentration's error.
    lo = hi = 0.0
    for ca, cb in zip(a.patterns, b.patterns):
        d = a.weighted(ca.pattern) - b.weighted(cb.pattern)
        rel = 0.0
        if not math.isclose(ca.rows, cb.rows, rel_tol=1e-9) or ca.route != cb.route:
            rel = Z * max(ca.rows_rel_se, cb.rows_rel_se)
        ends = (d / (1 + rel), d * (1 + rel))  # a ratio's error is a factor: within [1/(1+e), 1+e]
        lo, hi = lo + min(ends), hi + max(ends)
    dw = a.write_cost - b.write_cost
    ew = Z * math.hypot(a.write_cost_se, b.write_cost_se)
    storage = a.storage_bytes - b.storage_bytes
    st = STORAGE_PRECISION * max(a.storage_bytes, b.storage_bytes)
    return [(conc - tol, conc + tol), (lo + dw - ew, hi + dw + ew), (storage - st, storage + st)]


def beats(a: Score, b: Score) -> bool:
    """``a`` dominates ``b`` beyond the model's precision: not worse on any objective, better on one."""
    gaps = differences(a, b)
    return all(lo <= 0 for lo, _ in gaps) and any(hi < 0 for _, hi in gaps)


def equal_within_precision(a: Score, b: Score) -> bool:
    """Whether ``a`` and ``b`` differ on no objective beyond the model's precision."""
    return all(lo <= 0 <= hi for lo, hi in differences(a, b))


def rank(scores: list[Score]) -> list[Score]:
    """``scores`` sorted by front, then weighted cost; ``front``, ``rank`` (shared by designs equal
    within the model's precision: ``tie`` names the rank they share), ``decided`` and ``reason``
    filled in."""

    fronts = pareto_fronts([s.objectives for s in scores], lambda j, i: beats(scores[j], scores[i]))
    for s, f in zip(scores, fronts):
        s.front = f
    ordered = sorted(scores, key=lambda s: (s.front, s.weighted_cost, s.concentration, s.storage_bytes, s.design.name))
    leader = ordered[0]
    for i, s in enumerate(ordered):
        s.tie = 0
        if i and equal_within_precision(leader, s):
            s.rank = s.tie = leader.rank
        else:
            s.rank = i + 1
            leader = s
        s.decided = _decided(s)
    ties = {s.tie for s in ordered if s.tie}
    for s in ordered:
        if s.rank in ties and not s.tie:
            s.tie = s.rank  # the first of a tied run is tied too
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
    if s.rank == top.rank:
        return (
            f"{_what(s)} is equal to the top design within the model's precision (busiest server {_pct(s.concentration)} vs "
            f"{_pct(top.concentration)}, {cost_gap:.2f}x its cost, {s.storage_bytes / max(top.storage_bytes, 1):.2f}x its bytes)"
        )
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
