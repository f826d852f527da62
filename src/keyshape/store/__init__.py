"""Stores: one protocol (``base.Store``), an in-process store and a real-HBase store.

``open_store(url)`` picks one: ``None``, ``""`` or ``"embedded://"`` gives a new
``EmbeddedStore``; ``"hbase://host:port"`` or ``"host:port"`` (a ZooKeeper quorum) gives
``keyshape.store.hbase.HBaseStore.from_url(url)``.
"""

from __future__ import annotations

import importlib
from typing import Any

from keyshape.errors import StoreError
from keyshape.store.base import BatchWriter, RegionInfo, Store
from keyshape.store.embedded import EmbeddedStore

__all__ = ["BatchWriter", "EmbeddedStore", "RegionInfo", "Store", "ensure_table", "open_store"]


def open_store(url: str | None = None) -> Store:
    """Open the store named by ``url`` (see the module docstring); ValueError for other forms."""
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
        return module.HBaseStore.from_url(url)
    raise ValueError(
        f"unknown store {url!r}: use 'embedded://' (in-process) or 'hbase://HOST:PORT' / "
        "'HOST:PORT' (ZooKeeper quorum of a real HBase)"
    )


def ensure_table(store: Store, spec: Any, split_keys: Any = ()) -> None:
    """Create ``spec``'s namespace when missing, then the table pre-split at ``split_keys``.

    This is what creating a table from a schema does; ``Store.create_table`` itself refuses a
    missing namespace, as HBase does.
    """
    namespace = getattr(spec, "namespace", "default") or "default"
    if not store.namespace_exists(namespace):
        store.create_namespace(namespace)
    store.create_table(spec, list(split_keys))
