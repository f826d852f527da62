"""The key's public, immutable KeyLayout and the seams around it (issue 29): the codecs take a
layout and no module reads KeySchema's private fields; split algorithms sit behind one interface
in a registry; the synthetic workload lives in the schema layer (no schema <-> workload cycle)."""

from __future__ import annotations

from typing import Any

import copy
import dataclasses
import pickle
import re
from pathlib import Path

import pytest

from keyshape.errors import KeyshapeError, SchemaError
from keyshape.schema import KeyLayout, KeySchema, SplitSpec
from keyshape.schema.compiled import encoder_for
from keyshape.schema.compiled_decode import decoder_for
from keyshape.schema.splitting import SPLIT_ALGORITHMS, SplitAlgorithm, SplitContext

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "src" / "keyshape" / "schema"
ORDERS = ROOT / "examples" / "orders.toml"
REC = {"user_id": "user0000042", "order_time": 1767225600000, "order_id": "1234567"}


def test_the_layout_is_immutable_and_derives_what_the_codecs_read():
    schema = KeySchema.load(ORDERS)
    layout = schema.layout
    assert isinstance(layout, KeyLayout) and layout.fields == tuple(schema.fields)
    with pytest.raises(dataclasses.FrozenInstanceError):
        layout.separator = b"|"  # type: ignore[misc]
    hashed = [layout.fields[i].name for i in layout.hash_idx]
    assert hashed == schema.hash_fields and not layout.hashes_whole_key
    assert len(layout.field_ends) == len(layout.pad_bytes) == len(layout.fields)
    # the compiled, generic and façade routes agree on the layout alone
    key = schema.encode(REC)
    assert encoder_for(layout)(REC) == layout.encode_generic(REC) == key
    assert decoder_for(layout)(key) == layout.decode_generic(key) == schema.decode(key)
    # replace derives again: every field hashed, a new prefix; this layout is unchanged
    other = layout.replace(hash_fields=tuple(layout.field_names))
    assert other.hashes_whole_key and other.hash_idx == (0, 1, 2)
    assert encoder_for(other)(REC) == other.encode_generic(REC) and decoder_for(other)(other.encode_generic(REC)) == schema.decode(key)
    assert layout.encode_generic(REC) == key and not layout.hashes_whole_key


def test_a_layout_pickles_without_its_compiled_functions_and_compiles_its_own():
    layout = KeySchema.load(ORDERS).layout
    key = encoder_for(layout)(REC)
    back = pickle.loads(pickle.dumps(layout))
    assert encoder_for(back) is not encoder_for(layout)
    assert encoder_for(back)(REC) == key and decoder_for(back)(key) == decoder_for(layout)(key)
    schema = KeySchema.load(ORDERS)
    assert copy.copy(schema).layout is schema.layout  # a copy shares the immutable layout


def test_no_module_reads_a_private_attribute_of_a_schema():
    # A codec that needs something of the key reads it from the public KeyLayout.
    private = re.compile(r"\b(schema|key_schema|main_schema)\._[a-z]")
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted((ROOT / "src" / "keyshape").rglob("*.py"))
        if p.name != "keyschema.py"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if private.search(line)
    ]
    assert not found, found


def test_split_algorithms_are_one_registry_and_keyschema_names_none():
    # parse_splits offers exactly the registered names; KeySchema dispatches through the registry
    assert set(SPLIT_ALGORITHMS) == {"prefix", "hex", "decimal", "uniform", "range", "buckets", "sample", "explicit"}
    source = (SCHEMA_DIR / "keyschema.py").read_text(encoding="utf-8")
    assert not re.search(r"\.algorithm\s*(==|!=|in\b)", source)
    # ("prefix" and "buckets" are also the key's prefix section and its option)
    named = [name for name in SPLIT_ALGORITHMS if name not in ("prefix", "buckets") and (f'"{name}"' in source or f"'{name}'" in source)]
    assert not named


