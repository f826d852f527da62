"""tools/hbase as an operator meets it (issue 30): stop keeps the data unless asked, and a start that
cannot finish (no happybase for the Thrift check) fails before any JVM starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STANDALONE = ROOT / "tools" / "hbase" / "standalone.py"


def _run(tmp_path: Path, *args: str, shadow_happybase: bool = False) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, KEYSHAPE_HBASE_RUN_DIR=str(tmp_path / "run"))
    if shadow_happybase:
        shim = tmp_path / "shim"
        shim.mkdir(exist_ok=True)
        (shim / "happybase.py").write_text("raise ImportError('happybase is not installed here')\n")
        env["PYTHONPATH"] = str(shim)
    return subprocess.run([sys.executable, str(STANDALONE), *args], capture_output=True, text=True, env=env, timeout=120)


def test_stop_keeps_the_data_unless_asked(tmp_path: Path) -> None:
    data = tmp_path / "run" / "data"
    data.mkdir(parents=True)
    (data / "table-file").write_text("rows")
    kept = _run(tmp_path, "stop")
    assert kept.returncode == 0, kept.stderr
    assert (data / "table-file").exists() and "data kept" in kept.stdout
    gone = _run(tmp_path, "stop", "--delete-data")
    assert gone.returncode == 0 and not data.exists()


def test_thrift_start_without_happybase_fails_before_any_jvm(tmp_path: Path) -> None:
    """It failed after 59 s and left the master running."""
    proc = _run(tmp_path, "start", "--thrift", shadow_happybase=True)
    assert proc.returncode == 2
    assert "happybase" in proc.stderr and "step 'thrift'" in proc.stderr
    assert not (tmp_path / "run" / "master.pid").exists()


def test_a_run_folder_held_by_a_live_session_is_not_taken(tmp_path: Path) -> None:
    """Two test sessions on one machine: the second gets its own folder (start_scratch there stops
    only what a dead run left), and the first folder is free again once its session closes. The
    holder is another process, as it is for two pytest sessions."""
    import standalone

    base = tmp_path / "run" / "pytest"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {str(STANDALONE.parent)!r}); import standalone, pathlib; "
            f"d, lock = standalone.claim_run_dir(pathlib.Path({str(base)!r})); print(d, flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == str(base)
        second, lock = standalone.claim_run_dir(base)
        assert second == base.with_name("pytest-2")
        lock.close()
    finally:
        holder.communicate("", timeout=30)
    again, lock = standalone.claim_run_dir(base)
    assert again == base
    lock.close()
