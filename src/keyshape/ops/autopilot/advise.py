"""Stage 3, advise: advise's ranked designs for the learned workload, the table's current design
scored beside them (always: ``compare`` with its own schema file), on the live sample."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keyshape.analysis.advise import Advice, advise
from keyshape.analysis.advise.sample import sample_from_table
from keyshape.analysis.advise.score import Score
from keyshape.errors import BadInput
from keyshape.ops.autopilot.learn import Learned, records_table

__all__ = ["Advised", "advise_stage"]


@dataclass
class Advised:
    """advise's result and the current design's own score in it."""

    advice: Advice
    current: Score

    def to_dict(self, top: int = 5) -> dict[str, Any]:
        d = self.advice.to_dict(top)
        d["current"] = self.current.design.name
        return d


def advise_stage(learned: Learned, max_designs: int = 40) -> Advised:
    """Rank designs for ``learned`` (its spec, its decoded sample), the current schema among them."""
    source = Path(learned.schema.source)
    if not source.is_file():
        raise BadInput(f"the current design must be a schema file to be scored beside the candidates; got {learned.schema.source!r}")
    arrow = records_table(learned.schema, learned.records)
    where = f"live sample of {learned.table}"
    advice = advise(
        where,
        learned.spec,
        compare=[source],
        max_designs=max_designs,
        sampler=lambda _data, spec, _rows: sample_from_table(arrow, spec, where),
    )
    current = next(s for s in advice.ranked if s.design.hand)
    return Advised(advice, current)
