"""``keyshape analyze`` and ``keyshape compare``: the main job, as thin click commands.

Everything here is a call into :mod:`keyshape.analysis` and :mod:`keyshape.report`; heavy imports
(numpy work, matplotlib) happen inside the commands so ``keyshape --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from keyshape.cli.options import USER_KEY, hbase_option, html_option, json_option, png_option, seed_option, user_option
from keyshape.report.output import write_reports

_LEVELS = ("skewed", "hotspot")
EXIT_VERDICT = 3  # --fail-on: the verdict is at least as bad as asked
# The largest region count analyze takes: the largest HBase tables run tens of thousands of regions,
# and the analysis keeps a few numbers per region and moment (about 2 moments per region).
MAX_ANALYZE_REGIONS = 100_000


F = TypeVar("F", bound=Callable[..., Any])  # a click command function, returned decorated
T = TypeVar("T")


def _common(fn: F) -> F:
    """Options shared by analyze and compare."""
    options = [
        click.option("--rows", type=click.IntRange(min=1), default=None, help="Rows to generate (default: the schema's [workload] rows)."),
        click.option(
            "--regions",
            type=click.IntRange(min=1, max=MAX_ANALYZE_REGIONS),
            default=None,
            help="Override the schema's region count (splits recomputed; at most 100,000: "
            "more is beyond any HBase table, and the heat map alone would hold rows x regions).",
        ),
        click.option(
            "--auto-split",
            "auto_split",
            default=None,
            is_flag=False,
            flag_value="hbase",
            metavar="[ROWS]",
            help="Start from the schema's splits and let the table split as it fills: "
            "alone, as HBase does (flushes, split policy, reference files; see "
            "--write-rate and the options below); with ROWS, the idealized model that "
            "splits a region at its median once it holds ROWS rows.",
        ),
        click.option(
            "--write-rate",
            default="10000",
            show_default=True,
            metavar="ROWS/S|FIELD",
            help="Auto-split: rows written per second, or a timestamp field of the key whose values are the write times.",
        ),
        click.option("--max-filesize", type=SIZE, default="10GiB", show_default=True, help="Auto-split: the table's MAX_FILESIZE."),
        click.option("--flush-size", type=SIZE, default="128MiB", show_default=True, help="Auto-split: the table's MEMSTORE_FLUSHSIZE."),
        click.option(
            "--split-policy",
            default="stepping",
            show_default=True,
            metavar="POLICY",
            help="Auto-split: stepping, increasing, constant, key-prefix:N or delimited:D.",
        ),
        click.option(
            "--value-bytes",
            type=click.IntRange(min=0),
            default=None,
            metavar="BYTES",
            help="Value bytes per row (default: the schema's [workload] value_bytes; "
            "else the auto-split simulation assumes the 8-byte value `keyshape load` "
            "writes, and size estimates 100).",
        ),
        click.option(
            "--cleaner-interval",
            type=click.FloatRange(min=0, min_open=True),
            default=120.0,
            show_default=True,
            metavar="SECONDS",
            help="Auto-split: how often compacted reference files are removed "
            "(hbase.hfile.compaction.discharger.interval); a daughter cannot split "
            "before that.",
        ),
        click.option(
            "--servers",
            type=click.IntRange(min=1),
            default=None,
            help="Region servers sharing the regions round-robin (default: 3 assumed, and no advice on the server count).",
        ),
        click.option("--windows", type=click.IntRange(min=1), default=50, show_default=True, help="Time windows the write stream is cut into."),
        seed_option,
        html_option(),
        png_option(),
        json_option(),
        click.option(
            "--fail-on",
            "fail_on",
            type=click.Choice(_LEVELS),
            default=None,
            help=f"Exit {EXIT_VERDICT} when a verdict is at least this bad (for CI).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


class _Size(click.ParamType):
    """A byte size: 2097152, 2MiB, 128MB, 10G (binary multiples, as HBase's settings)."""

    name = "size"
    _UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().lower().replace("ib", "").rstrip("b")
        number = text.rstrip("kmgt")
        unit = text[len(number) :]
        try:
            size = int(float(number) * self._UNITS[unit])
        except (ValueError, KeyError):
            self.fail(f"{value!r} is not a size; write bytes or e.g. 2MiB, 128MB, 10GiB", param, ctx)
        if size < 1:
            self.fail(f"{value!r}: a size must be positive", param, ctx)
        return size


SIZE = _Size()


def split_options(
    auto_split: str | None,
    write_rate: str,
    max_filesize: int,
    flush_size: int,
    split_policy: str,
    cleaner_interval: float,
    value_bytes: int | None = None,
) -> dict[str, Any]:
    """``analyze_schema`` keyword arguments for the --auto-split options and --value-bytes."""
    sized: dict[str, Any] = {} if value_bytes is None else {"value_bytes": value_bytes}
    if auto_split is None:
        return sized
    if auto_split != "hbase":
        try:
            rows = int(auto_split)
        except ValueError:
            rows = 0
        if rows < 1:
            raise click.BadParameter(
                f"{auto_split!r}: give a row count >= 1, or --auto-split alone for HBase's own splits", param_hint="--auto-split"
            )
        return {"auto_split_rows": rows, **sized}
    from keyshape.core.splitsim import SplitModel, parse_policy

    try:
        policy = parse_policy(split_policy)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--split-policy") from None
    try:
        rate: float | None = float(write_rate)
        field = None
    except ValueError:
        rate, field = None, write_rate
    if rate is not None and not rate > 0:
        raise click.BadParameter(f"{write_rate!r}: give positive rows per second or a timestamp field", param_hint="--write-rate")
    return {
        "split_model": SplitModel(max_filesize=max_filesize, flush_size=flush_size, write_rate=rate, cleaner_interval=cleaner_interval, **policy),
        "time_field": field,
        **sized,
    }


class _NoPandas:
    """A meta path finder that refuses ``import pandas`` (see :func:`_without_pandas`)."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"{name} is not used by keyshape analyze", name=name)
        return None


def _without_pandas() -> None:
    """Keep pandas out of this process. pyarrow imports pandas, when installed, on its first
    ``pa.array`` call, only to ask whether its input is a pandas object (keyshape's never are):
    0.2-0.25 s, as long as reading 3M keys, and most of what ``analyze --keys`` cost over a bare
    pyarrow read. With the import refused pyarrow records that there is no pandas and works on.
    Only for commands that run no user code and no Spark (pyspark's Arrow route needs pandas)."""
    import sys

    if "pandas" not in sys.modules and _NoPandas not in sys.meta_path:
        sys.meta_path.insert(0, _NoPandas)


def _consoles(json_path: str | None) -> tuple[Any, Any]:
    from keyshape.report.terminal import cli_console

    # With --json - the JSON owns stdout; the human view moves to stderr.
    out = cli_console(stderr=json_path == "-")
    return out, cli_console(stderr=True)


def _run_with_progress(err: Any, label: str, total: int | None, fn: Callable[..., T], **kwargs: Any) -> T:
    from keyshape.report.terminal import progress_bar

    with progress_bar(err, total, label) as update:
        return fn(progress=lambda done, _total: update(done), **kwargs)


def _exit_code(verdicts: Sequence[str], fail_on: str | None) -> int:
    from keyshape.analysis.verdict import SEVERITY

    if fail_on is None:
        return 0
    return EXIT_VERDICT if any(SEVERITY[v] >= SEVERITY[fail_on] for v in verdicts) else 0


def _finish(code: int) -> None:
    if code:
        click.get_current_context().exit(code)


@click.command("analyze")
@click.argument("schema", required=False, type=click.Path(exists=True, dir_okay=False))
@_common
@click.option(
    "--keys",
    "keys_file",
    type=str,
    default=None,
    metavar="PATH",
    help="Analyze real keys instead of the workload: a Parquet, ORC or CSV file, a directory of them or a glob.",
)
@click.option("--column", default=None, help="Column of --keys holding the row keys (default: the first; CSV text in toStringBinary form).")
@click.option(
    "--allow-foreign-keys",
    is_flag=True,
    default=False,
    help="Analyze --keys even when they do not match the schema: every key is checked "
    "(decoded, salt re-derived) and the analysis refuses on any wrong salt or more than "
    "1% of keys that do not fit; with this flag it goes on and reports the counts.",
)
@click.option(
    "--top", type=click.IntRange(min=4), default=24, show_default=True, help="Regions shown in the terminal table (busiest and quietest when more)."
)
# --- live tables: sample the keys of an existing table (keyshape.ops.sample)
@hbase_option(what="With --table: analyze a live table of this HBase.", embedded=False)
@user_option
@click.option(
    "--table",
    "live_table",
    default=None,
    metavar="NS:NAME",
    help="Analyze this live table's own keys against its actual regions (SCHEMA, if given, decodes them).",
)
@click.option(
    "--sample-per-region", type=click.IntRange(min=1), default=500, show_default=True, help="With --table: keys sampled per region (key-only scans)."
)
@click.option(
    "--time-field",
    default=None,
    metavar="FIELD",
    help="With --table: the key field that orders rows in time (default: the schema's timestamp field, else the rows' cell timestamps).",
)
@click.option(
    "--count-rows",
    type=click.IntRange(min=0),
    default=5_000_000,
    show_default=True,
    metavar="N",
    help="With --table: rows read to count regions exactly (key-only "
    "scans, smallest regions first); the rest are estimated from their store size, with "
    "a bound. --exact counts them all.",
)
@click.option("--exact", "count_all", is_flag=True, default=False, help="With --table: count every region's rows exactly, however long it takes.")
@click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="Who reads --keys: this machine (all its cores) or Spark.",
)
@click.option("--master", default=None, metavar="URL", help="Spark master for --engine spark: local[*], spark://HOST:7077, yarn, ...")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Threads of the local engine (default: the cores available).")
def analyze_command(
    schema: str | None,
    rows: int | None,
    regions: int | None,
    auto_split: str | None,
    write_rate: str,
    max_filesize: int,
    flush_size: int,
    split_policy: str,
    cleaner_interval: float,
    servers: int | None,
    windows: int,
    seed: int,
    html_path: str | None,
    png_path: str | None,
    json_path: str | None,
    fail_on: str | None,
    keys_file: str | None,
    column: str | None,
    top: int,
    url: str | None,
    live_table: str | None,
    sample_per_region: int,
    time_field: str | None,
    engine: str,
    master: str | None,
    workers: int | None,
    value_bytes: int | None,
    allow_foreign_keys: bool = False,
    count_rows: int = 5_000_000,
    count_all: bool = False,
) -> None:
    """Show how a key design spreads rows and writes over regions, and judge it.

    Generates the schema's workload (or reads --keys), encodes the keys, assigns them to the
    regions of the schema's [splits], and prints the per-region table, the key numbers and a
    verdict: balanced, skewed or hotspot, with reasons and advice. With --table (and --hbase)
    the keys are sampled from the live table and judged against its real regions.
    """
    from keyshape.analysis.designs import analyze_schema
    from keyshape.report.terminal import analysis_view

    if column is not None and keys_file is None:
        raise click.UsageError("--column needs --keys FILE")
    if keys_file is not None and rows is not None:
        raise click.UsageError("--rows sizes a generated workload; --keys FILE analyses every key of the file: drop one of them")
    if url is None and click.get_current_context().meta.get(USER_KEY) is not None:
        raise click.UsageError("--user applies to --hbase only: the embedded store has no users")
    if allow_foreign_keys and keys_file is None:
        raise click.UsageError("--allow-foreign-keys is for --keys FILE (real keys checked against the schema)")
    if engine == "spark" and keys_file is None:
        raise click.UsageError("--engine spark reads --keys PATH; give the keys to analyze")
    if master is not None and engine != "spark":
        raise click.UsageError("--master is for --engine spark")
    if engine == "local":
        _without_pandas()
    out, err = _consoles(json_path)
    if live_table is not None or url is not None:
        if rows is not None or regions is not None or auto_split is not None or value_bytes is not None:
            raise click.UsageError(
                "--rows, --regions, --auto-split and --value-bytes shape a generated workload; a live table (--table) has its own rows and regions"
            )
        analysis = _live_analysis(
            err, schema, url, live_table, sample_per_region, time_field, windows, seed, keys_file, None if count_all else count_rows
        )
    elif schema is None:
        raise click.UsageError("give a SCHEMA, or --table NS:NAME --hbase HOST:PORT for a live table")
    elif time_field is not None:
        raise click.UsageError("--time-field works with --table (a live table's keys)")
    elif count_all or count_rows != 5_000_000:
        raise click.UsageError("--exact and --count-rows count a live table's rows; give --table and --hbase")
    elif engine == "spark":
        from keyshape.schema import load_schema
        from keyshape.spark import analyze_path

        if auto_split is not None:
            raise click.UsageError("--auto-split replays the writes in one pass; use --engine local")
        assert keys_file is not None  # --engine spark without --keys is refused above
        analysis = analyze_path(
            keys_file,
            load_schema(schema),
            column=column,
            master=master,
            regions=regions,
            servers=servers,
            windows=windows,
            allow_foreign_keys=allow_foreign_keys,
        )
    else:
        from keyshape.schema import load_schema

        analysis = _run_with_progress(
            err,
            "generating and assigning keys",
            rows if keys_file is None else None,
            analyze_schema,
            schema=load_schema(schema),
            rows=rows,
            regions=regions,
            keys_file=keys_file,
            column=column,
            servers=servers,
            windows=windows,
            seed=seed,
            workers=workers,
            allow_foreign_keys=allow_foreign_keys,
            **split_options(auto_split, write_rate, max_filesize, flush_size, split_policy, cleaner_interval, value_bytes),
        )
    out.print(analysis_view(analysis, limit=top, width=out.width))
    write_reports(out, analysis, html_path=html_path, png_path=png_path, json_path=json_path)
    _finish(_exit_code([analysis.verdict], fail_on))


def _live_analysis(
    err: Any,
    schema: str | None,
    url: str | None,
    table: str | None,
    per_region: int,
    time_field: str | None,
    windows: int,
    seed: int,
    keys_file: str | None,
    count_rows: int | None = 5_000_000,
) -> Any:
    """``analyze --hbase URL --table T [SCHEMA]``: :func:`keyshape.ops.sample.analyze_table` (its
    notes for the schema's kind included: a salted Phoenix table's buckets)."""
    from keyshape.cli.options import open_from_options as _open
    from keyshape.ops.sample import analyze_table
    from keyshape.schema import load_schema

    if table is None or url is None:
        raise click.UsageError("a live table needs both --table NS:NAME and --hbase HOST:PORT")
    if keys_file is not None:
        raise click.UsageError("--keys and --table are two sources of keys; give one")
    from keyshape.phoenix.schema import load_phoenix_schema

    # A Phoenix DDL file may hold several tables and indexes: take the one named by --table.
    loaded = load_phoenix_schema(schema, table) if schema and schema.lower().endswith(".sql") else load_schema(schema) if schema else None
    store = _open(url)
    try:
        with err.status(f"counting and sampling the keys of {table}"):
            live = analyze_table(
                store, table, loaded, per_region=per_region, count_rows=count_rows, time_field=time_field, windows=windows, seed=seed
            )
    finally:
        store.close()
    return live.analysis


@click.command("compare")
@click.argument("schemas", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@_common
@click.option(
    "--strategies",
    default=None,
    metavar="LIST",
    help="Compare prefix strategies of ONE schema, e.g. none,mod:16,md5:4,phoenix:16,"
    "crc32 (n = buckets, or the md5 length); each gets splits matched to it.",
)
@click.option(
    "--colour-scale",
    "--color-scale",
    "colour_scale",
    type=click.Choice(["shared", "per-panel"]),
    default="shared",
    show_default=True,
    help="Heat maps in --html/--png: one colour scale for all designs (brightness "
    "compares across them) or one per panel (each design's own pattern shows).",
)
def compare_command(
    schemas: tuple[str, ...],
    rows: int | None,
    regions: int | None,
    auto_split: str | None,
    write_rate: str,
    max_filesize: int,
    flush_size: int,
    split_policy: str,
    cleaner_interval: float,
    servers: int | None,
    windows: int,
    seed: int,
    html_path: str | None,
    png_path: str | None,
    json_path: str | None,
    fail_on: str | None,
    strategies: str | None,
    colour_scale: str,
    value_bytes: int | None,
) -> None:
    """Compare key designs on the same workload: one table, heat maps side by side.

    Every schema generates the same number of rows (--rows, else the first schema's workload
    rows) with the same seed. With --strategies, the designs are variants of one schema that
    differ only in the key prefix (fields, hash_fields, workload and region count kept).
    """
    from rich.markup import escape
    from rich.text import Text

    from keyshape.analysis.designs import compare, strategy_variants
    from keyshape.schema import load_schema
    from keyshape.report.terminal import compare_table, progress_bar, verdict_line

    out, err = _consoles(json_path)
    splitting = split_options(auto_split, write_rate, max_filesize, flush_size, split_policy, cleaner_interval, value_bytes)
    notes: list[str | None] = [None] * len(schemas)
    designs: list[Any] = list(schemas)
    names: list[str] | None = None
    if strategies is not None:
        if len(schemas) != 1:
            raise click.UsageError(
                f"--strategies compares the strategies of one schema; give exactly one SCHEMA (got {len(schemas)}), or drop --strategies"
            )
        variants = strategy_variants(load_schema(schemas[0]), strategies.split(","), regions=regions, name=Path(schemas[0]).stem)
        designs, names = [v.schema for v in variants], [v.name for v in variants]
        notes, regions = [v.splits for v in variants], None  # the variants carry their regions
        for v in variants:
            out.print(f"[dim]{escape(v.name)}: {escape(v.splits)}[/dim]", highlight=False)
    analyses = compare(
        designs,
        rows,
        names=names,
        phase=lambda name, total: progress_bar(err, total, f"{name}: generating and assigning keys"),
        regions=regions,
        servers=servers,
        windows=windows,
        seed=seed,
        **splitting,
    )
    out.print(compare_table(analyses))
    for a in analyses:
        out.print(verdict_line(a))
        for advice in a.advice:
            out.print(Text.assemble(("  → ", "bold cyan"), advice))
    reports = [a.to_dict() for a in analyses] if json_path else []
    for d, note in zip(reports, notes):
        if note is not None:
            d["splits"] = note
    write_reports(
        out,
        analyses,
        html_path=html_path,
        png_path=png_path,
        json_path=json_path,
        payload={"rows": analyses[0].rows, "designs": reports},
        colour_scale=colour_scale,
    )
    _finish(_exit_code([a.verdict for a in analyses], fail_on))
