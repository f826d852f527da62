"""keyshape's public API: the package root exports what a library user starts from (a schema, a
store, the analysis, the errors); everything else is public in its subpackage's ``__all__`` (the
73 names 0.2 also re-exported at the root left it in 0.4)."""

from __future__ import annotations

import importlib
import inspect
import warnings

import pytest

import keyshape

ROOT_API = {
    "KeyshapeError",
    "BadInput",
    "SchemaError",
    "StoreError",
    "TableNotFound",
    "WriteFailed",
    "Refused",
    "KeysDoNotFit",
    "KeySchema",
    "KeyLayout",
    "load_schema",
    "Store",
    "open_store",
    "Analysis",
    "analyze",
    "analyze_schema",
    "compare_designs",
    "advise",
}
SUBPACKAGES = ["core", "schema", "store", "read", "analysis", "analysis.advise", "report", "ops", "phoenix", "serve", "cli", "errors"]


def test_the_root_exports_what_a_library_user_starts_from() -> None:
    assert set(keyshape.__all__) == ROOT_API
    assert len(keyshape.__all__) == len(set(keyshape.__all__))


@pytest.mark.parametrize("name", sorted(ROOT_API))
def test_root_name_imports_without_warning_and_has_a_docstring(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        obj = getattr(keyshape, name)
    assert (inspect.getdoc(obj) or "").strip(), f"keyshape.{name} has no docstring"


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_every_subpackage_says_what_it_exports_and_it_imports(package: str) -> None:
    module = importlib.import_module(f"keyshape.{package}")
    exported = getattr(module, "__all__", None)
    assert exported, f"keyshape.{package} has no __all__"
    assert len(exported) == len(set(exported))
    for name in exported:
        assert getattr(module, name, None) is not None or importlib.import_module(f"keyshape.{package}.{name}"), name


@pytest.mark.parametrize("name", ["bytes_compare", "salted_scan", "generate_workload", "ordered_decode", "bucket_splits", "migrate", "WorkloadSpec"])
def test_the_names_0_2_re_exported_are_gone_from_the_root(name: str) -> None:
    """0.2 wrote ``keyshape.bytes_compare``; 0.3 warned; 0.4 has them in their subpackages only
    (README, "Python API"), so ``import keyshape`` names 18 things, not 91."""
    with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
        getattr(keyshape, name)
    with pytest.raises(ImportError):
        exec(f"from keyshape import {name}", {})
    assert name not in dir(keyshape)


def test_the_moved_names_are_where_the_readme_says() -> None:
    from keyshape.core import hbytes, ordered
    from keyshape.read import get, scan, scan_page
    from keyshape.workload import generate

    assert ordered.decode(ordered.encode_int64(-5)) == (-5, b"")
    assert hbytes.compare(b"a", b"b") < 0
    assert all(callable(f) for f in (get, scan, scan_page, generate))


def test_compare_designs_is_the_designs_comparison() -> None:
    from keyshape.analysis.designs import compare

    assert keyshape.compare_designs is compare


@pytest.mark.parametrize(
    "generic", ["compare", "decode", "split", "get", "scan", "scan_page", "generate", "short", "int32", "int64", "encode_string", "encode_int64"]
)
def test_no_generic_top_level_names(generic: str) -> None:
    """One name per thing, and it says what it is: ``keyshape.decode`` looked like key decoding but
    was OrderedBytes decoding."""
    assert not hasattr(keyshape, generic)
