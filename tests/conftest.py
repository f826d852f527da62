"""Shared pytest fixtures for keyshape's tests."""
from hbase_fixture import hbase  # noqa: F401  (session fixture: a real standalone HBase)
from secure_fixture import secure_hbase  # noqa: F401  (session fixture: a KDC and secured HBase)
