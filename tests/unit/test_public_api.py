"""keyshape's public API: the package root exports what a library user starts from (a schema, a
store, the analysis, the errors); everything else is public in its subpackage's ``__all__``, and a
name that left the root still resolves, with a DeprecationWarning that names its new import."""

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


def test_a_name_that_left_the_root_still_works_and_says_where_it_went() -> None:
    """0.2 code wrote ``keyshape.bytes_compare``: it gets hbytes.compare and the import to use."""
    from keyshape.core import hbytes, ordered
    from keyshape.read import get, scan, scan_page
    from keyshape.workload import generate

    with pytest.warns(DeprecationWarning, match="from keyshape.core.hbytes import compare as bytes_compare"):
        assert keyshape.bytes_compare is hbytes.compare
    with pytest.warns(DeprecationWarning, match="from keyshape.core.splits import bucket_splits$"):
        from keyshape import bucket_splits  # noqa: F401 - the statement a 0.2 user wrote
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert keyshape.ordered_decode is ordered.decode
        assert (keyshape.salted_get, keyshape.salted_scan, keyshape.salted_scan_page) == (get, scan, scan_page)
        assert keyshape.generate_workload is generate
        assert keyshape.ordered_decode(keyshape.ordered_encode_int64(-5)) == (-5, b"")
    assert "bytes_compare" not in dir(keyshape)


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
