"""advise's prove step (issue 31, item 8) on keyshape's embedded store, a real in-process store
(the HBase run is `keyshape advise --prove K --hbase URL`): each design's tables are created at its
split points, filled with the sample, read by the routes the scorer chose, and dropped after; every
get of a record that exists finds it, through the main table or through an index."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from keyshape.analysis.advise import advise
from keyshape.analysis.advise.prove import _run, _scorer, prove, spearman
from keyshape.store import open_store

ORDERS = Path(__file__).resolve().parents[2] / "examples" / "advise" / "orders"


def test_spearman_matches_the_definition() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    assert abs(spearman([1, 2, 2, 3], [1, 3, 2, 4]) - 3 / 10**0.5) < 1e-9  # ties take their mean rank (Pearson on ranks)


def test_prove_on_the_embedded_store(tmp_path: Path) -> None:
    data = tmp_path / "orders.parquet"
    subprocess.run([sys.executable, str(ORDERS / "generate.py"), str(data), "2000"], check=True, capture_output=True)
    advice = advise(data, ORDERS / "WORKLOAD.toml", compare=[ORDERS / "hand-salted.toml"], max_designs=8)
    store = open_store(None)
    proof = prove(advice, store, k=2, requests=10, prefix="ksv_test")
    assert [m.name for m in proof.designs] == [s.design.name for s in advice.ranked if s.rank <= 2 or s.design.hand]
    assert all(set(m.latency_ms) == {p.name for p in advice.spec.patterns} and m.write_rows_per_s > 0 for m in proof.designs)
    assert -1.0 <= proof.spearman <= 1.0
    assert not [t for t in store.list_tables() if t.startswith("ksv_test")]  # dropped after
    # Every get finds its record, by the route the scorer chose (a get, a range, or index + get).
    scorer = _scorer(advice)
    get = next(p for p in advice.spec.patterns if p.kind == "get")
    with_index = next((s for s in advice.ranked if s.design.indexes), None)
    for s in [advice.ranked[0]] + ([with_index] if with_index else []):
        proof_one = prove_tables(store, s, scorer)
        try:
            route = scorer.score(s.design).pattern(get.name).route
            for q in scorer.queries[get.name][:10]:
                assert _run(store, s, route, get, q, "ksv_one", proof_one, scorer)[0] >= 1
        finally:
            for t in proof_one:
                store.delete_table(t)


def prove_tables(store, s, scorer) -> list[str]:  # type: ignore[no-untyped-def]
    """The design's tables filled as prove fills them (kept for the reads above)."""
    import dataclasses

    names = ["ksv_one"] + [f"ksv_one_i{j}" for j in range(len(s.design.index_tables))]
    store.create_table(dataclasses.replace(s.design.schema.table, name=names[0]), s.design.split_keys)
    cols = scorer.sample.columns
    keys = s.design.schema.encode_many({f: cols[f] for f in s.design.schema.field_names})
    with store.writer(names[0]) as w:
        for k in keys:
            w.put(k, {b"d:v": b"x"})
    for j, ischema in enumerate(s.design.index_tables):
        store.create_table(dataclasses.replace(ischema.table, name=names[j + 1]), [])
        with store.writer(names[j + 1]) as w:
            for k, main in zip(ischema.encode_many({f: cols[f] for f in ischema.field_names}), keys):
                w.put(k, {b"d:k": main})
    return names


def test_spread_picks_the_top_the_hand_and_designs_priced_apart(tmp_path: Path) -> None:
    from keyshape.analysis.advise.prove import spread

    data = tmp_path / "orders.parquet"
    subprocess.run([sys.executable, str(ORDERS / "generate.py"), str(data), "2000"], check=True, capture_output=True)
    advice = advise(data, ORDERS / "WORKLOAD.toml", compare=[ORDERS / "hand-salted.toml"], max_designs=40)
    chosen = spread(advice, 5, 12)
    assert len(chosen) == 5 and chosen[0] is advice.top and any(s.design.hand for s in chosen)
    assert len({s.design.name for s in chosen}) == 5
    scorer = _scorer(advice, 12)
    costs = sorted(scorer.score(s.design).weighted_cost for s in chosen if not s.design.hand and s is not advice.top)
    assert all(b > a for a, b in zip(costs, costs[1:]))  # the spread designs are priced apart
    # Over all the advisor's queries prove reuses its scores: the same numbers as scoring again.
    from keyshape.analysis.advise.prove import _rescore
    from keyshape.analysis.advise.score import QUERIES_PER_PATTERN

    full = _scorer(advice, QUERIES_PER_PATTERN)
    for s in chosen:
        assert _rescore(full, s, QUERIES_PER_PATTERN) is s and full.score(s.design).weighted_cost == s.weighted_cost


