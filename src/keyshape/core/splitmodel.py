"""What decides when an HBase table splits (``SplitModel``) and what a split simulation reports
(``SplitHistory``); ``keyshape.core.splitsim`` runs the simulation. The module docstring there
says what is modelled and what is not."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.core.regions import RegionMap, SplitEvent
from keyshape.errors import BadInput

__all__ = ["COMPRESSION_RATIOS", "POLICIES", "SplitHistory", "SplitModel", "Stage", "cell_size", "parse_policy"]

# Store file size over serialized cell size by the family's COMPRESSION. SNAPPY is measured (the
# orders example's keys on HBase 2.6.1: its first split came after the writes a 0.4 ratio
# predicts); the others are rough estimates of the same kind of text-heavy key.
COMPRESSION_RATIOS = {"NONE": 1.0, "SNAPPY": 0.4, "LZ4": 0.4, "LZO": 0.4, "LZMA": 0.3, "GZ": 0.3, "ZSTD": 0.3, "BZIP2": 0.3}
POLICIES = ("stepping", "increasing", "constant", "key-prefix", "delimited", "rows")
_MIB = 1 << 20


def cell_size(family: int, qualifier: int, value: int) -> int:
    """Bytes of one cell in an HFile besides its row key: KeyValue's key length, value length,
    row length, family length, timestamp and type fields (4+4+2+1+8+1), HFile v3's tags length
    (2) and the memstore timestamp (1), plus the ``family``, ``qualifier`` and ``value`` lengths
    in bytes."""
    return 23 + family + qualifier + value


def parse_policy(text: str) -> dict[str, Any]:
    """A policy as written (``text``: ``"stepping"``, ``"key-prefix:4"`` or ``"delimited:_"``) as
    SplitModel keyword arguments."""
    name, _, arg = text.partition(":")
    name = name.strip().lower()
    if name == "key-prefix":
        if not arg.isdigit() or int(arg) < 1:
            raise BadInput(f"split policy {text!r}: write key-prefix:N with N the prefix length in bytes, e.g. key-prefix:4")
        return {"policy": name, "prefix_length": int(arg)}
    if name == "delimited":
        if not arg:
            raise BadInput(f"split policy {text!r}: write delimited:D with D the delimiter, e.g. delimited:_")
        return {"policy": name, "delimiter": arg.encode()}
    if arg or name not in POLICIES or name == "rows":
        raise BadInput(f"unknown split policy {text!r}; use stepping, increasing, constant, key-prefix:N or delimited:D")
    return {"policy": name}


@dataclass(frozen=True)
class SplitModel:
    """The knobs of an HBase table and region server that decide when regions split.

    ``policy``: "stepping" (HBase's default ``SteppingSplitPolicy``), "increasing",
    "constant", "key-prefix" (needs ``prefix_length``), "delimited" (needs ``delimiter``), or
    "rows": the idealized model (split at the sampled median once a region holds more than
    ``max_rows`` writes, no flushes, no delays: ``keyshape.core.autosplit.RowLimit``, the rule
    ``simulate_auto_split`` and the embedded store apply too). ``write_rate`` is rows per second when the
    writes carry no times. A cell is ``len(key) + cell_bytes`` bytes in a store file (``cell_bytes`` None: 40,
    a small cell; ``cell_size`` computes it for a family, qualifier and value) and
    ``cell_overhead`` more in the memstore (its heap size); ``compression`` is the store file's
    size over the serialized cells' (1.0 uncompressed; ``COMPRESSION_RATIOS`` has estimates). ``seed`` drives the jitter and the discharger phase.

    How long HBase takes is an input, not a constant of the model (it depends on the machine and
    its load): ``flush_seconds`` from a memstore reaching the flush size to its file being written
    and the split check (writes meanwhile go to a new memstore), ``split_seconds`` from the split
    request to the daughters being open (the parent keeps taking the writes until then; the
    daughters compact their references ``compaction_delay`` after opening). 0 (the default) is
    an instant flush and split; ``keyshape.ops.split_history.split_seconds`` measures the split
    time of a real table from hbase:meta.

    The region server's settings, HBase's defaults unless given: ``max_filesize``
    (``hbase.hregion.max.filesize``, 10 GiB), ``flush_size`` (``hbase.hregion.memstore.flush.size``,
    128 MiB), ``jitter`` (``hbase.hregion.max.filesize.jitter``, 0.25), ``compaction_min`` /
    ``compaction_max`` / ``compaction_ratio`` (``hbase.hstore.compaction.min`` / ``.max`` /
    ``.ratio``), ``cleaner_interval`` (seconds between runs of the ``CompactedHFilesDischarger``
    that frees a split's reference files, 120) and ``initial_size`` (the increasing policies'
    first split size; None: 2 x ``flush_size``). ``servers``: region servers the regions are spread
    over (1).
    """

    policy: str = "stepping"
    max_filesize: int = 10 * 1024 * _MIB
    flush_size: int = 128 * _MIB
    write_rate: float | None = None
    jitter: float = 0.25
    cell_bytes: int | None = None
    cell_overhead: int = 100
    compression: float = 1.0
    compaction_min: int = 3
    compaction_max: int = 10
    compaction_ratio: float = 1.2
    compaction_delay: float = 1.0
    cleaner_interval: float = 120.0
    flush_seconds: float = 0.0
    split_seconds: float = 0.0
    initial_size: int | None = None
    prefix_length: int | None = None
    delimiter: bytes | None = None
    max_rows: int | None = None
    servers: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise BadInput(f"unknown split policy {self.policy!r}; use one of " + ", ".join(POLICIES))
        if self.policy == "rows":
            if self.max_rows is None or self.max_rows < 1:
                raise BadInput("the 'rows' policy needs max_rows >= 1")
            return
        for name in ("max_filesize", "flush_size"):
            if int(getattr(self, name)) < 1:
                raise BadInput(f"{name} must be a positive number of bytes, got {getattr(self, name)}")
        if self.write_rate is not None and not self.write_rate > 0:
            raise BadInput(f"write_rate must be positive rows per second, got {self.write_rate}")
        if not 0 <= self.jitter < 2:
            raise BadInput(f"jitter must be in [0, 2), got {self.jitter}")
        if not 0 < self.compression <= 1.5:
            raise BadInput(f"compression is a file/data size ratio in (0, 1.5], got {self.compression}")
        if self.cleaner_interval <= 0 or self.compaction_delay < 0:
            raise BadInput("cleaner_interval must be positive and compaction_delay >= 0 seconds")
        if not (self.flush_seconds >= 0 and self.split_seconds >= 0):
            raise BadInput("flush_seconds and split_seconds are durations: give seconds >= 0")
        if self.policy == "key-prefix" and not (self.prefix_length and self.prefix_length > 0):
            raise BadInput("the key-prefix policy needs prefix_length >= 1 (the table's KeyPrefixRegionSplitPolicy.prefix_length)")
        if self.policy == "delimited" and not self.delimiter:
            raise BadInput("the delimited policy needs a delimiter (the table's DelimitedKeyPrefixRegionSplitPolicy.delimiter)")
        if self.servers < 1:
            raise BadInput(f"servers must be at least 1, got {self.servers}")

    @property
    def first_split_size(self) -> int:
        """The size a table's only region on a server splits at (2 x flush size by default)."""
        return int(self.initial_size) if self.initial_size else 2 * int(self.flush_size)


@dataclass(frozen=True)
class Stage:
    """A stretch of the run during which the table had ``regions`` regions: from ``start_seconds``
    for ``seconds`` (None without times), writes ``first_write`` on, ``writes`` of them."""

    regions: int
    start_seconds: float | None
    seconds: float | None
    first_write: int
    writes: int


@dataclass
class SplitHistory:
    """What ``SplitSimulator.finish`` returns: the final regions, the splits, and the timeline.

    - ``region_map``: the final regions; ``rows``: writes per final region
      (:mod:`keyshape.core.splitsim` says how they are divided); ``key_bytes``: key bytes per final
      region.
    - ``splits``: every split in order; ``initial_splits``: the split keys before the first write;
      ``writes``: writes replayed; ``seconds``: time of the last write (None without times).
    - ``stages``: the run cut where the region count changed (:class:`Stage`).
    - ``heat``: windows x final regions; ``window_hot_shares``: per window, the busiest LIVE
      region's share of its writes; ``window_server_hot_shares``: the same per region server;
      ``window_seconds``: per window, the time of its last write (empty without times).
    - ``model``: the split model replayed; ``lineage``: each split region's node to its two
      daughters' nodes.
    """

    region_map: RegionMap
    rows: np.ndarray
    key_bytes: np.ndarray
    splits: list[SplitEvent]
    initial_splits: tuple[bytes, ...]
    writes: int
    seconds: float | None
    stages: list[Stage]
    heat: np.ndarray
    window_hot_shares: np.ndarray
    window_server_hot_shares: np.ndarray
    window_seconds: np.ndarray
    model: SplitModel | None = None
    lineage: dict[int, tuple[int, int]] = field(default_factory=dict)

    def seconds_below(self, regions: int) -> float | None:
        """Seconds from the first write until the table first had ``regions`` or more regions
        (the whole run when it never did); None without times."""
        if self.seconds is None:
            return None
        for stage in self.stages:
            if stage.regions >= regions:
                return stage.start_seconds
        return self.seconds

    def milestones(self) -> list[dict[str, Any]]:
        """For 2, 4, 8 ... regions up to the final count: when the table first had that many."""
        out = []
        target = 2
        final = len(self.region_map)
        while target <= max(final, 2):
            reached = next((s for s in self.stages if s.regions >= target), None)
            out.append(
                {
                    "regions": target,
                    "seconds": None if reached is None else reached.start_seconds,
                    "write": None if reached is None else reached.first_write,
                }
            )
            target *= 2
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "initial_regions": len(self.initial_splits) + 1,
            "final_regions": len(self.region_map),
            "splits": len(self.splits),
            "first_split_write": self.splits[0].write_index if self.splits else None,
            "first_split_seconds": self.splits[0].seconds if self.splits else None,
            "split_writes": [e.write_index for e in self.splits],
            "split_seconds": [e.seconds for e in self.splits],
            "seconds": self.seconds,
            "stages": [
                {"regions": s.regions, "start_seconds": s.start_seconds, "seconds": s.seconds, "first_write": s.first_write, "writes": s.writes}
                for s in self.stages
            ],
            "milestones": self.milestones(),
            "window_hot_shares": [round(float(x), 4) for x in self.window_hot_shares],
            "window_seconds": [round(float(x), 3) for x in self.window_seconds],
            "model": None
            if self.model is None
            else {k: (v.decode("latin-1") if isinstance(v, bytes) else v) for k, v in self.model.__dict__.items()},
        }
