"""``keyshape advise``: which row-key design to choose for a sample of records and a workload.

Thin: parse, call :func:`keyshape.analysis.advise.advise`, print (:mod:`keyshape.report.advise`).
"""

from __future__ import annotations

import functools
from contextlib import ExitStack
from typing import Any

import click

from keyshape.cli.options import hbase_option, html_option, json_option


@click.command("advise")
@click.option("--data", default=None, metavar="SAMPLE", help="Records of the entity (Parquet, ORC, CSV; a file, a directory or a glob).")
@click.option("--queries", "workload", default=None, metavar="WORKLOAD.toml", help="The write stream, access patterns, horizon and cluster.")
@click.option("--servers", type=click.IntRange(min=1), default=None, help="Region servers (overrides [cluster] servers).")
@click.option("--region-size", default=None, metavar="SIZE", help="Region size at which HBase splits, e.g. 10GiB (overrides [cluster]).")
@click.option("--top", "top", type=click.IntRange(min=1), default=5, show_default=True, help="Designs shown in full.")
@click.option(
    "--compare",
    "compare",
    multiple=True,
    metavar="SCHEMA.toml",
    help="A design you already have, scored and ranked beside the advisor's (repeatable).",
)
@click.option("--max-designs", type=click.IntRange(min=1), default=64, show_default=True, help="The search bound: designs scored at most.")
@click.option(
    "--spark",
    "use_spark",
    is_flag=True,
    default=False,
    help="Spark reads the whole SAMPLE (any size; paths Spark reads) for its exact count, span, distinct and heaviest values, "
    "and draws the sample scored (needs keyshape[spark]).",
)
@click.option("--master", default=None, metavar="URL", help="Spark master for --spark: local[*], spark://HOST:7077, yarn, ...")
@html_option("Write the report page (ranked table, schemas, heat maps).")
@click.option(
    "--prove",
    "prove_k",
    type=click.IntRange(min=1),
    default=None,
    metavar="K",
    help="Load the top K designs and the --compare designs into --hbase, replay, and report measured against predicted.",
)
@click.option(
    "--calibrate",
    is_flag=True,
    default=False,
    help="Fit the cost constants on --hbase (a few seconds of timed reads and puts on a scratch table ksa_calib_*, dropped after) "
    "and save them to --cost-model.",
)
@click.option(
    "--cost-model",
    "cost_model",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="The fitted cost constants: --calibrate writes them here, advise reads them "
    "(default: $XDG_CONFIG_HOME/keyshape/cost-model.json, ~/.config/keyshape/cost-model.json; the built-in defaults when absent).",
)
@hbase_option(what="The HBase --prove loads the designs into (tables ksv_prove_*, dropped after) and --calibrate measures.")
@json_option("Write the ranked designs as JSON ('-': stdout only).")
def advise_command(
    data: str | None,
    workload: str | None,
    servers: int | None,
    region_size: str | None,
    top: int,
    compare: tuple[str, ...],
    max_designs: int,
    use_spark: bool,
    master: str | None,
    html_path: str | None,
    json_path: str | None,
    prove_k: int | None = None,
    calibrate: bool = False,
    cost_model: str | None = None,
    url: str | None = None,
) -> None:
    """Rank row-key designs for your data and queries (write spread, pattern cost, storage)."""
    from rich.console import Console

    from keyshape.analysis.advise import advise
    from keyshape.analysis.advise.spec import parse_size
    from keyshape.cli.output import write_json
    from keyshape.report.advise import advice_renderable, write_advice_html
    from keyshape.report.terminal import progress_bar

    out = Console(stderr=json_path == "-")
    model = _cost_model(out, calibrate, cost_model, url)
    if data is None or workload is None:
        if calibrate:
            return
        raise click.UsageError("give --data SAMPLE and --queries WORKLOAD.toml (or --calibrate --hbase URL alone to fit the cost constants)")
    if master is not None and not use_spark:
        raise click.UsageError("--master is for --spark; add --spark to read the data with Spark")
    size = parse_size(region_size, "--region-size") if region_size is not None else None
    with ExitStack() as stack:
        bar: list[Any] = []

        def progress(done: int, total: int) -> None:
            if not bar:  # the total is known once the candidates are made
                bar.append(stack.enter_context(progress_bar(out, total, "scoring designs")))
            bar[0](done)

        if use_spark:
            from keyshape.spark.advise import advise as advise_spark  # PySpark only when asked

            run: Any = functools.partial(advise_spark, master=master)
        else:
            run = advise
        result = run(
            data,
            workload,
            servers=servers,
            region_size=size,
            compare=compare,
            max_designs=max_designs,
            model=model,
            progress=progress,
        )
    if json_path != "-":
        out.print(advice_renderable(result, top))
    proof = None
    if prove_k is not None:
        if url is None:
            raise click.UsageError("--prove needs --hbase URL: the cluster to load the designs into")
        from keyshape.analysis.advise.prove import prove
        from keyshape.store import open_store

        proof = prove(result, open_store(url), k=prove_k, prefix="ksv_prove")
        for line in proof.skipped:
            out.print(f"not measured: {line}", highlight=False, soft_wrap=True)
        for m in proof.designs:
            lat = "; ".join(f"{n}: p50 {a:.1f} / p99 {b:.1f} ms" for n, (a, b) in m.latency_ms.items())
            cost = f"weighted cost predicted {m.predicted_cost:,.1f}, measured {m.measured_cost:,.1f} ms/s (reads {m.measured_read_cost:,.1f})"
            share = f"busiest server {m.measured_share:.0%} of the writes (predicted {m.predicted_share:.0%})"
            out.print(f"measured {m.name}: {m.write_rows_per_s:,.0f} rows/s written, {share}; {lat}; {cost}", highlight=False, soft_wrap=True)
        out.print(
            f"Spearman rank agreement, predicted vs measured weighted cost: {proof.spearman:.2f} over {len(proof.designs)} designs "
            f"(reads alone: {proof.read_spearman:.2f})",
            highlight=False,
        )
    if json_path:
        payload = result.to_dict(top)
        if proof is not None:
            payload["proof"] = proof.to_dict()
        write_json(json_path, payload, out)
    if html_path:
        write_advice_html(result, html_path, top)
        out.print(f"[dim]wrote {html_path}[/dim]")


