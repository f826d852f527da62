"""Rules every command obeys before it runs, checked in one place for the whole command tree:

- **Every option either acts or is refused.** An option whose help starts with the option it works
  with ("Auto-split: ...", "With --table: ...", "--online: ...", "--cutover: ...") is refused when
  given without it: ``analyze --split-policy constant`` without ``--auto-split`` used to be ignored
  in silence (issue 40). The help text is the declaration, so help and behaviour cannot drift.
- **No output path is an input path.** ``analyze victim.toml --html victim.toml`` replaced the
  schema with HTML; any file a command writes (``--html``/``--png``/``--json``, migrate's
  ``--rejects`` and ``--state``, serve's ``--db``) that resolves to a file the same command reads
  is refused before anything is read or written.

:func:`enforce` wraps every leaf command's callback (``keyshape.cli.main`` calls it once on the
whole tree, so a command added later is covered without a line of its own).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from keyshape.cli.options import OutputFile

__all__ = ["dependency_of", "enforce", "leaf_commands"]

# "Auto-split: ...", "With --table: ...", "--online: ...": the option this one works with.
_PREFIX = re.compile(r"^(?:With (?P<with>--[a-z][a-z0-9-]*)|(?P<bare>--[a-z][a-z0-9-]*)|(?P<word>Auto-split)):")
_WORDS = {"Auto-split": "--auto-split"}

# (command path, option) pairs whose dependency the command checks itself, with its own message
# (``analyze --hbase`` without ``--table`` says the two go together).
_CHECKED_BY_COMMAND = {("analyze", "--hbase")}

# Parameters that name a file the command reads although their type is not click.Path(exists=True).
_INPUT_NAMES = {
    *("schema", "schemas", "schema_path", "keys_file", "ddl_path", "old_path", "new_path"),
    *("csv_path", "jsonl_path", "source_path", "config", "queries"),
}
# Parameters that name a file the command writes although their type is not OutputFile.
_OUTPUT_NAMES = {"reject_path", "state_path", "db"}


def leaf_commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every runnable command under ``group`` with its path of names (``("phoenix", "key", "decode")``)."""
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from leaf_commands(command, (*path, name))
        else:
            yield (*path, name), command


def dependency_of(command: click.Command, param: click.Parameter, path: tuple[str, ...] = ()) -> click.Parameter | None:
    """The parameter ``param`` works with, as its help declares it; None when it stands alone."""
    match = _PREFIX.match(getattr(param, "help", None) or "")
    if match is None:
        return None
    wanted = match["with"] or match["bare"] or _WORDS[match["word"]]
    if (" ".join(path), param.opts[0] if param.opts else "") in _CHECKED_BY_COMMAND:
        return None
    return next((p for p in command.params if wanted in getattr(p, "opts", ())), None)


def _given(ctx: click.Context, name: str | None) -> bool:
    source = ctx.get_parameter_source(name) if name else None
    return source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT, ParameterSource.PROMPT)


def _check_dependencies(ctx: click.Context, path: tuple[str, ...]) -> None:
    command = ctx.command
    for param in command.params:
        needed = dependency_of(command, param, path)
        if needed is None or not _given(ctx, param.name):
            continue
        if not _given(ctx, needed.name):
            opt, other = param.opts[0], needed.opts[0]
            raise click.UsageError(f"{opt} works with {other} only, and {other} is not given: add {other} or drop {opt}", ctx)


def _paths(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        return [os.fspath(v) for v in value if isinstance(v, (str, os.PathLike))]
    return [os.fspath(value)] if isinstance(value, (str, os.PathLike)) else []


def _resolved(text: str) -> Path | None:
    if text in ("", "-"):
        return None
    try:
        return Path(text).expanduser().resolve()
    except (OSError, RuntimeError):
        return None


def _check_outputs(ctx: click.Context) -> None:
    inputs: dict[Path, str] = {}
    outputs: list[tuple[click.Parameter, str]] = []
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if isinstance(param.type, OutputFile) or param.name in _OUTPUT_NAMES:
            outputs.extend((param, text) for text in _paths(value))
        elif param.name in _INPUT_NAMES or (isinstance(param.type, click.Path) and param.type.exists):
            for text in _paths(value):
                where = _resolved(text)
                if where is not None:
                    inputs.setdefault(where, text)
    for param, text in outputs:
        where = _resolved(text)
        if where is not None and where in inputs:
            name = param.opts[0] if param.opts else param.name
            raise click.UsageError(
                f"{name} {text} is the file this command reads ({inputs[where]}); writing it would destroy it: give another path", ctx
            )


def _checked(callback: Any, path: tuple[str, ...]) -> Any:
    @functools.wraps(callback)
    def checked(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        _check_dependencies(ctx, path)
        _check_outputs(ctx)
        return callback(*args, **kwargs)

    checked._keyshape_rules = True  # type: ignore[attr-defined]
    return checked


def enforce(group: click.Group) -> None:
    """Wrap every leaf command of ``group`` so its rules run before its callback."""
    for path, command in leaf_commands(group):
        if command.callback is not None and not getattr(command.callback, "_keyshape_rules", False):
            command.callback = _checked(command.callback, path)
