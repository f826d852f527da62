"""keyshape: design HBase row keys and pre-split tables, and prove the load spreads evenly.

The public API, by layer (bytes -> keys -> regions -> stores -> reads -> analysis); each layer's
module holds the details. Each top-level name says what it works on, because the modules reuse
short names: ``bytes_*`` are HBase's ``Bytes`` (``keyshape.core.hbytes``: ``bytes_compare`` is the
unsigned byte comparison, ``bytes_split`` is ``Bytes.split``), ``ordered_*`` are HBase's
``OrderedBytes`` (``keyshape.core.ordered``), ``salted_*`` read a salted table as if unsalted
(``keyshape.read``), ``generate_workload`` makes synthetic columns, and key designs are compared
with ``compare_designs``. The modules keep their own short names.
"""

__version__ = "0.2.0"

# The names below are imported on first use (PEP 562): ``import keyshape`` (and every
# ``keyshape`` command, whose package this is) then loads what it uses, not every layer's modules
# (stores, reads, migrations, Phoenix: 25 modules a key analysis never runs). ``from keyshape
# import X`` and ``keyshape.X`` work as before; the imports under TYPE_CHECKING are for type
# checkers and readers, and ``_LAZY`` says where each name lives.
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # --- errors -----------------------------------------------------------------------------------
    # --- analysis: does the load spread evenly? ---------------------------------------------------
    from keyshape.analysis import Analysis, analyze
    from keyshape.analysis.advise import advise
    from keyshape.analysis.designs import analyze_schema
    from keyshape.analysis.designs import compare as compare_designs
    from keyshape.core.hashing import (
        crc32,
        gbif_modulus_salt,
        hbasewd_one_byte_hash,
        java_bytes_hash,
        java_long_hash,
        java_string_hash,
        md5_hex,
        murmur3_32,
        opentsdb_salt,
        phoenix_salt,
    )

    # --- bytes: HBase's byte conventions, Java hashes and salts, order-preserving encodings ---------
    from keyshape.core.hbytes import (
        MAX_LONG,
        next_prefix,
        to_bytes_binary,
        to_string_binary,
    )
    from keyshape.core.hbytes import compare as bytes_compare
    from keyshape.core.hbytes import int32 as bytes_int32
    from keyshape.core.hbytes import int64 as bytes_int64
    from keyshape.core.hbytes import short as bytes_short
    from keyshape.core.hbytes import split as bytes_split
    from keyshape.core.keyarray import KeyArray
    from keyshape.core.ordered import decode as ordered_decode
    from keyshape.core.ordered import encode_blob_copy as ordered_encode_blob_copy
    from keyshape.core.ordered import encode_blob_var as ordered_encode_blob_var
    from keyshape.core.ordered import encode_float64 as ordered_encode_float64
    from keyshape.core.ordered import encode_int32 as ordered_encode_int32
    from keyshape.core.ordered import encode_int64 as ordered_encode_int64
    from keyshape.core.ordered import encode_string as ordered_encode_string
    from keyshape.core.ordered import reverse_timestamp

    # --- regions ---------------------------------------------------------------------------------
    from keyshape.core.regions import RegionMap, simulate_auto_split
    from keyshape.core.splitsim import SplitModel, SplitSimulator
    from keyshape.core.splits import (
        bucket_splits,
        decimal_string_split,
        format_splits,
        hex_string_split,
        range_split,
        sample_splits,
        uniform_split,
    )
    from keyshape.errors import (
        KeyshapeError,
        SchemaError,
        StoreError,
        TableNotFound,
        WriteFailed,
    )

    # --- existing tables: diagnose from live keys, split, migrate / re-salt, verify, dual reads ---
    from keyshape.ops.migrate import migrate
    from keyshape.ops.sample import analyze_live, sample_table
    from keyshape.ops.splitplan import apply_plan, plan_splits
    from keyshape.ops.verify import verify_migration
    from keyshape.read.dual import dual_scan

    # --- reads: salted tables read as if unsalted -------------------------------------------------
    from keyshape.read import (
        IdAllocator,
        IndexedWriter,
        delete_record,
        put_record,
        read_by_index,
        repair_index,
    )
    from keyshape.read import get as salted_get
    from keyshape.read import scan as salted_scan
    from keyshape.read import scan_page as salted_scan_page

    # --- keys: schemas, split keys, workloads ----------------------------------------------------
    from keyshape.schema import FamilySpec, KeySchema, TableSpec
    from keyshape.schema.lint import Finding

    # --- stores ----------------------------------------------------------------------------------
    from keyshape.store import (
        EmbeddedStore,
        RegionInfo,
        ServerInfo,
        Store,
        create_table_from_schema,
        ensure_table,
        open_store,
    )
    from keyshape.workload import WorkloadSpec, read_key_arrays, read_keys, read_records
    from keyshape.workload import generate as generate_workload

    # --- Phoenix tables: row keys byte-exact with Phoenix 5.2, and as key schemas ------------------
    from keyshape.phoenix import PhoenixKey, PhoenixTable
    from keyshape.phoenix import parse_ddl as parse_phoenix_ddl
    from keyshape.phoenix.schema import PhoenixKeySchema, load_phoenix_schema, load_schema

