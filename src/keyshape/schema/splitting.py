"""Split algorithms: the ``[splits]`` section, one small class per algorithm behind one interface.

As HBase's ``RegionSplitter.SplitAlgorithm``: an algorithm reads its options from ``[splits]``
(:meth:`SplitAlgorithm.options`) and turns them into split keys (:meth:`SplitAlgorithm.split_keys`);
:data:`SPLIT_ALGORITHMS` is the registry by name, so nothing else dispatches on a name.

==========  =====================================================================================
prefix      region boundaries on bucket boundaries of the key's salt prefix (``regions``: default
            the bucket count when it is at most 65536)
hex         ``regions`` even splits of hex text from ``first`` ("00000000") to ``last`` ("FFFFFFFF")
decimal     the same over decimal text (``first`` "00000000", ``last`` "99999999")
uniform     ``regions`` even splits of raw bytes (``first`` "", ``last`` "\\xFF" * 8, toStringBinary)
range       ``regions`` even splits between ``start`` and ``end`` (toStringBinary, required)
buckets     one region per bucket: ``buckets`` (required), ``encoding`` (byte, decimal, long), ``width``
explicit    the ``keys`` given (toStringBinary)
sample      quantiles of ``sample_rows`` (100000) generated rows of the schema's ``[workload]``
==========  =====================================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from keyshape.core import hbytes, splits
from keyshape.errors import KeyshapeError, SchemaError
from keyshape.schema.layout import KeyLayout
from keyshape.schema.parse import Section
from keyshape.schema.prefixes import MAX_LISTED_BUCKETS, Prefix
from keyshape.schema.specs import SplitSpec

__all__ = ["SPLIT_ALGORITHMS", "SplitAlgorithm", "SplitContext", "algorithm_of", "check_splits", "parse_splits", "split_keys"]


@dataclass(frozen=True)
class SplitContext:
    """What an algorithm may read besides its options.

    - ``layout``: the key's layout (its prefix gives the buckets).
    - ``sample``: ``sample(rows, seed)`` -> generated rows as column chunks (field name -> values),
      spread over the schema's whole ``[workload]``; None when the schema has no workload.
    - ``source``: the schema file, for messages.
    """

    layout: KeyLayout
    sample: Callable[[int, int], Iterable[dict[str, Any]]] | None = None
    source: str = "<dict>"


class SplitAlgorithm:
    """One split algorithm: its name, whether it needs ``regions``, its options and its keys."""

    name: ClassVar[str]
    needs_regions: ClassVar[bool] = False
    min_regions: ClassVar[int] = 2

    def options(self, s: Section, prefix: Prefix, regions: int | None) -> dict[str, Any]:
        """The algorithm's options read from ``[splits]`` section ``s`` (``prefix``: the key's prefix
        strategy; ``regions``: as given, or None). Calls ``s.fail`` (a one-line SchemaError) when bad."""
        return {}

    def split_keys(self, spec: SplitSpec, ctx: SplitContext) -> list[bytes]:
        """The split keys, sorted, each the first key of a region after the first.

        - ``spec``: the ``[splits]`` section (algorithm, ``regions``, options).
        - ``ctx``: the key's layout, the workload sample and the source (:class:`SplitContext`).
        """
        raise NotImplementedError

    def follows_buckets(self, prefix: Prefix) -> bool:
        """True when the region boundaries fall on the bucket boundaries of a key with ``prefix``
        (or come from the keys themselves); lint warns about salted keys split otherwise.

        - ``prefix``: the key's prefix strategy.
        """
        return False

    def check(self, spec: SplitSpec, prefix: Prefix, source: str) -> None:
        """Raise SchemaError when ``spec`` does not suit a key with ``prefix`` (a schema whose
        prefix changed after its ``[splits]`` were read); by default every prefix suits.

        - ``spec``: the ``[splits]`` section; ``prefix``: the new prefix; ``source``: for the message.
        """

    @staticmethod
    def regions(spec: SplitSpec, ctx: SplitContext) -> int:
        # parse_splits requires regions for these algorithms; a SplitSpec built in code may lack it.
        if spec.regions is None:
            raise SchemaError(f"{ctx.source}: splits.regions is required for algorithm '{spec.algorithm}'; give it, e.g. regions = 16")
        return spec.regions


class PrefixSplit(SplitAlgorithm):
    """Bucket ``i * N // regions`` for ``i = 1..regions-1`` with N buckets (each region holds
    N/regions buckets, one more for some when N is not a multiple); with ``regions >= N`` every
    bucket but the first starts a region."""

    name = "prefix"

    def follows_buckets(self, prefix: Prefix) -> bool:
        return True

    def options(self, s: Section, prefix: Prefix, regions: int | None) -> dict[str, Any]:
        n = prefix.bucket_count()
        if n is None:
            s.fail(
                "algorithm", "'prefix' needs a prefix strategy, but key.prefix is 'none'", "set key.prefix or choose another algorithm (e.g. sample)"
            )
        if regions is None and n > MAX_LISTED_BUCKETS:
            s.fail("regions", f"is required: the {prefix.name} prefix has {n} possible values", "e.g. regions = 16")
        return {}

    def check(self, spec: SplitSpec, prefix: Prefix, source: str) -> None:
        n = prefix.bucket_count()
        if n is None:
            raise SchemaError(
                f"{source}: splits.algorithm: 'prefix' needs a prefix strategy, but key.prefix is {prefix.name!r}; give other splits (e.g. sample)"
            )
        if spec.regions is None and n > MAX_LISTED_BUCKETS:
            raise SchemaError(f"{source}: splits.regions: is required: the {prefix.name} prefix has {n} possible values; e.g. regions = 16")

    def split_keys(self, spec: SplitSpec, ctx: SplitContext) -> list[bytes]:
        prefix = ctx.layout.prefix
        n = prefix.bucket_count()
        if n is None:
            raise SchemaError(
                f"{ctx.source}: splits.algorithm: 'prefix' needs a prefix strategy, but key.prefix is 'none'; give other splits (e.g. sample)"
            )
        r = spec.regions if spec.regions is not None else n
        if r >= n:
            return [prefix.bucket(i) for i in range(1, n)]
        return [prefix.bucket(i * n // r) for i in range(1, r)]


class _TextSplit(SplitAlgorithm):
    needs_regions = True
    first: ClassVar[str]
    last: ClassVar[str]

    def options(self, s: Section, prefix: Prefix, regions: int | None) -> dict[str, Any]:
        return {opt: s.get(opt, str) for opt in ("first", "last") if s.has(opt)}


class HexSplit(_TextSplit):
    name, first, last = "hex", "00000000", "FFFFFFFF"

    def follows_buckets(self, prefix: Prefix) -> bool:
        return bool(prefix.hex_text)  # hex text splits cut a hex prefix at its own digits

    def split_keys(self, spec: SplitSpec, ctx: SplitContext) -> list[bytes]:
        o = spec.options
        return splits.hex_string_split(self.regions(spec, ctx), o.get("first", self.first), o.get("last", self.last))


class DecimalSplit(_TextSplit):
    name, first, last = "decimal", "00000000", "99999999"

    def split_keys(self, spec: SplitSpec, ctx: SplitContext) -> list[bytes]:
        o = spec.options
        return splits.decimal_string_split(self.regions(spec, ctx), o.get("first", self.first), o.get("last", self.last))


class UniformSplit(_TextSplit):
    name, first, last = "uniform", "", "\\xFF" * 8

    def split_keys(self, spec: SplitSpec, ctx: SplitContext) -> list[bytes]:
        o = spec.options
        return splits.uniform_split(self.regions(spec, ctx), _bin(o.get("first", self.first)), _bin(o.get("last", self.last)))


class RangeSplit(SplitAlgorithm):
    name, needs_regions, min_regions = "range", True, 3

    def options(self, s: Section, prefix: Prefix, regions: int | None) -> dict[str, Any]:
        return {"start": s.get("start", str, required=True), "end": s.get("end", str, required=True)}

    def split_keys(self, spec: SplitSpec, ctx: SplitContext) -> list[bytes]:
        return splits.range_split(_bin(spec.options["start"]), _bin(spec.options["end"]), self.regions(spec, ctx))


class BucketsSplit(SplitAlgorithm):
    name = "buckets"

    def follows_buckets(self, prefix: Prefix) -> bool:
        return True

    def options(self, s: Section, prefix: Prefix, regions: int | None) -> dict[str, Any]:
        return {
            "buckets": s.get("buckets", int, required=True, minimum=2),
            "encoding": s.get("encoding", str, "byte", choices=("byte", "decimal", "long")),
            "width": s.get("width", int, None, minimum=1),
        }

    def split_keys(self, spec: SplitSpec, ctx: SplitContext) -> list[bytes]:
        o = spec.options
        return splits.bucket_splits(o["buckets"], o.get("encoding", "byte"), o.get("width"))


class ExplicitSplit(SplitAlgorithm):
    name = "explicit"

    def follows_buckets(self, prefix: Prefix) -> bool:
        return True

    def options(self, s: Section, prefix: Prefix, regions: int | None) -> dict[str, Any]:
        keys = s.get("keys", list, required=True)
        if not all(isinstance(k, str) for k in keys):
            s.fail("keys", "must be strings in toStringBinary form", 'e.g. keys = ["a", "m", "\\\\x80"]')
        # HBase's own checks, at load time: an empty, repeated or misordered key is refused, never dropped (issue 40).
        splits.check_split_keys([_bin(k) for k in keys], f"{s.source}: splits.keys")
        return {"keys": keys}

    def split_keys(self, spec: SplitSpec, ctx: SplitContext) -> list[bytes]:
        return splits.check_split_keys([_bin(k) for k in spec.options["keys"]], f"{ctx.source}: splits.keys")


class SampleSplit(SplitAlgorithm):
    """Quantiles of the keys of ``sample_rows`` rows spread over the schema's whole workload."""

    name, needs_regions = "sample", True

    def follows_buckets(self, prefix: Prefix) -> bool:
        return True  # quantiles of the keys themselves

    def options(self, s: Section, prefix: Prefix, regions: int | None) -> dict[str, Any]:
        return {"sample_rows": s.get("sample_rows", int, 100_000, minimum=1), "seed": s.get("seed", int, 0)}

    def split_keys(self, spec: SplitSpec, ctx: SplitContext) -> list[bytes]:
        if ctx.sample is None:
            raise KeyshapeError(f"{ctx.source}: splits.algorithm = 'sample' needs a [workload] section to sample from")
        o = spec.options
        keys: list[bytes] = []
        for chunk in ctx.sample(o.get("sample_rows", 100_000), o.get("seed", 0)):
            keys.extend(ctx.layout.encode_many(chunk))
        return splits.sample_splits(keys, self.regions(spec, ctx))


