"""Terminal reports with rich: the per-region table, the key numbers, a one-line verdict, a
comparison table, and the progress bar the CLI shows while generating and assigning keys.

These functions build rich renderables (or take a ``Console`` the caller owns); the library never
prints on its own.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from rich import box
from rich.console import Console, Group, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from keyshape.analysis import Analysis, RegionLoad
from keyshape.analysis.stats import percent, percent_cell
from keyshape.core.hbytes import shared_prefix_length, to_string_binary

Justify = Literal["default", "left", "center", "right", "full"]
STYLES = {"balanced": "bold green", "skewed": "bold yellow", "hotspot": "bold red"}
_KEY_CHARS = 28
_MIN_KEY_CHARS = 14  # below this a binary key shows too little to tell regions apart


def _key(key: bytes, chars: int = _KEY_CHARS, skip: int = 0) -> str:
    """``key`` in toStringBinary form cut to ``chars`` cells. When it does not fit, the first
    ``skip`` bytes (a prefix every boundary shares) become "…", so the bytes that tell regions
    apart stay visible instead of the same leading bytes on every row."""
    text = to_string_binary(key)
    if len(text) <= chars:
        return text
    if 0 < skip < len(key):
        text = "…" + to_string_binary(key[skip:])
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _bar(share: float, top: float, width: int = 10) -> str:
    filled = 0 if top <= 0 else round(width * share / top)
    return "█" * filled + "·" * (width - filled)


def pick_regions(regions: Sequence[RegionLoad], limit: int) -> list[RegionLoad | None]:
    """The regions worth showing, in key order, with ``None`` marking skipped runs.

    All of them when there are at most ``limit``; otherwise the busiest ``limit * 2 // 3`` and the
    quietest rest, so both hot and cold regions stay visible.
    """
    if len(regions) <= limit:
        return list(regions)
    by_rows = sorted(regions, key=lambda r: r.rows)
    hot = max(1, limit * 2 // 3)
    chosen = {r.index for r in by_rows[-hot:]} | {r.index for r in by_rows[: limit - hot]}
    out: list[RegionLoad | None] = []
    for r in regions:
        if r.index in chosen:
            out.append(r)
        elif out and out[-1] is not None or not out:
            out.append(None)
    return out


def region_table(analysis: Analysis, limit: int = 24, width: int | None = None) -> Table:
    """A table of regions: start / end keys (toStringBinary), the start key decoded by the
    schema when it decodes (``RegionLoad.start_text``), rows, share, a bar, server.

    Keys are cut (with …) to fit ``width`` terminal cells when given; numbers and headers never
    are. When even that leaves the keys too few cells (80 columns: a pipe, a CI log), the end
    column goes first: a region's end is the next region's start, one row down.
    """
    regions = analysis.regions
    decoded = any(r.start_text for r in regions)
    top = max((r.share for r in regions), default=0.0)
    fair = 1 / len(regions)
    shown = pick_regions(regions, limit)
    skip = shared_prefix_length([r.start for r in regions] + [r.end for r in regions])
    numbers: list[tuple[str, Justify, int]] = [
        (analysis.count_label, "right", max(len(analysis.count_label), *(len(f"{r.rows:,}") for r in regions))),
        ("share", "right", len("100.0%")),
        ("", "left", 10),
        ("server", "right", max(len("server"), *(len(str(r.server)) for r in regions))),
    ]
    index_cells = max(1, len(str(len(regions) - 1)))
    # Every column costs its content plus 3 cells of padding and border, and the table one more.
    fixed = index_cells + sum(w for _, _, w in numbers) + 3 * (len(numbers) + 1) + 1
    shown_regions = [r for r in shown if r is not None]

    def need(texts: list[str], header: str) -> int:
        return min(_KEY_CHARS, max([len(header), *map(len, texts)]))

    widths = {
        "start": need([_key(r.start, _KEY_CHARS, skip) if r.start else "(start)" for r in shown_regions], "start"),
        "end": need([_key(r.end, _KEY_CHARS, skip) if r.end else "(end)" for r in shown_regions], "end"),
    }
    if decoded:
        widths["decoded"] = need([r.start_text for r in shown_regions], "decoded")
    if width is not None:
        room = width - fixed
        if sum(widths.values()) + 3 * len(widths) > room:
            del widths["end"]
        total = sum(widths.values()) + 3 * len(widths)
        if total > room:
            # Shrink every key column in proportion, none below half the readable minimum.
            scale = (room - 3 * len(widths)) / sum(widths.values())
            widths = {k: max(_MIN_KEY_CHARS // 2, int(w * scale)) for k, w in widths.items()}
    with_end = "end" in widths
    title = f"{len(regions)} region{'' if len(regions) == 1 else 's'}"
    if len(shown) < len(regions):
        title += f" (busiest and quietest {sum(r is not None for r in shown)} shown)"
    if decoded and analysis.label_legend:
        title += f"; start decoded as {analysis.label_legend}"
    if not with_end:
        title += "; each region ends where the next starts"
    table = Table(title=title, title_justify="left", header_style="bold")
    table.add_column("#", justify="right", no_wrap=True, min_width=index_cells)
    for col, key_width in widths.items():
        table.add_column(col, justify="left", no_wrap=True, overflow="ellipsis", min_width=key_width, max_width=key_width)
    for col, justify, cell_width in numbers:
        # Numbers and their headers keep their width; the keys give way.
        table.add_column(col, justify=justify, no_wrap=True, min_width=cell_width)
    for r in shown:
        if r is None:
            table.add_row("…", *[""] * (len(widths) + len(numbers)))
            continue
        style = "red" if r.share >= 2 * fair and r.share > 0.02 else ("dim" if r.rows == 0 else "")
        # Text, not str: rich would read "[...]" inside a key as markup.
        cells: list[RenderableType] = [str(r.index), Text(_key(r.start, widths["start"], skip) if r.start else "(start)")]
        if with_end:
            cells.append(Text(_key(r.end, widths["end"], skip) if r.end else "(end)"))
        if decoded:
            cells.append(Text(_cut(r.start_text, widths["decoded"])))
        table.add_row(*cells, f"{r.rows:,}", percent_cell(r.share), _bar(r.share, top), str(r.server), style=style)
    return table


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _moment_text(a: Analysis) -> str:
    """What a moment was (the verdict's time unit), and how many heat-map windows were drawn."""
    if a.moment_rows:
        return f"; a moment = {a.moment_rows:,} writes ({a.windows} windows drawn)"
    return f"; {a.windows} windows"


def summary_table(analysis: Analysis) -> Table:
    """The key numbers: distribution, time windows, key lengths and overhead."""
    a = analysis
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="dim")
    table.add_column()
    fair = 1 / len(a.regions)
    rows = [
        (
            a.count_label,
            f"{a.rows:,} over {len(a.regions)} region{'' if len(a.regions) == 1 else 's'} "
            f"on {a.servers} server{'' if a.servers == 1 else 's'}" + (" (assumed: --servers N)" if a.servers_assumed else ""),
        ),
        ("max/mean · CV · Gini", f"{a.max_over_mean:.2f} · {a.cv:.3f} · {a.gini:.3f}"),
        ("deviation (max-min)/mean", f"{a.deviation_rate:.2f}   empty regions: {a.empty_regions}"),
        (
            "hot moment share",
            f"{percent(a.hot_window_share)} of writes in the busiest region "
            f"(fair {percent(fair)}), {percent(a.hot_window_server_share)} "
            f"on the busiest server{_moment_text(a)}",
        ),
    ]
    if a.key_length_max:  # a live table's request counters carry no keys
        rows += [
            ("key length", f"min {a.key_length_min} / mean {a.key_length_mean:.1f} / max {a.key_length_max} bytes"),
            ("key overhead", f"{a.key_overhead_bytes:,} bytes ({a.cells_per_row} cell(s) per row repeat the key)"),
        ]
    for k, v in rows:
        table.add_row(k, Text(v))
    return table


