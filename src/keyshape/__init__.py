"""keyshape: design HBase row keys and pre-split tables, and prove the load spreads evenly.

The public API, by layer (bytes -> keys -> regions -> stores -> reads -> analysis); each layer's
module holds the details. Each top-level name says what it works on, because the modules reuse
short names: ``bytes_*`` are HBase's ``Bytes`` (``keyshape.core.hbytes``: ``bytes_compare`` is the
unsigned byte comparison, ``bytes_split`` is ``Bytes.split``), ``ordered_*`` are HBase's
``OrderedBytes`` (``keyshape.core.ordered``), ``salted_*`` read a salted table as if unsalted
(``keyshape.read``), ``generate_workload`` makes synthetic columns, and key designs are compared
with ``compare_designs``. The modules keep their own short names.
"""

__version__ = "0.1.0"

# --- errors -----------------------------------------------------------------------------------
# --- analysis: does the load spread evenly? ---------------------------------------------------
from keyshape.analysis import Analysis, analyze
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

__all__ = [
    # errors
    "KeyshapeError", "SchemaError", "StoreError", "TableNotFound", "WriteFailed",
    # bytes
    "MAX_LONG", "bytes_compare", "bytes_int32", "bytes_int64", "next_prefix", "bytes_short", "bytes_split",
    "to_bytes_binary", "to_string_binary",
    "crc32", "gbif_modulus_salt", "hbasewd_one_byte_hash", "java_bytes_hash", "java_long_hash",
    "java_string_hash", "md5_hex", "murmur3_32", "opentsdb_salt", "phoenix_salt",
    "ordered_decode", "ordered_encode_blob_copy", "ordered_encode_blob_var", "ordered_encode_float64",
    "ordered_encode_int32", "ordered_encode_int64", "ordered_encode_string", "reverse_timestamp",
    "KeyArray",
    # keys
    "FamilySpec", "Finding", "KeySchema", "TableSpec", "WorkloadSpec",
    "bucket_splits", "decimal_string_split", "format_splits",
    "hex_string_split", "range_split", "sample_splits", "uniform_split",
    "generate_workload", "read_key_arrays", "read_keys", "read_records",
    # regions
    "RegionMap", "simulate_auto_split", "SplitModel", "SplitSimulator",
    # stores
    "EmbeddedStore", "RegionInfo", "Store", "create_table_from_schema", "ensure_table", "open_store",
    "ServerInfo",
    # reads
    "IdAllocator", "IndexedWriter", "salted_get", "read_by_index", "repair_index", "salted_scan",
    "salted_scan_page",
    "put_record", "delete_record",
    # analysis
    "Analysis", "analyze", "analyze_schema", "compare_designs",
    # Phoenix tables, and any key schema file
    "PhoenixKey", "PhoenixKeySchema", "PhoenixTable", "load_phoenix_schema", "load_schema",
    "parse_phoenix_ddl",
    # existing tables
    "analyze_live", "apply_plan", "dual_scan", "migrate", "plan_splits", "sample_table",
    "verify_migration",
]
