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

__version__ = "0.3.0"

# The names below are imported on first use (PEP 562): ``import keyshape`` (and every
# ``keyshape`` command, whose package this is) then loads what it uses, not every layer's modules.
# The imports under TYPE_CHECKING are for type checkers and readers; ``_LAZY`` says where each
# name lives.
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keyshape.analysis import Analysis, analyze
    from keyshape.analysis.advise import advise
    from keyshape.analysis.designs import analyze_schema
    from keyshape.analysis.designs import compare as compare_designs
    from keyshape.errors import BadInput, KeyshapeError, KeysDoNotFit, Refused, SchemaError, StoreError, TableNotFound, WriteFailed
    from keyshape.phoenix.schema import load_schema
    from keyshape.schema import KeyLayout, KeySchema
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
    "load_schema": ("keyshape.phoenix.schema", "load_schema"),
    "open_store": ("keyshape.store", "open_store"),
    "Store": ("keyshape.store", "Store"),
    "Analysis": ("keyshape.analysis", "Analysis"),
    "analyze": ("keyshape.analysis", "analyze"),
    "analyze_schema": ("keyshape.analysis.designs", "analyze_schema"),
    "compare_designs": ("keyshape.analysis.designs", "compare"),
    "advise": ("keyshape.analysis.advise", "advise"),
}

