"""Every command the README shows runs as written (issue 30: `my.toml`, `sample.parquet`, `tables.sql`
and `keys.csv` were named but not shipped, and the records examples found nothing).

The commands are read from the README's ```bash blocks (lines starting with `$ks `, the README's
name for `.venv/bin/keyshape`), in the README's order, and run in a scratch folder that sees the
repository's `examples/` and `tests/`, so the reports they write land there. Commands without
`--hbase` run everywhere; the others run against the test HBase, with `localhost:2181` replaced by
its address and nothing else changed. Skipped, each for the reason given in SKIPPED: the ones that
need a Phoenix-enabled HBase (`PHOENIX_HOST:PORT`) or a Spark session (their own test files run
the same code: tests/phoenix/test_phoenix_live.py, tests/spark/test_spark.py).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

SKIPPED = {
    "PHOENIX_HOST:PORT": "needs an HBase with Phoenix's server jars (tests/phoenix/test_phoenix_live.py runs catalog and resalt)",
    "--engine spark": "starts a Spark session (tests/spark/test_spark.py runs analyze --engine spark on the same code)",
}


def readme_commands() -> list[tuple[int, str]]:
    """(line number, command) of every `$ks` line in a ```bash block, in order."""
    out: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(README.read_text().splitlines(), 1):
        if line.startswith("```"):
            inside = line.strip() == "```bash" if not inside else False
            continue
        if inside and line.startswith("$ks "):
            out.append((number, line[len("$ks ") :]))
    return out


def _argv(command: str) -> list[str]:
    # A trailing `# comment` is the README's, not the command's.
    return shlex.split(command, comments=True)


def _skip_reason(command: str) -> str | None:
    return next((why for mark, why in SKIPPED.items() if mark in command), None)


COMMANDS = readme_commands()
LOCAL = [(n, c) for n, c in COMMANDS if "--hbase" not in c and not _skip_reason(c)]
LIVE = [(n, c) for n, c in COMMANDS if "--hbase" in c and not _skip_reason(c)]


def test_the_readme_shows_commands_and_names_only_shipped_files() -> None:
    assert len(COMMANDS) >= 40, "the README's command blocks were not found"
    for number, command in COMMANDS:
        for word in _argv(command):
            if re.fullmatch(r"[\w./-]+\.(toml|sql|parquet|csv|orc)", word) and "*" not in word:
                assert (ROOT / word).exists(), f"README line {number} names {word}, which is not shipped"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("readme")
    for name in ("examples", "tests"):
        (where / name).symlink_to(ROOT / name)
    return where


def _run(command: str, cwd: Path, url: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = _argv(command)
    if url is not None:
        argv = [url if a == "localhost:2181" else a for a in argv]
    env = dict(os.environ, COLUMNS="100")
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *argv], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


@pytest.mark.parametrize("number,command", LOCAL, ids=[f"line{n}" for n, _ in LOCAL])
def test_a_readme_command_without_hbase_runs_as_written(number: int, command: str, scratch: Path) -> None:
    proc = _run(command, scratch)
    # analyze's --fail-on and lint exit non-zero on findings by design; the README shows neither.
    assert proc.returncode == 0, f"README line {number}: {command}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr


@pytest.mark.hbase
def test_the_readme_commands_on_hbase_run_in_order(hbase, scratch: Path) -> None:  # type: ignore[no-untyped-def]
    """In README order, since they build on each other (create, put, then get; load, then
    diagnose, split and migrate). Tables the README names are dropped first, so a rerun on the
    same HBase starts from the same place."""
    from keyshape.store import open_store

    store = open_store(hbase.url)
    try:
        for name in ("shop:orders", "EVENTS", "rec_orders", "rec_orders_by_product", "rec_ids", "ns:events", "ns:events32", "ns:events24"):
            if store.table_exists(name):
                store.delete_table(name)
    finally:
        store.close()
    for f in scratch.glob(".keyshape-migrate-*"):
        f.unlink()
    failures = []
    for number, command in LIVE:
        if _until_ctrl_c(command):
            proc = _run_until_streaming_then_ctrl_c(command, scratch, hbase.url)
            expected = 130  # the README's Ctrl-C: the CLI's exit code for an interrupt
        else:
            proc = _run(command, scratch, hbase.url)
            expected = 0
        if proc.returncode != expected or "Traceback" in proc.stderr:
            failures.append(f"README line {number}: {command}\n  exit {proc.returncode}: {proc.stderr.strip()[-600:]}")
    assert not failures, "\n".join(failures)


