"""What the live analysis of a Phoenix table adds for salted tables: the salt buckets each region
spans (a region holding more than one bucket is what a region merge, or SPLIT ON on a salted
table, does: Phoenix scans stay correct since 5.2, but the buckets no longer spread load over
regions) and the share of the sampled rows in each bucket."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from keyshape.core.hbytes import to_string_binary
from keyshape.phoenix.key import PhoenixKey, PhoenixKeyError

if TYPE_CHECKING:  # annotations only: keyshape.phoenix.schema imports this module on every schema load
    from keyshape.ops.sample import LiveKeys, TableSample
    from keyshape.store.base import RegionInfo

__all__ = ["BucketView", "bucket_view", "bucket_notes", "buckets_spanned", "region_label"]


def buckets_spanned(start: bytes, end: bytes, buckets: int) -> range:
    """The salt buckets that rows of the region ``[start, end)`` can have."""
    first = start[0] if start else 0
    if not end:
        last = buckets - 1
    else:
        last = end[0] if any(end[1:]) else end[0] - 1  # a region ending at a bucket's zero-padded start
    return range(min(first, buckets - 1), min(max(last, first), buckets - 1) + 1)


def region_label(key: PhoenixKey, start: bytes) -> str:
    """A region's start key as people read it: ``bucket 03 · TENANT=acme …`` where the key decodes,
    toStringBinary otherwise (a zero-padded bucket boundary reads as just its bucket)."""
    if not start:
        return "(first region)"
    head = ""
    rest = start
    if key.salt_buckets:
        head, rest = f"bucket {start[0]:02d}", start[1:]
        if not any(rest):
            return head
    try:
        values = key.decode(start, verify=False)
    except PhoenixKeyError:
        return f"{head} · {to_string_binary(rest)}" if head else to_string_binary(start)
    shown = " ".join(f"{k}={v}" for k, v in values.items() if v is not None)
    return f"{head} · {shown}" if head else shown


@dataclass(frozen=True)
class BucketView:
    """Per salt bucket: the estimated share of the table's rows, and the regions that hold
    more than one bucket (their start keys)."""

    shares: list[float]
    mixed_regions: list[tuple[bytes, bytes, range]]

    def notes(self, key: PhoenixKey) -> list[str]:
        out = []
        if self.shares:
            fair = 1 / len(self.shares)
            top = max(range(len(self.shares)), key=lambda b: self.shares[b])
            out.append(f"Salt buckets: the busiest, {top:02d}, holds {self.shares[top]:.1%} of the sampled rows (fair share {fair:.1%}).")
        for start, _end, span in self.mixed_regions[:5]:
            out.append(
                f"Region {region_label(key, start)} holds salt buckets {span.start:02d}..{span.stop - 1:02d}: "
                "its buckets no longer spread over regions (a merge, or SPLIT ON on a salted table); "
                "split it at the bucket boundaries (keyshape split-plan, or keyshape phoenix ddl "
                "prints them)."
            )
        if len(self.mixed_regions) > 5:
            out.append(f"... and {len(self.mixed_regions) - 5} more region(s) holding several salt buckets.")
        return out


def bucket_view(key: PhoenixKey, sample: TableSample, estimated_rows: Sequence[int]) -> BucketView | None:
    """The :class:`BucketView` of a salted table from its live key sample (None if unsalted)."""
    if not key.salt_buckets:
        return None
    counts: dict[int, float] = {}  # estimated rows per salt byte
    for region, estimate in zip(sample.regions, estimated_rows):
        if region.keys:
            weight = estimate / len(region.keys)
            for k in region.keys:
                if k:
                    counts[k[0]] = counts.get(k[0], 0.0) + weight
    total = sum(counts.values()) or 1.0
    shares = [counts.get(b, 0.0) / total for b in range(key.salt_buckets)]
    mixed = []
    for region in sample.regions:
        info: RegionInfo = region.region
        span = buckets_spanned(info.start, info.end, key.salt_buckets)
        if len(span) > 1:
            mixed.append((info.start, info.end, span))
    return BucketView(shares, mixed)


def bucket_notes(key: PhoenixKey, live: LiveKeys) -> list[str]:
    """What ``keyshape analyze --table`` says of a Phoenix table (registered by
    :mod:`keyshape.phoenix.schema` with :mod:`keyshape.ops.live_notes`): its :class:`BucketView`'s
    notes, none when it is unsalted.

    - ``key``: the table's row key; ``live``: the live analysis' sample and row estimates.
    """
    view = bucket_view(key, live.sample, live.estimated_rows)
    return [] if view is None else view.notes(key)