def test_a_registered_split_algorithm_is_parsed_and_used_without_other_changes():
    class EveryTenth(SplitAlgorithm):
        name = "every-tenth"

        def options(self, s, prefix, regions):  # type: ignore[no-untyped-def]
            return {"step": s.get("step", int, 10, minimum=1)}

        def split_keys(self, spec: SplitSpec, ctx: SplitContext) -> list[bytes]:
            return [b"%02d" % i for i in range(spec.options["step"], 100, spec.options["step"])]

    SPLIT_ALGORITHMS["every-tenth"] = EveryTenth()
    try:
        schema = KeySchema.from_dict(
            {
                "table": {"name": "t"},
                "key": {"fields": [{"name": "id", "type": "string"}]},
                "splits": {"algorithm": "every-tenth", "step": 25},
            }
        )
        assert schema.split_keys() == [b"25", b"50", b"75"]
    finally:
        del SPLIT_ALGORITHMS["every-tenth"]
    with pytest.raises(SchemaError, match="algorithm"):
        KeySchema.from_dict({"table": {"name": "t"}, "key": {"fields": [{"name": "id", "type": "string"}]}, "splits": {"algorithm": "every-tenth"}})


def test_sample_splits_need_a_workload_and_use_it():
    base = {"table": {"name": "t"}, "key": {"fields": [{"name": "id", "type": "int64"}]}}
    with_rows = KeySchema.from_dict({**base, "splits": {"algorithm": "sample", "regions": 4}, "workload": {"rows": 1000}})
    keys = with_rows.split_keys()
    assert len(keys) == 3 and keys == sorted(keys)
    schema = KeySchema.from_dict({**base, "splits": {"algorithm": "sample", "regions": 4}})
    with pytest.raises(KeyshapeError, match="needs a \\[workload\\]"):
        schema.split_keys()


def _salted(strategy: dict[str, Any], separator: str) -> KeySchema:
    return KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {
                "separator": separator,
                "prefix": strategy,
                "hash_fields": ["user"],
                "fields": [{"name": "user", "type": "string"}, {"name": "seq", "type": "int64", "encoding": "text", "width": 6}],
            },
        }
    )


@pytest.mark.parametrize(
    "strategy",
    [
        {"strategy": "mod", "buckets": 8},
        {"strategy": "murmur3", "buckets": 16},
        {"strategy": "md5", "length": 4},
        {"strategy": "crc32"},
        {"strategy": "java-hash-short"},
    ],
    ids=lambda d: d["strategy"],
)
def test_a_new_separator_reaches_the_prefix_so_every_route_writes_the_same_key(strategy: dict[str, Any]) -> None:
    """The prefix keeps its own copy of the separator it writes after itself: changing the schema's
    separator must change it too, or the compiled and the generic encoders disagree (before the fix:
    b'01|ann#0007' generic, b'01#ann#0007' compiled). Oracle: the schema built with '#' from the
    start, over 5,000 records whose users differ only in case and padding."""
    changed = _salted(strategy, "|")
    changed.separator = b"#"
    built = _salted(strategy, "#")
    users = [u for i in range(1000) for u in (f"ann{i}", f"Ann{i}", f"ann{i} ", f" ann{i}", f"ANN{i:05d}")]
    seqs = list(range(len(users)))
    expected = [built.encode({"user": u, "seq": q}) for u, q in zip(users, seqs)]
    assert len(set(expected)) == len(expected)
    assert [changed.encode({"user": u, "seq": q}) for u, q in zip(users, seqs)] == expected
    assert [changed.layout.encode_generic({"user": u, "seq": q}) for u, q in zip(users, seqs)] == expected
    assert [encoder_for(changed.layout)({"user": u, "seq": q}) for u, q in zip(users, seqs)] == expected
    assert changed.encode_many({"user": users, "seq": seqs}) == expected
    assert [changed.decode(k) for k in expected] == [{"user": u, "seq": q} for u, q in zip(users, seqs)]
    assert changed.prefix.separator == b"#"