def verdict_line(analysis: Analysis) -> Text:
    """One coloured line: VERDICT  name: first reason."""
    text = Text()
    text.append(f"{analysis.verdict.upper():<8}", style=STYLES.get(analysis.verdict, "bold"))
    text.append("  ")
    if analysis.name:
        text.append(f"{analysis.name}: ", style="bold")
    text.append(analysis.reasons[0] if analysis.reasons else "")
    return text


def analysis_view(analysis: Analysis, limit: int = 24, width: int | None = None) -> Group:
    """Everything ``keyshape analyze`` prints: regions, numbers, verdict, reasons and advice."""
    parts: list[RenderableType] = [region_table(analysis, limit, width), summary_table(analysis), Text(""), verdict_line(analysis)]
    for reason in analysis.reasons[1:]:
        parts.append(Text(f"          {reason}"))
    for advice in analysis.advice:
        parts.append(Text.assemble(("  → ", "bold cyan"), advice))
    for finding in analysis.lint:
        parts.append(Text.assemble(("  lint: ", "dim"), finding))
    check = analysis.key_check
    if check is not None and not (check.foreign or check.wrong_salt):
        # (keys that do not fit lead the reasons instead: the numbers above are of those keys)
        parts.append(Text(f"  {check.summary()}", style="dim"))
    return Group(*parts)


