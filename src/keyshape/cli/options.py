"""Option types shared by the command modules.

An output file is checked when the command line is parsed, not when the report is written: a
``--png /nonexistent/x.png`` used to fail only after the whole analysis (or a live watch) had run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # annotations only
    from keyshape.store.base import Store


class OutputFile(click.ParamType):
    """A file the command will write: its folder must exist and be writable, and it must not be a
    folder itself. ``-`` (standard output) passes where ``allow_dash``."""

    name = "file"

    def __init__(self, allow_dash: bool = False) -> None:
        self.allow_dash = allow_dash

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = os.fspath(value)
        if self.allow_dash and text == "-":
            return text
        path = Path(text)
        folder = path.parent if str(path.parent) else Path(".")
        if path.is_dir():
            self.fail(f"{text!r} is a folder; give a file name inside it", param, ctx)
        if not folder.is_dir():
            self.fail(f"cannot write {text!r}: the folder {str(folder)!r} does not exist", param, ctx)
        if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            self.fail(f"cannot write {text!r}: permission denied", param, ctx)
        return text


OUTPUT_FILE = OutputFile()
OUTPUT_FILE_OR_DASH = OutputFile(allow_dash=True)


# The report options, declared here once: every command that writes reports hands the three paths
# to keyshape.report.output.write_reports.
def html_option(text: str = "Write a self-contained HTML report.") -> Any:
    """``--html FILE`` (into ``html_path``); ``text`` is the help, saying what the page shows."""
    return click.option("--html", "html_path", type=OUTPUT_FILE, default=None, help=text)


def png_option(text: str = "Write the time x key-space heat map as PNG.") -> Any:
    """``--png FILE`` (into ``png_path``); ``text`` is the help."""
    return click.option("--png", "png_path", type=OUTPUT_FILE, default=None, help=text)


def json_option(text: str = "Write the numbers as JSON ('-' for stdout).") -> Any:
    """``--json FILE`` (into ``json_path``; ``-``: stdout, the terminal view then on stderr);
    ``text`` is the help."""
    return click.option("--json", "json_path", type=OUTPUT_FILE_OR_DASH, default=None, help=text)


def seed_option(fn: Any) -> Any:
    """``--seed N`` (default 0): the workload generator's seed, for the commands that generate one."""
    return click.option("--seed", type=int, default=0, show_default=True, help="Workload seed.")(fn)


