"""advise's numbers checked by replay (issue 39, items 1-4): every table a design writes is scored,
the write concentration is a share of the whole replay (not window noise) with ties within its
precision, reads are priced from the workload's rates and the sample's shares (not the sample's
pace), and what advise cannot model is refused in one line. Samples are generated here; no HBase."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from keyshape.analysis.advise import AdviseError, advise, parse_spec
from keyshape.analysis.advise.sample import read_sample

START = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def _write(tmp: Path, name: str, columns: dict[str, object]) -> Path:
    out = tmp / f"{name}.parquet"
    pq.write_table(pa.table(columns), out)
    return out


def _workload(tmp: Path, text: str) -> Path:
    path = tmp / "W.toml"
    path.write_text(text)
    return path


# -- 1. every table a design writes ------------------------------------------------------------

LEDGER = """
[entity]
id = ["entry_id"]
time = "ts"
[write]
rows_per_second = 20000
[horizon]
days = 365
[cluster]
servers = 6
[[pattern]]
name = "entry by id"
kind = "get"
fields = ["entry_id"]
rate = 200
goal_ms = 5
[[pattern]]
name = "entries of the last minute"
kind = "window"
fields = []
window = "1m"
rate = 0.0002
goal_ms = 1000
"""


def test_an_unsalted_time_index_table_is_scored_and_its_design_loses(tmp_path: Path) -> None:
    """A ledger with increasing ids at 20,000 writes/s and a rare 'last minute' read (every 80
    minutes: a full scan of the salted table costs less than a hot index). A design that
    adds an index table keyed by the bare event time writes every index row to the index's newest
    region: with the main table's puts, that server takes over half of all puts (1/6 is fair).
    Scoring only the main table called it 17%."""
    n = 6_000
    ts = pa.array(START + np.arange(n) * 50, pa.timestamp("ms"))
    data = _write(tmp_path, "ledger", {"entry_id": np.arange(1_000_000, 1_000_000 + n), "ts": ts})
    advice = advise(data, _workload(tmp_path, LEDGER), max_designs=24)
    time_index = [s for s in advice.ranked if any(t.field_names[0] == "ts" and not t.prefix.salted for t in s.design.index_tables)]
    assert time_index, [s.design.label for s in advice.ranked]
    for s in time_index:
        # The main table's salted puts spread over 6 servers; the index's all land on one.
        assert s.concentration > 0.5, (s.design.label, s.concentration)
        assert len(s.tables) == 1 + len(s.design.index_tables)  # each table went through the analyzer
        assert max(s.table_shares[1:]) > 0.95  # the index table alone: one server
    assert advice.top not in time_index, advice.top.design.label
    assert advice.top.concentration < 0.3, (advice.top.design.label, advice.top.concentration)
    # the report draws each top design's index tables' own maps beside the main one, with the
    # busiest server's share of each
    from keyshape.report.advise import render_advice_html

    page = render_advice_html(advice, top=3)
    drawn = [(name, share) for s in advice.ranked[:3] for (name, _), share in zip(s.tables[1:], s.table_shares[1:])]
    assert drawn, [s.design.label for s in advice.ranked[:3]]  # the top designs salt an index table
    for name, share in drawn:
        assert f"Predicted heat map of index table {name} (its busiest server takes {100 * share:.0f}% of its puts)" in page
    assert page.count('class="ks-heat"') == 3 + len(drawn)


# -- 2. skew, not noise -----------------------------------------------------------------------

USERS = """
[entity]
id = ["user_id", "event_id"]
time = "ts"
[write]
rows_per_second = 2000
[horizon]
days = 365
[cluster]
servers = 3
[[pattern]]
name = "event by user and id"
kind = "get"
fields = ["user_id", "event_id"]
rate = 100
goal_ms = 5
"""

HAND = """
[table]
name = "{name}"
[[table.families]]
name = "d"
[key]
separator = "_"
prefix = {{ strategy = "{strategy}"{option} }}
hash_fields = ["user_id"]
[[key.fields]]
name = "user_id"
type = "string"
[[key.fields]]
name = "event_id"
type = "int64"
encoding = "hbase"
[splits]
algorithm = "prefix"
regions = 6
"""


def test_java_hashcode_mod_32_ranks_below_real_hashes_of_32_buckets(tmp_path: Path) -> None:
    """``String.hashCode() mod 32`` over ``user0000042``-style ids fills its buckets unevenly (the
    busiest about 2x the mean); murmur3 mod 32 and md5 do not. Measured as the busiest server's
    share of the whole replay, the difference is skew, beyond the share's noise, and ranks the
    hashCode design below both (the window mean's noise used to put it in front 1)."""
    rng = np.random.default_rng(3)
    n = 20_000
    users = [f"user{v:07d}" for v in rng.integers(0, 100_000, n)]
    data = _write(tmp_path, "users", {"user_id": users, "event_id": np.arange(n), "ts": pa.array(START + np.arange(n) * 10, pa.timestamp("ms"))})
    hands = []
    for name, strategy, option in (("java_mod32", "mod", ", buckets = 32"), ("murmur_32", "murmur3", ", buckets = 32"), ("md5_4", "md5", "")):
        path = tmp_path / f"{name}.toml"
        path.write_text(HAND.format(name=name, strategy=strategy, option=option))
        hands.append(path)
    advice = advise(data, _workload(tmp_path, USERS), compare=hands, max_designs=8)
    by = {s.design.name: s for s in advice.ranked if s.design.hand}
    java, murmur, md5 = by["java_mod32"], by["murmur_32"], by["md5_4"]
    for real in (murmur, md5):
        gap = java.concentration - real.concentration
        assert gap > 2 * np.hypot(java.concentration_se, real.concentration_se), (java.concentration, real.concentration)
        assert java.rank > real.rank and java.front > real.front and java.tie != real.rank
    assert murmur.concentration < 0.36 and md5.concentration < 0.36 and java.concentration > 0.36


def test_designs_equal_within_the_precision_share_a_rank_and_say_so(tmp_path: Path) -> None:
    """Salts of 3, 6 and 12 buckets over the same field place the same keys alike within the
    share's noise and cost the same reads: one rank, and the table says they are equal."""
    from keyshape.report.advise import render_advice_html

    rng = np.random.default_rng(5)
    n = 6000
    users = [f"user{v:07d}" for v in rng.integers(0, 100_000, n)]
    data = _write(tmp_path, "users", {"user_id": users, "event_id": np.arange(n), "ts": pa.array(START + np.arange(n) * 10, pa.timestamp("ms"))})
    advice = advise(data, _workload(tmp_path, USERS), max_designs=16)
    salted = [s for s in advice.ranked if s.design.shape.counted and s.design.shape.hash_fields == ("user_id",) and not s.design.indexes]
    assert len(salted) >= 3
    assert len({s.rank for s in salted}) == 1 and all(s.tie == s.rank for s in salted), [(s.design.label, s.rank, s.tie) for s in salted]
    tied = [s for s in advice.ranked[1:] if s.rank == advice.top.rank]
    for s in tied:
        assert "equal to the top design within the model's precision" in s.reason
    assert "equal within the model" in render_advice_html(advice, top=len(advice.ranked))


# -- 3. rates from the workload --------------------------------------------------------------

MACHINES = """
[entity]
id = ["machine", "ts"]
time = "ts"
[write]
rows_per_second = 2
[horizon]
days = 30
[cluster]
servers = 3
[[pattern]]
name = "a machine's last day"
kind = "window"
fields = ["machine"]
window = "1d"
rate = 5
goal_ms = 50
"""


def test_a_window_longer_than_the_sample_is_priced_at_the_workload_rate(tmp_path: Path) -> None:
    """'last day' at 2 rows/s over 3,000 machines: ~58 rows a machine. The sample spans 3 hours
    (~7 rows a machine); the read is priced at the rate, not at what the sample holds."""
    rng = np.random.default_rng(11)
    n = 21_600  # 3 hours at 2 rows/s
    data = _write(
        tmp_path,
        "machines",
        {
            "machine": [f"m{v:04d}" for v in rng.integers(0, 3000, n)],
            "ts": pa.array(START + np.sort(rng.integers(0, 3 * 3_600_000, n)), pa.timestamp("ms")),
        },
    )
    advice = advise(data, _workload(tmp_path, MACHINES), max_designs=8)
    plain = next(s for s in advice.ranked if s.design.shape.order == ("machine", "ts") and not s.design.shape.salted and not s.design.shape.bucket_ms)
    rows = plain.pattern("a machine's last day").rows
    assert 35 < rows < 90, rows  # 2 x 86,400 / 3,000 = 57.6


def test_a_window_longer_than_the_horizon_is_refused_in_one_line() -> None:
    text = MACHINES.replace('window = "1d"', 'window = "60d"')
    with pytest.raises(AdviseError) as err:
        parse_spec(tomllib.loads(text), "W.toml")
    msg = str(err.value)
    assert "\n" not in msg and "pattern[0].window" in msg and "longer than the horizon" in msg and "30 days" in msg


# -- 4. non-UTF-8 text -----------------------------------------------------------------------

LATIN = """
[entity]
id = ["customer", "order_id"]
time = "order_time"
[write]
rows_per_second = 100
[[pattern]]
name = "orders of a customer"
kind = "prefix"
fields = ["customer"]
rate = 1
"""


def _latin1_csv(tmp: Path) -> Path:
    path = tmp / "orders.csv"
    lines = ["customer,order_id,order_time"] + [f"{n},{i},2026-01-0{1 + i % 9}T00:00:00" for i, n in enumerate(["Müller", "José", "Smith"] * 50)]
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    return path


def test_a_latin1_csv_is_refused_naming_the_field_and_the_encoding(tmp_path: Path) -> None:
    spec = parse_spec(tomllib.loads(LATIN), "W.toml")
    with pytest.raises(AdviseError) as err:
        read_sample(_latin1_csv(tmp_path), spec)
    msg = str(err.value)
    assert "\n" not in msg and "field 'customer' is not UTF-8" in msg and '[data] encoding = "latin-1"' in msg
    # Declared, the text is read as text (keys as UTF-8, as Java's Bytes.toBytes(String) writes them).
    declared = parse_spec(tomllib.loads(LATIN + '[data]\nencoding = "latin-1"\n'), "W.toml")
    s = read_sample(_latin1_csv(tmp_path), declared)
    assert s.types["customer"] == "string" and "Müller" in s.columns["customer"]
    # Declared bytes, the raw bytes are the key.
    raw = parse_spec(tomllib.loads(LATIN + '[types]\ncustomer = "bytes"\n'), "W.toml")
    assert read_sample(_latin1_csv(tmp_path), raw).types["customer"] == "bytes"


def test_cli_refuses_a_latin1_csv_in_one_line(tmp_path: Path) -> None:
    w = _workload(tmp_path, LATIN)
    cmd = [sys.executable, "-m", "keyshape.cli", "advise", "--data", str(_latin1_csv(tmp_path)), "--queries", str(w)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "not UTF-8" in r.stderr and "Traceback" not in r.stderr
