"""Column family options as HBase stores them: validation against HBase's enums and the raw
``ColumnFamilySchema`` protobuf with HBase's own attribute keys.

hbase-driver's ``ColumnFamilyDescriptorBuilder`` writes lower-case keys (``max_versions``,
``compression_type`` ...) that HBase keeps as opaque metadata and ignores (CLIENTS.md bug 6), so
keyshape builds the protobuf itself with the keys ``ColumnFamilyDescriptorBuilder`` (Java) uses:
``VERSIONS COMPRESSION BLOOMFILTER BLOCKSIZE TTL IN_MEMORY DATA_BLOCK_ENCODING``.
"""

from __future__ import annotations

from typing import Any

from hbasedriver.protobuf_py import HBase_pb2

from keyshape.errors import StoreError

__all__ = ["COMPRESSIONS", "BLOOM_TYPES", "DATA_BLOCK_ENCODINGS", "family_schema", "family_options"]

# org.apache.hadoop.hbase.io.compress.Compression.Algorithm (HBase 2.6)
COMPRESSIONS = ("NONE", "GZ", "LZO", "SNAPPY", "LZ4", "BZIP2", "ZSTD", "BROTLI")
# org.apache.hadoop.hbase.regionserver.BloomType, without ROWPREFIX_FIXED_LENGTH (it needs a
# per-family prefix-length setting keyshape does not model)
BLOOM_TYPES = ("NONE", "ROW", "ROWCOL")
# org.apache.hadoop.hbase.io.encoding.DataBlockEncoding (PREFIX_TREE was removed in 2.0)
DATA_BLOCK_ENCODINGS = ("NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1")
# TableDescriptorChecker: "Block size for column family must be between 1K and 16MB"
MIN_BLOCK_SIZE, MAX_BLOCK_SIZE = 1024, 16 * 1024 * 1024
FOREVER = 2**31 - 1  # HConstants.FOREVER, the TTL of a family without one


def _choice(family: str, what: str, value: Any, allowed: tuple[str, ...]) -> str:
    text = str(value).upper()
    if text not in allowed:
        raise StoreError(f"family {family!r}: {what} {value!r} is not one HBase knows; "
                         f"use one of {', '.join(allowed)}")
    return text


def family_options(family: Any) -> dict[str, str]:
    """HBase's attribute map for a ``FamilySpec`` (validated; StoreError names the bad option).

    ``ttl`` is in seconds (HBase's unit); None means HBase's default, FOREVER.
    """
    name = str(family.name)
    if not name or ":" in name or name.startswith("."):
        raise StoreError(f"bad column family name {name!r}: non-empty, no ':', not starting with '.'")
    versions = int(family.versions)
    if versions < 1:
        raise StoreError(f"family {name!r}: versions must be >= 1, got {versions}")
    block_size = int(family.block_size)
    if not MIN_BLOCK_SIZE <= block_size <= MAX_BLOCK_SIZE:
        raise StoreError(f"family {name!r}: block_size {block_size} is outside HBase's "
                         f"{MIN_BLOCK_SIZE}..{MAX_BLOCK_SIZE} bytes")
    options = {
        "VERSIONS": str(versions),
        "COMPRESSION": _choice(name, "compression", family.compression, COMPRESSIONS),
        "BLOOMFILTER": _choice(name, "bloom_filter", family.bloom_filter, BLOOM_TYPES),
        "BLOCKSIZE": str(block_size),
        "IN_MEMORY": "true" if family.in_memory else "false",
        "DATA_BLOCK_ENCODING": _choice(name, "data_block_encoding", family.data_block_encoding,
                                       DATA_BLOCK_ENCODINGS),
    }
    if family.ttl is not None:
        ttl = int(family.ttl)
        if not 1 <= ttl <= FOREVER:
            raise StoreError(f"family {name!r}: ttl must be 1..{FOREVER} seconds, got {ttl}")
        options["TTL"] = str(ttl)
    return options


def family_schema(family: Any) -> HBase_pb2.ColumnFamilySchema:
    """The ``ColumnFamilySchema`` protobuf a CreateTableRequest carries for ``family``."""
    attributes = [
        HBase_pb2.BytesBytesPair(first=key.encode(), second=value.encode())
        for key, value in family_options(family).items()
    ]
    return HBase_pb2.ColumnFamilySchema(name=str(family.name).encode(), attributes=attributes)


def read_family_options(schema: HBase_pb2.ColumnFamilySchema) -> dict[str, str]:
    """The attributes HBase reports for a family (``describe``), keyed as HBase names them."""
    return {pair.first.decode(): pair.second.decode() for pair in schema.attributes}