_LAZY: dict[str, tuple[str, str]] = {
    "Analysis": ("keyshape.analysis", "Analysis"),
    "analyze": ("keyshape.analysis", "analyze"),
    "advise": ("keyshape.analysis.advise", "advise"),
    "analyze_schema": ("keyshape.analysis.designs", "analyze_schema"),
    "compare_designs": ("keyshape.analysis.designs", "compare"),
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
    "KeyshapeError": ("keyshape.errors", "KeyshapeError"),
    "SchemaError": ("keyshape.errors", "SchemaError"),
    "StoreError": ("keyshape.errors", "StoreError"),
    "TableNotFound": ("keyshape.errors", "TableNotFound"),
    "WriteFailed": ("keyshape.errors", "WriteFailed"),
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
    "KeySchema": ("keyshape.schema", "KeySchema"),
    "TableSpec": ("keyshape.schema", "TableSpec"),
    "Finding": ("keyshape.schema.lint", "Finding"),
    "EmbeddedStore": ("keyshape.store", "EmbeddedStore"),
    "RegionInfo": ("keyshape.store", "RegionInfo"),
    "ServerInfo": ("keyshape.store", "ServerInfo"),
    "Store": ("keyshape.store", "Store"),
    "create_table_from_schema": ("keyshape.store", "create_table_from_schema"),
    "ensure_table": ("keyshape.store", "ensure_table"),
    "open_store": ("keyshape.store", "open_store"),
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
    "load_schema": ("keyshape.phoenix.schema", "load_schema"),
}

__all__ = [
    # errors
    "KeyshapeError",
    "SchemaError",
    "StoreError",
    "TableNotFound",
    "WriteFailed",
    # bytes
    "MAX_LONG",
    "bytes_compare",
    "bytes_int32",
    "bytes_int64",
    "next_prefix",
    "bytes_short",
    "bytes_split",
    "to_bytes_binary",
    "to_string_binary",
    "crc32",
    "gbif_modulus_salt",
    "hbasewd_one_byte_hash",
    "java_bytes_hash",
    "java_long_hash",
    "java_string_hash",
    "md5_hex",
    "murmur3_32",
    "opentsdb_salt",
    "phoenix_salt",
    "ordered_decode",
    "ordered_encode_blob_copy",
    "ordered_encode_blob_var",
    "ordered_encode_float64",
    "ordered_encode_int32",
    "ordered_encode_int64",
    "ordered_encode_string",
    "reverse_timestamp",
    "KeyArray",
    # keys
    "FamilySpec",
    "Finding",
    "KeySchema",
    "TableSpec",
    "WorkloadSpec",
    "bucket_splits",
    "decimal_string_split",
    "format_splits",
    "hex_string_split",
    "range_split",
    "sample_splits",
    "uniform_split",
    "generate_workload",
    "read_key_arrays",
    "read_keys",
    "read_records",
    # regions
    "RegionMap",
    "simulate_auto_split",
    "SplitModel",
    "SplitSimulator",
    # stores
    "EmbeddedStore",
    "RegionInfo",
    "Store",
    "create_table_from_schema",
    "ensure_table",
    "open_store",
    "ServerInfo",
    # reads
    "IdAllocator",
    "IndexedWriter",
    "salted_get",
    "read_by_index",
    "repair_index",
    "salted_scan",
    "salted_scan_page",
    "put_record",
    "delete_record",
    # analysis
    "Analysis",
    "analyze",
    "analyze_schema",
    "compare_designs",
    "advise",
    # Phoenix tables, and any key schema file
    "PhoenixKey",
    "PhoenixKeySchema",
    "PhoenixTable",
    "load_phoenix_schema",
    "load_schema",
    "parse_phoenix_ddl",
    # existing tables
    "analyze_live",
    "apply_plan",
    "dual_scan",
    "migrate",
    "plan_splits",
    "sample_table",
    "verify_migration",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (then cached here); a subpackage
    (``keyshape.analysis``) as the import system gives it."""
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
