"""Hotspot analysis: how rows and writes spread over regions, in total and over time.

``analyze`` works on any stream of keys; ``analyze_schema`` and ``compare`` drive it from key
schemas and their workloads.
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
