"""Shared steps of the tests that run ``keyshape serve`` against a real HBase
(tests/browser/test_serve_hbase.py, tests/cluster/test_serve_cluster.py): waiting for the
service's polls, and reading its heat-map API."""

from __future__ import annotations

import base64
import time
from typing import Any

import numpy as np


def matrix(h: dict[str, Any]) -> np.ndarray:
    """The heat map's values from the API's base64 float32 form."""
    return np.frombuffer(base64.b64decode(h["values_f32"]), dtype="<f4").reshape(h["shape"]).astype(np.float64)


def wait_for_polls(service: Any, tables: tuple[str, ...], more: int, seconds: float = 120.0) -> None:
    """Until each of ``tables`` has been polled ``more`` times after now (0: its baseline poll),
    however long a poll takes on a busy machine."""

    def polls(table: str) -> int:  # -1: not polled yet
        state = service.poller.snapshot().get(table)
        return -1 if state is None or state.heat.latest == [] else len(state.heat.samples)

    goal = {t: (polls(t) + more if more else 0) for t in tables}
    deadline = time.monotonic() + seconds
    while any(polls(t) < goal[t] for t in tables):
        assert time.monotonic() < deadline, {t: (polls(t), goal[t]) for t in tables}
        time.sleep(0.2)
