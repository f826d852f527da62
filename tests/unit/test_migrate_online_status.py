"""``migrate --online``'s status when a region server dies (issue 32): the line names a dead server
whose replication queue no survivor has claimed yet and gives no lag, and the cut-over does not
count the stream as caught up meanwhile. ZooKeeper's ``/hbase/replication/rs`` is as recorded on
the 3-region-server test cluster (HBase 2.6.4, two migrations' peers, one server kill -9'd):
before the kill, between the kill and the claims, during the first claim and after both. The live
servers' reports are shaped as ``replication_sources`` returns them (lag 0: what they said then)."""

from __future__ import annotations

import json
import re
import time

from hypothesis import given
from hypothesis import strategies as st

from keyshape.ops.migrate_online import OnlineStatus, _Claims, _watching
from keyshape.store.hbase.admin import servers_with_queue

PEER_A, PEER_B = "keyshape_25577d79e88a", "keyshape_e178b433fe5a"  # the two migrations' peers
DEAD = "localhost,51923,1795767652148"  # the killed server, as ZooKeeper and the master name it
LIVE = ["localhost,34439,1795767653603", "localhost,42463,1795767653247"]

# /hbase/replication/rs/<server> -> its queue ids, as the observer read them (08:21:25 .. 08:22:42)
BEFORE = {LIVE[0]: [PEER_A, PEER_B], LIVE[1]: [PEER_A, PEER_B], DEAD: [PEER_A, PEER_B]}
KILLED = BEFORE  # the master lists DEAD as dead 6 s after the kill; its queues stay where they are
ONE_CLAIMED = {LIVE[0]: [PEER_A, PEER_B], LIVE[1]: [PEER_A, f"{PEER_A}-{DEAD}", PEER_B], DEAD: [PEER_B]}
BOTH_CLAIMED = {LIVE[0]: [PEER_B, f"{PEER_B}-{DEAD}"], LIVE[1]: [PEER_B]}  # DEAD's node removed once empty

# replication_sources(PEER_A) between the kill and the claim: the live servers have shipped all they had
SOURCES = json.loads(
    """[{"server": "localhost:34439", "age_of_last_shipped_ms": 0, "log_queue": 1, "lag_ms": 0,
         "last_shipped_ms": 1795767706011, "report_ms": 1795767730120},
        {"server": "localhost:42463", "age_of_last_shipped_ms": 0, "log_queue": 1, "lag_ms": 0,
         "last_shipped_ms": 1795767707480, "report_ms": 1795767729870}]"""
)
BEGAN_MS = 1795767720000  # the cut-over's wait began before both reports


def status(unclaimed: list[str], sources: list[dict[str, int | str]] = SOURCES, seen: float = 0.0) -> OnlineStatus:
    return OnlineStatus("cutover", 300, 2400, 2400, sources=sources, unclaimed=unclaimed, unclaimed_for=seen)


def test_the_queue_is_unclaimed_from_the_death_until_a_survivor_takes_it() -> None:
    assert servers_with_queue(PEER_A, {DEAD: KILLED[DEAD]}) == [DEAD]
    assert servers_with_queue(PEER_A, {DEAD: ONE_CLAIMED[DEAD]}) == []  # claimed: moved to LIVE[1]
    assert servers_with_queue(PEER_B, {DEAD: ONE_CLAIMED[DEAD]}) == [DEAD]  # the other peer's not yet
    assert servers_with_queue(PEER_B, {DEAD: BOTH_CLAIMED.get(DEAD, [])}) == []
    # a survivor holding the claimed queue ("<peer>-<dead>") owns it too: if it dies in turn, its
    # claimed queue waits for a claim again
    assert servers_with_queue(PEER_A, {LIVE[1]: ONE_CLAIMED[LIVE[1]]}) == [LIVE[1]]
    # another peer whose id begins with ours is not ours
    assert servers_with_queue(PEER_A, {DEAD: [PEER_A + "0", PEER_A + "_x-" + DEAD]}) == []


def test_the_status_line_names_the_dead_server_and_gives_no_lag_until_the_claim() -> None:
    pending = status([DEAD], seen=23.4)
    assert pending.live_lag == 0.0 and pending.source_lag is None
    line = pending.line()
    assert "source lag not known: a region server died (localhost,51923; seen dead 23 s)" in line
    assert "reach NEW once a survivor claims its queue, ~30-60 s" in line
    assert "the live servers' lag 0.0 s, 2 WAL(s) queued leaves them out" in line
    assert not re.search(r"source lag \d", line), "a number where the lag is not known"
    claimed = status([]).line()
    assert claimed.endswith("source lag 0.0 s, 2 WAL(s) queued") and "died" not in claimed
    assert "2 region servers died (localhost,51923; localhost,42463;" in status([DEAD, LIVE[1]]).line()
    assert status([], sources=[]).line().endswith("source not reported")
    unknown = OnlineStatus("stream", sources=SOURCES, claims_unknown="region server(s) localhost,51923 died; whether ... not known")
    assert unknown.line().endswith("source lag 0.0 s, 2 WAL(s) queued (region server(s) localhost,51923 died; whether ... not known)")


