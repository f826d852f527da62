"""Alert thresholds of ``keyshape serve`` (``--config FILE``, TOML), per table or shell pattern::

    [alerts."ns:*"]                      # every table of namespace ns
    busiest_region_share = 0.5           # alert when the busiest region takes more than 50 %
    busiest_server_share = 0.8           # ... or the busiest region server more than 80 %
    patterns = ["sequential diagonal", "single hot row"]   # ... or the table shows one of these
    verdict = "hotspot"                  # ... or its verdict is this or worse (skewed, hotspot)

    [alerts.orders]                      # a table of the default namespace
    patterns = ["periodic bursts"]

Every rule whose pattern matches a table applies to it (``serve.poller.matches``). The shares are
the analyzer's: the busiest region's (server's) share of the writes at a typical moment. A bad
file is one line naming the file, the key and the fix (``BadInput``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keyshape.errors import BadInput
from keyshape.serve.patterns import NAMES
from keyshape.serve.poller import matches

__all__ = ["SEVERITY", "Alert", "Rule", "evaluate", "load_alerts", "parse_alerts"]

SEVERITY = {"idle": 0, "balanced": 0, "skewed": 1, "hotspot": 2}
_KEYS = ("busiest_region_share", "busiest_server_share", "patterns", "verdict")


@dataclass(frozen=True)
class Rule:
    """One ``[alerts."PATTERN"]`` table."""

    tables: str
    busiest_region_share: float | None = None
    busiest_server_share: float | None = None
    patterns: tuple[str, ...] = ()
    verdict: str | None = None

    def kinds(self) -> list[str]:
        """The alert kinds this rule sets (the ``kind`` label of ``/metrics``' gauges)."""
        out = [k for k in ("busiest_region_share", "busiest_server_share") if getattr(self, k) is not None]
        return out + (["pattern"] if self.patterns else []) + (["verdict"] if self.verdict else [])


@dataclass(frozen=True)
class Alert:
    """One rule's kind on one table: ``firing`` or not, and the line that says why."""

    table: str
    rule: str
    kind: str
    firing: bool
    line: str


def _share(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise BadInput(f"{where} = {value!r}: give a share between 0 and 1, e.g. 0.5 for 50 %")
    return float(value)


def parse_alerts(data: Mapping[str, Any], source: str = "<config>") -> list[Rule]:
    """The rules of a parsed config file; ``BadInput`` (one line) when something is wrong."""
    unknown = sorted(set(data) - {"alerts"})
    if unknown:
        raise BadInput(f'{source}: unknown section {unknown[0]!r}: the file holds [alerts."TABLE-PATTERN"] tables')
    alerts = data.get("alerts", {})
    if not isinstance(alerts, dict):
        raise BadInput(f'{source}: alerts must be tables, e.g. [alerts."ns:*"] with busiest_region_share = 0.5')
    rules = []
    for pattern, body in alerts.items():
        where = f'{source}: alerts."{pattern}"'
        if not isinstance(body, dict):
            raise BadInput(f"{where} must be a table of thresholds ({', '.join(_KEYS)})")
        extra = sorted(set(body) - set(_KEYS))
        if extra:
            raise BadInput(f"{where}.{extra[0]}: unknown key; give {', '.join(_KEYS)}")
        if not body:
            raise BadInput(f"{where} sets no threshold; give one of {', '.join(_KEYS)}")
        names = body.get("patterns", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise BadInput(f'{where}.patterns must be a list of pattern names, e.g. ["sequential diagonal"]')
        for n in names:
            if n not in NAMES:
                raise BadInput(f"{where}.patterns: unknown pattern {n!r}; the patterns are {', '.join(repr(x) for x in NAMES)}")
        verdict = body.get("verdict")
        if verdict is not None and verdict not in ("skewed", "hotspot"):
            raise BadInput(f'{where}.verdict = {verdict!r}: give "skewed" or "hotspot" (alert at that verdict or worse)')
        rules.append(
            Rule(
                str(pattern),
                _share(f"{where}.busiest_region_share", body["busiest_region_share"]) if "busiest_region_share" in body else None,
                _share(f"{where}.busiest_server_share", body["busiest_server_share"]) if "busiest_server_share" in body else None,
                tuple(names),
                verdict,
            )
        )
    return rules


def load_alerts(path: str | Path | None) -> list[Rule]:
    """The rules of the TOML file at ``path`` ([] for None)."""
    if path is None:
        return []
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f'--config {str(path)!r}: cannot read it ({exc.strerror or exc}); give a TOML file of [alerts."TABLE"] thresholds') from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"--config {str(path)!r} is not TOML: {exc}") from None
    return parse_alerts(data, str(path))


def evaluate(rules: Sequence[Rule], verdict: Mapping[str, Any]) -> list[Alert]:
    """Every kind of every rule matching ``verdict['table']``, firing or not (``/metrics`` shows
    both; ``serve --once`` fails on the firing ones)."""
    table = str(verdict.get("table", ""))
    region = float(verdict.get("busiest_region_share") or 0.0)
    server = float(verdict.get("busiest_server_share") or 0.0)
    name = str((verdict.get("pattern") or {}).get("name", "") if isinstance(verdict.get("pattern"), dict) else verdict.get("pattern") or "")
    severity = SEVERITY.get(str(verdict.get("verdict")), 0)
    out = []
    for rule in rules:
        if not matches(table, [rule.tables]):
            continue
        if rule.busiest_region_share is not None:
            fire = region > rule.busiest_region_share
            out.append(
                Alert(
                    table,
                    rule.tables,
                    "busiest_region_share",
                    fire,
                    f"busiest region takes {100 * region:.0f}% (limit {100 * rule.busiest_region_share:.0f}%)",
                )
            )
        if rule.busiest_server_share is not None:
            fire = server > rule.busiest_server_share
            out.append(
                Alert(
                    table,
                    rule.tables,
                    "busiest_server_share",
                    fire,
                    f"busiest server takes {100 * server:.0f}% (limit {100 * rule.busiest_server_share:.0f}%)",
                )
            )
        if rule.patterns:
            out.append(Alert(table, rule.tables, "pattern", name in rule.patterns, f"pattern {name or 'none'}"))
        if rule.verdict:
            out.append(Alert(table, rule.tables, "verdict", severity >= SEVERITY[rule.verdict], f"verdict {verdict.get('verdict')}"))
    return out
