"""The prefix strategy seam (issue 29): every module of keyshape.schema.prefixes is one registered
strategy holding its own facts, and the modules that use strategies ask the strategy object
instead of comparing its name (the C kernels and schema/keycheck.py still dispatch on names)."""

from __future__ import annotations

import pkgutil
import re
from pathlib import Path

import pytest

import keyshape.schema.prefixes as prefixes
from keyshape.schema.prefixes import STRATEGIES, Prefix, make_prefix

SRC = Path(prefixes.__file__).parents[2]
# Where a strategy used to be known by name (issue 29's list), keycheck.py aside.
USERS = [*sorted((SRC / "schema").glob("*.py")), *sorted((SRC / "read").glob("*.py")), SRC / "analysis" / "designs.py", SRC / "workload.py"]
NAME_TEST = re.compile(r"""(\.name|strategy)\s*(==|!=|\bin\b|\bnot in\b)\s*[("'\[]""")


def test_every_module_of_the_package_registers_its_strategy() -> None:
    modules = {m.name for m in pkgutil.iter_modules(prefixes.__path__)} - {"base"}
    owners = {cls.__module__.rsplit(".", 1)[1] for cls in STRATEGIES.values() if cls is not Prefix}
    assert owners == modules
    assert list(STRATEGIES)[:9] == ["none", "md5", "md5-full", "java-hash-short", "crc32", "mod", "random", "phoenix", "opentsdb"]


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_defaults_fit_the_bounds_and_build(name: str) -> None:
    cls = STRATEGIES[name]
    assert set(cls.defaults) <= set(cls.options)
    for opt, value in cls.defaults.items():
        lo, hi = cls.options[opt]
        assert lo <= value <= hi, (opt, value)
    extra = {"metric_width": 3} if name == "opentsdb" else {}
    p = make_prefix(name, **cls.defaults, **extra)
    assert p.name == name
    # A strategy whose prefix is not a function of the record cannot be an index table's prefix.
    assert cls.deterministic or not cls.index_ok
    if p.width and p.salted and p.deterministic and p.material:
        m = b"user42"
        assert p.prefix_for(m) == p.prefix_for(m)


@pytest.mark.parametrize("path", USERS, ids=lambda p: str(p.relative_to(SRC)))
def test_no_user_of_a_strategy_compares_its_name(path: Path) -> None:
    hits = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if NAME_TEST.search(line)]
    assert not hits, hits