def compare_table(analyses: Sequence[Analysis]) -> Table:
    """One row per design: verdict and headline numbers, side by side."""
    cells = [
        [
            a.name,
            a.verdict,
            str(len(a.regions)),
            f"{a.max_over_mean:.2f}",
            f"{a.cv:.3f}",
            f"{a.gini:.3f}",
            f"{a.deviation_rate:.2f}",
            percent_cell(a.hot_window_share),
            f"{a.key_length_mean:.1f}",
        ]
        for a in analyses
    ]
    headers = ("design", "verdict", "regions", "max/\nmean", "CV", "Gini", "devi-\nation", "hot\nwindow", "key\nbytes")
    # Narrow borders and two-line headers keep every name, verdict and number whole on an
    # 80-column terminal (rich would otherwise cut them to "seque…" / "hotsp…").
    table = Table(
        title="designs on the same workload",
        title_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 1),
        collapse_padding=True,
    )
    for i, head in enumerate(headers):
        width = max([len(line) for line in head.split("\n")] + [len(row[i]) for row in cells])
        table.add_column(head, justify="left" if i < 2 else "right", no_wrap=True, min_width=width)
    for a, row in zip(analyses, cells):
        table.add_row(Text(row[0]), Text(row[1], style=STYLES.get(a.verdict, "")), *row[2:])
    return table


ESTIMATE_AFTER = 15.0  # seconds: runs projected to take longer say so once when no bar is drawn


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


@contextmanager
def progress_bar(console: Console, total: int | None, description: str) -> Iterator[Callable[[int], None]]:
    """A transient rich progress bar; yields ``update(done)`` taking the number of rows done.

    When the console is not a terminal no bar is drawn, so piped output and CI logs stay clean;
    a long run (known total, over ESTIMATE_AFTER seconds projected) says once, on that console,
    how long it will take, measured on its first few seconds.
    """
    if not console.is_terminal:
        started = time.monotonic()
        said = [total is None]

        def estimate(done: int) -> None:
            spent = time.monotonic() - started
            # The first seconds include the start-up (a table created, connections warming): a
            # rate measured on them alone said "about 2.0 min" for a 13 s load (issue 40), so
            # wait for 5% of the rows or 10 s, and say what the estimate rests on.
            if said[0] or done <= 0 or spent < 2.0 or (done < 0.05 * int(total or 0) and spent < 10.0):
                return
            said[0] = True
            rate = done / spent
            left = (int(total or 0) - done) / rate
            if spent + left >= ESTIMATE_AFTER:
                console.print(
                    f"{description}: {int(total or 0):,} rows at ~{rate:,.0f} rows/s, about {_duration(spent + left)} in all "
                    f"(an estimate from the first {done:,} rows)",
                    highlight=False,
                )

        yield estimate
        return
    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        # show_speed: rows/s where the total is unknown (a migration's copy)
        TaskProgressColumn(show_speed=True),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(description, total=total)
        yield lambda done: progress.update(task, completed=done)


# --- live tables: what create, load, watch and admin show of a table on a store


def _encoded(name: str) -> str:
    # "table,start,id.ENCODED." -> ENCODED: HBase's encoded region name, 32 hex digits.
    return name.rstrip(".").rsplit(".", 1)[-1] if name.endswith(".") else name