#: The most regions a schema's [splits] may ask for (as ``analyze --regions``): the largest HBase
#: tables run tens of thousands of regions.
MAX_SCHEMA_REGIONS = 100_000

#: Every split algorithm by name, in the order the docs list them.
SPLIT_ALGORITHMS: dict[str, SplitAlgorithm] = {
    a.name: a for a in (PrefixSplit(), HexSplit(), DecimalSplit(), UniformSplit(), RangeSplit(), BucketsSplit(), SampleSplit(), ExplicitSplit())
}


def parse_splits(s: Section, prefix: Prefix) -> SplitSpec:
    """``[splits]``: the algorithm and the options it takes.

    - ``s``: the ``[splits]`` section; ``prefix``: the key's prefix strategy (``prefix`` splits read its buckets).
    """
    algo = SPLIT_ALGORITHMS[s.get("algorithm", str, required=True, choices=tuple(SPLIT_ALGORITHMS))]
    # Bounded as analyze --regions is: more regions than any HBase table (5,000,000 ran 151 s; issue 40).
    regions = s.get("regions", int, None, required=algo.needs_regions, minimum=algo.min_regions, maximum=MAX_SCHEMA_REGIONS)
    opts = algo.options(s, prefix, regions)
    s.done()
    return SplitSpec(algo.name, regions, opts)


