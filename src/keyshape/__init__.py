"""keyshape: design HBase row keys and pre-split tables, and prove the load spreads evenly.

The names here are what a library user starts from: a key schema (``KeySchema``, ``load_schema``
for any schema file, ``KeyLayout`` for its immutable byte layout), a store (``open_store``), the
analysis (``analyze_schema``, ``analyze``, ``compare_designs``, ``advise``) and the errors. Everything else is public in its subpackage, each
with its own ``__all__``: ``keyshape.core`` (HBase's ``Bytes`` in ``core.hbytes``, Java hashes and
salts in ``core.hashing``, OrderedBytes in ``core.ordered``, split algorithms in ``core.splits``,
region maps and split simulation), ``keyshape.schema``, ``keyshape.store``, ``keyshape.read``
(salted tables read as if unsalted, index tables, id blocks), ``keyshape.analysis``,
``keyshape.ops`` (live tables: load, watch, sample, split plans, migrate, verify),
``keyshape.report``, ``keyshape.phoenix``, ``keyshape.spark``.

>>> import keyshape as ks
>>> schema = ks.KeySchema.from_dict({
...     "table": {"name": "events"},
...     "key": {"separator": "#", "fields": [{"name": "user", "type": "string"}, {"name": "ts", "type": "int64"}]},
... })
>>> key = schema.encode({"user": "alice", "ts": 5})
>>> key  # the text, the separator, then ts as OrderedBytes' Int64 (header byte ',' = 0x2c)
b'alice#,\\x80\\x00\\x00\\x00\\x00\\x00\\x00\\x05'
>>> schema.decode(key)
{'user': 'alice', 'ts': 5}
"""

__version__ = "0.4.0"

# The names below are imported on first use (PEP 562): ``import keyshape`` (and every
# ``keyshape`` command, whose package this is) then loads what it uses, not every layer's modules.
# The imports under TYPE_CHECKING are for type checkers and readers; ``_LAZY`` says where each
# name lives.
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keyshape.analysis import Analysis, analyze
    from keyshape.analysis.advise import advise
    from keyshape.analysis.designs import analyze_schema
    from keyshape.analysis.designs import compare as compare_designs
    from keyshape.errors import BadInput, KeyshapeError, KeysDoNotFit, Refused, SchemaError, StoreError, TableNotFound, WriteFailed
    from keyshape.schema import KeyLayout, KeySchema, load_schema
    from keyshape.store import Store, open_store

_LAZY: dict[str, tuple[str, str]] = {
    "KeyshapeError": ("keyshape.errors", "KeyshapeError"),
    "BadInput": ("keyshape.errors", "BadInput"),
    "SchemaError": ("keyshape.errors", "SchemaError"),
    "StoreError": ("keyshape.errors", "StoreError"),
    "TableNotFound": ("keyshape.errors", "TableNotFound"),
    "WriteFailed": ("keyshape.errors", "WriteFailed"),
    "Refused": ("keyshape.errors", "Refused"),
    "KeysDoNotFit": ("keyshape.errors", "KeysDoNotFit"),
    "KeySchema": ("keyshape.schema", "KeySchema"),
    "KeyLayout": ("keyshape.schema", "KeyLayout"),
    "load_schema": ("keyshape.schema", "load_schema"),  # Phoenix files too: their loader registers itself
    "open_store": ("keyshape.store", "open_store"),
    "Store": ("keyshape.store", "Store"),
    "Analysis": ("keyshape.analysis", "Analysis"),
    "analyze": ("keyshape.analysis", "analyze"),
    "analyze_schema": ("keyshape.analysis.designs", "analyze_schema"),
    "compare_designs": ("keyshape.analysis.designs", "compare"),
    "advise": ("keyshape.analysis.advise", "advise"),
}

__all__ = [
    # errors (keyshape.errors)
    "KeyshapeError",
    "BadInput",
    "SchemaError",
    "StoreError",
    "TableNotFound",
    "WriteFailed",
    "Refused",
    "KeysDoNotFit",
    # key schemas: any schema file (TOML, Phoenix DDL, TOML with [phoenix])
    "KeySchema",
    "KeyLayout",
    "load_schema",
    # stores: embedded, or HBase by URL
    "Store",
    "open_store",
    # analysis: does the load spread evenly, and which design spreads it best
    "Analysis",
    "analyze",
    "analyze_schema",
    "compare_designs",
    "advise",
]


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use (then cached here), or a
    subpackage (``keyshape.analysis``) as the import system gives it. The names 0.2 re-exported
    here (``bytes_compare``, ``salted_scan``...) left in 0.4: they live in their subpackages only."""
    import importlib

    where = _LAZY.get(name)
    if where is not None:
        value = getattr(importlib.import_module(where[0]), where[1])
        globals()[name] = value
        return value
    if not name.startswith("_"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
