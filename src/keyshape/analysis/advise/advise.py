"""``advise``: the ranked row-key designs for a sample of records and a workload file.

The library form of ``keyshape advise``: read the sample (:mod:`.sample`), make the candidates
(:mod:`.candidates`), score each with keyshape's own engines (:mod:`.score`), rank them
(:mod:`.ranking`). Designs the user already has (``compare``) are scored the same way, so the
report says where they stand.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keyshape.analysis.advise.candidates import DEFAULT_MAX_DESIGNS, Design, Pruned, Shape, designs
from keyshape.analysis.advise.costs import CostModel
from keyshape.analysis.advise.ranking import rank
from keyshape.analysis.advise.sample import DEFAULT_MAX_ROWS, Sample, read_sample
from keyshape.analysis.advise.score import Score, Scorer
from keyshape.analysis.advise.spec import AdviseError, AdviseSpec, load_spec
from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError
from keyshape.schema.keyschema import KeySchema

__all__ = ["Advice", "advise", "hand_design"]

Progress = Callable[[int, int], None]
Sampler = Callable[[str | Path, AdviseSpec, int], Sample]  # (data, spec, max_rows) -> the sample scored


@dataclass
class Advice:
    """The ranked designs (best first), what was pruned, and the inputs' numbers."""

    spec: AdviseSpec
    sample: Sample
    ranked: list[Score]
    pruned: list[Pruned]
    model: CostModel
    seconds: float
    notes: list[str] = field(default_factory=list)

    @property
    def top(self) -> Score:
        return self.ranked[0]

    def hand(self) -> list[Score]:
        return [s for s in self.ranked if s.design.hand]

    def to_dict(self, top: int | None = None) -> dict[str, Any]:
        shown = self.ranked if top is None else [s for s in self.ranked if s.rank <= top or s.design.hand]
        return {
            "sample": {
                "source": self.sample.source,
                "rows": self.sample.rows,
                "span_seconds": self.sample.span_seconds,
                "types": self.sample.types,
                "data": self.sample.stats.to_dict() if self.sample.stats is not None else None,
            },
            "workload": {
                "source": self.spec.source,
                "horizon_days": self.spec.horizon_days,
                "horizon_rows": self.spec.horizon_rows,
                "rows_per_second": self.spec.rows_per_second,
                "servers": self.spec.servers,
                "region_size": self.spec.region_size,
                "patterns": [
                    {"name": p.name, "kind": p.kind, "fields": list(p.fields), "rate": p.rate, "goal_ms": p.goal_ms} for p in self.spec.patterns
                ],
            },
            "cost_model": self.model.to_dict(),
            "designs_scored": len(self.ranked),
            "seconds": round(self.seconds, 2),
            "designs": [_score_dict(s) for s in shown],
            "pruned": [{"design": p.label, "reason": p.reason} for p in self.pruned],
            "notes": self.notes,
        }


def _score_dict(s: Score) -> dict[str, Any]:
    return {
        "rank": s.rank,
        "front": s.front,
        "name": s.design.name,
        "hand": s.design.hand,
        "design": s.design.label,
        "tie": s.tie,  # the rank shared with designs equal within the model's precision (0: none)
        "write_concentration": round(s.concentration, 4),
        "write_concentration_se": round(s.concentration_se, 5),
        "region_concentration": round(s.region_concentration, 4),
        "tables": [{"table": name, "busiest_server_share": round(share, 4)} for (name, _), share in zip(s.tables, s.table_shares)],
        "weighted_cost_ms_per_s": round(s.weighted_cost, 3),
        "write_cost_ms_per_s": round(s.write_cost, 3),
        "write_amplification": s.write_amp,
        "storage_bytes": int(s.storage_bytes),
        "key_bytes": round(s.key_bytes, 2),
        "decided": s.decided,
        "reason": s.reason,
        "patterns": [c.to_dict() for c in s.patterns],
        "schema": s.design.toml,
        "indexes": [{"pattern": p.name, "schema": text} for p, _, text in s.design.indexes],
        "split_points": [to_string_binary(k) for k in s.design.split_keys],
    }


