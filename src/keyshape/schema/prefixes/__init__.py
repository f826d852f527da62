"""Prefix strategies: how a row key is salted or hashed so writes spread over regions.

Each strategy has the shape of Phoenix's ``SaltingUtil`` / HBaseWD's ``AbstractRowKeyDistributor``:
compute the prefix of a key (:meth:`Prefix.prefix_for`, vectorized as :meth:`Prefix.prefix_many`),
list every prefix it can produce (:meth:`Prefix.bucket` / :meth:`Prefix.buckets`), and strip the
prefix again (:meth:`Prefix.strip`). Each is one class in one module of this package, holding
everything keyshape knows of it (:mod:`.base` lists what); :data:`STRATEGIES` maps names to
classes and is filled from the modules found here, so a new strategy is one new module.

Byte layouts (``J`` = the hashed fields joined by the separator, ``K`` = the key without prefix,
``sep`` = the separator or nothing):

================  ==============================================================================
none              ``K``
md5               ``md5_hex(J)[:length] + sep + K`` (length 4..32)
md5-full          ``md5_hex(K)`` (fields not recoverable)
java-hash-short   ``Bytes.toBytes((short)(J.hashCode() & 0x7FFF)) + K`` (2 bytes, no separator)
crc32             ``"%04x" % (crc32(J) & 0xFFFF) + sep + K``
mod               ``"%0Nd" % ((J.hashCode() & 0x7FFFFFFF) % buckets) + sep + K``, N = max(2, digits)
random            a random bucket in the ``mod`` text form + sep + K
phoenix           ``(byte) phoenix_salt(K, buckets) + K`` (buckets <= 256)
opentsdb          ``opentsdb_salt(metric, tags, buckets, width) + K``; J = metric + tag fields
================  ==============================================================================

(and whatever other modules of this package define: each module's docstring gives its layout.)

``J.hashCode()`` is Java's ``String.hashCode`` of J read as UTF-8 text (ISO-8859-1 when J is not
valid UTF-8, i.e. ``new String(bytes, ISO_8859_1)``), which is what a Java writer gets when it
builds J as a String. md5 and crc32 hash the bytes of J.
"""

from __future__ import annotations

import importlib
import pkgutil

from keyshape.schema.prefixes.base import MAX_LISTED_BUCKETS, REGISTRY, Prefix, java_string_hash_many
from keyshape.schema.prefixes.crc32 import Crc32Prefix
from keyshape.schema.prefixes.java_hash_short import JavaHashShortPrefix
from keyshape.schema.prefixes.md5 import Md5Prefix
from keyshape.schema.prefixes.md5_full import Md5FullPrefix
from keyshape.schema.prefixes.mod import ModPrefix
from keyshape.schema.prefixes.opentsdb import OpenTsdbPrefix
from keyshape.schema.prefixes.phoenix import PhoenixPrefix
from keyshape.schema.prefixes.random_bucket import RandomPrefix

__all__ = [
    "STRATEGIES",
    "MAX_LISTED_BUCKETS",
    "Prefix",
    "make_prefix",
    "java_string_hash_many",
    "Md5Prefix",
    "Md5FullPrefix",
    "JavaHashShortPrefix",
    "Crc32Prefix",
    "ModPrefix",
    "RandomPrefix",
    "PhoenixPrefix",
    "OpenTsdbPrefix",
]

# Every module of this package is a strategy (or the base): importing it registers its class, so a
# strategy added as a new module needs no line here.
for _mod in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_mod.name}")

# name -> class: the classic strategies in their documented order, then any other module's.
_ORDER = (Prefix, Md5Prefix, Md5FullPrefix, JavaHashShortPrefix, Crc32Prefix, ModPrefix, RandomPrefix, PhoenixPrefix, OpenTsdbPrefix)
STRATEGIES: dict[str, type[Prefix]] = {cls.name: cls for cls in _ORDER} | REGISTRY


def make_prefix(strategy: str, **options: int) -> Prefix:
    """Build a strategy by name with its (already validated) options. The key's separator is not
    one: the layout that holds the prefix binds its own (:meth:`Prefix.bound`).

    - ``strategy``: a name in :data:`STRATEGIES` (``none``, ``mod``, ``md5``, ...).
    - ``options``: the strategy's options (``buckets``, ``length`` ...); the strategy's defaults for the rest.
    """
    return STRATEGIES[strategy](**options)