def _cost_model(out: Any, calibrate: bool, path: str | None, url: str | None) -> Any:
    """The CostModel to score with: fitted now (``--calibrate``, then saved), read from ``path`` or
    the default file, or the built-in defaults (None)."""
    from keyshape.analysis.advise.calibrate import calibrate as fit
    from keyshape.analysis.advise.calibrate import default_model_path, load_model, save_model
    from keyshape.analysis.advise.costs import CostModel

    target = path or str(default_model_path())
    if calibrate:
        if url is None:
            raise click.UsageError("--calibrate needs --hbase URL: the cluster to fit the cost constants on")
        from keyshape.store import open_store

        store = open_store(url)
        try:
            cal = fit(store, where=url)
        finally:
            store.close()
        saved = save_model(cal, target)
        base = CostModel()
        out.print(f"calibrated on {url} in {cal.seconds:.1f} s; saved to {saved}", highlight=False, soft_wrap=True)
        for name, value in cal.model.to_dict().items():
            default = getattr(base, name)
            note = " (floored: inside the noise)" if name in cal.floored else ("" if value != default else " (not measured)")
            out.print(f"  {name:<18} {value:>12.4g}   default {default:>10.4g}{note}", highlight=False)
        return cal.model
    if path is not None or default_model_path().is_file():
        model = load_model(target)
        out.print(f"[dim]cost model: {target}[/dim]")
        return model
    return None
