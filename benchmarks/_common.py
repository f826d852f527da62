"""Shared plumbing for the benchmark scripts: timing, machine facts, the table and the JSON file."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="tiny sizes (the smoke test uses this)")
    p.add_argument("--out", type=Path, default=None, help="JSON file to write (default benchmarks/results/NAME.json)")
    return p


def best_of(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """(smallest wall time of ``repeat`` runs, last result): other load on a shared machine
    only ever adds time, so the minimum is the best estimate of the cost itself."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def machine() -> dict[str, Any]:
    """Cores, CPU, Python, numpy and the git commit (with a note when the tree has changes)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        dirty = bool(
            subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        )
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", False
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cores": os.cpu_count(),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "git_commit": commit,
        "git_dirty": dirty,
    }


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for i, c in enumerate(columns):
        table.add_column(c, justify="left" if i == 0 else "right")
    for r in rows:
        table.add_row(*[_fmt(v) for v in r])
    Console().print(table)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    return "-" if v is None else str(v)


def write_json(name: str, out: Path | None, payload: dict[str, Any]) -> Path:
    path = out or RESULTS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"benchmark": name, "machine": machine(), "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]), **payload}
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path
