"""Name what a live table's heat map shows, with its cause and a concrete fix.

The verdict (balanced / skewed / hotspot) is the analyzer's (``analysis.verdict`` through
``ops.live.live_analysis``); this module only names the PATTERN behind it, ties it to the key
schema's field that causes it when a schema is known, and proposes a change:

- ``sequential diagonal``: the busiest region walks up (or down) the key space, or the schema's
  leading field grows in write order (a sequence, a time) with no prefix in front: every new key
  sorts after the last, so the last region takes the writes.
- ``single hot row``: a hot band whose region holds one row (its end is its start + 0x00, or
  its key range holds one whole key by the schema): one key takes the writes, and no split can
  divide a row. Named by its decoded fields.
- ``hot band``: one key range stays the busiest across the intervals (a band of values, or one
  hot value of the leading field).
- ``full-scan cascade``: the busiest READ region walks through the key space in key order over
  the intervals, one region at a time: a scan over the whole table (no start/stop row). Fix: bound
  the scan by the leading field (start/stop rows from ``schema.scan_ranges``), or a design that
  serves the read (``keyshape advise`` with the read pattern).
- ``periodic bursts``: the table's requests rise and fall with a period (found by the
  autocorrelation of its request rate): a batch job. Fix: spread the job over its period
  (rate-limit it), or pre-split so the burst meets enough regions.
- ``balanced``: no change needed.
- ``uneven``: skewed without any of these shapes; the analyzer's advice stands.

The fix of the three key patterns above is a key design computed and checked by
``serve.fixes.plan_fix``: each candidate replayed against the observed writes
(``serve.predict``) and shown only when the replay's busiest region is within
``fixes.FAIR_FACTOR`` of its fair share; ``fix_prefix`` / ``fix_toml`` carry the shown design,
``fix_check`` every design tried with its replayed share. Strategies are asked (``prefix.width``,
``bucket_starts``), never compared by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from dataclasses import field as dc_field
from typing import Any

import numpy as np

from keyshape.analysis import Analysis
from keyshape.analysis.timeline import hottest, moving_direction
from keyshape.analysis.verdict import BALANCED, SchemaHints
from keyshape.core.hbytes import to_string_binary
from keyshape.schema import KeySchema
from keyshape.serve.fixes import HOT_BAND, HOT_ROW, SEQUENTIAL, FixPlan, plan_fix, plan_text, prefixed_toml, salted_toml
from keyshape.serve.predict import Traffic

__all__ = [
    "NAMES",
    "HOT_BAND",
    "HOT_ROW",
    "SEQUENTIAL",
    "Pattern",
    "Traffic",
    "bursts_period",
    "name_pattern",
    "prefixed_toml",
    "salted_toml",
    "scan_cascade",
    "time_pattern",
]

BALANCED_PATTERN, UNEVEN = "balanced", "uneven"
BURSTS, CASCADE = "periodic bursts", "full-scan cascade"
NAMES = (SEQUENTIAL, HOT_BAND, HOT_ROW, BURSTS, CASCADE, BALANCED_PATTERN, UNEVEN, "idle")


@dataclass(frozen=True)
class Pattern:
    """A named pattern: ``cause`` says why in the schema's terms, ``fix`` what to change,
    ``fix_toml`` a whole schema file with the change when one can be written (else "")."""

    name: str
    cause: str
    fix: str
    field: str = ""
    fix_toml: str = ""
    fix_prefix: dict[str, Any] = dc_field(default_factory=dict)
    period: float = 0.0  # periodic bursts: seconds between bursts
    fix_check: dict[str, Any] = dc_field(default_factory=dict)  # serve.fixes.FixPlan.to_dict(): every design replayed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _buckets(analysis: Analysis) -> int:
    # As the analyzer advises: one per region, never fewer than 16 or two per server, at most 256.
    return min(max(16, 2 * analysis.servers, len(analysis.regions)), 256)


# Periodic bursts: the rate's autocorrelation at the period at least this, the busiest intervals
# at least BURST_RATIO x the quietest, at least MIN_BURSTS bursts seen and MIN_INTERVALS intervals,
# the period at least MIN_PERIOD seconds and 3 polls: region servers send their loads to the master
# every 3 s (hbase.regionserver.msginterval), so counters polled faster than that step every few
# polls, a period of the reports, not of the traffic (seen polling every second).
BURST_ACF, BURST_RATIO, MIN_BURSTS, MIN_INTERVALS, MIN_PERIOD = 0.5, 3.0, 3, 12, 30.0


def bursts_period(times: np.ndarray, totals: np.ndarray) -> float:
    """Seconds between bursts of ``totals`` (requests per interval ending at ``times``), or 0.0
    when the series has no clear period. The rate (requests per second) is correlated with itself
    at every lag; the period is the first lag whose correlation is a local peak above
    ``BURST_ACF``, and it counts only when the bursts stand out (``BURST_RATIO``) and repeat."""
    times = np.asarray(times, dtype=np.float64)
    totals = np.asarray(totals, dtype=np.float64)
    if len(totals) < MIN_INTERVALS or len(times) != len(totals):
        return 0.0
    dt = np.diff(times)
    step = float(np.median(dt)) if len(dt) else 0.0
    if step <= 0:
        return 0.0
    rate = totals / step
    hi, lo = np.percentile(rate, 90), np.percentile(rate, 10)
    if hi <= 0 or hi < BURST_RATIO * max(lo, 1e-9) or hi * step < 50:  # no bursts, or too few requests to tell
        return 0.0
    x = rate - rate.mean()
    denom = float(np.dot(x, x))
    if denom <= 0:
        return 0.0
    n = len(x)
    acf = np.array([float(np.dot(x[:-lag], x[lag:])) / denom * n / (n - lag) for lag in range(1, n // 2 + 1)])
    for lag in range(2, len(acf)):
        if acf[lag - 1] >= BURST_ACF and acf[lag - 1] >= acf[lag - 2] and (lag >= len(acf) or acf[lag - 1] >= acf[lag]):
            if lag * step < MIN_PERIOD or lag < 3:
                continue  # the report cadence, or too few polls a period to tell: look further
            if n / lag >= MIN_BURSTS:
                return lag * step
            break
    return 0.0


# Full-scan cascade: the busiest read region walks in key order (direction at least this) over at
# least CASCADE_REGIONS regions, taking at least CASCADE_SHARE of each interval's reads.
CASCADE_DIRECTION, CASCADE_REGIONS, CASCADE_SHARE = 0.8, 3, 0.5


def scan_cascade(reads: np.ndarray) -> tuple[int, float]:
    """``(regions swept, direction)`` when the reads sweep the regions in key order one at a
    time (a full scan), else ``(0, 0.0)``. ``reads``: intervals x regions."""
    reads = np.asarray(reads, dtype=np.float64)
    if reads.ndim != 2 or reads.shape[1] < CASCADE_REGIONS:
        return 0, 0.0
    totals = reads.sum(axis=1)
    busy = totals > 0.05 * totals.max() if totals.size and totals.max() > 0 else np.zeros(len(totals), dtype=bool)
    if busy.sum() < CASCADE_REGIONS:
        return 0, 0.0
    hot = reads[busy].argmax(axis=1)
    share = reads[busy].max(axis=1) / totals[busy]
    direction = moving_direction(hot)
    swept = int(np.unique(hot).size)
    if swept >= CASCADE_REGIONS and abs(direction) >= CASCADE_DIRECTION and float(np.median(share)) >= CASCADE_SHARE:
        return swept, direction
    return 0, 0.0


def _one_row(start: bytes, end: bytes, schema: KeySchema | None) -> bool:
    """Whether the key range ``[start, end)`` holds one row: its end is its start + 0x00, or by
    the schema its start is one whole key and every key below ``end`` starts with it."""
    if not start or not end:
        return False
    if end == start + b"\x00":
        return True
    if schema is None or not end.startswith(start):
        return False
    try:
        return bool(schema.encode(schema.decode(start)) == start)
    except Exception:  # noqa: BLE001 - not a whole key of this schema
        return False


def _row_name(schema: KeySchema | None, key: bytes) -> str:
    """A row named by its decoded fields (``user=42, day=...``), else as toStringBinary."""
    if schema is not None:
        try:
            return ", ".join(f"{k}={v}" for k, v in schema.decode(key).items())
        except Exception:  # noqa: BLE001 - a key outside the schema is shown as bytes
            pass
    return to_string_binary(key)


Planner = Callable[[str, KeySchema, Traffic, int, "str | None"], FixPlan]  # serve.fixes.plan_fix's shape


def name_pattern(
    analysis: Analysis,
    hints: SchemaHints | None = None,
    schema: KeySchema | None = None,
    traffic: Traffic | None = None,
    planner: Planner | None = None,
) -> Pattern:
    """The pattern of a live ``analysis`` (``ops.live.live_analysis``), its cause and its fix;
    ``traffic`` (the same intervals' matrices) lets the read and time patterns be seen."""
    hints = hints or SchemaHints()
    if analysis.verdict != BALANCED:
        key_pattern = _key_pattern(analysis, hints, schema, traffic, planner or plan_fix)
        if key_pattern.name != UNEVEN:
            return key_pattern
    if traffic is not None:
        other = time_pattern(traffic, hints)
        if other is not None:
            return other
    if analysis.verdict != BALANCED:
        return key_pattern
    regions = len(analysis.regions)
    return Pattern(
        BALANCED_PATTERN,
        f"writes spread over {regions} regions: at a typical moment the busiest takes "
        f"{100 * analysis.hot_window_share:.0f}% (chance alone: {100 * analysis.hot_window_baseline:.0f}%)",
        "No change needed.",
    )


def time_pattern(traffic: Traffic, hints: SchemaHints | None = None) -> Pattern | None:
    """A full-scan cascade in the reads, or periodic bursts in the requests, else None (also
    for a table without writes, which the analyzer cannot judge)."""
    hints = hints or SchemaHints()
    swept, direction = scan_cascade(traffic.reads)
    lead = hints.leading_field or ""
    if swept:
        way = "up" if direction > 0 else "down"
        cause = (
            f"reads sweep the key space {way}, one region at a time ({swept} regions in turn): a scan over the whole table "
            f"(no start/stop row{f' on the leading field {lead}' if lead else ''})"
        )
        fix = (
            f"Bound the scan by {lead or 'the leading field'}: give it start/stop rows (keyshape's Query/scan_ranges builds them from the "
            f"schema's fields) so it reads only the range it needs; for a read that must cover many values of {lead or 'the leading field'}, "
            "run keyshape advise with that read pattern for a design (an index table or another field order) that serves it."
        )
        return Pattern(CASCADE, cause, fix, lead)
    totals = traffic.writes.sum(axis=1) + traffic.reads.sum(axis=1)
    period = bursts_period(traffic.times, totals)
    if period:
        lead = hints.leading_field or ""
        cause = (
            f"the table's requests come in bursts every {period:.0f} s (the request rate repeats with that period): a batch job or a scheduled load"
        )
        fix = (
            f"Spread the job over its {period:.0f} s period (rate-limit its writer) so its requests meet the regions at a steady rate; "
            f"if each burst is also skewed, pre-split the range it writes ({lead or 'the leading field'}) so a burst meets enough regions "
            "(keyshape split-plan)."
        )
        return Pattern(BURSTS, cause, fix, lead, period=period)
    return None


def _checked(
    kind: str,
    cause: str,
    lead: str,
    schema: KeySchema | None,
    traffic: Traffic | None,
    n: int,
    fallback: str,
    planner: Planner,
    extra: tuple[str, ...] = (),
) -> Pattern:
    """The pattern with the fix ``serve.fixes.plan_fix`` checked by replay (nothing unchecked is
    proposed: without a schema or traffic the fix says what keyshape needs to check one)."""
    if schema is None or traffic is None:
        return Pattern(kind, cause, " ".join([fallback, *extra]).strip(), lead)
    plan: FixPlan = planner(kind, schema, traffic, n, lead or None)
    shown = plan.shown
    return Pattern(
        kind,
        cause,
        plan_text(plan, schema, extra),
        lead,
        shown.toml if shown is not None else "",
        shown.fix.prefix if shown is not None else {},
        fix_check=plan.to_dict(),
    )


QUIET_WINDOW = 0.05  # a window with less than this share of the busiest window's writes names no hot region


def _key_pattern(analysis: Analysis, hints: SchemaHints, schema: KeySchema | None, traffic: Traffic | None, planner: Planner) -> Pattern:
    heat = np.asarray(analysis.heat)
    if heat.size:
        # windows with a few stray writes (the tail of a load, a poll landing between batches)
        # name no hot region: one such window's argmax is noise, and one move looks like a walk
        totals = heat.sum(axis=1)
        heat = heat[totals >= QUIET_WINDOW * totals.max()] if totals.max() > 0 else heat
    hot = hottest(heat) if heat.size else np.zeros(0, dtype=np.int64)
    direction = moving_direction(hot) if hot.size else 0.0
    seen = int(np.unique(hot).size) if hot.size else 0
    regions = len(analysis.regions)
    busiest = max(analysis.regions, key=lambda r: r.share) if analysis.regions else None
    where = (busiest.start_text or busiest.label) if busiest is not None else ""
    walking = seen >= 2 and abs(direction) >= 0.8
    mono = hints.monotonic_field
    unprefixed = schema is None or not schema.prefix.width
    n = _buckets(analysis)
    no_schema = "give --schemas with the table's key schema so keyshape can replay a key design against the observed writes before proposing it"
    # The schema's hint (a monotonic leading field) names a diagonal only where the traffic allows
    # one: the hot spot at an edge of the key space (where new ids land), not a steady middle
    # range or a one-row region (then the workload is not what the schema's generator says).
    at_edge = busiest is not None and (not busiest.end or not busiest.start)
    one_row = busiest is not None and seen <= 2 and _one_row(busiest.start, busiest.end, schema)
    if not one_row and (walking or (mono and at_edge) or (regions == 1 and unprefixed)):
        lead = mono or hints.leading_field or ""
        way = "down" if direction < 0 else "up"
        if lead:
            gen = f" ({hints.monotonic_generator})" if hints.monotonic_generator else ""
            cause = (
                f"leading field {lead} grows in write order{gen} with no prefix in front: every new row sorts after "
                f"the last, so one region takes the writes and the hot spot walks {way} the key space as HBase splits it"
            )
        else:
            cause = (
                f"the key leads with a value that grows in write order (a time or a sequence): the busiest region walks {way} "
                f"the key space ({seen} regions in turn); give --schemas to name the field"
            )
        fallback = f"A prefix in front of {lead or 'the key'} (a salt or hash, pre-split on its buckets) spreads new rows; {no_schema}."
        return _checked(SEQUENTIAL, cause, lead, schema, traffic, n, fallback, planner)
    if seen <= 2 and busiest is not None:
        lead = hints.leading_field or ""
        start = busiest.start
        if one_row:
            row = _row_name(schema, start)
            cause = (
                f"one row takes {100 * busiest.share:.0f}% of the writes: {row}"
                + (f" (its fields: {', '.join(f.name for f in schema.fields)})" if schema is not None else "")
                + "; its region holds that row alone, and HBase cannot split a row"
            )
            extra = ("Or keep a counter per writer and add them up on read. A hash of the key cannot help: one key hashes to one bucket.",)
            fallback = f"Spread that row's writes over N rows (a random bucket in front; a read sums the N); {no_schema}."
            field = lead or (schema.fields[0].name if schema is not None else "")
            return _checked(HOT_ROW, cause, field, schema, traffic, n, fallback, planner, extra)
        cause = f"the key range at {where or '(start)'} stays the busiest ({100 * busiest.share:.0f}% of the writes)"
        if lead:
            cause += f": values of the leading field {lead} in that range take most writes"
        fallback = f"Split that range now (keyshape split-plan --table ...), or change the key; {no_schema}."
        return _checked(HOT_BAND, cause, lead, schema, traffic, n, fallback, planner)
    return Pattern(UNEVEN, "some regions take more writes than others; see the reasons", analysis.advice[0] if analysis.advice else "")
