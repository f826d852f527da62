"""The one auto-split rule: when a region splits and where, for every part of keyshape that splits.

HBase's size-based split, reduced to what a key layout decides: a region that holds more than
``max_rows`` rows (or more than ``max_bytes`` bytes) after a write splits at its middle key (the
first key of the upper half of its sorted row keys, as HBase splits at the middle key of its
largest store file); a region of one row never splits. Three places apply this rule, and all of
them ask this module:

- ``keyshape.core.regions.simulate_auto_split``: the exact, per-key replay (every distinct key kept);
- ``keyshape.core.splitsim.SplitSimulator`` with ``SplitModel(policy="rows")``: the same rule over a
  stream of any size in flat memory (writes counted exactly, the middle key from a uniform sample);
- ``keyshape.store.embedded.EmbeddedStore(auto_split_rows=...)``: the in-process store's regions.

HBase's own flush-, size- and reference-file-driven splits (``SplitModel``'s other policies) are
``keyshape.core.splitsim``'s; this module is the idealized limit those are compared with.

>>> rule = RowLimit(max_rows=2)
>>> rule.splits(rows=3), rule.splits(rows=2)
(True, False)
>>> rule.split_key([b"a", b"b", b"c"])
b'b'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from keyshape.errors import KeyshapeError

__all__ = ["RowLimit", "middle_index"]


def middle_index(count: int) -> int:
    """Index of the split key among ``count`` sorted keys (``count`` >= 2): the first key of the
    upper half, so the lower daughter takes ``count // 2`` keys and the upper one the rest."""
    return count // 2


@dataclass(frozen=True)
class RowLimit:
    """The idealized auto-split rule (see the module docstring).

    ``max_rows``: a region splits once it holds more than this many rows (None: no row limit).
    ``max_bytes``: a region splits once its rows take more than this many bytes (None: no byte
    limit). Both None: nothing ever splits. Each limit, when given, must be >= 1.
    """

    max_rows: int | None = None
    max_bytes: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_rows", "max_bytes"):
            value = getattr(self, name)
            if value is not None and int(value) < 1:
                raise KeyshapeError(f"{name} must be a positive number, got {value}; pass None for no limit")

    def splits(self, rows: int, size: int = 0) -> bool:
        """Whether a region holding ``rows`` rows of ``size`` bytes in all splits now.

        ``rows``: the region's rows (or writes, for a stream model that counts writes).
        ``size``: their bytes (only read when ``max_bytes`` is set). A single row never splits.
        """
        if rows < 2:
            return False
        return (self.max_rows is not None and rows > self.max_rows) or (self.max_bytes is not None and size > self.max_bytes)

    def split_key(self, sorted_keys: Sequence[bytes]) -> bytes:
        """The key a region whose row keys (or a uniform sample of them) are ``sorted_keys``
        splits at: the first row of the upper daughter. ``sorted_keys`` needs at least 2 keys."""
        if len(sorted_keys) < 2:
            raise KeyshapeError(f"a region splits between two keys; got {len(sorted_keys)} key(s)")
        return sorted_keys[middle_index(len(sorted_keys))]