def hand_design(path: str | Path) -> Design:
    """A design the user gives as a schema file, to be scored beside the advisor's."""
    p = Path(path)
    schema = KeySchema.load(p)
    try:
        split_keys = schema.split_keys()
    except KeyshapeError as exc:
        raise AdviseError(f"{p}: cannot compute its split points ({exc})") from None
    prefix = schema.prefix
    count = prefix.count() if prefix.salted else None
    desc = any(f.type == "timestamp" and f.descending for f in schema.fields)
    shape = Shape(tuple(schema.field_names), prefix.name, int(count or 0), tuple(schema.hash_fields) if prefix.salted else (), desc)
    return Design(p.stem, shape, schema, p.read_text(encoding="utf-8"), split_keys, hand=True)


def advise(
    data: str | Path,
    workload: str | Path | AdviseSpec,
    *,
    servers: int | None = None,
    region_size: int | None = None,
    compare: Sequence[str | Path] = (),
    model: CostModel | None = None,
    max_designs: int = DEFAULT_MAX_DESIGNS,
    max_rows: int = DEFAULT_MAX_ROWS,
    progress: Progress | None = None,
    sampler: Sampler | None = None,
) -> Advice:
    """Rank row-key designs for the records in ``data`` under the workload ``workload``.

    - ``data``: Parquet, ORC or CSV records (a file, a directory or a glob) with the entity's fields.
    - ``workload``: a WORKLOAD.toml path or a parsed :class:`AdviseSpec`.
    - ``servers`` / ``region_size``: override the file's cluster shape.
    - ``compare``: schema files of designs the team already has, scored and ranked the same way.
    - ``model``: the cost constants (:class:`CostModel` defaults when None).
    - ``max_designs``: the search bound; ``max_rows``: the sample is thinned evenly past this.
    - ``progress(done, total)`` after each design scored.
    - ``sampler``: what reads ``data`` into the sample (default :func:`.sample.read_sample`, in this
      process); :func:`keyshape.spark.advise.advise` passes Spark's, which reads any size.
    """
    began = time.perf_counter()
    spec = workload if isinstance(workload, AdviseSpec) else load_spec(workload)
    spec = spec.with_cluster(servers, region_size)
    sample = (sampler or read_sample)(data, spec, max_rows)
    if sample.rows < 100:
        raise AdviseError(f"{data}: {sample.rows} records are too few to predict anything; give at least 100 (thousands are better)")
    hands = [hand_design(p) for p in compare]
    found, pruned = designs(spec, sample, max_designs)
    todo = found + hands
    scorer = Scorer(spec, sample, model)
    scores: list[Score] = []
    if progress is not None:
        progress(0, len(todo))
    for i, d in enumerate(todo):
        scores.append(scorer.score(d))
        if progress is not None:
            progress(i + 1, len(todo))
    ranked = rank(scores)
    notes = []
    stats = sample.stats
    if stats is not None and sample.thinning > 1:
        how = "a uniform sample drawn by Spark" if stats.engine == "spark" else "an even cut"
        notes.append(
            f"scored on {sample.rows:,} of {stats.rows:,} records ({how}); an entity's rows at the horizon are its share of the sample "
            "times the workload's rows, whatever the cut"
        )
    if stats is not None:
        skewed = max(stats.heavy, key=stats.top_share, default=None)
        if skewed is not None and stats.top_share(skewed) >= 0.01:
            value, count = stats.heavy[skewed][0]
            notes.append(
                f"{skewed} {value!r} holds {count / stats.rows:.1%} of all records: a design leading with {skewed} writes them to one region"
            )
    return Advice(spec, sample, ranked, pruned, scorer.model, time.perf_counter() - began, notes)