def test_the_cut_over_does_not_count_the_stream_caught_up_while_a_claim_is_pending() -> None:
    assert status([DEAD]).caught_up(max_lag=1.0, reported_after_ms=BEGAN_MS) is False
    assert status([]).caught_up(max_lag=1.0, reported_after_ms=BEGAN_MS) is True
    assert status([]).caught_up(max_lag=1.0, reported_after_ms=1795767731000) is None  # no report since
    lagging = [{**s, "lag_ms": 1500} for s in SOURCES]
    assert status([], sources=lagging).caught_up(max_lag=1.0, reported_after_ms=BEGAN_MS) is False
    assert status([], sources=lagging).caught_up(max_lag=2.0, reported_after_ms=BEGAN_MS) is True


def test_claims_remember_settled_servers_and_time_the_oldest_pending_one() -> None:
    claims = _Claims(store=None, peer_id=PEER_B)  # type: ignore[arg-type]  # record() reads no store
    assert claims.record([DEAD], servers_with_queue(PEER_B, {DEAD: KILLED[DEAD]}), now=100.0) == ([DEAD], 0.0)
    assert claims.record([DEAD], servers_with_queue(PEER_B, {DEAD: ONE_CLAIMED[DEAD]}), now=107.5) == ([DEAD], 7.5)
    other = "localhost,9,1"
    assert claims.record([DEAD, other], [DEAD, other], now=110.0) == ([DEAD, other], 10.0)  # the oldest counts
    assert claims.record([DEAD, other], servers_with_queue(PEER_B, {DEAD: [], other: []}), now=112.0) == ([], 0.0)
    assert claims.settled == {DEAD, other}  # never asked about again: a dead server gets no new queue


def test_a_server_that_stopped_reporting_makes_the_lag_unknown_before_the_master_lists_it_dead() -> None:
    # the killed server's last report, frozen, beside the survivors' newer ones
    frozen = {**SOURCES[0], "server": "localhost:51923", "report_ms": 1795767730120 - 12_400}
    quiet = status([], sources=[*SOURCES, frozen])
    assert quiet.silent == [("localhost:51923", 12.4)] and quiet.source_lag is None
    assert "source lag not known: no report from localhost:51923 for 12 s" in quiet.line()
    assert quiet.caught_up(max_lag=1.0, reported_after_ms=BEGAN_MS) is False
    late = {**frozen, "report_ms": 1795767730120 - 6_000}  # two reports missed: not yet silent
    assert status([], sources=[*SOURCES, late]).silent == []
    assert status([], sources=[frozen]).silent == []  # nothing to compare with


def test_the_status_keeps_coming_while_the_verify_runs_and_stops_with_it() -> None:
    # the verify of the kill test blocked ~10 s on the dead server's regions: the status that
    # named the dead server came from here
    shown: list[OnlineStatus] = []
    with _watching(lambda phase: status([DEAD] if len(shown) == 1 else [], seen=len(shown)), shown.append, interval=0.05):
        deadline = time.monotonic() + 30  # a starved thread ticks late, never not at all
        while len(shown) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
    count = len(shown)
    assert count >= 4 and shown[1].unclaimed == [DEAD] and not shown[2].unclaimed
    time.sleep(0.15)
    assert len(shown) == count, "the status thread outlived the verify"
    with _watching(lambda phase: status([]), None, interval=0.01):  # no display: no thread
        pass


@given(
    st.dictionaries(
        st.from_regex(r"h[0-9],[0-9]{2},[0-9]{3}", fullmatch=True),
        st.lists(st.sampled_from([PEER_A, PEER_B, f"{PEER_A}-{DEAD}", f"{PEER_B}-{DEAD}", "1", PEER_A + "9"]), max_size=4),
        max_size=5,
    )
)
def test_a_server_is_pending_exactly_when_it_owns_a_queue_of_the_peer(queues: dict[str, list[str]]) -> None:
    pending = servers_with_queue(PEER_A, queues)
    assert pending == sorted(pending)
    for server, ids in queues.items():
        assert (server in pending) == (PEER_A in ids or f"{PEER_A}-{DEAD}" in ids)
