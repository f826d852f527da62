"""The advisor's workload file (WORKLOAD.toml): what is written, what is read, for how long, where.

::

    [entity]                 id = ["user_id", "order_id"]   fields that together identify a record
                             time = "order_time"             the event-time field (optional)
    [write]                  rows_per_second = 200, growth = 0.5 (rate growth per year, 0.5 = +50 %),
                             updates = 0.05, deletes = 0.0 (shares of the writes),
                             value_bytes = 120 (per row besides the key; default: measured on the sample)
    [horizon]                days = 365                      how long the table must hold up
    [cluster]                servers = 3, region_size = "10GiB", flush_size = "128MiB"
    [types]                  user_id = "string"              overrides of the inferred field types
    [data]                   encoding = "latin-1"            the text encoding of a CSV sample (default UTF-8)
    [[pattern]]              name, kind, fields, rate (per second), goal_ms,
                             window = "1h" (kind window), limit = 10 (kind latest)

Pattern kinds: ``get`` (one record by its fields), ``prefix`` (every record with these field
values), ``window`` (the records with these values whose event time is in the last ``window``),
``latest`` (the newest ``limit`` records with these values), ``scan`` (a full or range scan;
``share`` = the fraction of the table read, default 1) and ``lookup`` (records by a field that
need not lead the key: a secondary lookup). Every mistake is one :class:`AdviseError` line naming
the file, the key and the fix.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keyshape.errors import BadInput
from keyshape.schema.fields import FIELD_TYPES

__all__ = ["AdviseError", "PATTERN_KINDS", "Pattern", "AdviseSpec", "load_spec", "parse_spec", "parse_size", "parse_duration"]

PATTERN_KINDS = ("get", "prefix", "window", "latest", "scan", "lookup")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)?\s*$", re.IGNORECASE)
_UNITS = {"b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w|y)\s*$")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}


class AdviseError(BadInput):
    """A bad workload file or sample: one line, what is wrong and how to fix it."""


def parse_size(text: str | int, where: str = "size") -> int:
    """Bytes of ``"10GiB"``, ``"128MiB"``, ``"500MB"`` or a plain integer."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text <= 0:
            raise AdviseError(f"{where}: must be positive, got {text}")
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise AdviseError(f'{where}: {text!r} is not a size; write e.g. "10GiB" or "128MiB"')
    n = int(float(m.group(1)) * _UNITS[(m.group(2) or "b").lower()])
    if n <= 0:
        raise AdviseError(f"{where}: must be positive, got {text!r}")
    return n


