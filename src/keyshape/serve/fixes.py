"""The key-design fix serve proposes for a hot pattern, checked by replay before it is shown.

``plan_fix`` is the one function that computes a fix (the poller calls it for every table whose
pattern a key design can fix; others, such as an autopilot's "plan a fix", call it too). For the
pattern's kind it lists candidate designs, cheapest for the reads first, each a ``Fix`` (a
prefix strategy, its buckets and the fields it hashes). Each candidate's words (``Fix.text``) and
its schema file (``Fix.toml``) are both written from those three values, and the replay runs on
the schema the TOML describes, so what is read, what is loaded and what was checked are the same
design. Every candidate is replayed against the observed writes (``serve.predict``: the history's
intervals re-encoded under the design, through the split simulation) and passes only when the
replay's busiest region takes at most ``FAIR_FACTOR`` times its fair share: an even spread over
the design's buckets, or what chance alone gives the keys replayed when that is more
(``CheckedFix.fair_share``). ``FixPlan.shown`` is the first candidate that passes; the others that
pass are named as alternatives; a candidate that fails is never shown, and when none passes the
plan says so with each one's replayed share.

Candidates by pattern:

- sequential diagonal: a salt byte over the whole key (Phoenix-style); with more than one field,
  a hash of the growing leading field alone (the rows of one value stay together, and a growing
  field's values are all different, so its hash spreads);
- hot band: a hash of the leading field (its values spread; one value's rows stay in one bucket);
  with a next field, a hash of the leading field and the next one (salts WITHIN each value: one
  hot value's rows spread over the buckets, and a read of one value fans out to all of them);
- single hot row, or when nothing above passes (it is not tried otherwise): a random bucket in
  front (each write of a row goes to one of N rows; a read sums the N).
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from keyshape.schema import KeySchema
from keyshape.serve.predict import Predicted, Sampled, Traffic, busiest_share, fixed_schema, replay, sample_records

__all__ = ["FAIR_FACTOR", "CheckedFix", "Fix", "FixPlan", "candidates", "plan_fix", "prefixed_toml", "salted_toml"]

# A fix is shown only when its replay's busiest region takes at most this many times its fair
# share. 2: a design that spreads evenly lands near 1 (the replay's own noise included in the fair
# share), while one that leaves a hot value in one bucket stays at several times (70% of the writes
# in one of 16 buckets is 11x).
FAIR_FACTOR = 2.0

SEQUENTIAL, HOT_BAND, HOT_ROW = "sequential diagonal", "hot band", "single hot row"


@dataclass(frozen=True)
class Fix:
    """One key design: a ``strategy`` of ``buckets`` buckets hashing ``hash_fields`` (empty: the
    strategy takes the whole key, or nothing: phoenix, random), the table pre-split on the buckets.
    ``why`` says what it is for; ``text``, ``read_cost`` and ``toml`` are written from the design."""

    strategy: str
    buckets: int
    hash_fields: tuple[str, ...] = ()
    why: str = ""

    @property
    def prefix(self) -> dict[str, Any]:
        """The design as ``serve.predict.fixed_schema`` takes it."""
        out: dict[str, Any] = {"strategy": self.strategy, "buckets": self.buckets}
        if self.hash_fields:
            out["hash_fields"] = list(self.hash_fields)
        return out

    @property
    def setting(self) -> str:
        """The schema-file lines of the design, in words (what ``toml`` sets)."""
        text = f'key.prefix = {{ strategy = "{self.strategy}", buckets = {self.buckets} }}'
        if self.hash_fields:
            text += ", key.hash_fields = [" + ", ".join(f'"{h}"' for h in self.hash_fields) + "]"
        return text + f', [splits] algorithm = "prefix", regions = {self.buckets}'

    def read_cost(self, schema: KeySchema | None) -> str:
        """What the design costs the reads."""
        n = self.buckets
        lead = schema.fields[0].name if schema is not None else "the leading field"
        if self.strategy == "random":
            return f"a read of one row sums its {n} rows (a multi-get of {n}); a range scan fans out to {n} buckets"
        hashed = list(self.hash_fields)
        if len(hashed) == 1:
            return f"the rows of one {hashed[0]} stay in one bucket (one scan); a scan of a {hashed[0]} range fans out to {n} buckets"
        if hashed:
            return f"a read of one {hashed[0]} fans out to {n} buckets ({n} scans, merged); a get of one row stays one get"
        return f"a get of one row stays one get; a scan of a {lead} range fans out to {n} buckets ({n} scans, merged)"

    def text(self, schema: KeySchema | None) -> str:
        """The fix in words: what to set, why, and what it costs the reads."""
        return f"{self.why} ({self.setting}); {self.read_cost(schema)}."


@dataclass(frozen=True)
class CheckedFix:
    """A ``fix`` replayed against the observed writes: the busiest region's share of the replay
    (``busiest_share``), the real table's (``observed_share``), the fair share it is held to
    (``max(1 / buckets, chance alone)``), the regions and keys of the replay, and whether it passed
    (``busiest_share <= FAIR_FACTOR * fair_share``). ``reason``: why it could not be replayed."""

    fix: Fix
    busiest_share: float
    observed_share: float
    fair_share: float
    regions: int
    keys: int
    passed: bool
    text: str
    toml: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["fix"] = {"strategy": self.fix.strategy, "buckets": self.fix.buckets, "hash_fields": list(self.fix.hash_fields)}
        return out


@dataclass(frozen=True)
class FixPlan:
    """What ``plan_fix`` found: ``shown`` (the first candidate whose replay passed, else None),
    every candidate ``checked`` in order, the ``factor`` they were held to, ``reason`` when none
    passed or none could be replayed, and ``predicted`` (the shown fix's replay, for the map)."""

    pattern: str
    shown: CheckedFix | None
    checked: tuple[CheckedFix, ...]
    factor: float = FAIR_FACTOR
    reason: str = ""
    predicted: Predicted | None = None

    @property
    def alternatives(self) -> list[CheckedFix]:
        """The other candidates that passed."""
        return [c for c in self.checked if c.passed and c is not self.shown]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "factor": self.factor,
            "shown": self.shown.to_dict() if self.shown is not None else None,
            "checked": [c.to_dict() for c in self.checked],
            "reason": self.reason,
        }


