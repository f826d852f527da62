"""keyshape: design HBase row keys and pre-split tables, and prove the load spreads evenly.

The public API, by layer (bytes -> keys -> regions -> stores -> reads -> analysis); each layer's
module holds the details. ``compare`` is HBase's unsigned byte comparison (``keyshape.core.hbytes``);
key designs are compared with ``compare_designs`` (``keyshape.analysis.designs.compare``).
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
    compare,
    int32,
    int64,
    next_prefix,
    short,
    split,
    to_bytes_binary,
    to_string_binary,
)
from keyshape.core.keyarray import KeyArray
from keyshape.core.ordered import (
    decode,
    encode_blob_copy,
    encode_blob_var,
    encode_float64,
    encode_int32,
    encode_int64,
    encode_string,
    reverse_timestamp,
)

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

# --- reads: salted tables read as if unsalted -------------------------------------------------
from keyshape.read import (
    IdAllocator,
    IndexedWriter,
    get,
    read_by_index,
    repair_index,
    scan,
    scan_page,
)

# --- keys: schemas, split keys, workloads ----------------------------------------------------
from keyshape.schema import FamilySpec, KeySchema, TableSpec
from keyshape.schema.lint import Finding

# --- stores ----------------------------------------------------------------------------------
from keyshape.store import (
    EmbeddedStore,
    RegionInfo,
    Store,
    create_table_from_schema,
    ensure_table,
    open_store,
)
from keyshape.workload import WorkloadSpec, generate, read_keys, read_records

__all__ = [
    # errors
    "KeyshapeError", "SchemaError", "StoreError", "TableNotFound", "WriteFailed",
    # bytes
    "MAX_LONG", "compare", "int32", "int64", "next_prefix", "short", "split",
    "to_bytes_binary", "to_string_binary",
    "crc32", "gbif_modulus_salt", "hbasewd_one_byte_hash", "java_bytes_hash", "java_long_hash",
    "java_string_hash", "md5_hex", "murmur3_32", "opentsdb_salt", "phoenix_salt",
    "decode", "encode_blob_copy", "encode_blob_var", "encode_float64", "encode_int32",
    "encode_int64", "encode_string", "reverse_timestamp",
    "KeyArray",
    # keys
    "FamilySpec", "Finding", "KeySchema", "TableSpec", "WorkloadSpec",
    "bucket_splits", "decimal_string_split", "format_splits",
    "hex_string_split", "range_split", "sample_splits", "uniform_split",
    "generate", "read_keys", "read_records",
    # regions
    "RegionMap", "simulate_auto_split", "SplitModel", "SplitSimulator",
    # stores
    "EmbeddedStore", "RegionInfo", "Store", "create_table_from_schema", "ensure_table", "open_store",
    # reads
    "IdAllocator", "IndexedWriter", "get", "read_by_index", "repair_index", "scan", "scan_page",
    # analysis
    "Analysis", "analyze", "analyze_schema", "compare_designs",
]
