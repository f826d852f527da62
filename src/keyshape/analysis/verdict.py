"""The verdict: ``balanced``, ``skewed`` or ``hotspot``, with reasons and concrete advice.

Thresholds do not use raw shares, which mean different things for 4 and 400 regions. They use
``excess``: where the observed largest share sits between what a perfectly random spread of the
same rows would show (0.0) and everything in one place (1.0). So a design is judged the same way
at any region count, and a few rows spread over many regions are not called a hotspot by chance.

"A moment" is a run of consecutive writes no longer than half a region's fair share of the rows
(``timeline.moment_rows``: rows / (2 x regions), rounded down to a power of two). It follows the
region count, so at 8 regions and at 8,000 a moment is shorter than the time one region takes to
fill, and what a moment shows is what HBase would see: which regions take the writes now. The heat
map's windows (``--windows``) only draw the picture; the verdict never reads them.

- hotspot in time: at a typical moment the busiest region takes at least half of the writes, and
  that is at least 40% of the way from random to all-in-one (timestamp-leading keys: totals even,
  every moment hot); or the regions take their writes one after the other: consecutive writes stay in one
  region at least 80% of the way from chance to as often as they could (``timeline.dwell``; this
  shows a sequential key even with a few rows per region, where a moment is too short to);
- hotspot by layout: the table has one region, or (a live watch) half of the writes or more were
  made while it had one: such a moment's busiest share is its chance share, so no excess shows it;
- hotspot in total: the busiest region holds at least half-way-to-everything of all rows, or 5x
  its fair share;
- skewed: CV or max/mean clearly above chance; at a typical moment an excess of 15%, or a busiest
  share 1.5x what chance gives (and 5% of the way to all-in-one: with many regions, a few of them
  take the writes); or clearly more regions left empty than chance leaves;
- balanced: none of these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from keyshape.analysis.stats import Distribution, percent

BALANCED, SKEWED, HOTSPOT = "balanced", "skewed", "hotspot"
SEVERITY = {BALANCED: 0, SKEWED: 1, HOTSPOT: 2}

TIME_HOT_SHARE = 0.5
TIME_HOT_EXCESS = 0.4
TIME_SKEW_EXCESS = 0.15
TIME_SKEW_OVER_CHANCE = 1.5  # ... or 1.5x what chance gives (a few of many regions take the writes)
TIME_SKEW_MIN_EXCESS = 0.05
TOTAL_HOT_EXCESS = 0.5
TOTAL_HOT_MAX_OVER_MEAN = 5.0
SKEW_CV = 0.25
SKEW_MAX_OVER_MEAN = 1.5
WALK_HOT_EXCESS = 0.8
SINGLE_REGION_HOT = 0.5  # half of the watched writes or more taken while the table had one region


@dataclass(frozen=True)
class SchemaHints:
    """What the key schema and its workload say about the key (all optional).

    - ``leading_field``: the key's first field; ``monotonic_field``: the leading field whose
      generator is monotonic, with no prefix, and ``monotonic_generator`` that generator.
    - ``spread_field``: a high-cardinality, non-monotonic field to hash instead.
    - ``prefix_strategy``: the prefix strategy's name, for people (the verdict asks ``prefixed``);
      ``prefixed``: the key starts with a prefix (salt, hash or bucket): its layout has prefix
      bytes; ``hash_fields``: the fields the prefix hashes; ``buckets``: its bucket count.
    - ``heavy``: (field, value, share of rows) of the values that take a large share.
    - ``split_algorithm``: the schema's ``[splits]`` algorithm.
    - ``real_keys``: the analyzed keys came from a file, not a generated workload.
    """

    leading_field: str | None = None
    monotonic_field: str | None = None
    monotonic_generator: str | None = None
    spread_field: str | None = None
    prefix_strategy: str | None = None
    prefixed: bool = False
    hash_fields: tuple[str, ...] = ()
    buckets: int | None = None
    heavy: tuple[tuple[str, object, float], ...] = ()
    split_algorithm: str | None = None
    real_keys: bool = False


@dataclass(frozen=True)
class Evidence:
    """The numbers the verdict is made from (see ``Analysis`` for their meaning)."""

    rows: int
    regions: int
    total: Distribution
    total_baseline: Distribution
    hot_window_share: float
    hot_window_baseline: float
    hot_direction: float
    hot_regions_seen: int
    hottest_label: str
    hottest_edge: bool  # the busiest region is the first or the last (unbounded) one
    increasing: float
    decreasing: float
    servers: int = 1
    servers_assumed: bool = False  # nobody gave the server count: advise nothing about it
    hot_window_server_share: float = 0.0
    moment_rows: int = 0  # writes per moment behind hot_window_share (0: not known)
    walk: float = 0.0  # how much writes dwell in one region before moving on (timeline.dwell)
    walk_chance: float = 0.0  # the same for independent writes with the observed totals
    # the share of the writes made while the table had one region (a live watch: a table that
    # split only after its load shows 2 regions now, but one region server took every write)
    single_region_share: float = 0.0
    hints: SchemaHints = field(default_factory=SchemaHints)


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reasons: list[str]
    advice: list[str]


def _excess(observed: float, baseline: float) -> float:
    if baseline >= 1.0:
        return 0.0
    return max(0.0, (observed - baseline) / (1.0 - baseline))


def _pct(x: float) -> str:
    return percent(x)


def _moment(ev: Evidence) -> str:
    return f"; a moment is {ev.moment_rows:,} writes" if ev.moment_rows > 1 else ("; a moment is one write" if ev.moment_rows == 1 else "")


def _one_region(ev: Evidence) -> bool:
    """One region took (most of) the writes: the table has one, or had one for half of them."""
    return ev.regions == 1 or ev.single_region_share >= SINGLE_REGION_HOT


def judge(ev: Evidence) -> Verdict:
    """Classify the evidence and explain it: one sentence per reason, advice a user can apply."""
    R = ev.regions
    tot = ev.total
    time_excess = _excess(ev.hot_window_share, ev.hot_window_baseline)
    total_excess = _excess(tot.top_share, ev.total_baseline.top_share)
    reasons: list[str] = []
    verdict = BALANCED

    if R == 1:
        verdict = HOTSPOT
        reasons.append("The table has a single region, so one region server takes every write until HBase splits it.")
    elif _one_region(ev):
        # Each such moment's busiest share equals its chance share (1.0), so no excess shows it.
        verdict = HOTSPOT
        reasons.append(
            f"The table had a single region for {_pct(ev.single_region_share)} of the writes, so one region server took them "
            f"(it has {R} regions now)."
        )
    walk_excess = _excess(ev.walk, ev.walk_chance)
    walking = walk_excess >= WALK_HOT_EXCESS and R > 1
    time_hot = R > 1 and ((ev.hot_window_share >= TIME_HOT_SHARE and time_excess >= TIME_HOT_EXCESS) or walking)
    total_hot = R > 1 and (
        total_excess >= TOTAL_HOT_EXCESS or tot.max_over_mean >= max(TOTAL_HOT_MAX_OVER_MEAN, 1.5 * ev.total_baseline.max_over_mean)
    )
    if time_hot:
        verdict = HOTSPOT
        walk = ""
        if ev.hot_regions_seen > 1 and abs(ev.hot_direction) >= 0.8:
            way = "up" if ev.hot_direction > 0 else "down"
            walk = f"; the hot region walks {way} the key space"
        if walking and (ev.hot_window_share < TIME_HOT_SHARE or time_excess < TIME_HOT_EXCESS):
            # Too few rows per region for a moment to show it, but the order of the writes does.
            moment = (
                f"the regions take their writes one after the other: {_pct(ev.walk)} of the "
                "consecutive writes that could stay in one region do (independent writes: "
                f"{_pct(ev.walk_chance)}), so one region takes the writes at any moment"
            )
        else:
            moment = f"at any moment one region takes {_pct(ev.hot_window_share)} of the writes (fair share {_pct(1 / R)}{_moment(ev)})"
        if not total_hot and tot.max_over_mean < SKEW_MAX_OVER_MEAN:
            reasons.append(f"Hotspot in time: totals look even (max/mean {tot.max_over_mean:.2f}), but {moment}{walk}.")
        else:
            reasons.append(f"{moment[0].upper()}{moment[1:]}{walk}.")
    if total_hot:
        verdict = HOTSPOT
        reasons.append(
            f"Region {ev.hottest_label} holds {_pct(tot.top_share)} of all rows, {tot.max_over_mean:.1f}x its fair share of {_pct(1 / R)}."
        )
    if verdict != HOTSPOT and R > 1:
        skew: list[str] = []
        cv_limit = max(SKEW_CV, 3 * ev.total_baseline.cv)
        mom_limit = max(SKEW_MAX_OVER_MEAN, 1.25 * ev.total_baseline.max_over_mean, 1.1 * ev.total_baseline.max_over_mean_upper)
        if tot.cv >= cv_limit or tot.max_over_mean >= mom_limit:
            skew.append(
                f"Rows are uneven across regions: max/mean {tot.max_over_mean:.2f}, "
                f"CV {tot.cv:.2f}, Gini {tot.gini:.2f} (the busiest is {ev.hottest_label})."
            )
        if time_excess >= TIME_SKEW_EXCESS or (
            ev.hot_window_share >= TIME_SKEW_OVER_CHANCE * ev.hot_window_baseline and time_excess >= TIME_SKEW_MIN_EXCESS
        ):
            skew.append(
                f"Writes bunch up over time: at a typical moment one region takes "
                f"{_pct(ev.hot_window_share)} of the writes (fair share {_pct(1 / R)}"
                f"{_moment(ev)})."
            )
        # Regions left empty by chance vary by about their square root: only a clear excess counts.
        chance_empty = ev.total_baseline.empty
        if tot.empty > chance_empty + 3 * chance_empty**0.5 + 1:
            skew.append(f"{tot.empty} of {R} regions received no rows: their key ranges hold no keys of this workload.")
        if skew:
            verdict = SKEWED
            reasons.extend(skew)
    if verdict == BALANCED:
        reasons.append(
            f"Rows spread evenly over {R} regions (max/mean {tot.max_over_mean:.2f}, CV {tot.cv:.2f})"
            f" and at any moment the busiest region takes {_pct(ev.hot_window_share)} of the "
            f"writes (fair share {_pct(1 / R)}{_moment(ev)})."
        )
    if ev.rows < 100 * R:
        reasons.append(f"Only {ev.rows} rows over {R} regions: run with more rows (--rows) for a firmer verdict.")
    return Verdict(verdict, reasons, _advice(ev, verdict, time_hot, total_hot))


def _buckets(ev: Evidence) -> int:
    """How many salt buckets to advise: one per region of a table split that finely, and never
    fewer than 16 or two per region server (a table of 2 regions, or one still to be split, would
    otherwise be told to salt 2 ways)."""
    floor = max(16, 2 * ev.servers)
    return ev.regions if ev.regions >= floor else floor


def _advice(ev: Evidence, verdict: str, time_hot: bool, total_hot: bool) -> list[str]:
    h = ev.hints
    R = ev.regions
    out: list[str] = []
    single = _one_region(ev)
    monotonic_keys = ev.increasing >= 0.9 or ev.decreasing >= 0.9
    walking_hot = time_hot and ev.hot_regions_seen > 2 and abs(ev.hot_direction) >= 0.8
    mono_field, gen = h.monotonic_field, ""
    if h.monotonic_generator:
        gen = f" ({h.monotonic_generator})"
    if mono_field is None and monotonic_keys and h.leading_field and not h.prefixed:
        # No generator to go by (real keys): the write order itself shows the leading field grows.
        mono_field = h.leading_field
        way = "increase" if ev.increasing >= 0.9 else "decrease"
        gen = f" (keys {way} in write order)"
    if mono_field and (time_hot or total_hot or single or monotonic_keys):
        other = h.spread_field
        if other:
            out.append(
                f"Leading field {mono_field} is monotonic{gen}: add a prefix on {other} "
                f'(prefix = {{ strategy = "mod", buckets = {_buckets(ev)} }}, hash_fields = '
                f'["{other}"], with [splits] algorithm = "prefix"), or move '
                f"{mono_field} after {other}."
            )
        else:
            out.append(
                f"Leading field {mono_field} is monotonic{gen}: add a salt prefix "
                f'(prefix = {{ strategy = "phoenix", buckets = {min(_buckets(ev), 256)} }}) and split on the '
                'buckets ([splits] algorithm = "prefix"); reads then fan out to every bucket.'
            )
        if h.split_algorithm == "sample" and R > 1:
            out.append(
                f"Split points sampled from past data cannot cover future keys of {mono_field}: "
                "every key written after the sample sorts after the last split point, so the last "
                "region takes all new writes; sampling again only moves the cliff, a prefix removes it."
            )
    elif walking_hot and not monotonic_keys:
        # Request counters carry no keys, but the hot region moving steadily through the key space
        # is what a growing leading value (a time or a sequence) does.
        way = "up" if ev.hot_direction > 0 else "down"
        out.append(
            f"The hot region walks {way} the key space ({ev.hot_regions_seen} regions in turn): the key leads "
            "with a value that grows in write order (a time or a sequence). Split points, sampled or not, "
            "cannot cover future keys; put a salt or hash prefix in front and pre-split on its buckets."
        )
    elif monotonic_keys and (time_hot or total_hot or single):
        way = "increase" if ev.increasing >= 0.9 else "decrease"
        share = ev.increasing if ev.increasing >= 0.9 else ev.decreasing
        out.append(
            f"Keys {way} in write order ({_pct(share)} of consecutive writes): put a hash or salt "
            "prefix in front (e.g. a bucket byte from a hash of a stable id) and pre-split on the "
            "buckets, so consecutive writes land on different regions."
        )
    heavy = [x for x in h.heavy if x[0] in h.hash_fields and x[2] >= 0.5 / max(R, 1)]
    barely_split = bool(h.buckets and h.buckets > 1 and 1 < R < h.buckets and R < 2 * ev.servers)
    if verdict != BALANCED and barely_split and not heavy:
        # A salted table that is barely split: the salt already spreads the keys, the regions do
        # not. Hashing another field would change nothing until the table is split.
        out.append(
            f"The key is salted {h.buckets} ways but the table has only {R} regions: pre-split it "
            f'on the buckets ([splits] algorithm = "prefix", regions = a divisor of {h.buckets} '
            "of at least a few per region server), or split it now with keyshape split-plan "
            "--schema SCHEMA, which cuts at bucket starts."
        )
    elif total_hot and not monotonic_keys and ev.hottest_edge and not heavy:
        out.append(
            f"The split keys do not cover the key space: the edge region "
            f"{ev.hottest_label} catches most keys. Derive splits from the key itself "
            '([splits] algorithm = "prefix" for a salted key, "sample" otherwise).'
        )
    if single and (mono_field or monotonic_keys):
        # Split points taken from today's keys all sort below tomorrow's: only salting helps.
        out.append(
            'Pre-split the salted table on its buckets ([splits] algorithm = "prefix", '
            "regions = a few per region server); pre-splitting this key as it is would not "
            "help, since every new key sorts after every split point."
        )
    elif single:
        out.append(
            'Pre-split the table: set [splits] regions to a few per region server (algorithm = "prefix" when the key is salted, else "sample").'
        )
    for fname, value, share in heavy:
        if verdict != BALANCED:
            out.append(
                f"{fname} {value!r} alone takes {_pct(share)} of the rows and its prefix keeps them "
                f"in one bucket: salt that entity's rows with a random or bucket suffix in the "
                f"prefix (or hash more fields than {fname}) so they spread over regions."
            )
    if h.buckets and h.buckets > 1 and verdict != BALANCED and not (time_hot and h.monotonic_field):
        b = h.buckets
        if b > R and b % R:
            out.append(
                f"Regions are not aligned to buckets: {b} buckets over {R} regions puts "
                f"{b // R} or {b // R + 1} buckets in each region; use a region count that "
                f'divides {b} or algorithm = "prefix".'
            )
        elif R > b:
            out.append(
                f"More regions ({R}) than buckets ({b}): within a bucket keys follow the "
                f"leading field, so extra regions per bucket fill unevenly; use buckets >= "
                f"regions (buckets = {R})."
            )
    if ev.servers > 1 and not ev.servers_assumed and R % ev.servers and verdict != HOTSPOT and R < 4 * ev.servers:
        out.append(f"{R} regions over {ev.servers} region servers cannot be even: use a multiple of {ev.servers} regions.")
    if not out:
        if verdict == BALANCED and h.real_keys:
            out.append("No change needed for writes with these keys; run again when the key mix changes (new tenants, a new id range).")
        elif verdict == BALANCED:
            out.append(
                "No change needed for writes. On a generated workload, confirm with your "
                "production row count (--rows) and a sample of real keys (--keys)."
            )
        elif verdict == SKEWED and h.real_keys:
            out.append(
                "Take split points from quantiles of these keys (keyshape.core.splits.sample_splits, "
                'then [splits] algorithm = "explicit") or hash a higher-cardinality field '
                "into the prefix."
            )
        elif verdict == SKEWED:
            out.append(
                'Choose split points from a sample of real keys ([splits] algorithm = "sample") or hash a higher-cardinality field into the prefix.'
            )
        else:
            out.append("Spread the leading bytes of the key: hash or salt the part that concentrates the writes, then pre-split on the buckets.")
    return out
