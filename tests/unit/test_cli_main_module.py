"""``python -m keyshape`` is the ``keyshape`` command (src/keyshape/__main__.py): same output, same
name in the usage text, same one-line error and exit code for bad input."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from keyshape.cli import main


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape", *args], capture_output=True, text=True, timeout=60)


def test_module_prints_what_the_command_prints() -> None:
    done = _run("splits", "hex", "-n", "4")
    assert done.returncode == 0, done.stderr
    assert done.stdout == CliRunner().invoke(main, ["splits", "hex", "-n", "4"]).output
    assert "'40000000', '80000000', 'c0000000'" in done.stdout


def test_module_names_itself_keyshape_and_refuses_bad_input_in_one_line() -> None:
    assert _run("--help").stdout.startswith("Usage: keyshape ")
    bad = _run("hash", "phoenix", "abc")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == ["error: hash phoenix needs --buckets N (1..256)"]
    assert "Traceback" not in bad.stderr
