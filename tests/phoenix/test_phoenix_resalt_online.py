"""``keyshape phoenix resalt ... --apply --online``, then ``--cutover``, on a live Phoenix 5.2.1 (issue 32).

Phoenix itself keeps writing the salted table (its JDBC driver: upserts of new rows, updates,
deletes, deleted rows put again) while ``keyshape phoenix resalt`` runs as a separate process and
re-salts it 8 -> 16 buckets through ``migrate --online``'s path, as an operator runs it: copy plus
replication stream while Phoenix writes, the writer stopped, Ctrl-C, then ``--cutover`` (verify).
Afterwards Phoenix reads the target and returns the same rows as the source, which equal what the
writer left; a referee compares both tables cell for cell (decoded key, column, timestamp, value
of every version); every target key is the source key's rest behind its 16-bucket salt byte.
The table's TIMESTAMP key column carries nanoseconds: the general Phoenix key schema
(milliseconds) would have moved those rows to other keys, which the test shows on the real keys,
so the re-salt's exact schemas are needed rather than assumed.

KEYSHAPE_PHOENIX_URL=host:port uses a running Phoenix-enabled HBase instead of starting one.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from online_migration import ROOT, content, wait_for
from phoenix_oracle import PhoenixOracle, from_param

from keyshape.core.hashing import phoenix_salt
from keyshape.ops.migrate_online import online_state_path, peer_id_for
from keyshape.phoenix import PhoenixTable, PhoenixTimestamp, parse_ddl
from keyshape.phoenix.resalt import ResaltSchema, target_ddl
from keyshape.phoenix.schema import PhoenixKeySchema
from keyshape.store.hbase import HBaseStore

ROWS = 10_000  # filled through Phoenix before the re-salt; the writer adds ids from ROWS up (every fifth upsert)
AT_MS = 1_767_225_600_000


def _params(i: int, version: int) -> list[str]:
    """The oracle's parameters of row ``i``: its key (AT carries ``i`` nanoseconds below the ms) and values."""
    return [f"txt:user{i}", f"i8:{i}", f"ts:{AT_MS}:{i}", f"dec:{i}.{version % 100:02d}", f"txt:name-{i}-v{version}"]


class PhoenixWriter(threading.Thread):
    """Puts, updates and deletes rows through Phoenix (each statement committed) until stopped;
    ``alive`` is what the table must hold afterwards: id -> the params of its last upsert."""

    def __init__(self, jdbc: PhoenixOracle, table: str) -> None:
        super().__init__(daemon=True)
        self.jdbc, self.table = jdbc, table
        self.alive = {i: _params(i, 0) for i in range(ROWS)}
        self.stop = threading.Event()
        self.counts = {"ops": 0, "upserts": 0, "deletes": 0, "reputs": 0}
        self.error: BaseException | None = None

    def run(self) -> None:
        rng = random.Random(32)
        upsert = f"UPSERT INTO {self.table} (U, ID, AT, AMOUNT, NAME) VALUES (?, ?, ?, ?, ?)"
        delete = f"DELETE FROM {self.table} WHERE U = ? AND ID = ? AND AT = ?"
        deleted: list[int] = []
        try:
            while not self.stop.is_set():
                op = rng.random()
                if op < 0.25 and self.alive:
                    i = rng.choice(list(self.alive))
                    self.jdbc.ask("GENERATE", delete, "1", *_params(i, 0)[:3])
                    del self.alive[i]
                    deleted.append(i)
                    self.counts["deletes"] += 1
                else:
                    reput = op < 0.35 and bool(deleted)
                    if reput:
                        i = deleted.pop(rng.randrange(len(deleted)))
                    elif self.counts["upserts"] % 5 == 0:
                        # every fifth a new row (a random id left none in a slow run's 60 upserts)
                        i = ROWS + self.counts["upserts"] // 5
                    else:
                        i = rng.randrange(ROWS)
                    params = _params(i, self.counts["ops"] + 1)
                    self.jdbc.ask("GENERATE", upsert, "1", *params)
                    self.alive[i] = params
                    self.counts["reputs" if reput else "upserts"] += 1
                self.counts["ops"] += 1
                time.sleep(0.005)
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.error = exc


def _rows(jdbc: PhoenixOracle, table: str) -> list[str]:
    return jdbc.ask("QUERY", f"SELECT U, ID, AT, AMOUNT, NAME FROM {table} ORDER BY U, ID DESC, AT")


