"""Every option either acts or is refused (issue 40): walks every command's options through click's
metadata. An option whose help starts by naming the option it works with ("Auto-split: ...",
"With --table: ...", "--online: ...", "--cutover: ...") is refused without it by keyshape.cli.rules;
this test finds every such option in the tree (so one added later is covered), gives it alone, and
asserts the one-line refusal, then gives it with what it needs and asserts no refusal."""

from __future__ import annotations

from typing import Any

import click
import pytest

from keyshape.cli import rules
from keyshape.cli.main import main

COMMANDS = list(rules.leaf_commands(main))
DEPENDENT = [
    (path, command, param, needed)
    for path, command in COMMANDS
    for param in command.params
    if isinstance(param, click.Option) and (needed := rules.dependency_of(command, param, path)) is not None
]


PLAUSIBLE = {"--hbase": "127.0.0.1:1", "--max-filesize": "2GiB", "--flush-size": "64MiB", "--split-policy": "constant"}


def _value(param: click.Parameter) -> list[str]:
    """Command-line words that give ``param`` a plausible value."""
    if isinstance(param, click.Option) and (param.is_flag or param.count):
        return [param.opts[0]]
    if isinstance(param.type, click.Choice):
        return [param.opts[0], str(param.type.choices[0])]
    if isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType)):
        return [param.opts[0], "3"]
    return [
        param.opts[0],
        {"--hbase": "127.0.0.1:1", "--max-filesize": "2GiB", "--flush-size": "64MiB", "--split-policy": "constant"}.get(param.opts[0], "x"),
    ]


def _check(command: click.Command, path: tuple[str, ...], args: list[str]) -> None:
    ctx: Any = command.make_context(" ".join(("keyshape", *path)), args, resilient_parsing=True)
    with ctx:
        rules._check_dependencies(ctx, path)


def test_the_walk_finds_the_options_the_issue_names() -> None:
    found = {(" ".join(path), param.opts[0]) for path, _, param, _ in DEPENDENT}
    for case in [
        ("analyze", "--split-policy"),
        ("analyze", "--max-filesize"),
        ("compare", "--flush-size"),
        ("migrate", "--max-lag"),
        ("migrate", "--cutover"),
        ("phoenix resalt", "--online"),
        ("analyze", "--sample-per-region"),
        ("scan", "--user"),
    ]:
        assert case in found, case
    assert len(found) >= 40


@pytest.mark.parametrize("path,command,param,needed", DEPENDENT, ids=[f"{' '.join(p)} {o.opts[0]}" for p, _, o, _ in DEPENDENT])
def test_a_dependent_option_alone_is_refused(path: tuple[str, ...], command: click.Command, param: click.Option, needed: click.Parameter) -> None:
    with pytest.raises(click.UsageError, match=f"{param.opts[0]} works with {needed.opts[0]} only"):
        _check(command, path, _value(param))
    # With what it works with (and that one's own dependency), it is not refused.
    chain = [param, needed]
    while (up := rules.dependency_of(command, chain[-1], path)) is not None and up not in chain:
        chain.append(up)
    words = [w for p in chain for w in _value(p)]
    _check(command, path, words)


def test_given_through_the_whole_cli_it_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from click.testing import CliRunner

    monkeypatch.chdir(Path(__file__).resolve().parents[2])

    result = CliRunner().invoke(main, ["analyze", "examples/sequential.toml", "--write-rate", "5"], prog_name="keyshape", catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --write-rate works with --auto-split only, and --auto-split is not given: "
        "add --auto-split or drop --write-rate (see 'keyshape analyze --help')"
    ]
