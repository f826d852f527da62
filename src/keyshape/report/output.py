"""Every report a command writes besides the terminal view, behind one function.

:func:`write_reports` writes the JSON numbers, the self-contained HTML page and the PNG heat map
that were asked for, each the same way for every command that offers them (analyze, compare,
watch, load); :func:`write_json` is the JSON part alone for a result without heat maps (advise).
``matplotlib`` is imported only when an HTML or PNG report is asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from keyshape.analysis import Analysis
from keyshape.errors import BadInput

if TYPE_CHECKING:  # annotations only
    from collections.abc import Sequence

__all__ = ["Sink", "write_json", "write_reports"]


class Sink(Protocol):
    """Where a report says where it went: a rich ``Console`` (or anything with its ``print``)."""

    def print(self, *objects: Any, **kwargs: Any) -> None: ...  # noqa: D102 - rich's Console.print


def write_json(path: str, payload: dict[str, Any], out: Sink) -> None:
    """Write ``payload`` as indented JSON.

    path: the file to write, or ``-`` for standard output (then the JSON is all that is printed
        there: the terminal view goes to stderr).
    payload: the JSON document (``Analysis.to_dict()`` and the like).
    out: where to say ``wrote PATH`` (nothing is said for ``-``).
    """
    text = json.dumps(payload, indent=2)
    if path == "-":
        import click

        click.echo(text)
    else:
        with _writing(path, "--json"):
            Path(path).write_text(text + "\n", encoding="utf-8")
        out.print(f"[dim]wrote {path}[/dim]")


@contextmanager
def _writing(path: str, option: str) -> Iterator[None]:
    """An OSError while writing ``path`` as one line naming the file and the option ("No space
    left on device" alone did not say which of three reports failed; issue 40)."""
    try:
        yield
    except OSError as exc:
        raise BadInput(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None


def write_reports(
    out: Sink,
    analysis: Analysis | Sequence[Analysis],
    *,
    html_path: str | None = None,
    png_path: str | None = None,
    json_path: str | None = None,
    payload: dict[str, Any] | None = None,
    colour_scale: str = "shared",
) -> None:
    """Write the reports that were asked for (a path given) and say where each went on ``out``.

    out: where to say ``wrote PATH`` for each file.
    analysis: one Analysis (one design's report) or a list of them (the side-by-side compare
        report, heat maps on ``colour_scale``).
    html_path: the self-contained HTML page to write; None: none.
    png_path: the time x key-space heat map PNG to write; None: none.
    json_path: the JSON file to write, ``-`` for stdout; None: none.
    payload: the JSON document; default ``analysis.to_dict()`` (a list: ``{"designs": [...]}``).
    colour_scale: for a list, ``"shared"`` (one scale: brightness compares across designs) or
        ``"per-panel"`` (each design its own).
    """
    one = analysis if isinstance(analysis, Analysis) else None
    many = [] if one is not None else list(analysis)  # type: ignore[arg-type]
    if json_path:
        if payload is None:
            payload = one.to_dict() if one is not None else {"designs": [a.to_dict() for a in many]}
        write_json(json_path, payload, out)
    if html_path:
        from keyshape.report.html import write_compare_html, write_html

        with _writing(html_path, "--html"):
            if one is not None:
                write_html(one, html_path)
            else:
                write_compare_html(many, html_path, colour_scale)
        out.print(f"[dim]wrote {html_path}[/dim]")
    if png_path:
        from keyshape.report.png import write_compare_png, write_png

        with _writing(png_path, "--png"):
            if one is not None:
                write_png(one, png_path)
            else:
                write_compare_png(many, png_path, colour_scale)
        out.print(f"[dim]wrote {png_path}[/dim]")