# Commands the README runs "until Ctrl-C" (its next lines say so): run as written, then, once they
# are in the state the README describes, interrupted as the reader would.
UNTIL_CTRL_C = {"--online --set-replication-scope": "stream:"}


def _until_ctrl_c(command: str) -> str | None:
    """The stderr prefix that says ``command`` reached its long-running state, or None."""
    return next((state for mark, state in UNTIL_CTRL_C.items() if command.rstrip().endswith(mark)), None)


def _run_until_streaming_then_ctrl_c(command: str, cwd: Path, url: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` until a stderr line starts with its state's prefix (migrate --online: the
    copy done, the stream applying edits), then send SIGINT (Ctrl-C) and collect the rest."""
    import signal

    state = _until_ctrl_c(command) or ""
    argv = [url if a == "localhost:2181" else a for a in _argv(command)]
    env = dict(os.environ, COLUMNS="100")
    argv = [sys.executable, "-m", "keyshape.cli", *argv]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
    assert proc.stderr is not None
    seen: list[str] = []
    for line in proc.stderr:  # ends when the process does (an error before the state)
        seen.append(line)
        if line.startswith(state):
            proc.send_signal(signal.SIGINT)
            break
    out, rest = proc.communicate(timeout=600)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "".join(seen) + rest)


def readme_blocks() -> list[tuple[int, str, str]]:
    """(first line number, language, text) of every fenced code block of the README."""
    out: list[tuple[int, str, str]] = []
    lang, start, body = None, 0, []  # type: ignore[var-annotated]
    for number, line in enumerate(README.read_text().splitlines(), 1):
        if line.startswith("```"):
            if lang is None:
                lang, start, body = line[3:].strip(), number + 1, []
            else:
                out.append((start, lang, "\n".join(body) + "\n"))
                lang = None
            continue
        if lang is not None:
            body.append(line)
    return out


BLOCKS = readme_blocks()
# Python blocks that cannot run as they stand, and the test that runs their code instead.
PY_SKIPPED = {"keyshape.spark": "works on a Spark DataFrame `df` of the reader's own (tests/spark/test_spark.py runs these calls)"}
PYTHON = [(n, text) for n, lang, text in BLOCKS if lang == "python"]


def test_every_readme_command_says_where_keyshape_is() -> None:
    """The Quick start never activates the venv: a block that calls `keyshape` or `python` bare
    fails with "command not found" or "No module named numpy" (issue 40). Every command line of
    every block names `.venv/bin/keyshape` (`$ks`) or `.venv/bin/python`."""
    bare = []
    for start, lang, text in BLOCKS:
        if lang in ("toml", "python", "sql", "json"):
            continue
        for offset, line in enumerate(text.splitlines()):
            if re.match(r"\s*(keyshape|python|python3 (?!-m venv))\s", line):
                bare.append(f"README line {start + offset}: {line.strip()}")
    assert not bare, "\n".join(bare)


@pytest.mark.parametrize("number,code", PYTHON, ids=[f"line{n}" for n, _ in PYTHON])
def test_a_readme_python_block_runs_as_written(number: int, code: str, scratch: Path) -> None:
    why = next((why for mark, why in PY_SKIPPED.items() if mark in code), None)
    if why:
        pytest.skip(why)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=scratch, timeout=300)
    assert proc.returncode == 0, f"README line {number}:\n{proc.stderr[-2000:]}"