# Names the package root exported up to 0.2.0, now only in their subpackage: they still resolve
# (with a DeprecationWarning naming the new import) so code written against 0.2 keeps running.
_MOVED: dict[str, tuple[str, str]] = {
    "crc32": ("keyshape.core.hashing", "crc32"),
    "gbif_modulus_salt": ("keyshape.core.hashing", "gbif_modulus_salt"),
    "hbasewd_one_byte_hash": ("keyshape.core.hashing", "hbasewd_one_byte_hash"),
    "java_bytes_hash": ("keyshape.core.hashing", "java_bytes_hash"),
    "java_long_hash": ("keyshape.core.hashing", "java_long_hash"),
    "java_string_hash": ("keyshape.core.hashing", "java_string_hash"),
    "md5_hex": ("keyshape.core.hashing", "md5_hex"),
    "murmur3_32": ("keyshape.core.hashing", "murmur3_32"),
    "opentsdb_salt": ("keyshape.core.hashing", "opentsdb_salt"),
    "phoenix_salt": ("keyshape.core.hashing", "phoenix_salt"),
    "MAX_LONG": ("keyshape.core.hbytes", "MAX_LONG"),
    "next_prefix": ("keyshape.core.hbytes", "next_prefix"),
    "to_bytes_binary": ("keyshape.core.hbytes", "to_bytes_binary"),
    "to_string_binary": ("keyshape.core.hbytes", "to_string_binary"),
    "bytes_compare": ("keyshape.core.hbytes", "compare"),
    "bytes_int32": ("keyshape.core.hbytes", "int32"),
    "bytes_int64": ("keyshape.core.hbytes", "int64"),
    "bytes_short": ("keyshape.core.hbytes", "short"),
    "bytes_split": ("keyshape.core.hbytes", "split"),
    "KeyArray": ("keyshape.core.keyarray", "KeyArray"),
    "ordered_decode": ("keyshape.core.ordered", "decode"),
    "ordered_encode_blob_copy": ("keyshape.core.ordered", "encode_blob_copy"),
    "ordered_encode_blob_var": ("keyshape.core.ordered", "encode_blob_var"),
    "ordered_encode_float64": ("keyshape.core.ordered", "encode_float64"),
    "ordered_encode_int32": ("keyshape.core.ordered", "encode_int32"),
    "ordered_encode_int64": ("keyshape.core.ordered", "encode_int64"),
    "ordered_encode_string": ("keyshape.core.ordered", "encode_string"),
    "reverse_timestamp": ("keyshape.core.ordered", "reverse_timestamp"),
    "RegionMap": ("keyshape.core.regions", "RegionMap"),
    "simulate_auto_split": ("keyshape.core.regions", "simulate_auto_split"),
    "SplitModel": ("keyshape.core.splitsim", "SplitModel"),
    "SplitSimulator": ("keyshape.core.splitsim", "SplitSimulator"),
    "bucket_splits": ("keyshape.core.splits", "bucket_splits"),
    "decimal_string_split": ("keyshape.core.splits", "decimal_string_split"),
    "format_splits": ("keyshape.core.splits", "format_splits"),
    "hex_string_split": ("keyshape.core.splits", "hex_string_split"),
    "range_split": ("keyshape.core.splits", "range_split"),
    "sample_splits": ("keyshape.core.splits", "sample_splits"),
    "uniform_split": ("keyshape.core.splits", "uniform_split"),
    "migrate": ("keyshape.ops.migrate", "migrate"),
    "analyze_live": ("keyshape.ops.sample", "analyze_live"),
    "sample_table": ("keyshape.ops.sample", "sample_table"),
    "apply_plan": ("keyshape.ops.splitplan", "apply_plan"),
    "plan_splits": ("keyshape.ops.splitplan", "plan_splits"),
    "verify_migration": ("keyshape.ops.verify", "verify_migration"),
    "dual_scan": ("keyshape.read.dual", "dual_scan"),
    "IdAllocator": ("keyshape.read", "IdAllocator"),
    "IndexedWriter": ("keyshape.read", "IndexedWriter"),
    "delete_record": ("keyshape.read", "delete_record"),
    "put_record": ("keyshape.read", "put_record"),
    "read_by_index": ("keyshape.read", "read_by_index"),
    "repair_index": ("keyshape.read", "repair_index"),
    "salted_get": ("keyshape.read", "get"),
    "salted_scan": ("keyshape.read", "scan"),
    "salted_scan_page": ("keyshape.read", "scan_page"),
    "FamilySpec": ("keyshape.schema", "FamilySpec"),
    "TableSpec": ("keyshape.schema", "TableSpec"),
    "Finding": ("keyshape.schema.lint", "Finding"),
    "EmbeddedStore": ("keyshape.store", "EmbeddedStore"),
    "RegionInfo": ("keyshape.store", "RegionInfo"),
    "ServerInfo": ("keyshape.store", "ServerInfo"),
    "create_table_from_schema": ("keyshape.store", "create_table_from_schema"),
    "ensure_table": ("keyshape.store", "ensure_table"),
    "WorkloadSpec": ("keyshape.workload", "WorkloadSpec"),
    "read_key_arrays": ("keyshape.workload", "read_key_arrays"),
    "read_keys": ("keyshape.workload", "read_keys"),
    "read_records": ("keyshape.workload", "read_records"),
    "generate_workload": ("keyshape.workload", "generate"),
    "PhoenixKey": ("keyshape.phoenix", "PhoenixKey"),
    "PhoenixTable": ("keyshape.phoenix", "PhoenixTable"),
    "parse_phoenix_ddl": ("keyshape.phoenix", "parse_ddl"),
    "PhoenixKeySchema": ("keyshape.phoenix.schema", "PhoenixKeySchema"),
    "load_phoenix_schema": ("keyshape.phoenix.schema", "load_phoenix_schema"),
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
    """A public name, imported from its module on first use (then cached here); a name that moved
    to its subpackage, with a DeprecationWarning; a subpackage (``keyshape.analysis``) as the
    import system gives it."""
    import importlib

    where = _LAZY.get(name)
    if where is not None:
        value = getattr(importlib.import_module(where[0]), where[1])
        globals()[name] = value
        return value
    moved = _MOVED.get(name)
    if moved is not None:
        module, attr = moved
        new = f"from {module} import {attr}" + ("" if attr == name else f" as {name}")
        warnings.warn(f"keyshape.{name} moved to its subpackage: {new}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module), attr)
    if not name.startswith("_"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