class _TrimmedLines:
    """A text stream that drops the spaces rich pads each line with before passing it on: piped
    output (a file, a CI log, ``grep``) has no trailing spaces (issue 40)."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.pending = stream, ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self.stream.write(line.rstrip(" ") + "\n")
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.stream.write(self.pending)
            self.pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return False


def cli_console(stderr: bool = False) -> Console:
    """The console a command prints on: a terminal's own width and wrapping; when piped, tables
    fit 80 columns, text lines are not wrapped (one finding, one line) and no line is padded."""
    console = Console(stderr=stderr)
    if console.is_terminal:
        return console
    stream = sys.stderr if stderr else sys.stdout
    return Console(file=_TrimmedLines(stream), width=80, soft_wrap=True, stderr=stderr)  # type: ignore[arg-type]  # a write-only text stream


def fitting_console(stderr: bool = False) -> Console:
    """A console for a table that must fit: the terminal's width, 80 columns when piped."""
    return cli_console(stderr=stderr)


def regions_json(regions: Sequence[Any], title: str) -> dict[str, Any]:
    """The regions of :func:`regions_table` as JSON: every key whole (toStringBinary)."""
    return {
        "title": title,
        "regions": [
            {"start": to_string_binary(r.start), "end": to_string_binary(r.end), "server": r.server, "region": _encoded(r.name)} for r in regions
        ],
    }


def print_regions(regions: Sequence[Any], title: str, wide: bool, json_path: str | None, console: Console) -> None:
    """``regions_table`` on ``console`` (fitting it, unless ``wide``), and the JSON to ``json_path``
    when given ('-': stdout, then no table)."""
    if json_path is not None:
        from keyshape.report.output import write_json

        write_json(json_path, regions_json(regions, title), console)
        if json_path == "-":
            return
    table = regions_table(regions, title, wide=wide)
    if wide:  # every key whole on one line: widen past the terminal (the keys are copied)
        from rich.measure import Measurement

        console.width = max(console.width, Measurement.get(console, console.options.update(width=100_000), table).maximum)
    console.print(table)


