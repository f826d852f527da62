"""The de-salted (logical) key axis of ``keyshape serve`` and the history's key window and lane,
over made-up histories (no cluster)."""

from __future__ import annotations

import struct
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.schema import KeySchema
from keyshape.serve.fold import bucket_starts, fold
from keyshape.serve.history import NO_SERVER, Cell, History

SCHEMA = """
[table]
name = "kss_fold"
[[table.families]]
name = "d"
[key]
{prefix}
[[key.fields]]
name = "event_id"
type = "int64"
encoding = "hbase"
"""


def schema(prefix: str) -> KeySchema:
    return KeySchema.from_dict(tomllib.loads(SCHEMA.format(prefix=prefix)))


def test_bucket_starts_come_from_the_strategy_and_none_unsalted() -> None:
    assert bucket_starts(schema('prefix = { strategy = "phoenix", buckets = 4 }').prefix) == [b"", b"\x01", b"\x02", b"\x03"]
    assert bucket_starts(schema('prefix = { strategy = "mod", buckets = 3 }\nseparator = "|"').prefix) == [b"", b"01|", b"02|"]
    assert bucket_starts(schema("").prefix) == []


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 16),
    st.lists(st.integers(0, 10**6), min_size=0, max_size=5, unique=True),
    st.integers(1, 6),
    st.data(),
)
def test_folding_keeps_every_request_and_maps_each_bucket_onto_one_logical_axis(
    buckets: int, cuts: list[int], times: int, data: st.DataObject
) -> None:
    """Regions: every salt bucket cut at the same logical ids (a pre-split salted table after
    even splits). The physical axis has buckets x (cuts + 1) key buckets; the logical one
    cuts + 1, each the sum of its copies in every bucket; nothing is lost."""
    p = schema(f'prefix = {{ strategy = "phoenix", buckets = {buckets} }}').prefix
    cuts = sorted(cuts)
    starts = []
    for b in range(buckets):
        starts.append(b"" if b == 0 else bytes([b]))
        starts += [bytes([b]) + struct.pack(">q", c) for c in cuts if c > 0]
    values = np.array(data.draw(st.lists(st.lists(st.floats(0, 1e6), min_size=len(starts), max_size=len(starts)), min_size=times, max_size=times)))
    axis, folded = fold(p, starts, values)
    logical_cuts = [struct.pack(">q", c) for c in cuts if c > 0]
    assert axis == [b""] + logical_cuts
    assert folded.shape == (times, len(axis))
    assert np.allclose(folded.sum(axis=1), values.sum(axis=1))
    per = len(logical_cuts) + 1
    assert np.allclose(folded, values.reshape(times, buckets, per).sum(axis=1))


def test_a_region_over_several_logical_buckets_is_shared_evenly() -> None:
    """Bucket 0 cut at 100 and 200, bucket 1 uncut: bucket 1's one range covers both logical
    cuts, its value shared by the three logical buckets."""
    p = schema('prefix = { strategy = "phoenix", buckets = 2 }').prefix
    a, b = struct.pack(">q", 100), struct.pack(">q", 200)
    starts = [b"", b"\x00" + a, b"\x00" + b, b"\x01"]
    axis, folded = fold(p, starts, np.array([[1.0, 2.0, 3.0, 30.0]]))
    assert axis == [b"", a, b]
    assert folded.tolist() == [[11.0, 12.0, 13.0]]


def test_unsalted_keys_are_left_as_they_are() -> None:
    values = np.array([[1.0, 2.0]])
    axis, folded = fold(schema("").prefix, [b"", b"m"], values)
    assert axis == [b"", b"m"] and folded is values


def test_the_heat_query_cuts_a_key_window_at_the_resolution_asked(tmp_path: Path) -> None:
    h = History(tmp_path / "h.db")
    starts = [b""] + [bytes([k]) for k in range(1, 100)]
    cells = [Cell(f"r{k}", s, starts[k + 1] if k + 1 < 100 else b"", f"rs{k % 3}", float(k), 0.0, store_bytes=k << 20) for k, s in enumerate(starts)]
    h.record("t", 1000.0, cells)
    whole = h.heat("t", 0.0, 2000.0, max_keys=10, metrics=("write", "store"))
    assert len(whole.starts) == 10 and whole.total_keys == 100 and whole.values["write"].sum() == sum(range(100))
    window = h.heat("t", 0.0, 2000.0, max_keys=10, metrics=("write",), k0=0.5, k1=0.6, lane=True)
    # the window's 10 key buckets are the regions 50..59, one each: finer than the whole map's
    assert window.starts == starts[50:60] and window.values["write"].tolist() == [list(map(float, range(50, 60)))]
    assert window.lane is not None and [window.servers[s] for s in window.lane[0]] == [f"rs{k % 3}" for k in range(50, 60)]
    assert whole.values["store"].sum() == sum(range(100))
    h.close()


def test_the_lane_follows_a_move(tmp_path: Path) -> None:
    h = History(tmp_path / "h.db")
    for i in range(4):
        h.record("t", 1000.0 + i, [Cell("r", b"", b"", "rs0" if i < 2 else "rs1", 1.0, 0.0)])
    q = h.heat("t", 0.0, 2000.0, lane=True)
    assert q.lane is not None and q.servers == ["rs0", "rs1"]
    assert q.lane[:, 0].tolist() == [0, 0, 1, 1]
    h.close()
    # a reopened history still knows where each region was
    again = History(tmp_path / "h.db")
    again.record("t", 1004.0, [Cell("r", b"", b"", "rs1", 1.0, 0.0)])
    q = again.heat("t", 0.0, 2000.0, lane=True)
    assert q.lane is not None and q.lane[:, 0].tolist() == [0, 0, 1, 1, 1] and NO_SERVER not in q.lane
    again.close()


def test_a_bad_window_is_refused_by_the_api(tmp_path: Path) -> None:
    import json
    import urllib.error
    import urllib.request

    from keyshape.serve import ServeOptions, Service
    from keyshape.store import open_store

    service = Service(ServeOptions(lambda: open_store("127.0.0.1:1"), str(tmp_path / "h.db"), (), {}, "127.0.0.1:0", 60.0)).start()
    try:
        for q in ("k0=0.5&k1=0.4", "metric=nope", "cells=0", "seconds=-1", "until=x"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"{service.url}/api/heatmap?table=t&{q}", timeout=10)
            assert refused.value.code == 400
            assert "metric one of write, read, requests, store" in json.loads(refused.value.read())["error"], q
    finally:
        service.stop()
