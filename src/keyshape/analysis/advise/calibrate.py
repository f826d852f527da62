"""``keyshape advise --calibrate``: the :class:`CostModel` constants fitted on the cluster at hand.

A few timed micro-runs on a scratch table (``ksa_calib_<random>``, one family, dropped after),
each repeated round-robin and the lower quartile of its timings kept (a shared machine's noise is
one-sided: a neighbour's burst only ever slows a run):

- ``rpc_ms``: one more round trip of a scanner: 2,000 rows scanned 100 a ``next`` less the same
  rows in one ``next``, per extra RPC;
- ``scanner_ms``: a scan of a one-row range, less one RPC (the model prices such a read as one RPC
  plus one scanner open);
- ``get_ms``: a point Get of one small row (HBase serves it on its own path, and on HBase 2.6 it
  takes several times a one-row scan: measured apart, never assumed equal to ``rpc_ms``);
- ``row_us`` and ``byte_ns``: scans of 100 to 2,000 small rows (16-byte values) and of 25 to 400
  rows of 8 KiB, less the RPCs and the scanner open the model charges them; the rest is fitted by
  least squares as ``rows x row_us + bytes x byte_ns`` (bytes: key and value, as the model counts);
- ``reverse_factor``: the same 2,000 small rows scanned newest first, per row over forward;
- ``write_row_us``: batched puts (250 rows a flush) per row.

The client is part of what is measured (it decodes the rows the server sends): the constants are
what *this* client sees of *this* cluster, which is what ``--prove`` measures too. ``parallel`` and
``scan_result_bytes`` are client settings, not measured: they keep their values.

A fitted value the micro-runs cannot tell from zero (its quartile inside the noise) is floored at
1 % of its default and listed in :attr:`Calibration.floored`, never reported as zero or negative.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from keyshape.analysis.advise.costs import CostModel
from keyshape.analysis.advise.spec import AdviseError
from keyshape.schema import FamilySpec, TableSpec
from keyshape.store.base import Store

__all__ = ["Calibration", "calibrate", "default_model_path", "save_model", "load_model", "FITTED"]

FITTED = ("rpc_ms", "get_ms", "scanner_ms", "row_us", "byte_ns", "write_row_us", "reverse_factor")
FORMAT = "keyshape-cost-model/1"
SMALL_ROWS = 3000
BIG_ROWS = 400
SMALL_VALUE = 16
PUT_BATCH = 250
INNER = 5  # one-row reads timed back to back per round
BIG_VALUE = 8192
SMALL_SCANS = (100, 500, 2000)
BIG_SCANS = (25, 100, 400)
QUANTILE = 25  # of each run's timings: the neighbours' load only ever slows a run, so the lower
# quartile is the cluster's own cost, steadier than the median on a shared machine
FLOOR = 0.01  # of the default, for a constant the runs cannot tell from zero


def default_model_path() -> Path:
    """Where ``--calibrate`` saves and ``advise`` looks: ``$XDG_CONFIG_HOME/keyshape/cost-model.json``
    (``~/.config/keyshape/cost-model.json`` when the variable is unset)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "keyshape" / "cost-model.json"


@dataclass
class Calibration:
    """The fitted model, the runs behind it (name -> lower-quartile ms, and the points of the row fit)."""

    model: CostModel
    quartiles: dict[str, float]
    points: list[dict[str, float]]
    seconds: float
    floored: list[str] = field(default_factory=list)
    where: str = ""
    at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "fitted_on": self.where,
            "at": self.at,
            "seconds": round(self.seconds, 2),
            "constants": self.model.to_dict(),
            "floored": self.floored,
            "quartiles_ms": {k: round(v, 4) for k, v in self.quartiles.items()},
            "scan_points": self.points,
        }


def _rows(store: Store, table: str, prefix: bytes, n: int, reverse: bool = False, batch: int = 1000) -> int:
    got = sum(1 for _ in store.scan(table, prefix=prefix, limit=n, reverse=reverse, batch_size=max(batch, 1)))
    if got != n:
        raise AdviseError(f"calibration: a scan of {n} rows of {table} returned {got}; the scratch table lost rows (is another client deleting?)")
    return got


