"""Name what a live table's heat map shows, with its cause and a concrete fix.

The verdict (balanced / skewed / hotspot) is the analyzer's (``analysis.verdict`` through
``ops.live.live_analysis``); this module only names the PATTERN behind it, ties it to the key
schema's field that causes it when a schema is known, and proposes a change:

- ``sequential diagonal``: the busiest region walks up (or down) the key space, or the schema's
  leading field grows in write order (a sequence, a time) with no prefix in front: every new key
  sorts after the last, so the last region takes the writes. Fix: a salted copy of the schema,
  given as TOML that loads (a Phoenix-style salt byte, pre-split on its buckets).
- ``hot band``: one key range stays the busiest across the intervals. Fix: hash the leading field
  into a prefix, or split that range (``keyshape split-plan``).
- ``balanced``: no change needed.
- ``uneven``: skewed without either shape; the analyzer's advice stands.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from keyshape.analysis import Analysis
from keyshape.analysis.timeline import hottest, moving_direction
from keyshape.analysis.verdict import BALANCED, SchemaHints
from keyshape.schema import KeySchema

__all__ = ["Pattern", "name_pattern", "salted_toml"]

SEQUENTIAL, HOT_BAND, BALANCED_PATTERN, UNEVEN = "sequential diagonal", "hot band", "balanced", "uneven"


@dataclass(frozen=True)
class Pattern:
    """A named pattern: ``cause`` says why in the schema's terms, ``fix`` what to change,
    ``fix_toml`` a whole schema file with the change when one can be written (else "")."""

    name: str
    cause: str
    fix: str
    field: str = ""
    fix_toml: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML for {type(v).__name__}")


def _toml(data: dict[str, Any], path: str = "") -> list[str]:
    """A small TOML writer for schema files: scalars and inline tables first, then sub-tables and
    arrays of tables (what a schema file holds)."""
    lines: list[str] = []

    def inline(v: Any) -> bool:  # a nested table of plain values reads best on one line
        return bool(path) and isinstance(v, dict) and not any(isinstance(x, (dict, list)) for x in v.values())

    plain = {
        k: v
        for k, v in data.items()
        if inline(v) or (not isinstance(v, dict) and not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v)))
    }
    for k, v in plain.items():
        lines.append(f"{k} = {_toml_value(v)}")
    for k, v in data.items():
        if k in plain:
            continue
        full = f"{path}.{k}" if path else k
        if isinstance(v, dict):
            lines += ["", f"[{full}]", *_toml(v, full)]
        else:
            for item in v:
                lines += ["", f"[[{full}]]", *_toml(item, full)]
    return lines


def salted_toml(schema: KeySchema, buckets: int) -> str:
    """The schema file of ``schema`` with a Phoenix-style salt byte of ``buckets`` buckets in
    front of the key and the table pre-split on them; "" when the schema has no file to start
    from. The text is checked by loading it back (a fix that does not load is not offered)."""
    try:
        data = tomllib.loads(Path(schema.source).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if "phoenix" in data:
        return ""  # a Phoenix table is re-salted with `keyshape phoenix resalt`, not a TOML edit
    data.setdefault("key", {})["prefix"] = {"strategy": "phoenix", "buckets": buckets}
    data["splits"] = {"algorithm": "prefix", "regions": buckets}
    text = "# keyshape serve's proposed fix: a salt byte in front, pre-split on its buckets\n" + "\n".join(_toml(data)).lstrip() + "\n"
    try:
        KeySchema.from_dict(tomllib.loads(text), source="<fix>")
    except Exception:  # noqa: BLE001 - a proposal that does not load is not shown
        return ""
    return text


def _buckets(analysis: Analysis) -> int:
    # As the analyzer advises: one per region, never fewer than 16 or two per server, at most 256.
    return min(max(16, 2 * analysis.servers, len(analysis.regions)), 256)


def name_pattern(analysis: Analysis, hints: SchemaHints | None = None, schema: KeySchema | None = None) -> Pattern:
    """The pattern of a live ``analysis`` (``ops.live.live_analysis``), its cause and its fix."""
    hints = hints or SchemaHints()
    heat = np.asarray(analysis.heat)
    hot = hottest(heat) if heat.size else np.zeros(0, dtype=np.int64)
    direction = moving_direction(hot) if hot.size else 0.0
    seen = int(np.unique(hot).size) if hot.size else 0
    regions = len(analysis.regions)
    busiest = max(analysis.regions, key=lambda r: r.share) if analysis.regions else None
    where = (busiest.start_text or busiest.label) if busiest is not None else ""
    if analysis.verdict == BALANCED:
        return Pattern(
            BALANCED_PATTERN,
            f"writes spread over {regions} regions: at a typical moment the busiest takes "
            f"{100 * analysis.hot_window_share:.0f}% (chance alone: {100 * analysis.hot_window_baseline:.0f}%)",
            "No change needed.",
        )
    walking = seen >= 2 and abs(direction) >= 0.8
    mono = hints.monotonic_field
    if mono or walking or (regions == 1 and hints.prefix_strategy in (None, "none")):
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
        n = _buckets(analysis)
        toml = salted_toml(schema, n) if schema is not None else ""
        fix = (
            f'Put a salt byte in front of {lead or "the key"} (key.prefix = {{ strategy = "phoenix", buckets = {n} }}) and pre-split on '
            f'the buckets ([splits] algorithm = "prefix", regions = {n}); reads of a {lead or "key"} range then fan out to every bucket.'
        )
        if hints.spread_field:
            spread = hints.spread_field
            fix += f' Or hash {spread} into the prefix (hash_fields = ["{spread}"]) to keep the rows of one {spread} together.'
        return Pattern(SEQUENTIAL, cause, fix, lead, toml)
    if seen <= 2 and busiest is not None:
        lead = hints.leading_field or ""
        cause = f"the key range at {where or '(start)'} stays the busiest ({100 * busiest.share:.0f}% of the writes)"
        if lead:
            cause += f": values of the leading field {lead} in that range take most writes"
        fix = (
            f'Hash {lead or "the leading field"} into a prefix (key.prefix = {{ strategy = "mod", buckets = {_buckets(analysis)} }}'
            + (f', hash_fields = ["{lead}"]' if lead else "")
            + ") so those values spread, or split that range now (keyshape split-plan --table ...)."
        )
        return Pattern(HOT_BAND, cause, fix, lead)
    return Pattern(UNEVEN, "some regions take more writes than others; see the reasons", analysis.advice[0] if analysis.advice else "")
