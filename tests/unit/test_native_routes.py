"""Both routes of the per-record kernels: with the C module of keyshape.core.native (where it is
built) and without it (KEYSHAPE_NATIVE=0, what a machine with no C compiler runs). The codec tests
run again in a child process with the C route off, so the pure-Python encoders, decoders and
hashes stay held to the same references (generic decoder, JVM-recorded hashes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from keyshape.core import native

ROOT = Path(__file__).resolve().parents[2]
CODEC_TESTS = [
    "tests/property/test_compiled.py",
    "tests/unit/test_hashing.py",
    "tests/property/test_schema_decode.py",
    "tests/unit/test_golden_prefixes.py",
    "tests/phoenix/test_phoenix_codec.py",
    "tests/hbase/test_pad_rule.py",
]


def test_the_codec_tests_pass_on_the_pure_python_route():
    env = dict(os.environ, KEYSHAPE_NATIVE="0")
    probe = subprocess.run(
        [sys.executable, "-c", "from keyshape.core import native; print(native.AVAILABLE)"], env=env, capture_output=True, text=True, check=True
    )
    assert probe.stdout.strip() == "False"
    # the codecs only: a test of a store here is run on the default route by the suite itself;
    # in one process (-n 0): this runs inside a worker of the suite's own 2 (pyproject's addopts)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-m", "not hbase", *CODEC_TESTS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    tail = run.stdout[-3000:]
    assert run.returncode == 0, tail
    assert " passed" in tail and " failed" not in tail


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="CI builds the C kernels; elsewhere they are optional")
def test_ci_builds_the_c_kernels():
    """In CI the C route must be the one tested (a silent fallback would test only Python)."""
    assert native.AVAILABLE, native.ROUTE


def test_the_c_kernels_are_not_older_than_their_source():
    """The C module is an optional build: where _native.c no longer compiles, ``pip install -e .``
    says nothing and keeps the module built before, so the tests would run old kernels. In a
    source tree the module must be at least as new as the file it is built from."""
    source = ROOT / "src" / "keyshape" / "core" / "_native.c"
    built = sorted((ROOT / "src" / "keyshape" / "core").glob("_native*.so")) + sorted((ROOT / "src" / "keyshape" / "core").glob("_native*.pyd"))
    if not built or not source.exists():
        pytest.skip("no C module built in the source tree (installed elsewhere, or no compiler)")
    newest = max(p.stat().st_mtime for p in built)
    assert newest >= source.stat().st_mtime, (
        f"{built[-1].name} is older than _native.c: it did not rebuild (a compile error?); run .venv/bin/pip install -e . and read its output"
    )