def calibrate(store: Store, *, repeats: int = 21, where: str = "", prefix: str = "ksa_calib") -> Calibration:
    """Fit the cost constants on ``store`` (see the module docstring); the scratch table is dropped
    after, also on failure. ``repeats``: timings per run."""
    began = time.perf_counter()
    defaults = CostModel()
    table = f"{prefix}_{uuid.uuid4().hex[:8]}"
    store.create_table(TableSpec(name=table, families=[FamilySpec("d")]))
    try:
        small_key = [b"s%07d" % i for i in range(SMALL_ROWS)]
        with store.writer(table, batch_size=PUT_BATCH) as w:  # warm: the first puts of a cold table or JVM time its start
            for i in range(2 * PUT_BATCH):
                w.put(b"w%07d" % i, {b"d:v": b"v" * SMALL_VALUE})
        put_ms = []
        for lo in range(0, SMALL_ROWS, PUT_BATCH):
            t0 = time.perf_counter()
            with store.writer(table, batch_size=PUT_BATCH) as w:
                for k in small_key[lo : lo + PUT_BATCH]:
                    w.put(k, {b"d:v": b"v" * SMALL_VALUE})
            put_ms.append((time.perf_counter() - t0) * 1000 / PUT_BATCH)
        with store.writer(table, batch_size=100) as w:
            for i in range(BIG_ROWS):
                w.put(b"b%07d" % i, {b"d:v": b"w" * BIG_VALUE})
        rng = np.random.default_rng(0)
        n = SMALL_SCANS[-1]
        runs: dict[str, Callable[[], Any]] = {
            "get": lambda: store.get(table, small_key[int(rng.integers(SMALL_ROWS))]),
            "scan_one_row": lambda: _rows(store, table, small_key[int(rng.integers(SMALL_ROWS))], 1),
            f"scan_{n}_by_100": lambda: _rows(store, table, b"s", n, batch=100),
            f"reverse_scan_{n}": lambda: _rows(store, table, b"s", n, reverse=True, batch=n),
        }
        sizes = [(b"s", k, SMALL_VALUE) for k in SMALL_SCANS] + [(b"b", k, BIG_VALUE) for k in BIG_SCANS]
        for head, rows, _ in sizes:
            runs[f"scan_{head.decode()}{rows}"] = lambda h=head, r=rows: _rows(store, table, h, r, batch=r)  # type: ignore[misc]
        for fn in runs.values():  # warm: region location cache, connections, block cache
            fn()
        # Round-robin: a burst of the neighbours' load slows one round of every run, not every
        # repeat of one run, so each quartile stays clean.
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(repeats):
            for name, fn in runs.items():
                # The one-row reads run several times in a row: a Get right after a 3 MB scan
                # waits on what that scan left (buffers, the collector), which no application read
                # of one row sees in steady state.
                for _ in range(INNER if name in ("get", "scan_one_row") else 1):
                    t0 = time.perf_counter()
                    fn()
                    times[name].append((time.perf_counter() - t0) * 1000)
        quartiles = {name: float(np.percentile(t, QUANTILE)) for name, t in times.items()}
        get, one = quartiles["get"], quartiles["scan_one_row"]
        rpc = (quartiles[f"scan_{n}_by_100"] - quartiles[f"scan_s{n}"]) / (n // 100 - 1)
        scanner = one - rpc
        points: list[dict[str, float]] = []
        for head, rows, value in sizes:
            nbytes = float(rows * (8 + value))
            rpcs = 1.0 + max(0.0, nbytes / defaults.scan_result_bytes - 1.0)  # pattern_cost's count
            points.append({"rows": float(rows), "bytes": nbytes, "ms": quartiles[f"scan_{head.decode()}{rows}"], "rpcs": rpcs})
        rev_ms = quartiles[f"reverse_scan_{n}"]
    finally:
        store.delete_table(table)
    floored: list[str] = []

    def floor(name: str, value: float) -> float:
        least = FLOOR * float(getattr(defaults, name))
        if not np.isfinite(value) or value < least:
            floored.append(name)
            return least
        return value

    rpc_ms = floor("rpc_ms", rpc)
    get_ms = floor("get_ms", get)
    scanner_ms = floor("scanner_ms", scanner)
    a = np.array([[p["rows"], p["bytes"]] for p in points])
    y = np.array([p["ms"] - p["rpcs"] * rpc_ms - scanner_ms for p in points])
    (per_row_ms, per_byte_ms), *_ = np.linalg.lstsq(a, y, rcond=None)
    if per_byte_ms <= 0 or per_row_ms <= 0:  # one side inside the noise: fit the other alone
        if per_byte_ms <= 0:
            per_row_ms, per_byte_ms = float(np.sum(a[:, 0] * y) / np.sum(a[:, 0] ** 2)), 0.0
        else:
            per_row_ms, per_byte_ms = 0.0, float(np.sum(a[:, 1] * y) / np.sum(a[:, 1] ** 2))
    row_us = floor("row_us", float(per_row_ms) * 1000)
    byte_ns = floor("byte_ns", float(per_byte_ms) * 1e6)
    fixed = rpc_ms + scanner_ms + n * (8 + SMALL_VALUE) * byte_ns / 1e6
    forward = next(p["ms"] for p in points if p["rows"] == n and p["bytes"] == n * (8 + SMALL_VALUE))
    reverse_factor = floor("reverse_factor", (rev_ms - fixed) / max(forward - fixed, 1e-9))
    write_row_us = floor("write_row_us", float(np.percentile(put_ms, QUANTILE)) * 1000)
    model = dataclasses.replace(
        defaults,
        rpc_ms=rpc_ms,
        get_ms=get_ms,
        scanner_ms=scanner_ms,
        row_us=row_us,
        byte_ns=byte_ns,
        write_row_us=write_row_us,
        reverse_factor=reverse_factor,
    )
    quartiles["put_per_row"] = float(np.percentile(put_ms, QUANTILE))
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Calibration(model, quartiles, points, time.perf_counter() - began, floored, where, at)


def save_model(cal: Calibration, path: str | Path) -> Path:
    """Write the calibration as JSON (the constants, and the runs behind them) to ``path``."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(cal.to_dict(), indent=2) + "\n", encoding="utf-8")
    return p


def load_model(path: str | Path) -> CostModel:
    """The :class:`CostModel` saved by :func:`save_model`; :class:`AdviseError` (one line) if bad."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AdviseError(f"{p}: no such cost model file; make one with keyshape advise --calibrate --hbase URL --cost-model {p}") from None
    except (OSError, ValueError) as exc:
        raise AdviseError(f"{p}: not a cost model file ({exc}); make one with keyshape advise --calibrate") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("constants"), dict):
        raise AdviseError(f"{p}: not a cost model file (no format {FORMAT!r}); make one with keyshape advise --calibrate")
    known = {f.name: f.type for f in dataclasses.fields(CostModel)}
    values: dict[str, Any] = {}
    for name, value in data["constants"].items():
        if name not in known:
            raise AdviseError(f"{p}: unknown constant {name!r}; known: {', '.join(known)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value <= 0:
            raise AdviseError(f"{p}: constants.{name} must be a positive number, got {value!r}")
        values[name] = int(value) if name in ("parallel", "scan_result_bytes") else float(value)
    return CostModel(**values)
