"""Hotspot analysis: how rows and writes spread over regions, in total and over time.

``analyze`` (module ``analyze``) works on any stream of keys; ``designs.analyze_schema`` and
``designs.compare`` drive it from key schemas and their workloads (``designs.strategy_variants``:
one schema under several prefix strategies). The parts: ``stats`` (distributions and chance
baselines), ``timeline`` (time windows), ``signals`` (write order), ``verdict`` (the judgement
from the evidence, with reasons and advice), ``keyfiles`` (real keys from Parquet, ORC, CSV) and
``advise/`` (keyshape advise: rank candidate designs for a workload).
"""

from keyshape.analysis.analyze import Analysis, Analyzer, RegionLoad, analyze
from keyshape.analysis.stats import (
    Distribution,
    coefficient_of_variation,
    deviation_rate,
    distribution,
    gini,
)
from keyshape.analysis.verdict import BALANCED, HOTSPOT, SKEWED, SchemaHints

__all__ = [
    "Analysis",
    "Analyzer",
    "BALANCED",
    "Distribution",
    "HOTSPOT",
    "RegionLoad",
    "SKEWED",
    "SchemaHints",
    "analyze",
    "coefficient_of_variation",
    "deviation_rate",
    "distribution",
    "gini",
]