def _column_list(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[bytes] | None:
    return [c.strip().encode() for c in value.split(",") if c.strip()] if value else None


def columns_option(fn: Any) -> Any:
    """``--columns LIST`` for the commands that read rows: into ``columns`` as a list of
    ``family`` / ``family:qualifier`` bytes (None: every column)."""
    return click.option("--columns", default=None, callback=_column_list, help="Comma-separated families or family:qualifier columns.")(fn)


# One description of --hbase for every command: the same value works everywhere (open_store).
HBASE_URL_HELP = (
    "HOST:PORT of the HBase's ZooKeeper, or hbase://HOST:PORT; on a secured cluster "
    "hbase://HOST:PORT?auth=kerberos with principal, keytab, protection, tls and tls_ca as "
    "further &name=value parameters (README: Secure clusters)."
)
EMBEDDED_HELP = " Without it: keyshape's in-process embedded store, empty in every new process."


def hbase_option(*, required: bool = False, what: str = "", embedded: bool = True) -> Any:
    """The ``--hbase URL`` option (into the parameter ``url``): ``what`` says which HBase it is for
    this command; ``embedded`` notes the default store when the option is not required."""
    text = (f"{what} " if what else "") + HBASE_URL_HELP + ("" if required or not embedded else EMBEDDED_HELP)
    if required:
        # No default at all: click 8.5 treats an explicit default=None as given and skips the check.
        return click.option("--hbase", "url", required=True, metavar="URL", help=text, callback=_no_empty_url)
    return click.option("--hbase", "url", default=None, metavar="URL", help=text, callback=_no_empty_url)


def _no_empty_url(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    # `--hbase "$HBASE"` with the variable unset used to fall back to the embedded store, exit 0.
    if value is not None and not value.strip():
        raise click.BadParameter("is empty (an unset shell variable?); give HOST:PORT of the ZooKeeper, or leave --hbase out for the embedded store")
    return value


def online_options(fn: Any) -> Any:
    """What a live migration takes besides ``--online`` itself (``migrate`` and ``phoenix resalt``:
    the same run, ``keyshape.ops.migrate_online``): ``--set-replication-scope``, ``--cutover``,
    ``--max-lag S`` and ``--sink-bind HOST:PORT``."""
    for option in reversed(
        (
            click.option("--set-replication-scope", is_flag=True, help="--online: set REPLICATION_SCOPE => 1 on the source's families that lack it."),
            click.option(
                "--cutover", is_flag=True, help="--online: wait for the stream to catch up, verify the source against the target, remove the peer."
            ),
            click.option(
                "--max-lag",
                type=click.FloatRange(min=0),
                default=2.0,
                show_default=True,
                metavar="S",
                help="--cutover: verify once the source's region servers report a replication lag of at most S seconds.",
            ),
            click.option(
                "--sink-bind", default=None, metavar="HOST:PORT", help="--online: the address the source's region servers reach keyshape's sink at."
            ),
        )
    ):
        fn = option(fn)
    return fn


USER_HELP = (
    "With --hbase: the user to act as (SIMPLE authentication; default: $HADOOP_USER_NAME, else the "
    "login user). HBase checks ACLs against it. Refused under auth=kerberos, where the principal acts."
)
USER_KEY = "keyshape.user"  # where user_option leaves the name for open_from_options (click's ctx.meta)


def _remember_user(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.meta[USER_KEY] = value


def user_option(fn: Any) -> Any:
    """``--user NAME`` for a command that opens its store through :func:`open_from_options`: the name
    travels in the click context, so the command's own signature does not change."""
    return click.option("--user", "acting_user", default=None, metavar="NAME", help=USER_HELP, expose_value=False, callback=_remember_user)(fn)


def open_from_options(url: str | None, user: str | None = None) -> Store:
    """The store ``--hbase`` names (embedded when None), acting as ``--user`` (given here, or left
    in the click context by :func:`user_option`); connection trouble becomes one StoreError."""
    from keyshape.errors import KeyshapeError, StoreError
    from keyshape.store import open_store

    if user is None:
        ctx = click.get_current_context(silent=True)
        user = ctx.meta.get(USER_KEY) if ctx is not None else None
    if url is None and user is not None:
        raise click.UsageError("--user applies to --hbase only: the embedded store has no users")
    try:
        return open_store(url, user=user)
    except KeyshapeError:
        raise
    except Exception as exc:  # noqa: BLE001 - a client library's own error, shown as one line
        raise StoreError(f"cannot connect to HBase at {url!r}: {exc}") from exc


WIDE_KEY = "keyshape.wide"  # where view_options leaves --wide and --json for the table printers
JSON_KEY = "keyshape.json"


def _remember(key: str) -> Any:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        ctx.meta[key] = value

    return callback


def view_options(fn: Any) -> Any:
    """``--wide`` and ``--json FILE`` for a command that prints a table of keys (scan, get, index
    lookup, admin regions, create): by default the table fits 80 columns (or the terminal), a long
    key cut with "…"; ``--wide`` prints every key whole, ``--json`` writes them all as JSON ('-':
    stdout). Both travel in the click context, so the command's signature does not change."""
    fn = click.option(
        "--json",
        "view_json",
        type=OUTPUT_FILE_OR_DASH,
        default=None,
        expose_value=False,
        callback=_remember(JSON_KEY),
        help="Write the rows (or regions) as JSON, every key whole ('-' for stdout).",
    )(fn)
    return click.option(
        "--wide", "view_wide", is_flag=True, expose_value=False, callback=_remember(WIDE_KEY), help="Print every key whole, however wide the table."
    )(fn)


def view_settings() -> tuple[bool, str | None]:
    """(--wide, --json path) of the running command (False, None outside one)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False, None
    return bool(ctx.meta.get(WIDE_KEY)), ctx.meta.get(JSON_KEY)
