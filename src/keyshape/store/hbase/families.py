"""Column family options as HBase stores them: the raw
``ColumnFamilySchema`` protobuf with HBase's own attribute keys (validated by ``keyshape.schema.ddl``).

hbase-driver's ``ColumnFamilyDescriptorBuilder`` writes lower-case keys (``max_versions``,
``compression_type`` ...) that HBase keeps as opaque metadata and ignores (CLIENTS.md bug 6), so
keyshape builds the protobuf itself with the keys ``ColumnFamilyDescriptorBuilder`` (Java) uses:
``VERSIONS COMPRESSION BLOOMFILTER BLOCKSIZE TTL IN_MEMORY DATA_BLOCK_ENCODING``.
"""

from __future__ import annotations

from typing import Any

from hbasedriver.protobuf_py import HBase_pb2

from keyshape.schema.ddl import family_attributes

__all__ = ["family_schema", "read_family_options"]


def family_schema(family: Any) -> HBase_pb2.ColumnFamilySchema:
    """The ``ColumnFamilySchema`` protobuf a CreateTableRequest carries for ``family``."""
    attributes = [HBase_pb2.BytesBytesPair(first=key.encode(), second=value.encode()) for key, value in family_attributes(family).items()]
    return HBase_pb2.ColumnFamilySchema(name=str(family.name).encode(), attributes=attributes)


def read_family_options(schema: HBase_pb2.ColumnFamilySchema) -> dict[str, str]:
    """The attributes HBase reports for a family (``describe``), keyed as HBase names them."""
    return {pair.first.decode(): pair.second.decode() for pair in schema.attributes}
