"""Regions of an HBase table: split keys -> region index, region servers, auto-split simulation.

A table pre-split at keys ``s_0 < s_1 < ... < s_{n-1}`` has ``n + 1`` regions. Region ``i`` holds
the row keys ``k`` with ``starts[i] <= k < ends[i]``, where ``starts = [b"", s_0, ..., s_{n-1}]`` and
``ends = [s_0, ..., s_{n-1}, b""]``; an empty start or end means unbounded, exactly like HBase's
``RegionInfo``. Keys compare as unsigned bytes, lexicographically (Python's ``bytes`` order and
HBase's ``Bytes.compareTo``).
"""

from __future__ import annotations

import bisect
import builtins
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.core.autosplit import RowLimit, middle_index
from keyshape.core.hbytes import to_string_binary
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError

__all__ = ["RegionMap", "SplitEvent", "SplitSimulation", "simulate_auto_split"]

# Width of the big-endian length column appended to each padded key (see _encode).
_LEN_BYTES = 4
# Keys per block in RegionMap.assign: small enough for the temporaries to stay in cache.
_BLOCK = 1 << 16


def _as_key(value: Any, what: str) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, np.bytes_):
        return bytes(value)
    raise KeyshapeError(
        f"{what} must be bytes, got {type(value).__name__} {value!r}; encode text first, e.g. "
        "key.encode('utf-8') or keyshape.core.hbytes.to_bytes_binary(key)"
    )


def _as_matrix(keys: np.ndarray | KeyArray) -> tuple[np.ndarray, np.ndarray]:
    """(uint8 matrix n x width zero padded, int64 lengths) of a KeyArray or numpy array of keys."""
    if isinstance(keys, KeyArray):
        return keys.matrix, keys.lengths
    if keys.dtype.kind == "S":
        # numpy cannot hold trailing NUL bytes in an 'S' array; its keys are what .tolist() gives.
        flat = keys.ravel()
        lengths = np.strings.str_len(flat).astype(np.int64)
        return flat.view(np.uint8).reshape(len(flat), flat.dtype.itemsize), lengths
    if keys.dtype.kind == "V":
        flat = keys.ravel()
        width = flat.dtype.itemsize
        return flat.view(np.uint8).reshape(len(flat), width), np.full(len(flat), width, np.int64)
    if keys.dtype == np.uint8 and keys.ndim == 2:
        return keys, np.full(keys.shape[0], keys.shape[1], np.int64)
    raise KeyshapeError(
        f"cannot read row keys from a numpy array of dtype {keys.dtype} and shape {keys.shape}; "
        "pass a list of bytes, an 'S' or 'V' array, or a 2-D uint8 array of fixed-width keys"
    )


