"""The C kernels of :file:`_native.c`, when they were built, and which route is in use.

``pip install`` compiles them where a C compiler is at hand; without one keyshape installs all the
same and every caller takes its pure-Python route (same results: the tests hold both routes to each
other). ``KEYSHAPE_NATIVE=0`` in the environment turns them off, to compare the two routes.

* :func:`string_hash` — ``String.hashCode`` of bytes read as text, ``0..2**32-1``
  (:func:`keyshape.schema.compiled.java_string_hash_u32`);
* :func:`bytes_hash` — ``Arrays.hashCode(byte[])``, signed (:func:`keyshape.core.hashing.java_bytes_hash`);
* :func:`md5` — the MD5 digest the reader's md5 salt check uses (held to :mod:`hashlib` by the tests);
* :class:`Reader` — a row-key layout compiled once: ``read(key)`` gives the key's fields as a dict,
  salt re-checked when asked, or None when the Python decoder must decide (it never raises for a key);
  ``fits(matrix, lengths, threads)`` a code per key of a KeyArray (fits, does not read as the layout,
  wrong salt, or the decoder decides: :mod:`keyshape.schema.keycheck`), without the GIL;
* :class:`Decoder` — ``Decoder(plain, verified, fallback)`` is ``decode(key, verify=True)`` as one
  C call: the Reader for that ``verify`` (or None), else ``fallback(key, verify)``.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["AVAILABLE", "ROUTE", "Reader", "Decoder", "string_hash", "bytes_hash", "md5"]

_native: Any
try:
    if os.environ.get("KEYSHAPE_NATIVE", "1") == "0":
        raise ImportError("turned off by KEYSHAPE_NATIVE=0")
    from keyshape.core import _native
except ImportError:
    _native = None

AVAILABLE: bool = _native is not None
ROUTE: str = "C kernels (keyshape.core._native)" if AVAILABLE else "pure Python (C kernels not built or turned off)"
Reader: Any = _native.Reader if AVAILABLE else None
Decoder: Any = _native.Decoder if AVAILABLE else None
string_hash: Any = _native.string_hash if AVAILABLE else None
bytes_hash: Any = _native.bytes_hash if AVAILABLE else None
md5: Any = _native.md5 if AVAILABLE else None