# ------------------------------------------------------------------------------ schema files


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


def prefixed_toml(schema: KeySchema, prefix: dict[str, Any], regions: int | None, note: str) -> str:
    """The schema file of ``schema`` with ``key.prefix = prefix`` (its ``hash_fields`` entry, if
    any, as ``key.hash_fields``) and, with ``regions``, the table pre-split on its buckets; ""
    when the schema has no file to start from. The text is checked by loading it back (a fix that
    does not load is not offered)."""
    try:
        data = tomllib.loads(Path(schema.source).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if "phoenix" in data:
        return ""  # a Phoenix table is re-salted with `keyshape phoenix resalt`, not a TOML edit
    prefix = dict(prefix)
    hashed = prefix.pop("hash_fields", None)
    key = data.setdefault("key", {})
    key["prefix"] = prefix
    if hashed:
        key["hash_fields"] = list(hashed)
    else:
        key.pop("hash_fields", None)  # the strategy's own material (the whole key, or none)
    if regions:
        data["splits"] = {"algorithm": "prefix", "regions": regions}
    text = f"# keyshape serve's proposed fix: {note}\n" + "\n".join(_toml(data)).lstrip() + "\n"
    try:
        KeySchema.from_dict(tomllib.loads(text), source="<fix>")
    except Exception:  # noqa: BLE001 - a proposal that does not load is not shown
        return ""
    return text


def salted_toml(schema: KeySchema, buckets: int) -> str:
    """The schema file of ``schema`` with a Phoenix-style salt byte of ``buckets`` buckets in
    front of the key and the table pre-split on them ("" as ``prefixed_toml``)."""
    return prefixed_toml(schema, {"strategy": "phoenix", "buckets": buckets}, buckets, "a salt byte in front, pre-split on its buckets")


# ------------------------------------------------------------------------------ the plan


def candidates(kind: str, schema: KeySchema, buckets: int, lead: str | None = None) -> list[Fix]:
    """The designs tried for a pattern ``kind``, in the order they are preferred (see the module
    docstring); ``lead``: the field the pattern names (default: the schema's leading field)."""
    names = schema.field_names
    lead = lead if lead in names else names[0]
    nxt = names[names.index(lead) + 1] if names.index(lead) + 1 < len(names) else None
    n = buckets
    salt = Fix("phoenix", n, (), f"Put a salt byte in front of the key so consecutive {lead} values land in different buckets")
    random = Fix("random", n, (), f"Put a random bucket in front of the key: each write goes to one of {n} rows in {n} regions")
    out: list[Fix] = []
    if kind == SEQUENTIAL:
        out.append(salt)
        if len(names) > 1:
            out.append(
                Fix("mod", n, (lead,), f"Hash {lead} into the prefix to keep the rows of one {lead} together (every new {lead} hashes elsewhere)")
            )
    elif kind == HOT_BAND:
        out.append(Fix("mod", n, (lead,), f"Hash {lead} into the prefix so the values of {lead} in the hot range spread over {n} buckets"))
        if nxt is not None:
            out.append(
                Fix(
                    "mod",
                    n,
                    (lead, nxt),
                    f"Salt within each value of {lead}: hash {lead} and {nxt} into the prefix, so the rows of one hot {lead} "
                    f"spread over {n} buckets by {nxt}",
                )
            )
    out.append(random)
    return out


def _chance(sampled: Sampled, buckets: int, intervals: int, seed: int) -> float:
    """The busiest share an even spread over ``buckets`` gives the keys replayed: each key in a
    bucket drawn at random, with the replay's intervals and weights (the replay's own noise)."""
    if not sampled.records:
        return 1.0
    rng = np.random.default_rng(seed)
    where = rng.integers(0, buckets, len(sampled.records))
    m = np.zeros((intervals, buckets), dtype=np.float64)
    np.add.at(m, (np.asarray(sampled.intervals), where), np.asarray(sampled.weights))
    return busiest_share(m)


def _check(fix: Fix, schema: KeySchema, sampled: Sampled, traffic: Traffic, factor: float, seed: int) -> tuple[CheckedFix, Predicted | None]:
    note = fix.why[0].lower() + fix.why[1:]
    toml = prefixed_toml(schema, fix.prefix, fix.buckets, note)
    try:
        # the replay runs on the design the TOML describes (the schema without a file: the same
        # design through with_prefix)
        fixed = KeySchema.from_dict(tomllib.loads(toml), source="<fix>") if toml else fixed_schema(schema, fix.prefix)
    except Exception as exc:  # noqa: BLE001 - a design this schema cannot take is not shown
        return CheckedFix(fix, 1.0, 0.0, 0.0, 0, 0, False, fix.text(schema), "", f"the design does not fit the schema: {exc}"), None
    p = replay(sampled, fixed, traffic)
    if p is None:
        return CheckedFix(fix, 1.0, 0.0, 0.0, 0, 0, False, fix.text(schema), toml, "no observed key could be encoded by the design"), None
    fair = max(1.0 / max(min(fix.buckets, p.regions), 1), _chance(sampled, min(fix.buckets, p.regions), len(traffic.times), seed))
    passed = p.busiest_share <= factor * fair
    return CheckedFix(fix, p.busiest_share, p.observed_share, fair, p.regions, p.keys, passed, fix.text(schema), toml), p


def plan_fix(
    kind: str,
    schema: KeySchema,
    traffic: Traffic,
    buckets: int,
    lead: str | None = None,
    *,
    factor: float = FAIR_FACTOR,
    seed: int = 0,
    sampled: Sampled | None = None,
) -> FixPlan:
    """The checked fix for a table showing pattern ``kind`` (``SEQUENTIAL``, ``HOT_BAND``,
    ``HOT_ROW``) in ``traffic`` (its observed intervals), whose key is ``schema``: every
    ``candidates`` design replayed (``serve.predict``), the first whose busiest share is within
    ``factor`` x fair shown. Deterministic for a ``seed``."""
    sampled = sampled if sampled is not None else sample_records(schema, traffic, seed)
    if not sampled.records:
        return FixPlan(kind, None, (), factor, f"no fix can be checked: {sampled.reason}")
    checked: list[CheckedFix] = []
    shown: CheckedFix | None = None
    predicted: Predicted | None = None
    for fix in candidates(kind, schema, buckets, lead):
        if fix.strategy == "random" and shown is not None:
            break  # the random bucket (every read fans out) only when nothing cheaper for the reads spreads
        c, p = _check(fix, schema, sampled, traffic, factor, seed)
        checked.append(c)
        if c.passed and shown is None:
            shown, predicted = c, p
    reason = ""
    if shown is None:
        tried = "; ".join(f"{c.fix.setting}: {_share_text(c)}" for c in checked)
        reason = (
            "no key design checked out: replayed against the observed writes, none brings the busiest region within "
            f"{factor:g}x its fair share ({tried})"
        )
    return FixPlan(kind, shown, tuple(checked), factor, reason, predicted)


def _share_text(c: CheckedFix) -> str:
    if c.reason:
        return c.reason
    return f"busiest region {100 * c.busiest_share:.0f}% (fair {100 * c.fair_share:.1f}%)"


def plan_text(plan: FixPlan, schema: KeySchema | None, extra: Sequence[str] = ()) -> str:
    """The fix as the page and the API show it: the shown design with its replayed share, the
    other designs that passed, or why none is shown."""
    if plan.shown is None:
        return " ".join([plan.reason + ".", *extra]).strip()
    s = plan.shown
    text = s.text + f" Checked: replayed against the observed writes, the busiest region takes {100 * s.busiest_share:.0f}% "
    text += f"(fair share {100 * s.fair_share:.1f}%, limit {plan.factor:g}x; {100 * s.observed_share:.0f}% observed)."
    for alt in plan.alternatives:
        text += f" Or: {alt.text} (replayed: {100 * alt.busiest_share:.0f}%)."
    return " ".join([text, *extra]).strip()
