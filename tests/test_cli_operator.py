"""The operator's experience (issue 30): errors found before the work starts, output that survives a
closed pipe. Run through a real subprocess, as a user meets them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ORDERS = ROOT / "examples" / "orders.toml"
SEQUENTIAL = ROOT / "examples" / "sequential.toml"


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


@pytest.mark.parametrize("option,path,words", [
    ("--png", "/nonexistent/x.png", "folder '/nonexistent' does not exist"),
    ("--html", "/nonexistent/r.html", "folder '/nonexistent' does not exist"),
    ("--json", "/nonexistent/r.json", "folder '/nonexistent' does not exist"),
    ("--html", "/tmp", "is a folder"),
])
def test_an_unwritable_report_path_is_refused_before_the_analysis_runs(option: str, path: str, words: str) -> None:
    # 5M rows take many seconds to analyze: a refusal in well under that was made up front.
    started = time.monotonic()
    line = one_error_line(run("analyze", str(ORDERS), "--rows", "5000000", option, path))
    assert time.monotonic() - started < 15
    assert option in line and words in line


def test_watch_refuses_an_unwritable_report_before_it_connects() -> None:
    line = one_error_line(run("watch", "t", "--hbase", "127.0.0.1:1", "--png", "/nonexistent/w.png"))
    assert "--png" in line and "/nonexistent" in line


@pytest.mark.parametrize("url", ["localhost:abc", "localhost:70000"])
def test_a_port_that_is_not_a_number_is_named_at_once(url: str) -> None:
    started = time.monotonic()
    line = one_error_line(run("analyze", str(ORDERS), "--hbase", url, "--table", "t"))
    assert time.monotonic() - started < 10
    assert "is not a port number" in line and "HOST:PORT" in line and "invalid literal" not in line


def test_more_than_100000_regions_are_refused_with_the_bound() -> None:
    line = one_error_line(run("analyze", str(SEQUENTIAL), "--regions", "100001"))
    assert "--regions" in line and "100000" in line


@pytest.mark.parametrize("args", [
    ("splits", "hex", "--regions", "64"),
    ("phoenix", "key", "ranges", str(ROOT / "examples" / "phoenix" / "events.sql")),
    ("analyze", str(ORDERS), "--rows", "20000"),
])
def test_a_reader_that_stops_reading_gets_no_error_message(args: tuple[str, ...]) -> None:
    """`keyshape ... | head`: the pipe's read end is closed before keyshape writes (deterministic
    SIGPIPE); it printed `error: [Errno 32] Broken pipe`."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "keyshape.cli", *args], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    finally:
        os.close(write_end)
    assert proc.returncode != 0
    assert proc.stderr == "", proc.stderr
