"""Stage 5, prove (opt-in): the chosen design and the current one loaded into scratch tables of
the same cluster and measured (advise's ``prove``: throttled chunks, tables ``<prefix>_*`` dropped
after, also on Ctrl-C); the chosen design's measured busiest-server share is held against the
prediction (``safety.PROOF_FACTOR``)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from keyshape.analysis.advise.prove import Measured, Proof, prove
from keyshape.analysis.advise.score import Score
from keyshape.ops.autopilot.advise import Advised
from keyshape.ops.autopilot.safety import proof_problems
from keyshape.store.base import Store

__all__ = ["Proved", "prove_stage"]


@dataclass
class Proved:
    proof: Proof
    chosen: Measured | None
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"proof": self.proof.to_dict(), "chosen": self.chosen.to_dict() if self.chosen else None, "contradictions": list(self.problems)}


def prove_stage(advised: Advised, chosen: Score, store: Store, prefix: str = "ksap_prove") -> Proved:
    """Measure ``chosen`` and the current design on ``store`` (scratch tables, dropped after).

    The run's tables are named ``<prefix>_<random>_*``; whatever way the proof ends (Ctrl-C
    included) every table of that name that exists is dropped: a Ctrl-C that lands while a
    table is being created leaves one the proof never learned it had."""
    run_prefix = f"{prefix}_{secrets.token_hex(3)}"
    try:
        proof = prove(advised.advice, store, k=1, prefix=run_prefix, chosen=[chosen, advised.current])
    finally:
        _drop(store, run_prefix)
    mine = next((m for m in proof.designs if m.name == chosen.design.name), None)
    return Proved(proof, mine, proof_problems(mine))


def _drop(store: Store, run_prefix: str) -> None:
    for name in store.list_tables():
        if name.split(":")[-1].startswith(run_prefix + "_"):
            store.delete_table(name)
