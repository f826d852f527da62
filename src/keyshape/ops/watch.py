"""Watch a live table and judge how its requests spread: the whole of ``keyshape watch``,
callable from Python.

``watch_table`` polls the table's region loads (:func:`keyshape.ops.live.watch`, which follows
regions through splits and merges), then either judges the counted requests with the analyzer's
verdict (with the schema's hints and decoded region labels when a schema is given) or, when the
table took no request of the metric while watched, says it is idle with its regions as they
stand. It returns a :class:`WatchRun`; the CLI prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from keyshape.analysis import Analysis
from keyshape.analysis.designs import schema_hints, with_key_labels
from keyshape.core.hbytes import to_string_binary
from keyshape.errors import BadInput
from keyshape.ops.live import LiveHeat, Sample, ServerShare, live_analysis, shares_by_server, watch
from keyshape.schema import KeySchema
from keyshape.store.base import Store

__all__ = ["WatchRun", "watch_table"]


@dataclass(frozen=True)
class WatchRun:
    """What :func:`watch_table` saw of ``table``.

    - ``heat``: every poll, from the baseline on.
    - ``metric``: ``"write"`` or ``"read"``, the request counter judged.
    - ``seconds``: from the first poll to the last (the interval when there was one sample).
    - ``analysis``: the verdict on the counted requests; None when the table was idle.
    - ``servers``: each region server's share of them (empty when idle).
    """

    table: str
    metric: str
    heat: LiveHeat
    seconds: float
    analysis: Analysis | None = None
    servers: list[ServerShare] = field(default_factory=list)

    @property
    def idle(self) -> bool:
        """True when no request of the metric was counted: there is nothing to judge."""
        return self.analysis is None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the analysis's own (``Analysis.to_dict``), or for an idle table its
        verdict ``idle`` with the regions as they stand (keys as toStringBinary)."""
        if self.analysis is not None:
            return self.analysis.to_dict()
        return {
            "name": self.table,
            "verdict": "idle",
            "samples": len(self.heat.samples),
            "seconds": self.seconds,
            "metric": self.metric,
            "regions": [
                {"start": to_string_binary(r.start), "end": to_string_binary(r.end), "server": r.server, "store_size_bytes": r.store_size_bytes}
                for r in self.heat.latest
            ],
        }


def watch_table(
    store: Store,
    table: str,
    interval: float = 5.0,
    samples: int | None = None,
    *,
    duration: float | None = None,
    metric: str = "write",
    schema: KeySchema | None = None,
    source: str = "",
    on_sample: Callable[[Sample], Any] | None = None,
    count_splits: bool = True,
) -> WatchRun:
    """Poll ``table``'s region loads in ``store`` and judge the spread of its ``metric`` requests.

    - ``interval``: seconds between polls (default 5).
    - ``samples`` / ``duration``: stop after that many polls after the baseline, or that many
      seconds; with neither, until Ctrl-C (which ends the watch and keeps what was seen).
    - ``metric``: ``"write"`` (default) or ``"read"`` requests.
    - ``schema``: the table's key schema, for the verdict's hints and decoded region labels.
    - ``source``: where the counts come from, as the analysis says it.
    - ``on_sample(sample)``: called with each poll's deltas; returning False stops the watch.
    - ``count_splits``: count the rows of regions a split makes (key-only scans) so a parent's
      writes go where they are (default True; see :func:`keyshape.ops.live.watch`).

    ``TableNotFound`` before the first interval when the table is missing; :class:`BadInput` when
    the watch stopped before its second poll (nothing to compare). The store stays open.
    """
    store.regions(table)  # an unknown table fails now, not after the first interval
    heat = watch(store, table, interval, samples, duration=duration, on_sample=on_sample, count_splits=count_splits)
    if not heat.samples:
        raise BadInput("stopped before the second poll: nothing to show")
    seconds = heat.samples[-1].at - heat.samples[0].at if len(heat.samples) > 1 else interval
    if not heat.matrix(metric).sum():
        return WatchRun(table, metric, heat, seconds)
    analysis = live_analysis(heat, name=table, metric=metric, source=source, hints=schema_hints(schema) if schema is not None else None)
    if schema is not None:
        analysis = with_key_labels(analysis, schema)
    return WatchRun(table, metric, heat, seconds, analysis, shares_by_server(heat, analysis))
