"""The ``keyshape`` command group and its error handling. Thin on purpose: it parses, calls the
library, and prints; each command group lives in its own module."""

from __future__ import annotations

import select
import sys
from typing import Any

import click

from keyshape.errors import KeyshapeError


def _stdout_closed() -> bool:
    """Whether whoever reads our stdout has gone (so a BrokenPipeError is theirs, not a socket's)."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):
        return False
    # A pipe whose reader has gone polls as an error at once; a live one, a file or a tty does not.
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))


class _Group(click.Group):
    """Turns keyshape's own errors (KeyshapeError: bad input, a refusing store) and OS errors
    (a missing or unreadable file) into one line on stderr and exit code 2. Anything else is a
    bug and keeps its traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            if _stdout_closed():
                raise  # the reader went away (`| head`): click ends quietly (exit 1), as Unix tools do
            # Another pipe or socket broke (an HBase connection): that is an error to report.
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
        except (KeyshapeError, OSError) as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # Click prints usage text plus the error; one line that names the fix reads better in scripts.
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:
            # A group without its command (`keyshape splits`): its usage on stdout, then one error
            # line (click's own printed the whole help as "error: Usage: ..." on 11 lines; issue 40).
            group = exc.ctx.command if exc.ctx else None
            click.echo(exc.ctx.get_help() if exc.ctx else "")
            names = ", ".join(sorted(group.commands)) if isinstance(group, click.Group) else ""
            where = exc.ctx.command_path if exc.ctx else "keyshape"
            click.echo(f"error: {where} needs a command: one of {names}", err=True)
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "keyshape"
            click.echo(f"error: {exc.format_message()} (see '{where} --help')", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(1)

        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=_Group)
@click.version_option(package_name="keyshape")
def main() -> None:
    """Design HBase row keys and pre-split tables, and prove the load spreads evenly."""


# Command groups register here, after ``main`` exists (each module is a plain click command).
from keyshape.cli.acl import grant_command, revoke_command  # noqa: E402
from keyshape.cli.advise import advise_command  # noqa: E402
from keyshape.cli.admin import admin_group  # noqa: E402
from keyshape.cli.analyze import analyze_command, compare_command  # noqa: E402
from keyshape.cli.autopilot import autopilot_command, load_split_command  # noqa: E402
from keyshape.cli.existing import migrate_command, split_plan_command  # noqa: E402
from keyshape.cli.hbase import create_command, load_command, watch_command  # noqa: E402
from keyshape.cli.key import key_group, lint_command  # noqa: E402
from keyshape.cli.phoenix import phoenix_group  # noqa: E402
from keyshape.cli.read import scan_command  # noqa: E402
from keyshape.cli.records import get_command, ids_group, index_group, put_command  # noqa: E402
from keyshape.cli.serve import serve_command  # noqa: E402
from keyshape.cli.splits import hash_command, splits_group  # noqa: E402

for _command in (
    splits_group,
    hash_command,
    analyze_command,
    compare_command,
    advise_command,
    key_group,
    lint_command,
    scan_command,
    create_command,
    load_command,
    watch_command,
    serve_command,
    get_command,
    put_command,
    index_group,
    ids_group,
    admin_group,
    split_plan_command,
    migrate_command,
    autopilot_command,
    load_split_command,
    phoenix_group,
    grant_command,
    revoke_command,
):
    main.add_command(_command)

# The rules every command obeys (an option works with what its help names; no output overwrites an
# input), wrapped around every leaf command once all are registered: keyshape.cli.rules.
from keyshape.cli.rules import enforce  # noqa: E402

enforce(main)
