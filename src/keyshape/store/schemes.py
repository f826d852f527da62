"""The registry of store URL schemes: ``open_store(url)`` looks the URL's scheme up here.

A store registers one opener under its scheme (:func:`register_scheme`); adding a store touches
its own module and one line here, not every caller. Registered:

- ``embedded://`` (also ``None``, ``""`` and ``"embedded"``): a new in-process
  :class:`~keyshape.store.embedded.EmbeddedStore`. It keeps nothing on disk, so nothing may follow
  the ``//``.
- ``hbase://HOST:PORT[,HOST:PORT...][?name=value&...]``: a real HBase through its ZooKeeper quorum
  (:meth:`keyshape.store.hbase.HBaseStore.from_url`, which reads the security parameters). A bare
  ``HOST:PORT`` without a scheme means the same, as in keyshape 0.1.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from keyshape.errors import BadInput, StoreError
from keyshape.store.base import Store
from keyshape.store.embedded import EmbeddedStore

__all__ = ["Opener", "open_store", "register_scheme", "schemes"]

Opener = Callable[[str, "str | None"], Store]
"""``opener(url, user)``: the store for the whole ``url`` (scheme included), acting as ``user``."""

_OPENERS: dict[str, Opener] = {}


def register_scheme(scheme: str, opener: Opener) -> None:
    """Make ``open_store("<scheme>://...")`` call ``opener(url, user)``. ``scheme`` is lower case
    letters, digits, ``+``, ``-`` or ``.``, as RFC 3986 says; registering it again replaces it."""
    if not scheme or not scheme[0].isalpha() or not all(c.isalnum() or c in "+-." for c in scheme) or scheme != scheme.lower():
        raise BadInput(f"store scheme {scheme!r}: use lower-case letters, digits, '+', '-' or '.', starting with a letter")
    _OPENERS[scheme] = opener


def schemes() -> list[str]:
    """The registered schemes, sorted."""
    return sorted(_OPENERS)


def _open_embedded(url: str, _user: str | None) -> Store:
    rest = url.partition("://")[2]
    if rest:
        raise BadInput(f"{url!r}: the embedded store lives in this process and keeps nothing on disk; write 'embedded://' alone")
    return EmbeddedStore()


def _open_hbase(url: str, user: str | None) -> Store:
    # Imported on use: a key analysis never pays for the HBase client (protobuf, kazoo).
    try:
        module = importlib.import_module("keyshape.store.hbase")
    except ModuleNotFoundError as exc:
        missing = exc.name or "?"
        raise StoreError(
            f"cannot open {url!r}: the HBase store could not be imported (missing module "
            f"{missing!r}); install keyshape with its dependencies (pip install -e .) or use "
            "the embedded store"
        ) from exc
    store: Store = module.HBaseStore.from_url(url, user=user)
    return store


register_scheme("embedded", _open_embedded)
register_scheme("hbase", _open_hbase)


def open_store(url: str | None = None, user: str | None = None) -> Store:
    """Open the store named by ``url``.

    - ``url``: ``"<scheme>://..."`` for a registered scheme (:func:`schemes`: ``embedded``,
      ``hbase``); ``None``, ``""`` or ``"embedded"`` for a new embedded store; a bare
      ``"HOST:PORT"`` (a ZooKeeper quorum) for HBase. Anything else is :class:`BadInput`.
    - ``user``: for HBase, the user the connection acts as (default ``HADOOP_USER_NAME``, else
      the login user); the embedded store ignores it.
    """
    if url is None or url in ("", "embedded"):
        return EmbeddedStore()
    scheme, sep, _ = url.partition("://")
    if sep:
        opener = _OPENERS.get(scheme)
        if opener is None:
            raise BadInput(f"unknown store {url!r}: the schemes are {', '.join(s + '://' for s in schemes())}, or a bare HOST:PORT for HBase")
        return opener(url, user)
    if ":" in url:  # keyshape 0.1's form: a bare ZooKeeper quorum
        return _OPENERS["hbase"](url, user)
    raise BadInput(f"unknown store {url!r}: use 'embedded://' (in-process) or 'hbase://HOST:PORT' / 'HOST:PORT' (ZooKeeper quorum of a real HBase)")