def parse_duration(text: str | int | float, where: str = "duration") -> float:
    """Seconds of ``"1h"``, ``"30d"``, ``"500ms"`` or a plain number of seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        m = _DURATION.match(str(text))
        if not m:
            raise AdviseError(f'{where}: {text!r} is not a duration; write e.g. "1h", "30d" or "500ms"')
        seconds = float(m.group(1)) * _SECONDS[m.group(2)]
    if seconds <= 0:
        raise AdviseError(f"{where}: must be positive, got {text!r}")
    return seconds


@dataclass(frozen=True)
class Pattern:
    """One access pattern: ``kind`` over ``fields`` at ``rate`` per second, answered within ``goal_ms``."""

    name: str
    kind: str
    fields: tuple[str, ...]
    rate: float
    goal_ms: float
    window_s: float = 0.0  # kind window: how far back from the newest event
    limit: int = 0  # kind latest: how many of the newest
    share: float = 1.0  # kind scan: the fraction of the table read


@dataclass(frozen=True)
class AdviseSpec:
    """A parsed WORKLOAD.toml (see the module docstring)."""

    id_fields: tuple[str, ...]
    time_field: str | None
    rows_per_second: float
    growth: float
    updates: float
    deletes: float
    value_bytes: int | None
    horizon_days: float
    servers: int
    region_size: int
    flush_size: int
    types: dict[str, str]
    patterns: tuple[Pattern, ...]
    source: str = "<dict>"
    families: tuple[str, ...] = ("d",)
    encoding: str = "utf-8"  # a CSV sample's text encoding ([data] encoding); keys are written as UTF-8

    @property
    def horizon_rows(self) -> int:
        """Rows written over the horizon at the rate, growing linearly by ``growth`` a year."""
        seconds = self.horizon_days * 86400
        years = self.horizon_days / 365
        return max(1, int(self.rows_per_second * seconds * (1 + self.growth * years / 2)))

    @property
    def rate_at_horizon(self) -> float:
        """Rows written per second at the end of the horizon (the rate grown linearly by ``growth``)."""
        return self.rows_per_second * max(0.0, 1 + self.growth * self.horizon_days / 365)

    def fields_used(self) -> set[str]:
        used = set(self.id_fields) | {f for p in self.patterns for f in p.fields}
        if self.time_field:
            used.add(self.time_field)
        return used

    def with_cluster(self, servers: int | None = None, region_size: int | None = None) -> AdviseSpec:
        """This spec with the command line's cluster shape in place of the file's."""
        from dataclasses import replace

        return replace(
            self, servers=servers if servers is not None else self.servers, region_size=region_size if region_size is not None else self.region_size
        )


class _Table:
    """One TOML table read strictly: unknown keys are errors (a typo must not be silently ignored)."""

    def __init__(self, data: Any, where: str, source: str) -> None:
        if not isinstance(data, dict):
            raise AdviseError(f"{source}: {where} must be a table, got {type(data).__name__}")
        self.data, self.where, self.source = data, where, source
        self.seen: set[str] = set()

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, kinds: tuple[type, ...], default: Any = None, required: bool = False) -> Any:
        self.seen.add(key)
        if key not in self.data:
            if required:
                raise AdviseError(f"{self.source}: {self._name(key)} is missing; add it")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            want = " or ".join(k.__name__ for k in kinds)
            raise AdviseError(f"{self.source}: {self._name(key)} must be {want}, got {value!r}")
        return value

    def number(self, key: str, default: float | None = None, *, required: bool = False, minimum: float = 0.0, maximum: float | None = None) -> float:
        value = self.get(key, (int, float), default, required)
        if value is None:
            return default  # type: ignore[return-value]
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"between {minimum:g} and {maximum:g}" if maximum is not None else f"at least {minimum:g}"
            raise AdviseError(f"{self.source}: {self._name(key)} must be {bound}, got {value!r}")
        return float(value)

    def done(self) -> None:
        extra = sorted(set(self.data) - self.seen)
        if extra:
            raise AdviseError(f"{self.source}: unknown key {self._name(extra[0])}; known: {', '.join(sorted(self.seen))}")


def _names(value: Any, where: str, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise AdviseError(f'{source}: {where} must be a list of field names, e.g. ["user_id"]')
    if len(set(value)) != len(value):
        raise AdviseError(f"{source}: {where} names a field twice: {value}")
    return tuple(value)


def _pattern(i: int, data: Any, source: str, time_field: str | None) -> Pattern:
    t = _Table(data, f"pattern[{i}]", source)
    kind = t.get("kind", (str,), required=True)
    if kind not in PATTERN_KINDS:
        raise AdviseError(f"{source}: pattern[{i}].kind {kind!r} is not a pattern kind; use one of {', '.join(PATTERN_KINDS)}")
    name = t.get("name", (str,), f"{kind} {i}")
    fields = _names(t.get("fields", (list,), []), f"pattern[{i}].fields", source)
    if kind in ("get", "prefix", "lookup") and not fields:
        raise AdviseError(f"{source}: pattern[{i}] ({kind}) needs fields = [...], the fields its reads give")
    rate = t.number("rate", required=True)
    goal = t.number("goal_ms", 100.0, minimum=0.001)
    window = t.get("window", (str, int, float))
    limit = t.get("limit", (int,))
    share = t.number("share", 1.0, minimum=0.0, maximum=1.0)
    t.done()
    if kind in ("window", "latest") and time_field is None:
        raise AdviseError(f'{source}: pattern[{i}] ({kind}) reads by event time, but [entity] has no time field; add time = "FIELD"')
    if kind == "window" and window is None:
        raise AdviseError(f'{source}: pattern[{i}] (window) needs window = "1h" (how far back it reads)')
    if kind == "latest" and (limit is None or limit < 1):
        raise AdviseError(f"{source}: pattern[{i}] (latest) needs limit = N, at least 1 (how many newest records it reads)")
    return Pattern(
        name=name,
        kind=kind,
        fields=fields,
        rate=rate,
        goal_ms=goal,
        window_s=parse_duration(window, f"{source}: pattern[{i}].window") if window is not None else 0.0,
        limit=int(limit or 0),
        share=share,
    )


def parse_spec(data: dict[str, Any], source: str = "<dict>") -> AdviseSpec:
    """An :class:`AdviseSpec` from the TOML structure; :class:`AdviseError` (one line) if bad."""
    top = _Table(data, "", source)
    unknown = sorted(set(data) - {"entity", "write", "horizon", "cluster", "types", "data", "pattern"})
    if unknown:
        raise AdviseError(f"{source}: unknown section {unknown[0]}; known: [entity], [write], [horizon], [cluster], [types], [data], [[pattern]]")
    entity = _Table(top.get("entity", (dict,), required=True), "entity", source)
    ids = _names(entity.get("id", (list,), required=True), "entity.id", source)
    if not ids:
        raise AdviseError(f"{source}: entity.id is empty; name the fields that identify a record")
    time_field = entity.get("time", (str,))
    entity.done()
    write = _Table(top.get("write", (dict,), required=True), "write", source)
    rps = write.number("rows_per_second", required=True, minimum=0.001)
    growth = write.number("growth", 0.0, minimum=-0.99)
    updates = write.number("updates", 0.0, maximum=1.0)
    deletes = write.number("deletes", 0.0, maximum=1.0)
    value_bytes = write.get("value_bytes", (int,))
    if value_bytes is not None and value_bytes < 0:
        raise AdviseError(f"{source}: write.value_bytes must not be negative, got {value_bytes}")
    write.done()
    horizon = _Table(top.get("horizon", (dict,), {}), "horizon", source)
    days = horizon.number("days", 365.0, minimum=0.001)
    horizon.done()
    cluster = _Table(top.get("cluster", (dict,), {}), "cluster", source)
    servers = cluster.get("servers", (int,), 3)
    if servers < 1:
        raise AdviseError(f"{source}: cluster.servers must be at least 1, got {servers}")
    region_size = parse_size(cluster.get("region_size", (str, int), "10GiB"), f"{source}: cluster.region_size")
    flush_size = parse_size(cluster.get("flush_size", (str, int), "128MiB"), f"{source}: cluster.flush_size")
    cluster.done()
    data_t = _Table(top.get("data", (dict,), {}), "data", source)
    encoding = data_t.get("encoding", (str,), "utf-8")
    data_t.done()
    import codecs

    try:
        codecs.lookup(encoding)
    except LookupError:
        raise AdviseError(f'{source}: data.encoding {encoding!r} is not a text encoding; write e.g. "latin-1" or "cp1252"') from None
    types_t = top.get("types", (dict,), {})
    for name, kind in types_t.items():
        if kind not in FIELD_TYPES:
            raise AdviseError(f"{source}: types.{name} = {kind!r} is not a field type; use one of {', '.join(FIELD_TYPES)}")
    raw_patterns = top.get("pattern", (list,), [])
    if not raw_patterns:
        raise AdviseError(f"{source}: no [[pattern]]; describe at least one access pattern")
    patterns = tuple(_pattern(i, p, source, time_field) for i, p in enumerate(raw_patterns))
    for i, p in enumerate(patterns):
        if p.window_s > days * 86400:
            raise AdviseError(
                f"{source}: pattern[{i}].window ({p.window_s / 86400:g} days) is longer than the horizon ({days:g} days): "
                "no table holds that much; shorten the window or lengthen [horizon] days"
            )
    names = [p.name for p in patterns]
    if len(set(names)) != len(names):
        raise AdviseError(f"{source}: two patterns share a name; give each pattern its own name")
    top.done()
    return AdviseSpec(
        id_fields=ids,
        time_field=time_field,
        rows_per_second=rps,
        growth=growth,
        updates=updates,
        deletes=deletes,
        value_bytes=value_bytes,
        horizon_days=days,
        servers=servers,
        region_size=region_size,
        flush_size=flush_size,
        types=dict(types_t),
        patterns=patterns,
        source=source,
        encoding=encoding,
    )


def load_spec(path: str | Path) -> AdviseSpec:
    """Read WORKLOAD.toml; :class:`AdviseError` (one line, file + key + fix) if it is bad."""
    p = Path(path)
    try:
        with p.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise AdviseError(f"{p}: no such workload file") from None
    except tomllib.TOMLDecodeError as exc:
        raise AdviseError(f"{p}: not valid TOML ({exc})") from None
    return parse_spec(data, str(p))
