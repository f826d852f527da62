"""The HBase store over HBase's native RPC: ``rpc`` (framing, ZooKeeper, region map), ``client``
(retries, errors, request building), ``admin`` (namespaces, tables, regions), ``scan``, ``writer``
and ``store`` (``HBaseStore``, the Store protocol). Helpers are shared through ``client``; no
module imports this entry module."""

from keyshape.store.hbase.store import HBaseStore

__all__ = ["HBaseStore"]
