"""The ``keyshape`` command. Thin on purpose: it parses, calls the library, and prints."""

from __future__ import annotations

import sys

import click

from keyshape.errors import KeyshapeError


class _Group(click.Group):
    """Turns keyshape's own errors into one line on stderr and exit code 2, never a traceback."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except (KeyshapeError, ValueError, OSError) as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)


@click.group(cls=_Group)
@click.version_option(package_name="keyshape")
def main() -> None:
    """Design HBase row keys and pre-split tables, and prove the load spreads evenly."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
