"""Stores: one protocol in two parts (``base.DataStore`` for rows, ``base.AdminStore`` for tables,
regions and servers; ``base.Store`` is both), an in-process store and a real-HBase store.

``open_store(url)`` picks one by the URL's scheme (:mod:`keyshape.store.schemes`, the registry):
``None``, ``""`` or ``"embedded://"`` gives a new ``EmbeddedStore``; ``"hbase://host:port"`` or
``"host:port"`` (a ZooKeeper quorum) gives ``keyshape.store.hbase.HBaseStore.from_url(url)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from keyshape.store.base import AdminStore, BatchWriter, DataStore, RegionInfo, ServerInfo, Store, check_regions
from keyshape.store.embedded import EmbeddedStore
from keyshape.store.schemes import open_store, register_scheme

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema
    from keyshape.schema.specs import TableSpec

__all__ = [
    "AdminStore",
    "BatchWriter",
    "DataStore",
    "EmbeddedStore",
    "RegionInfo",
    "ServerInfo",
    "Store",
    "create_table_from_schema",
    "ensure_table",
    "open_store",
    "register_scheme",
    "verify_regions",
]


def ensure_table(store: Store, spec: TableSpec, split_keys: Sequence[bytes] = (), verify: bool = False) -> None:
    """In ``store``, create ``spec``'s namespace when missing, then the table pre-split at
    ``split_keys``.

    This is what creating a table from a schema does; ``Store.create_table`` itself refuses a
    missing namespace, as HBase does. With ``verify``, the table's region boundaries are read
    back from the store (on HBase: from hbase:meta) and must equal the sorted split keys;
    otherwise StoreError names the first difference.
    """
    namespace = getattr(spec, "namespace", "default") or "default"
    if not store.namespace_exists(namespace):
        store.create_namespace(namespace)
    keys = list(split_keys)
    store.create_table(spec, keys)
    if verify:
        verify_regions(store, spec.full_name, keys)


def verify_regions(store: Store, table: str, split_keys: Sequence[bytes]) -> list[RegionInfo]:
    """The regions of ``table`` in ``store``, after checking they are exactly the regions
    ``split_keys`` define (:func:`keyshape.store.base.check_regions`: StoreError names the first
    difference)."""
    regions = store.regions(table)
    check_regions(regions, list(split_keys), table)
    return regions


def create_table_from_schema(store: Store, schema: KeySchema, verify: bool = True) -> list[RegionInfo]:
    """In ``store``, create ``schema``'s namespace (if missing) and table with its families and
    split keys, then its index and counter tables (:func:`keyshape.schema.ddl.schema_tables`); with
    ``verify`` (default) check the regions read back equal the intended splits. Returns the main
    table's regions."""
    from keyshape.schema.ddl import schema_tables

    for _, spec, splits in schema_tables(schema):
        ensure_table(store, spec, splits, verify=False)
        if verify:
            verify_regions(store, spec.full_name, splits)
    return store.regions(schema.table.full_name)
