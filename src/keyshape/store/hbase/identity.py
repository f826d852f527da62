"""The identity a connection to HBase acts as under SIMPLE authentication."""

from __future__ import annotations

import getpass
import os

from keyshape.errors import StoreError

__all__ = ["effective_user"]


def effective_user(user: str | None = None) -> str:
    """The user keyshape names in the RPC connection header, chosen as HBase's Java client does
    under SIMPLE authentication (``User.getCurrent()`` via Hadoop's UserGroupInformation): the
    explicit ``user`` (``--user``), else ``HADOOP_USER_NAME``, else the operating-system login
    user. On a cluster with ACLs this is the identity every request is checked against."""
    for candidate in (user, os.environ.get("HADOOP_USER_NAME")):
        if candidate is not None and candidate.strip():
            return candidate.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError) as exc:  # no login name and no passwd entry (e.g. a bare container uid)
        raise StoreError(
            "cannot tell which user to connect to HBase as (no login name for this process); pass --user NAME or set HADOOP_USER_NAME"
        ) from exc
