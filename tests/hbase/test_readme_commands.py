"""Every command the README shows runs as written (issue 30: `my.toml`, `sample.parquet`, `tables.sql`
and `keys.csv` were named but not shipped, and the records examples found nothing).

The commands are read from the README's ```bash blocks (lines starting with `$ks `, the README's
name for `.venv/bin/keyshape`), in the README's order, and run in a scratch folder that sees the
repository's `examples/` and `tests/`, so the reports they write land there. Commands without
`--hbase` run everywhere; the others run against the test HBase, with `localhost:2181` replaced by
its address and nothing else changed. Skipped, each for the reason given in SKIPPED: the ones that
need a Phoenix-enabled HBase (`PHOENIX_HOST:PORT`) or a Spark session (their own test files run
the same code: tests/phoenix/test_phoenix_live.py, tests/spark/test_spark.py).

The sections "Choosing a design: keyshape advise", "Watching a cluster: keyshape serve" and "From a
hot table to a fixed one" show `.venv/bin/keyshape` lines in plain ``` blocks: those run through
bash as written, in order (SECTIONS, below); their TOML blocks load with their commands' loaders.
Named exceptions: none skipped; `load-split ... --apply` on the README's sequential table is
expected to refuse, as the README says (REFUSED).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
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
    for name in ("examples", "tests", ".venv"):  # `.venv/bin/keyshape` of the sections' blocks
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
            expected = _ctrl_c_exit(command)
        else:
            proc = _run(command, scratch, hbase.url)
            expected = 0
        if proc.returncode != expected or "Traceback" in proc.stderr:
            failures.append(f"README line {number}: {command}\n  exit {proc.returncode}: {proc.stderr.strip()[-600:]}")
    assert not failures, "\n".join(failures)


# Commands the README runs "until Ctrl-C" (its next lines say so): run as written, then, once they
# are in the state the README describes (a stderr line starting so), interrupted as the reader would;
# then the exit code each must end with.
UNTIL_CTRL_C = {
    # migrate --online: the copy done, the stream applying edits; 130, the CLI's code for an interrupt
    "--online --set-replication-scope": ("stream:", 130),
    # serve: listening, its URL printed; "Ctrl-C stops" it, a normal end: 0
    "--schemas examples/ --db serve.db": ("keyshape serve: http", 0),
}


def _until_ctrl_c(command: str) -> str | None:
    """The stderr prefix that says ``command`` reached its long-running state, or None."""
    return next((state for mark, (state, _) in UNTIL_CTRL_C.items() if command.rstrip().endswith(mark)), None)


def _ctrl_c_exit(command: str) -> int:
    """The exit code ``command`` (one of UNTIL_CTRL_C) ends with after its Ctrl-C."""
    return next(code for mark, (_, code) in UNTIL_CTRL_C.items() if command.rstrip().endswith(mark))


def _run_until_streaming_then_ctrl_c(command: str, cwd: Path, url: str) -> subprocess.CompletedProcess[str]:
    """Run a `$ks` ``command`` (the keyshape CLI) until its state, then Ctrl-C it."""
    argv = [url if a == "localhost:2181" else a for a in _argv(command)]
    return _until_state_then_ctrl_c([sys.executable, "-m", "keyshape.cli", *argv], _until_ctrl_c(command) or "", cwd)


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the test process dies. A test run killed from
    outside (a CI timeout) left `keyshape serve` holding 127.0.0.1:8080, the README command's
    default address, and every later run's serve block failed on it."""
    import ctypes
    import signal

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG, kept across exec


