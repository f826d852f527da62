"""What commands write besides the terminal view: the --json, --html and --png reports, each in
one place so every command that offers them writes them the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

__all__ = ["write_json", "write_reports"]


def write_json(path: str, payload: dict[str, Any], out: Any) -> None:
    """``payload`` as JSON to ``path`` (``-``: stdout, where it is all that is printed), saying on
    ``out`` where it went."""
    text = json.dumps(payload, indent=2)
    if path == "-":
        click.echo(text)
    else:
        Path(path).write_text(text + "\n", encoding="utf-8")
        out.print(f"[dim]wrote {path}[/dim]")


def write_reports(out: Any, analysis: Any, html_path: str | None, png_path: str | None, colour_scale: str = "shared") -> None:
    """Write the --html and --png reports that were asked for and say where on ``out``: one
    Analysis as one design's report, a list of them as the side-by-side compare report (heat
    maps on one ``colour_scale``, or "per-panel")."""
    many = isinstance(analysis, list)
    if html_path:
        from keyshape.report.html import write_compare_html, write_html

        if many:
            write_compare_html(analysis, html_path, colour_scale)
        else:
            write_html(analysis, html_path)
        out.print(f"[dim]wrote {html_path}[/dim]")
    if png_path:
        from keyshape.report.png import write_compare_png, write_png

        if many:
            write_compare_png(analysis, png_path, colour_scale)
        else:
            write_png(analysis, png_path)
        out.print(f"[dim]wrote {png_path}[/dim]")