def _exact_matrix(keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Like _as_matrix for a few Python keys, keeping trailing NULs (an 'S' array would not)."""
    lengths = np.array([len(k) for k in keys], dtype=np.int64)
    matrix = np.zeros((len(keys), max(int(lengths.max(initial=0)), 1)), dtype=np.uint8)
    for row, key in zip(matrix, keys):
        row[: len(key)] = np.frombuffer(key, dtype=np.uint8)
    return matrix, lengths


def _pad(matrix: np.ndarray, width: int) -> np.ndarray:
    if matrix.shape[1] >= width:
        return matrix
    out = np.zeros((matrix.shape[0], width), dtype=np.uint8)
    out[:, : matrix.shape[1]] = matrix
    return out


def _head16(matrix: np.ndarray) -> np.ndarray:
    """The first 2 bytes of each (zero padded) key as a big-endian number 0..65535."""
    if matrix.shape[1] >= 2 and matrix.strides[1] == 1:
        return matrix[:, :2].view(">u2")[:, 0]  # no copy: a strided view of each row's head
    head = np.zeros(matrix.shape[0], dtype=np.intp)
    if matrix.shape[1] >= 1:
        head |= matrix[:, 0].astype(np.intp) << 8
    if matrix.shape[1] >= 2:
        head |= matrix[:, 1]
    return head


def prefix64(matrix: np.ndarray) -> np.ndarray:
    """The first 8 bytes of each (zero padded) key as a native unsigned 64-bit integer."""
    head = np.ascontiguousarray(_pad(matrix, 8)[:, :8])
    return head.view(">u8").ravel().astype(np.uint64)


def bytes_order(matrix: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """Encode keys so that numpy's order on the result is unsigned lexicographic bytes order.

    numpy compares 'S' values as NUL padded, so b"a" and b"a\\x00" are the same value there. Zero
    padding keeps the order of keys that differ before the shorter one ends (and sorts a proper
    prefix first unless the longer key continues with NULs only); the big-endian length appended
    after the padding breaks exactly those remaining ties, shorter first, as bytes order demands.
    """
    n = len(lengths)
    out = np.zeros((n, width + _LEN_BYTES), dtype=np.uint8)
    out[:, : matrix.shape[1]] = matrix[:, :width]
    out[:, width:] = lengths.astype(f">u{_LEN_BYTES}").view(np.uint8).reshape(n, _LEN_BYTES)
    return out.view(f"S{width + _LEN_BYTES}").ravel()


class RegionMap:
    """The regions of a table pre-split at ``split_keys``.

    ``split_keys`` must be non-empty byte strings in strictly ascending (unsigned bytes) order;
    anything else raises ``ValueError`` saying which key is wrong. No split keys means one region
    covering every key.
    """

    def __init__(self, split_keys: Sequence[bytes] = ()) -> None:
        keys = [_as_key(k, f"split key #{i}") for i, k in enumerate(split_keys)]
        for i, k in enumerate(keys):
            if not k:
                raise KeyshapeError(f"split key #{i} is empty; b'' already bounds the first and the last region, remove it from the split keys")
            if i and k <= keys[i - 1]:
                rel = "equals" if k == keys[i - 1] else "sorts before"
                raise KeyshapeError(
                    f"split key #{i} {to_string_binary(k)} {rel} split key #{i - 1} "
                    f"{to_string_binary(keys[i - 1])}; split keys must be unique and sorted as "
                    "unsigned bytes (use sorted(set(keys)))"
                )
        self._splits: tuple[bytes, ...] = tuple(keys)
        self._table: np.ndarray | None = None  # see _head_table
        self._exact: tuple[np.ndarray, np.ndarray] | None = None  # split keys as a matrix

    @property
    def split_keys(self) -> tuple[bytes, ...]:
        """The split keys, ascending."""
        return self._splits

    @property
    def starts(self) -> list[bytes]:
        """Start key of each region (inclusive); the first is b"" (unbounded)."""
        return [b"", *self._splits]

    @property
    def ends(self) -> list[bytes]:
        """End key of each region (exclusive); the last is b"" (unbounded)."""
        return [*self._splits, b""]

    def __len__(self) -> int:
        return len(self._splits) + 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RegionMap) and self._splits == other._splits

    def __hash__(self) -> int:
        return hash(self._splits)

    def __repr__(self) -> str:
        shown = ", ".join(to_string_binary(k) for k in self._splits[:4])
        more = ", ..." if len(self._splits) > 4 else ""
        return f"RegionMap({len(self)} regions, splits=[{shown}{more}])"

    def region_of(self, key: bytes) -> int:
        """Index of the region holding ``key`` (the number of split keys <= key)."""
        return bisect.bisect_right(self._splits, _as_key(key, "a row key"))

    def assign(self, keys: Sequence[bytes] | KeyArray | np.ndarray) -> np.ndarray:
        """Region index (int64) of every key; the same result as ``region_of`` per key.

        ``keys`` is a sequence of bytes, a :class:`~keyshape.core.keyarray.KeyArray` (exact; what
        ``KeySchema.encode_many(..., as_array=True)`` returns, the fast path), or a numpy array: 'S' (note numpy strips trailing NUL
        bytes from 'S' values, so keys that may end in ``\\x00`` must not travel as 'S'), 'V'
        (fixed width, exact) or a 2-D uint8 array with one fixed-width key per row (exact).
        """
        if not isinstance(keys, KeyArray) and (not isinstance(keys, np.ndarray) or keys.dtype == object):
            return self._assign_sequence(keys.tolist() if isinstance(keys, np.ndarray) else keys)
        matrix, lengths = _as_matrix(keys)
        n = len(lengths)
        if not self._splits or n == 0:
            return np.zeros(n, dtype=np.int64)
        # Most keys are placed by their first two bytes alone: one lookup in a 65536-entry
        # table. Blocks keep the temporaries in cache; only keys whose two-byte head is shared
        # with a split key (a few per split) take the exact comparison.
        table = self._head_table()
        out = np.empty(n, dtype=np.int64)
        for start in range(0, n, _BLOCK):
            stop = min(start + _BLOCK, n)
            block = out[start:stop]
            np.take(table, _head16(matrix[start:stop]), out=block, mode="clip")  # heads fit
            unsure = np.flatnonzero(block < 0)
            if unsure.size:
                rows = unsure + start
                block[unsure] = self._assign_exact(matrix[rows], lengths[rows])
        return out

    def _head_table(self) -> np.ndarray:
        """Region of every two-byte key head 0..65535, or -1 where the head alone cannot tell.

        Keys and splits compare as zero-padded heads first: a key whose head sorts before a
        split's head sorts before the split. So a head no split key shares fixes the region.
        A head shared by exactly one split key that is the smallest key with that head (the head
        without its trailing zero bytes, e.g. b"\x05" for 0x0500) is also exact: every key with
        that head is >= the split. Any other shared head is unsure.
        """
        if self._table is None:
            split_heads = _head16(_exact_matrix(self._splits)[0]).astype(np.int64)
            heads = np.arange(65536, dtype=np.int64)
            table = np.searchsorted(split_heads, heads, side="left").astype(np.int64)
            shared, counts = np.unique(split_heads, return_counts=True)
            table[shared] = -1
            for head, count in zip(shared.tolist(), counts.tolist()):
                if count == 1:
                    index = int(np.searchsorted(split_heads, head))
                    if self._splits[index] == head.to_bytes(2, "big").rstrip(b"\x00"):
                        table[head] = index + 1
            self._table = table
        return self._table

    def _assign_exact(self, matrix: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Region of each key by full comparison with the split keys."""
        if self._exact is None:
            self._exact = _exact_matrix(self._splits)
        split_matrix, split_lengths = self._exact
        # Most keys differ from every split key within their first 8 bytes; then comparing
        # big-endian 64-bit prefixes is exact. Only keys whose prefix equals a split key's
        # prefix need the full (padded bytes + length) comparison.
        split_prefix = prefix64(split_matrix)
        key_prefix = prefix64(matrix)
        result = np.searchsorted(split_prefix, key_prefix, side="right").astype(np.int64)
        tie = (result > 0) & (split_prefix[np.maximum(result - 1, 0)] == key_prefix)
        if tie.any():
            width = max(matrix.shape[1], split_matrix.shape[1])
            encoded_splits = bytes_order(_pad(split_matrix, width), split_lengths, width)
            encoded_keys = bytes_order(_pad(matrix[tie], width), lengths[tie], width)
            result[tie] = np.searchsorted(encoded_splits, encoded_keys, side="right")
        return result

    def _assign_sequence(self, keys: Sequence[bytes]) -> np.ndarray:
        # From Python objects, converting to numpy costs more than a C-level bisect per key
        # (benchmarks/bench_regions.py), so map bisect directly.
        count = len(keys)
        if not self._splits:
            for i, k in enumerate(keys):
                _as_key(k, f"row key #{i}")
            return np.zeros(count, dtype=np.int64)
        try:
            return np.fromiter(map(functools.partial(bisect.bisect_right, self._splits), keys), np.int64, count)
        except TypeError:
            checked = [_as_key(k, f"row key #{i}") for i, k in enumerate(keys)]
            return np.fromiter(map(functools.partial(bisect.bisect_right, self._splits), checked), np.int64, count)

    def server_of(self, n_servers: int) -> np.ndarray:
        """Server index of each region when ``n_servers`` servers share the regions round-robin.

        A freshly balanced cluster hands out a new table's regions in turn, so region ``i`` goes to
        server ``i % n_servers``.
        """
        if int(n_servers) < 1:
            raise KeyshapeError(f"n_servers must be at least 1, got {n_servers}")
        return np.arange(len(self), dtype=np.int64) % int(n_servers)

    def describe(self, n_servers: int | None = None) -> list[dict[str, Any]]:
        """One row per region for reports: ``region``, ``start``, ``end`` (toStringBinary form,
        "" for unbounded) and, when ``n_servers`` is given, ``server``."""
        servers = self.server_of(n_servers) if n_servers is not None else None
        rows: list[dict[str, Any]] = []
        for i, (start, end) in enumerate(zip(self.starts, self.ends)):
            row: dict[str, Any] = {
                "region": i,
                "start": to_string_binary(start),
                "end": to_string_binary(end),
            }
            if servers is not None:
                row["server"] = int(servers[i])
            rows.append(row)
        return rows


@dataclass(frozen=True)
class SplitEvent:
    """One split: at write ``write_index`` region ``region`` (its index at that moment) split at
    ``split_key``; the lower daughter keeps index ``region``, the upper one is ``region + 1``.
    ``seconds`` is when it happened, for simulations that know the time of each write."""

    write_index: int
    region: int
    split_key: bytes
    seconds: float | None = None


@dataclass
class SplitSimulation:
    """Result of ``simulate_auto_split``.

    - ``region_map``: the final regions; ``rows`` / ``bytes``: distinct rows and estimated bytes
      (key length + value bytes per row) of each final region.
    - ``splits``: every split, in the order the writes triggered them; ``initial_splits``: the
      table's split keys before the first write; ``writes``: the writes replayed.
    """

    region_map: RegionMap
    rows: np.ndarray  # distinct rows per final region
    bytes: np.ndarray  # estimated bytes per final region (key length + value_bytes per row)
    splits: list[SplitEvent] = field(default_factory=list)
    # builtins.bytes: in this class body the name ``bytes`` is the field above.
    initial_splits: tuple[builtins.bytes, ...] = ()
    writes: int = 0

    def map_before(self, write_index: int) -> RegionMap:
        """The region map in effect when write ``write_index`` arrived (splits triggered by
        earlier writes applied, later ones not)."""
        keys = list(self.initial_splits)
        for event in self.splits:
            if event.write_index >= write_index:
                break
            bisect.insort(keys, event.split_key)
        return RegionMap(keys)


def simulate_auto_split(
    keys_in_write_order: Iterable[bytes] | np.ndarray,
    initial_splits: Sequence[bytes] = (),
    max_rows: int | None = None,
    max_bytes: int | None = None,
    value_bytes: int = 0,
) -> SplitSimulation:
    """Replay writes into a table that splits regions as they grow, like HBase's size-based split.

    The table starts pre-split at ``initial_splits`` (none: one region) and takes the keys of
    ``keys_in_write_order`` one by one. Each write of a key not written before adds one row of
    ``len(key) + value_bytes`` bytes to its region (``value_bytes``: a row's value, default 0);
    rewriting an existing row adds nothing. When a region then holds more than ``max_rows`` rows or more than
    ``max_bytes`` bytes, it splits at its mid key (the median of its sorted row keys, the first key
    of the upper half, as HBase splits at the mid key of its largest store file) into two
    daughters. With both limits None nothing ever splits. The rule is
    ``keyshape.core.autosplit.RowLimit``, the one the split simulator and the embedded store apply.

    This is the exact, per-key reference: it keeps every distinct key, so use it on small
    streams. ``keyshape.core.splitsim.SplitSimulator`` replays streams of any size chunk by chunk
    in flat memory, with HBase's own rules (flushes, split policies, reference files) or this
    idealized row limit (``SplitModel(policy="rows")``); ``analyze --auto-split`` runs that.
    """
    rule = RowLimit(max_rows, max_bytes)
    if value_bytes < 0:
        raise KeyshapeError(f"value_bytes must be >= 0, got {value_bytes}")
    start_map = RegionMap(initial_splits)
    splits: list[bytes] = list(start_map.split_keys)
    if isinstance(keys_in_write_order, np.ndarray):
        keys_in_write_order = keys_in_write_order.tolist()

    # Rows per region are kept unsorted and sorted only when the region splits: Timsort is
    # near-linear on the mostly ordered runs real key streams produce, and a region sorts at most
    # once per split, so a million writes cost about one pass plus a few sorts of a region each.
    members: list[list[bytes]] = [[] for _ in range(len(splits) + 1)]
    rows: list[int] = [0] * len(members)
    sizes: list[int] = [0] * len(members)
    seen: set[bytes] = set()
    events: list[SplitEvent] = []
    writes = 0
    for i, key in enumerate(keys_in_write_order):
        writes += 1
        if type(key) is not bytes:
            key = _as_key(key, f"key #{i}")
        if key in seen:
            continue
        seen.add(key)
        r = bisect.bisect_right(splits, key)
        members[r].append(key)
        rows[r] += 1
        sizes[r] += len(key) + value_bytes
        if rule.splits(rows[r], sizes[r]):
            region = members[r]
            region.sort()
            mid = middle_index(len(region))
            low, high = region[:mid], region[mid:]
            splits.insert(r, high[0])
            members[r : r + 1] = [low, high]
            rows[r : r + 1] = [len(low), len(high)]
            sizes[r : r + 1] = [
                sum(map(len, low)) + value_bytes * len(low),
                sum(map(len, high)) + value_bytes * len(high),
            ]
            events.append(SplitEvent(write_index=i, region=r, split_key=high[0]))
    return SplitSimulation(
        region_map=RegionMap(splits),
        rows=np.array(rows, dtype=np.int64),
        bytes=np.array(sizes, dtype=np.int64),
        splits=events,
        initial_splits=start_map.split_keys,
        writes=writes,
    )