def _until_state_then_ctrl_c(argv: list[str], state: str, cwd: Path, probe: Callable[[str], None] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` until a stderr line starts with ``state`` (migrate --online: the copy done, the
    stream applying edits; serve: its URL printed), call ``probe`` with that line, then send SIGINT
    (Ctrl-C) and collect the rest."""
    import signal

    env = dict(os.environ, COLUMNS="100")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env, preexec_fn=_die_with_parent)
    assert proc.stderr is not None
    seen: list[str] = []
    try:
        for line in proc.stderr:  # ends when the process does (an error before the state)
            seen.append(line)
            if line.startswith(state):
                if probe is not None:
                    probe(line)
                proc.send_signal(signal.SIGINT)
                break
    except BaseException:
        proc.kill()  # the probe failed: leave no service behind
        proc.communicate()
        raise
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


# --- The sections whose blocks are plain ``` fences of `.venv/bin/...` lines (issue 40) -----------
# Run through bash as written (a `> WORKLOAD.toml` redirect included), in the scratch folder, whose
# `.venv` is the repository's. On the test HBase, the README's cluster addresses `localhost:2181`
# and `zk1:2181` are replaced by the fixture's URL, and nothing else is changed.
SECTIONS = ("## Choosing a design: keyshape advise", "## Watching a cluster: keyshape serve", "## From a hot table to a fixed one")
README_URLS = ("localhost:2181", "zk1:2181")


def section_blocks(title: str) -> list[tuple[int, str, str]]:
    """(first line number, language, dedented text) of every fenced block of the section, those
    indented in a list item included."""
    lines = README.read_text().splitlines()
    start = lines.index(title)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    out: list[tuple[int, str, str]] = []
    lang: str | None = None
    first, body = 0, []  # type: ignore[var-annotated]
    for number in range(start + 1, end):
        fence = lines[number].strip()
        if fence.startswith("```"):
            if lang is None:
                lang, first, body = fence[3:], number + 2, []
            else:
                out.append((first, lang, textwrap.dedent("\n".join(body)) + "\n"))
                lang = None
            continue
        if lang is not None:
            body.append(lines[number])
    return out


def section_commands(title: str) -> list[tuple[int, str]]:
    """(line number, command) of every `.venv/bin/` line of the section's plain ``` blocks, a
    line ending in `\\` joined with the next, in order."""
    out: list[tuple[int, str]] = []
    for first, lang, text in section_blocks(title):
        if lang:
            continue
        pending, at = "", 0
        for offset, line in enumerate(text.splitlines()):
            if pending:
                pending += " " + line.strip()
            elif line.startswith(".venv/bin/"):
                pending, at = line, first + offset
            if pending.endswith("\\"):
                pending = pending[:-1].rstrip()
            elif pending:
                out.append((at, pending))
                pending = ""
    return out


ADVISE, SERVE, AUTOPILOT = (section_commands(t) for t in SECTIONS)


def _bash(command: str, cwd: Path, url: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", "exec " + _on(command, url)], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def _on(command: str, url: str | None) -> str:
    for readme_url in README_URLS if url is not None else ():
        command = command.replace(readme_url, url or "")
    return command


def _env(scratch: Path) -> dict[str, str]:
    # calibrate's default cost-model file and advise's reading of it stay in the scratch folder
    return dict(os.environ, COLUMNS="100", XDG_CONFIG_HOME=str(scratch / ".config"))


def test_the_sections_blocks_are_found() -> None:
    assert len(ADVISE) == 3 and sum("--hbase" in c for _, c in ADVISE) == 1, ADVISE
    assert len(SERVE) == 2 and all("serve --hbase" in c for _, c in SERVE), SERVE
    assert len(AUTOPILOT) == 7 and all(" autopilot " in c or " load-split " in c for _, c in AUTOPILOT), AUTOPILOT


def test_the_sections_toml_blocks_load(tmp_path: Path) -> None:
    """The sections' TOML blocks are files the commands read: advise's workload (`--queries`) and
    serve's alert thresholds (`--config`); each loads with the loader of its command."""
    from keyshape.analysis.advise.spec import load_spec
    from keyshape.serve.alerts import load_alerts

    tomls = {t: [(n, text) for n, lang, text in section_blocks(t) if lang == "toml"] for t in SECTIONS}
    assert [len(v) for v in tomls.values()] == [1, 1, 0], tomls
    (tmp_path / "WORKLOAD.toml").write_text(tomls[SECTIONS[0]][0][1])
    assert [p.name for p in load_spec(tmp_path / "WORKLOAD.toml").patterns] == ["latest 10 orders of a user"]
    (tmp_path / "alerts.toml").write_text(tomls[SECTIONS[1]][0][1])
    assert [r.tables for r in load_alerts(tmp_path / "alerts.toml")] == ["shop:*"]


def test_the_advise_blocks_without_hbase_run_as_written(scratch: Path) -> None:
    """The sample generated (100,000 records, as written), then ranked into advise.json."""
    for number, command in ADVISE:
        if "--hbase" in command:
            continue
        proc = _bash(command, scratch, env=_env(scratch))
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, f"README line {number}: {command}\n{proc.stderr[-2000:]}"
    assert json.loads((scratch / "advise.json").read_text())


# The README lines whose documented outcome is a refusal, with the reason: the exit must be
# non-zero, with this on stderr, and no traceback.
REFUSED = {
    "load-split shop:events --hbase zk1:2181 --lookback 300 --apply": (
        "no split",
        "shop:events is the README's sequential table: its newest writes sort after any split, so the replay shows no relief and --apply refuses",
    ),
}


@pytest.mark.hbase
def test_the_calibrate_serve_and_autopilot_blocks_run_in_order(hbase, hbase_store, scratch: Path) -> None:  # type: ignore[no-untyped-def]
    """advise --calibrate; serve until Ctrl-C (its API probed) and serve --once; then the autopilot
    block on a hot `shop:events`, made as tests/hbase/test_autopilot.py makes one: its schema file
    (the README's `events.toml`, the reader's own file, written here), the table, an independent
    writer at 80 rows/s, and serve's own poller filling `serve.db` (the history the dry run reads).
    The `load-split` lines ("relief now, while the re-key waits") run while the writer writes,
    before step 3 switches the writers to NEW."""
    import urllib.request

    from autopilot_e2e import FAMILIES, TIME_ID, start_writer

    from keyshape.schema import KeySchema
    from keyshape.serve.history import History
    from keyshape.serve.poller import Poller
    from keyshape.schema.specs import TableSpec
    from keyshape.store import create_table_from_schema, open_store

    url, env = hbase.url, _env(scratch)
    for name in ("shop:events", "shop:events_v2"):
        if hbase_store.table_exists(name):
            hbase_store.delete_table(name)
    for f in [*scratch.glob(".keyshape-autopilot-*"), scratch / "serve.db", scratch / "events_v2.toml"]:
        f.unlink(missing_ok=True)
    if not hbase_store.table_exists("kss_readme"):  # serve --once's `--tables 'kss_*'` must match a table
        hbase_store.create_table(TableSpec("kss_readme"))
    failures: list[str] = []
    began = time.monotonic()

    def check(number: int, command: str, proc: subprocess.CompletedProcess[str], expected: int = 0) -> None:
        print(f"README line {number}: exit {proc.returncode} at {time.monotonic() - began:.0f} s")  # shown on failure
        refused = next((said for mark, (said, _) in REFUSED.items() if command.rstrip().endswith(mark)), None)
        if refused is not None:
            bad = proc.returncode == 0 or refused not in proc.stderr
        else:
            bad = proc.returncode != expected
        if bad or "Traceback" in proc.stderr:
            failures.append(f"README line {number}: {command}\n  exit {proc.returncode}: {proc.stderr.strip()[-800:]}")

    for number, command in ADVISE:
        if "--hbase" in command:
            check(number, command, _bash(command, scratch, url, env))
    assert (scratch / "cost-model.json").exists()

    probed: list[dict[str, object]] = []

    def probe(line: str) -> None:  # "keyshape serve: http://127.0.0.1:8080/  (history ...)"
        base = line.split()[2]
        with urllib.request.urlopen(base + "api/status", timeout=30) as answer:
            probed.append(json.loads(answer.read()))

    for number, command in SERVE:
        state = _until_ctrl_c(command)
        if state:
            proc = _until_state_then_ctrl_c(["bash", "-c", "exec " + _on(command, url)], state, scratch, probe)
            check(number, command, proc, _ctrl_c_exit(command))
        else:
            check(number, command, _bash(command, scratch, url, env))
    assert probed and str(probed[0]["db"]).endswith("serve.db"), (probed, failures)  # serve's /api/status answered

    schema = scratch / "events.toml"
    schema.write_text(f'[table]\nnamespace = "shop"\nname = "events"\n{FAMILIES}\n[key]\nseparator = "_"\n{TIME_ID}')
    old = KeySchema.load(schema)
    create_table_from_schema(hbase_store, old)
    writer = start_writer(url, schema, scratch / "writer.log", False)
    try:
        (scratch / "serve.db").unlink(missing_ok=True)
        history = History(scratch / "serve.db")
        poller = Poller(lambda: open_store(url), history, ["shop:events"], {"shop:events": old}, 1.0)
        try:
            for _ in range(7):
                assert poller.poll_once()
                time.sleep(1)
        finally:
            if poller.store is not None:
                poller.store.close()
            history.close()
        cut = [(n, c) for n, c in AUTOPILOT if "--cutover" in c]
        for number, command in [(n, c) for n, c in AUTOPILOT if (n, c) not in cut]:
            check(number, command, _bash(command, scratch, url, env))
    finally:
        writer.send_signal(15)
        assert writer.wait(60) == 0
    for number, command in cut:
        proc = _bash(command, scratch, url, env)
        check(number, command, proc)
    assert not failures, "\n".join(failures)
    # what the block's comments say it did: NEW planned as events_v2, moved, verified, the proof's scratch tables gone
    assert "verify OLD == NEW" in proc.stdout and (scratch / "events_v2.toml").exists(), proc.stdout
    assert hbase_store.table_exists("shop:events_v2") or hbase_store.table_exists("events_v2")
    assert not [t for t in hbase_store.list_tables() if "ksap_prove" in t or "ksa_calib" in t]
