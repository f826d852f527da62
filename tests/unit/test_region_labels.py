"""Region labels decoded by the schema (keyshape.schema.labels), and where reports show them:
the terminal table, the PNG tick labels, the JSON, the HTML table and heat-map data; the
compare reports' per-panel colour scale."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import matplotlib.pyplot as plt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from keyshape import KeySchema
from keyshape.analysis.designs import analyze_schema
from keyshape.core.hbytes import to_string_binary
from keyshape.report import html, png, terminal
from keyshape.schema.labels import key_label, label_legend


def schema(prefix: object = "none", separator: str = "_", splits: dict | None = None, rows: int = 4000) -> KeySchema:
    d: dict = {
        "table": {"name": "t"},
        "key": {
            "prefix": prefix,
            "separator": separator,
            "fields": [
                {"name": "user", "type": "string"},
                {"name": "ts", "type": "timestamp"},
                {"name": "n", "type": "int32", "encoding": "text", "width": 6},
            ],
        },
        "workload": {"rows": rows, "fields": {"user": {"generator": "zipf", "cardinality": 500, "format": "user{:04d}"}}},
    }
    if splits:
        d["splits"] = splits
    return KeySchema.from_dict(d)


MOD = {"strategy": "mod", "buckets": 16}


def test_bucket_start_keys_read_as_buckets() -> None:
    s = schema(MOD)
    assert label_legend(s) == "bucket · user · ts · n"
    assert key_label(s, b"03") == "bucket 03"
    assert key_label(s, b"03_user0042") == "bucket 03 · user0042"
    phoenix = KeySchema.from_dict(
        {"table": {"name": "t"}, "key": {"prefix": {"strategy": "phoenix", "buckets": 8}, "fields": [{"name": "a", "type": "int64"}]}}
    )
    assert key_label(phoenix, b"\x05") == "bucket 5"


def test_time_split_reads_as_a_time() -> None:
    s = KeySchema.from_dict(
        {"table": {"name": "t"}, "key": {"fields": [{"name": "event_time", "type": "timestamp"}, {"name": "id", "type": "int32"}]}}
    )
    t = int(datetime(2026, 1, 1, 3, tzinfo=UTC).timestamp() * 1000)
    assert key_label(s, t.to_bytes(8, "big")) == "2026-01-01 03:00"
    assert key_label(s, (t + 1500).to_bytes(8, "big")) == "2026-01-01 03:00:01.500"
    # Cut inside the timestamp: nothing whole to show, so toStringBinary.
    assert key_label(s, t.to_bytes(8, "big")[:5]) == to_string_binary(t.to_bytes(8, "big")[:5])


def test_partial_and_unreadable_keys() -> None:
    s = schema(MOD)
    assert key_label(s, b"") == ""
    assert key_label(s, b"03_user0042_\x00\x00") == "bucket 03 · user0042…"
    assert key_label(s, b"\xff\xfe") == "\\xFF\\xFE"  # not a bucket of this schema
    full = KeySchema.from_dict({"table": {"name": "t"}, "key": {"prefix": "md5-full", "fields": [{"name": "a", "type": "string"}]}})
    assert label_legend(full) == "a" and key_label(full, b"0f3a") == "0f3a"


def test_encode_only_keys_show_what_can_be_read() -> None:
    s = KeySchema.from_dict(
        {"table": {"name": "t"}, "key": {"prefix": "java-hash-short", "fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "string"}]}}
    )
    key = s.encode({"a": "user", "b": "142"})
    assert key_label(s, key) == f"hash {int.from_bytes(key[:2], 'big')} · user142"


@settings(max_examples=60, deadline=None)
@given(
    user=st.text(alphabet=st.characters(blacklist_characters="_", blacklist_categories=("Cs",)), min_size=1, max_size=12),
    ts=st.integers(0, 4_102_444_800_000),
    n=st.integers(0, 999_999),
)
def test_whole_keys_read_back_every_field(user: str, ts: int, n: int) -> None:
    s = schema(MOD)
    label = key_label(s, s.encode({"user": user, "ts": ts, "n": n}))
    parts = label.split(" · ")
    assert len(parts) == 4 and parts[0].startswith("bucket ") and parts[3] == str(n)
    assert parts[1] == (user if len(user) <= 24 else user[:23] + "…")
    when = datetime.fromtimestamp(ts / 1000, UTC)
    assert parts[2].startswith(when.strftime("%Y-%m-%d %H:%M"))


def test_reports_show_decoded_labels() -> None:
    s = schema(MOD, splits={"algorithm": "prefix", "regions": 4})
    a = analyze_schema(s, windows=10)
    assert [r.start_text for r in a.regions] == ["", "bucket 04", "bucket 08", "bucket 12"]
    assert a.label_legend == "bucket · user · ts · n"
    d = a.to_dict()
    assert [r["start_decoded"] for r in d["regions"]][1:] == ["bucket 04", "bucket 08", "bucket 12"]
    console = Console(width=120, record=True)
    console.print(terminal.region_table(a, width=120))
    text = console.export_text()
    assert "start decoded" in text and "bucket 08" in text and "bucket · user · ts · n" in text
    assert png.region_tick_labels(a)[1:] == ["bucket 04", "bucket 08", "bucket 12"]
    page = html.render_html(a)
    assert "<td class=key>bucket 08</td>" in page
    data = json.loads(re.search(r'class="ks-data">(.*?)</script>', page).group(1))
    assert data["regions"][2]["decoded"] == "bucket 08" and data["regions"][2]["start"] == "08"


def test_compare_colour_scale_shared_or_per_panel() -> None:
    hot = analyze_schema(schema(splits={"algorithm": "sample", "regions": 4}, rows=3000), windows=10, name="plain")
    even = analyze_schema(schema(MOD, splits={"algorithm": "prefix", "regions": 4}, rows=3000), windows=10, name="salted")
    maxes = [float(hot.heat.max()), float(even.heat.max())]
    assert maxes[0] != maxes[1]

    def vmaxes(page: str) -> list[float]:
        return [json.loads(m)["vmax"] for m in re.findall(r'class="ks-data">(.*?)</script>', page)]

    # The per-panel page is checked in a browser (tests/browser/test_report_browser.py).
    assert vmaxes(html.render_compare_html([hot, even])) == [max(maxes)] * 2
    for scale, want in (("per-panel", maxes), ("shared", [max(maxes)] * 2)):
        fig = png.compare_figure([hot, even], scale)
        assert [im.get_clim()[1] for ax in fig.axes[:2] for im in ax.get_images()] == want
        plt.close(fig)
    with pytest.raises(ValueError, match="per-panel"):
        png.compare_figure([hot], "loud")


def test_cli_compare_colour_scale_reaches_the_html(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    page = tmp_path / "c.html"
    args = [
        sys.executable,
        "-m",
        "keyshape.cli",
        "compare",
        str(examples / "sequential.toml"),
        str(examples / "orders.toml"),
        "--rows",
        "3000",
        "--regions",
        "8",
        "--windows",
        "5",
        "--html",
        str(page),
    ]
    p = subprocess.run([*args, "--colour-scale", "per-panel"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    found = [json.loads(m)["vmax"] for m in re.findall(r'class="ks-data">(.*?)</script>', page.read_text(encoding="utf-8"))]
    assert len(found) == 2 and found[0] != found[1]  # each design on its own scale
    p = subprocess.run([*args, "--colour-scale", "loud"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "per-panel" in p.stderr and len(p.stderr.strip().splitlines()) == 1
