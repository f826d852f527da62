"""The autopilot's refusals: it never acts on a table it could not read completely, on a cluster
whose servers are unsettled (dead servers, regions in transition), or when the proof on the real
cluster contradicts the replay by more than ``PROOF_FACTOR``. Each check returns the reasons
("" none); ``refuse`` raises them as one :class:`~keyshape.errors.Refused` line."""

from __future__ import annotations

from typing import Any

from keyshape.errors import Refused
from keyshape.store.base import Store

__all__ = ["PROOF_FACTOR", "cluster_problems", "proof_problems", "refuse"]

PROOF_FACTOR = 2.0  # the measured busiest-server share may exceed the predicted one by this factor at most


def cluster_problems(store: Store) -> list[str]:
    """Dead region servers and regions in transition, as the master reports them (a store that
    cannot say, e.g. the embedded one, has none)."""
    out: list[str] = []
    dead = getattr(store, "dead_servers", None)
    if callable(dead):
        names = dead()
        if names:
            out.append(f"the master lists dead region servers ({', '.join(names)}); wait until their regions are reassigned")
    rit = getattr(store, "regions_in_transition", None)
    if callable(rit):
        moving = rit()
        if moving:
            out.append(f"{len(moving)} region(s) in transition (e.g. {moving[0]}); wait until they are open")
    return out


def proof_problems(measured: Any, factor: float = PROOF_FACTOR) -> list[str]:
    """Where the proof (advise's ``Measured`` of the chosen design) contradicts the prediction."""
    if measured is None:
        return []
    if measured.measured_share > factor * max(measured.predicted_share, 1e-9) + 1e-9:
        return [
            f"the proof measured the busiest server at {measured.measured_share:.0%} of the writes, more than {factor:g} x the "
            f"predicted {measured.predicted_share:.0%}: the prediction does not hold on this cluster"
        ]
    return []


def refuse(what: str, reasons: list[str]) -> None:
    """Raise :class:`Refused` for ``what`` when there are ``reasons``."""
    if reasons:
        raise Refused(f"autopilot will not {what}: " + "; ".join(reasons))