def regions_table(regions: Sequence[Any], title: str, wide: bool = False) -> Table:
    """A live table's regions in key order (``Store.regions``: start, end, server, name).

    regions: the regions as the store lists them, in key order.
    title: the line over the table.
    wide: keys whole, folded onto more lines; else (the default) a long key is cut with "…" so a
        region is one line within 80 columns (a 22-byte Phoenix key folded into 11 lines per region;
        issue 40): ``--wide`` or ``--json`` shows the keys whole for ``admin split``.

    The region is its encoded name, which ``admin move`` takes and which fits.
    """
    table = Table(title=title, title_justify="left", header_style="bold")
    table.add_column("#", justify="right", no_wrap=True, min_width=len(str(max(len(regions) - 1, 0))))
    if wide:
        for col in ("start", "end"):
            table.add_column(col, overflow="fold", min_width=len("(start)"))
        table.add_column("server", no_wrap=True, min_width=max([6, *(len(r.server) for r in regions)]))
        table.add_column("region (encoded)", no_wrap=True, min_width=max([16, *(len(_encoded(r.name)) for r in regions)]))
    else:
        # 80 columns: 16 of borders and padding, the row number, HBase's 32-character encoded
        # region name whole (admin move takes it), the server and the keys cut with "…"
        number = len(str(max(len(regions) - 1, 0)))
        region = min(32, max([16, *(len(_encoded(r.name)) for r in regions)]))
        server = min(12, max([6, *(len(r.server) for r in regions)]))
        key = max(7, (80 - 16 - number - region - server) // 2)
        for col in ("start", "end"):
            table.add_column(col, no_wrap=True, overflow="ellipsis", max_width=key)
        table.add_column("server", no_wrap=True, overflow="ellipsis", max_width=server)
        table.add_column("region (encoded)", no_wrap=True, overflow="ellipsis", max_width=region, min_width=region)
    for i, r in enumerate(regions):
        table.add_row(
            str(i),
            Text(to_string_binary(r.start) if r.start else "(start)"),
            Text(to_string_binary(r.end) if r.end else "(end)"),
            Text(r.server),
            Text(_encoded(r.name)),
        )
    return table


def assignment_line(regions: Sequence[Any]) -> str:
    """One line: how many of the table's regions each server was given.

    regions: the table's regions (each with its ``server``); at least one.
    """
    counts: dict[str, int] = {}
    for r in regions:
        counts[r.server] = counts.get(r.server, 0) + 1
    mean = len(regions) / len(counts)
    parts = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
    return (
        f"assignment: {len(counts)} server{'' if len(counts) == 1 else 's'} {'holds' if len(counts) == 1 else 'hold'} the regions "
        f"({parts}; max/mean {max(counts.values()) / mean:.2f})"
    )


def servers_table(shares: Sequence[Any], metric: str) -> Table:
    """Per-server request shares beside the per-region ones.

    shares: ``keyshape.ops.live.shares_by_server`` (server, regions, requests, share).
    metric: ``"write"`` or ``"read"``: which requests were counted (the column's name).
    """
    top = max((s.share for s in shares), default=0.0)
    mean = sum(s.share for s in shares) / len(shares) if shares else 0.0
    table = Table(
        title=f"{len(shares)} region server{'' if len(shares) == 1 else 's'}: {metric} share per server (max/mean {top / mean if mean else 0:.2f})",
        title_justify="left",
        header_style="bold",
    )
    for col in ("server", "regions", f"{metric}s", "share", ""):
        table.add_column(col, justify="left" if col in ("server", "") else "right", no_wrap=True)
    for s in shares:
        table.add_row(s.server, str(s.regions), f"{s.requests:,}", percent_cell(s.share), _bar(s.share, top))
    return table


def load_regions_table(live: Analysis, predicted: dict[bytes, float], servers: Sequence[str] | None = None) -> Table:
    """``keyshape load``'s regions: the write requests read back beside the predicted share.

    live: the analysis of the live counts (its regions, in key order).
    predicted: the share the analyzer predicts, by region start key (a missing start: blank).
    servers: the server names by index (``LoadRun.servers_seen``); None: the index is shown.
    """
    top = max((r.share for r in live.regions), default=0.0)
    table = Table(title=f"{len(live.regions)} regions: write requests read back from the store", title_justify="left", header_style="bold")
    for col in ("#", "start", "writes", "share", "", "predicted", "server", "store MiB"):
        table.add_column(col, justify="left" if col in ("start", "") else "right", no_wrap=True)
    for r in live.regions:
        p = predicted.get(r.start)
        table.add_row(
            str(r.index),
            Text(to_string_binary(r.start) if r.start else "(start)"),
            f"{r.rows:,}",
            percent_cell(r.share),
            _bar(r.share, top),
            "" if p is None else percent_cell(p),
            servers[r.server] if servers else str(r.server),
            f"{r.bytes / 2**20:.1f}",
        )
    return table


def verdict_view(analysis: Analysis, label: str) -> Group:
    """The verdict line, the further reasons, the advice, and ``label`` dimmed under them.

    analysis: the analysis judged.
    label: what was judged (e.g. how many live write requests), shown last.
    """
    parts: list[RenderableType] = [verdict_line(analysis)]
    parts.extend(Text(f"          {reason}") for reason in analysis.reasons[1:])
    parts.extend(Text.assemble(("  → ", "bold cyan"), advice) for advice in analysis.advice)
    parts.append(Text(label, style="dim"))
    return Group(*parts)


def region_servers_table(servers: Sequence[Any]) -> Table:
    """The live region servers with their region counts and request loads (``keyshape admin servers``).

    servers: ``Store.region_servers()`` as each server last reported (name, regions, read and
        write requests, requests per second, used and max heap in MiB).
    """
    table = Table(title=f"{len(servers)} live region server(s)", title_justify="left", header_style="bold")
    for col in ("server", "regions", "reads", "writes", "requests/s", "heap MiB"):
        table.add_column(col, justify="left" if col == "server" else "right", no_wrap=True)
    for s in servers:
        table.add_row(
            s.name,
            str(s.regions),
            f"{s.read_requests:,}",
            f"{s.write_requests:,}",
            f"{s.requests_per_second:,}",
            f"{s.used_heap_mb:,}/{s.max_heap_mb:,}",
        )
    return table