def test_cost_model_files_read_back_and_bad_ones_are_one_line(tmp_path: Path) -> None:
    import json

    import pytest

    from keyshape.analysis.advise import AdviseError, CostModel
    from keyshape.analysis.advise.calibrate import Calibration, load_model, save_model

    model = CostModel(rpc_ms=0.3, get_ms=0.9, row_us=0.7)
    path = save_model(Calibration(model, {}, [], 1.0), tmp_path / "m.json")
    assert load_model(path) == model
    for bad, says in [({"format": "x"}, "not a cost model file"), ({"format": "keyshape-cost-model/1", "constants": {"rpc_ms": -1}}, "positive")]:
        path.write_text(json.dumps(bad))
        with pytest.raises(AdviseError, match=says):
            load_model(path)


def test_history_adds_each_entity_s_rows_up_to_the_horizon(tmp_path: Path) -> None:
    """prove's step 2: earlier copies of the sample keep every field a read selects by (the same
    users), move the event time back by whole spans, and give the order id new values, so no
    copy overwrites a row: each user holds copies x its sampled orders, as the scorer assumes."""
    from keyshape.analysis.advise.prove import copies_for, history

    data = tmp_path / "orders.parquet"
    subprocess.run([sys.executable, str(ORDERS / "generate.py"), str(data), "1000"], check=True, capture_output=True)
    advice = advise(data, ORDERS / "WORKLOAD.toml", max_designs=12)
    scorer = _scorer(advice)
    copies = copies_for(scorer)
    assert copies == round(scorer.entity_scale) > 1  # 730 days over a 90-day sample
    cols = scorer.sample.columns
    # A key with the time and one without it (user + order id: only the new order ids keep rows apart).
    schemas = [advice.top.design.schema, next(s.design.schema for s in advice.ranked if "order_time" not in s.design.schema.field_names)]
    keys = [set(schema.encode_many({f: cols[f] for f in schema.field_names})) for schema in schemas]
    for c in range(1, copies):
        old = history(scorer, c)
        assert list(old["user_id"]) == list(cols["user_id"])
        assert int(max(old["order_time"])) < int(min(cols["order_time"])) - (c - 1) * scorer.sample.span_seconds * 1000
        for schema, seen in zip(schemas, keys):
            seen |= set(schema.encode_many({f: old[f] for f in schema.field_names}))
    assert [len(seen) for seen in keys] == [copies * scorer.sample.rows] * 2


def test_patterns_read_in_one_order_share_one_index_table(tmp_path: Path) -> None:
    """orders' window and latest reads both want (user, time desc, order id): a key that serves
    neither (the event time first) gets that index table once, written and stored once."""
    data = tmp_path / "orders.parquet"
    subprocess.run([sys.executable, str(ORDERS / "generate.py"), str(data), "1000"], check=True, capture_output=True)
    advice = advise(data, ORDERS / "WORKLOAD.toml", max_designs=64)
    spec = advice.spec
    s = next(s for s in advice.ranked if s.design.shape.order[0] == spec.time_field and s.design.indexes)
    assert len(s.design.indexes) == 3 and len(s.design.index_tables) == 2
    assert s.write_amp == 1 + 2 * (1 + spec.updates + spec.deletes)
    window, latest = (p.name for p in spec.patterns if p.kind in ("window", "latest"))
    assert s.design.index_table(window) == s.design.index_table(latest)
    assert s.design.label.count("index(") == 2