def _algorithm(spec: SplitSpec, source: str) -> SplitAlgorithm:
    try:
        return SPLIT_ALGORITHMS[spec.algorithm]
    except KeyError:
        raise SchemaError(f"{source}: splits.algorithm: unknown {spec.algorithm!r}; use one of: {', '.join(SPLIT_ALGORITHMS)}") from None


def split_keys(spec: SplitSpec | None, ctx: SplitContext) -> list[bytes]:
    """The split keys of ``spec`` (``[]`` for None: one region), by its algorithm.

    - ``spec``: the ``[splits]`` section as read (or built in code); ``ctx``: what the algorithm reads.
    """
    return [] if spec is None else _algorithm(spec, ctx.source).split_keys(spec, ctx)


def algorithm_of(spec: SplitSpec, source: str = "<dict>") -> SplitAlgorithm:
    """The registered algorithm of ``spec``; SchemaError naming the registered ones when unknown.

    - ``spec``: the ``[splits]`` section; ``source``: the schema file, for the message (default ``"<dict>"``).
    """
    return _algorithm(spec, source)


def check_splits(spec: SplitSpec | None, prefix: Prefix, source: str) -> None:
    """SchemaError when ``spec`` does not suit a key with ``prefix`` (see :meth:`SplitAlgorithm.check`).

    - ``spec``: the ``[splits]`` section (None: nothing to check); ``prefix``: the key's prefix
      strategy; ``source``: the schema file, for the message.
    """
    if spec is not None:
        _algorithm(spec, source).check(spec, prefix, source)


def _bin(text: str) -> bytes:
    return hbytes.to_bytes_binary(text)
