"""keyshape: design HBase row keys and pre-split tables, and prove the load spreads evenly."""

__version__ = "0.1.0"

from keyshape.ordered import (  # noqa: E402
    decode,
    encode_blob_copy,
    encode_blob_var,
    encode_float64,
    encode_int32,
    encode_int64,
    encode_string,
    reverse_timestamp,
)
from keyshape.hashing import (  # noqa: E402
    crc32,
    hbasewd_one_byte_hash,
    java_bytes_hash,
    java_long_hash,
    java_string_hash,
    md5_hex,
    murmur3_32,
    opentsdb_salt,
    phoenix_salt,
)
from keyshape.hbytes import (  # noqa: E402
    MAX_LONG,
    compare,
    int32,
    int64,
    short,
    split,
    to_bytes_binary,
    to_string_binary,
)
from keyshape.splits import (  # noqa: E402
    bucket_splits,
    decimal_string_split,
    format_splits,
    hex_string_split,
    range_split,
    sample_splits,
    uniform_split,
)
from keyshape.schema import FamilySpec, KeySchema, TableSpec  # noqa: E402
from keyshape.lint import Finding  # noqa: E402
from keyshape.workload import WorkloadSpec, generate, read_keys, read_records  # noqa: E402
