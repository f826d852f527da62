"""``keyshape serve``: the live Key Visualizer.

One concept per module, as TiDB's keyvisual splits it:

- ``history``: the SQLite history store (per-region deltas and gauges at several resolutions,
  gaps, region events, the last verdicts);
- ``poller``: polls each matching table's region loads into the history, following lineage;
- ``patterns``: names a table's pattern with its cause and a concrete fix;
- ``fixes``: the key-design fix of a hot pattern (``plan_fix`` -> ``FixPlan``), every candidate
  replayed against the observed writes and shown only within ``FAIR_FACTOR`` of fair;
- ``predict``: the observed traffic replayed under a design (the predicted heat map, and the
  number each fix is checked by);
- ``fold``: the logical (de-salted) key axis of a salted table;
- ``alerts``: the ``--config`` alert thresholds and their evaluation;
- ``app``: the JSON API, Prometheus ``/metrics`` and the UI (``assets``: plain JS + canvas);
- ``service``: the history, the poller and the web server started together; ``serve_once``.
"""

from __future__ import annotations

from keyshape.serve.alerts import Alert, Rule, evaluate, load_alerts, parse_alerts
from keyshape.serve.fixes import FAIR_FACTOR, CheckedFix, Fix, FixPlan, plan_fix
from keyshape.serve.history import LAYERS, History, Layer
from keyshape.serve.patterns import Pattern, name_pattern
from keyshape.serve.poller import Poller, matches
from keyshape.serve.service import ServeOptions, Service, alerts, check_bind, load_schemas, serve_once

__all__ = [
    "FAIR_FACTOR",
    "CheckedFix",
    "Fix",
    "FixPlan",
    "plan_fix",
    "LAYERS",
    "Alert",
    "Rule",
    "evaluate",
    "load_alerts",
    "parse_alerts",
    "History",
    "Layer",
    "Pattern",
    "Poller",
    "ServeOptions",
    "Service",
    "alerts",
    "check_bind",
    "load_schemas",
    "matches",
    "name_pattern",
    "serve_once",
]
