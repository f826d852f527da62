"""HBase's native RPC, spoken directly: the names of the modules it is cut into, importable from
here as before (keyshape 0.1 had them all in this one module).

The client is split along its concepts, as gohbase's ``zk/``, ``hrpc/`` and ``region/``:

- :mod:`~keyshape.store.hbase.identity` -- the user a connection acts as (``effective_user``);
- :mod:`~keyshape.store.hbase.errors` -- what a server answers instead of a response
  (``ServerError``, ``ConnectionLost``, ``AuthenticationRequired``, ``RELOCATE``);
- :mod:`~keyshape.store.hbase.framing` -- the request/response frames and the per-server
  connection (``RpcConnection``);
- :mod:`~keyshape.store.hbase.zk` -- where the master and hbase:meta are (``locate_master_and_meta``);
- :mod:`~keyshape.store.hbase.regions` -- a table's region list from hbase:meta (``Region``,
  ``RegionList``);
- :mod:`~keyshape.store.hbase.cluster` -- ``Cluster``: the connections, the region lists and
  relocation when a region moved.

hbase-driver (PyPI ``hbase-driver``, import ``hbasedriver``) supplies the protobuf classes; the
framing and region routing are keyshape's because the driver's own versions are wrong in ways
tools/hbase/CLIENTS.md documents (bug 1: large requests framed with a corrupt varint; bugs 2 and 8:
a row equal to a split key routed to the previous region, a region cache keyed by id only).
"""

from __future__ import annotations

from keyshape.store.hbase.cluster import Cluster
from keyshape.store.hbase.errors import RELOCATE, AuthenticationRequired, ConnectionLost, ServerError
from keyshape.store.hbase.framing import KEYVALUE_CODEC, RpcConnection, _read_varint, _varint
from keyshape.store.hbase.identity import effective_user
from keyshape.store.hbase.regions import Region, RegionList, meta_row_prefix, region_name
from keyshape.store.hbase.zk import locate_master_and_meta, quiet_driver_logs

__all__ = [
    "KEYVALUE_CODEC",
    "RELOCATE",
    "AuthenticationRequired",
    "Cluster",
    "ConnectionLost",
    "Region",
    "RegionList",
    "RpcConnection",
    "ServerError",
    "_read_varint",
    "_varint",
    "effective_user",
    "locate_master_and_meta",
    "meta_row_prefix",
    "quiet_driver_logs",
    "region_name",
]