@pytest.mark.phoenix
@pytest.mark.hbase
def test_resalt_8_to_16_online_while_phoenix_writes(phoenix_url: str, tmp_path: Path) -> None:
    src, dst = f"KPR_SRC_{os.getpid()}", f"KPR_DST_{os.getpid()}"
    ddl = (
        f"CREATE TABLE {src} (U VARCHAR NOT NULL, ID BIGINT NOT NULL, AT TIMESTAMP NOT NULL, AMOUNT DECIMAL(10,2), "
        "NAME VARCHAR CONSTRAINT PK PRIMARY KEY (U, ID DESC, AT)) SALT_BUCKETS=8"
    )
    ddl_path = tmp_path / "src.sql"
    ddl_path.write_text(ddl + ";\n")
    state = tmp_path / "state.json"
    jdbc = PhoenixOracle(f"jdbc:phoenix:{phoenix_url}")
    store = HBaseStore.from_url(phoenix_url)
    source: PhoenixTable = parse_ddl(ddl)
    peer = peer_id_for(ResaltSchema(source), ResaltSchema(parse_ddl(target_ddl(source, dst, 16))))  # names only
    cli = [sys.executable, "-m", "keyshape.cli", "phoenix", "resalt", str(ddl_path), "--buckets", "16", "--target", dst]
    writer = PhoenixWriter(jdbc, src)
    proc: subprocess.Popen[str] | None = None
    try:
        jdbc.execute(ddl)
        jdbc.ask("GENERATE", f"UPSERT INTO {src} (U, ID, AT, AMOUNT, NAME) VALUES (?, ?, ?, ?, ?)", str(ROWS), *_params_template())
        # the target as a user makes it: keyshape prints the CREATE TABLE, Phoenix runs it
        printed = subprocess.run(cli, capture_output=True, text=True, cwd=ROOT, timeout=120, check=True).stdout
        # before Phoenix made the target: refused in one line, nothing changed
        refused = subprocess.run(
            [*cli, "--apply", "--online", "--hbase", phoenix_url, "--state", str(state)], capture_output=True, text=True, cwd=ROOT, timeout=120
        )
        assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert "does not exist; run the CREATE TABLE printed by keyshape phoenix resalt" in refused.stderr
        assert not store.table_exists(dst) and peer not in store.replication_peers()
        target_sql = "\n".join(line for line in printed.splitlines() if not line.startswith("--")).strip().removesuffix(";")
        jdbc.execute(target_sql)
        target = parse_ddl(target_sql)
        assert target.key.salt_buckets == 16 and target.key.columns == source.key.columns

        # the operator's flow (as tests/hbase/test_migrate_online.py): stream while Phoenix writes,
        # stop the writer (the applications are switched), Ctrl-C, then --cutover. A --cutover run
        # started while the writer still writes races it: its verify can meet an edit HBase has not
        # shipped yet.
        writer.start()
        common = [*cli, "--apply", "--online", "--hbase", phoenix_url, "--state", str(state)]
        log = tmp_path / "stream.log"
        with open(log, "w") as out:
            proc = subprocess.Popen([*common, "--set-replication-scope"], stdout=out, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        online = online_state_path(state)

        def alive() -> None:
            assert proc is not None and proc.poll() is None, log.read_text()

        def streaming() -> bool:
            alive()
            return online.is_file() and json.loads(online.read_text())["phase"] == "stream"

        def streaming_the_writers_edits() -> bool:
            alive()
            lines = re.findall(r"^stream: .*stream [\d,]+ cells received, ([\d,]+) applied", log.read_text(), re.M)
            return bool(lines) and int(lines[-1].replace(",", "")) > 0

        wait_for("the stream phase", streaming, 180)
        wait_for("the stream to apply Phoenix's edits to the target", streaming_the_writers_edits, 120)

        # Phoenix goes on writing while the stream applies: until it has deleted, re-put and added
        # rows enough for the checks below (a count, not a time: a slow run made 60 upserts in 2 s)
        def written_enough() -> bool:
            alive()
            assert writer.error is None, writer.error
            c = writer.counts
            return c["deletes"] > 20 and c["reputs"] > 5 and c["upserts"] > 50 and max(writer.alive) >= ROWS

        wait_for("the writer's deletes, re-puts and new rows", written_enough, 300)
        writer.stop.set()
        writer.join(60)
        assert not writer.is_alive() and writer.error is None, writer.error
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130, log.read_text()
        assert "run the same command again to resume" in log.read_text(), log.read_text()
        streamed = log.read_text()
        log = tmp_path / "cutover.log"
        with open(log, "w") as out:
            proc = subprocess.Popen([*common, "--cutover", "--max-lag", "1"], stdout=out, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        code = proc.wait(300)
        output = log.read_text()
        assert code == 0, output
        counts = writer.counts
        assert counts["deletes"] > 20 and counts["reputs"] > 5 and counts["upserts"] > 50, counts

        # Phoenix reads both tables: the same rows, and they are what the writer left (deleted rows absent)
        src_rows, dst_rows = _rows(jdbc, src), _rows(jdbc, dst)
        assert src_rows == dst_rows
        assert sorted(from_param(r.split("|")[1]) for r in dst_rows) == sorted(writer.alive)
        assert len(dst_rows) == len(writer.alive) and max(writer.alive) >= ROWS
        names = {from_param(r.split("|")[1]): from_param(r.split("|")[4]) for r in dst_rows}
        assert names == {i: p[4].removeprefix("txt:") for i, p in writer.alive.items()}
        ats = {from_param(r.split("|")[1]): from_param(r.split("|")[2]) for r in dst_rows}
        assert all(ats[i] == PhoenixTimestamp(AT_MS, i) for i in writer.alive), "TIMESTAMP nanoseconds kept"
        # keyshape's verify passed at the cut-over, and the stream applied edits (in the streaming
        # run: the cut-over run may receive nothing, the writer stopped before it)
        assert "verify: OK" in output and "cut over" in output, output
        final = re.search(r"^done: .*stream ([\d,]+) cells received, ([\d,]+) applied, .* ([\d,]+) rows rejected", output, re.M)
        assert final is not None, output
        assert final.group(3) == "0", final.group(0)
        applied = re.findall(r"^stream: .*stream [\d,]+ cells received, ([\d,]+) applied", streamed, re.M)
        assert applied and int(applied[-1].replace(",", "")) > 0, streamed
        assert peer not in store.replication_peers()

        # the referee: cell for cell, every version, timestamps included
        old_cells = content(store, ResaltSchema(source))
        new_cells = content(store, ResaltSchema(target))
        assert len(old_cells) == len(writer.alive)
        assert old_cells == new_cells
        # the re-salt rule on the real keys: the rest behind its 16-bucket salt byte
        old_keys = [k for k, _ in store.scan(source.hbase_table)]
        new_keys = [k for k, _ in store.scan(target.hbase_table)]
        assert sorted(bytes([phoenix_salt(k[1:], 16)]) + k[1:] for k in old_keys) == sorted(new_keys)
        assert {k[0] for k in new_keys} == set(range(16))
        # the general Phoenix key schema reads AT in milliseconds: it would have re-keyed these rows elsewhere
        general_old, general_new = PhoenixKeySchema(source), PhoenixKeySchema(target)
        assert all(general_new.encode(general_old.decode(k))[1:] != k[1:] for k in old_keys[:50])
    finally:
        writer.stop.set()
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if peer in store.replication_peers():  # a failed run's; never another migration's
            store.remove_replication_peer(peer)
        store.close()
        jdbc.close()


def _params_template() -> list[str]:
    return ["txt:user{i}", "i8:{i}", f"ts:{AT_MS}:{{i}}", "dec:{i}.00", "txt:name-{i}-v0"]


@pytest.mark.parametrize(
    "extra",
    [
        ["--online", "--hbase", "127.0.0.1:2181"],  # no --apply
        ["--apply", "--online"],  # no --hbase
        ["--cutover"],  # an --online option without --online
    ],
)
def test_online_without_apply_or_hbase_is_one_line(extra: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "keyshape.cli", "phoenix", "resalt", "examples/phoenix/events.sql", "--table", "EVENTS", "--buckets", "16"]
        + ["--target", "E2", *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode != 0 and proc.stdout == "", proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    # the first option missing what it works with is named (the CLI's one rule for every command),
    # or resalt's own: --online needs --apply and --hbase
    assert any(
        m in lines[0] for m in ("--online needs --apply and --hbase", "works with --apply only", "works with --online only", "apply to --online only")
    ), lines[0]
