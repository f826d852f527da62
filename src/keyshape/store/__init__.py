"""Stores: one protocol (``base.Store``), an in-process store and a real-HBase store.

``open_store(url)`` picks one: ``None``, ``""`` or ``"embedded://"`` gives a new
``EmbeddedStore``; ``"hbase://host:port"`` or ``"host:port"`` (a ZooKeeper quorum) gives
``keyshape.store.hbase.HBaseStore.from_url(url)``.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from keyshape.errors import BadInput, StoreError
from keyshape.store.base import BatchWriter, RegionInfo, ServerInfo, Store, check_regions
from keyshape.store.embedded import EmbeddedStore

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema
    from keyshape.schema.specs import TableSpec

__all__ = [
    "BatchWriter",
    "EmbeddedStore",
    "RegionInfo",
    "ServerInfo",
    "Store",
    "create_table_from_schema",
    "ensure_table",
    "open_store",
    "verify_regions",
]


def open_store(url: str | None = None, user: str | None = None) -> Store:
    """Open the store named by ``url`` (see the module docstring); ValueError for other forms.

    ``user``: for HBase, the user the connection acts as (default ``HADOOP_USER_NAME``, else the
    login user); the embedded store ignores it."""
    if url is None or url in ("", "embedded", "embedded://"):
        return EmbeddedStore()
    if url.startswith("hbase://") or ("://" not in url and ":" in url):
        try:
            module = importlib.import_module("keyshape.store.hbase")
        except ModuleNotFoundError as exc:
            missing = exc.name or "?"
            raise StoreError(
                f"cannot open {url!r}: the HBase store could not be imported (missing module "
                f"{missing!r}); install keyshape with its dependencies (pip install -e .) or use "
                "the embedded store"
            ) from exc
        return module.HBaseStore.from_url(url, user=user)
    raise BadInput(f"unknown store {url!r}: use 'embedded://' (in-process) or 'hbase://HOST:PORT' / 'HOST:PORT' (ZooKeeper quorum of a real HBase)")


def ensure_table(store: Store, spec: TableSpec, split_keys: Sequence[bytes] = (), verify: bool = False) -> None:
    """Create ``spec``'s namespace when missing, then the table pre-split at ``split_keys``.

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
    """The table's regions, after checking they are exactly the regions ``split_keys`` define
    (:func:`keyshape.store.base.check_regions`: StoreError names the first difference)."""
    regions = store.regions(table)
    check_regions(regions, list(split_keys), table)
    return regions


def create_table_from_schema(store: Store, schema: KeySchema, verify: bool = True) -> list[RegionInfo]:
    """Create ``schema``'s namespace (if missing) and table with its families and split keys,
    then its index and counter tables (:func:`keyshape.schema.ddl.schema_tables`); with
    ``verify`` (default) check the regions read back equal the intended splits. Returns the main
    table's regions."""
    from keyshape.schema.ddl import schema_tables

    tables = schema_tables(schema) if hasattr(schema, "indexes") else [("main", schema.table, schema.split_keys())]
    for _, spec, splits in tables:
        ensure_table(store, spec, splits, verify=False)
        if verify:
            verify_regions(store, spec.full_name, splits)
    return store.regions(schema.table.full_name)
