"""The online migration's repair: once the stream has caught up and the cut-over's verify still
finds OLD and NEW differing in a source range, compare that range row by row and write OLD's
cells of each row that differs into NEW again (issue 39 item 12).

Why a copy can leave NEW wrong with nothing lost: a region scanner reads the region as it was
when it opened (HBase's MVCC read point), and HBase keeps the LATER write of two cells of one
column at one timestamp. A value rewritten at its own timestamp while the copy runs reaches NEW
through the stream; if the copy's scanner opened before the rewrite and writes that row after
the stream did, NEW keeps the older value. No order of the copy and the stream avoids this (the
copy cannot write "only if the stream has not"), so the cut-over finds it and repairs it: the
repair's reads are new scanners, opened after the stream caught up.

A repair is safe while writers still write OLD: a delete that reaches NEW later still masks what
the repair wrote (NEW keeps its delete markers until the cut-over), and a value rewritten at one
timestamp during the repair can leave the same hole again, which the next verify finds. Cells
NEW holds and OLD does not are reported, never deleted: the stream and the copy only ever write
what OLD held, so something else wrote them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from keyshape.core.hbytes import to_string_binary
from keyshape.ops.migrate import _new_keys, _write_batch
from keyshape.ops.verify import Verification
from keyshape.schema import KeySchema

if TYPE_CHECKING:  # annotations only
    from keyshape.store.hbase.store import HBaseStore

__all__ = ["Repair", "differing_ranges", "repair_ranges"]

Versions = dict[bytes, list[tuple[int, bytes]]]


@dataclass
class Repair:
    """What one repair found and did: rows read in OLD's differing ranges, rows written again,
    and the differing cells by kind (each with an example)."""

    ranges: int = 0
    rows_checked: int = 0
    rows_written: int = 0
    same_timestamp: int = 0  # a cell NEW holds at OLD's timestamp with another value (the copy's snapshot)
    missing: int = 0  # a cell of OLD that NEW lacks
    extra: int = 0  # a cell NEW holds that OLD does not (not repaired)
    example: str = ""
    extra_example: str = ""

    @property
    def text(self) -> str:
        """One sentence: what differed, why, and what was done."""
        if not (self.same_timestamp or self.missing or self.extra):
            return f"repair: {self.rows_checked:,} row(s) of {self.ranges} differing source range(s) compared, none differs any more"
        parts = []
        if self.same_timestamp:
            parts.append(
                f"{self.same_timestamp:,} cell(s) held another value at the same timestamp (rewritten at its own timestamp while the "
                "copy ran: the copy's scan read the older value and wrote it after the stream had written the newer one)"
            )
        if self.missing:
            parts.append(f"{self.missing:,} cell(s) of OLD were missing from NEW")
        done = f"wrote {self.rows_written:,} row(s) of OLD into NEW again" if self.rows_written else "nothing to write"
        text = f"repair of {self.ranges} differing source range(s): " + "; ".join(parts) + (f" (e.g. {self.example})" if self.example else "")
        text += f"; {done}"
        if self.extra:
            text += f"; NEW holds {self.extra:,} cell(s) OLD does not (e.g. {self.extra_example}), left as they are"
        return text


def differing_ranges(check: Verification) -> list[tuple[bytes, bytes]]:
    """The ``[start, end)`` source ranges whose rows, cells or checksum differ (``b""``: open);
    the whole table when only the totals do (rows attributed to other regions, e.g. an OLD
    ``random`` salt)."""
    source, target = check.source, check.target
    ends = source.starts[1:] + [b""]
    out = [
        (start, ends[i])
        for i, start in enumerate(source.starts)
        if (source.rows[i], source.cells[i], source.checksums[i]) != (target.rows[i], target.cells[i], target.checksums[i])
    ]
    if not out and source.checksum != target.checksum:
        out = [(b"", b"")]
    return out


def _compare(row: bytes, want: Versions, have: Versions, repair: Repair) -> bool:
    """Count how NEW's cells of one row (``have``) differ from OLD's (``want``); True if OLD's
    cells must be written again (a cell differs or is missing)."""
    write = False
    for column in sorted(want.keys() | have.keys()):
        old_cells, new_cells = dict(want.get(column, ())), dict(have.get(column, ()))
        for ts, value in old_cells.items():
            if ts not in new_cells:
                repair.missing += 1
            elif new_cells[ts] != value:
                repair.same_timestamp += 1
            else:
                continue
            write = True
            repair.example = repair.example or f"row {to_string_binary(row)} {column.decode(errors='replace')} @{ts}"
        for ts in new_cells.keys() - old_cells.keys():
            repair.extra += 1
            repair.extra_example = repair.extra_example or f"row {to_string_binary(row)} {column.decode(errors='replace')} @{ts}"
    return write


def repair_ranges(store: HBaseStore, old: KeySchema, new: KeySchema, ranges: Sequence[tuple[bytes, bytes]], batch_size: int = 1000) -> Repair:
    """Compare OLD's rows in ``ranges`` with their re-keyed rows in NEW (every stored version)
    and write OLD's cells of each row that differs into NEW again (the copy's own write). Rows
    of OLD whose key does not decode are left to the reject files, as the copy leaves them."""
    source, target = old.table.full_name, new.table.full_name
    repair = Repair(ranges=len(ranges))
    for start, end in ranges:
        batch: list[tuple[bytes, Versions]] = []
        rows = store.scan_versions(source, start, end, batch_size=batch_size)
        for item in rows:
            batch.append(item)
            if len(batch) >= batch_size:
                _repair_batch(store, old, new, target, batch, repair)
                batch = []
        if batch:
            _repair_batch(store, old, new, target, batch, repair)
    return repair


def _repair_batch(store: HBaseStore, old: KeySchema, new: KeySchema, target: str, batch: list[tuple[bytes, Versions]], repair: Repair) -> None:
    new_keys, _ = _new_keys(old, new, [key for key, _ in batch])
    have = dict(store.get_versions_many(target, [k for k in new_keys if k is not None]))
    rewrite_keys: list[bytes | None] = []
    rewrite: list[tuple[bytes, Versions]] = []
    for new_key, (key, cells) in zip(new_keys, batch):
        if new_key is None:
            continue
        repair.rows_checked += 1
        if _compare(key, cells, have.get(new_key, {}), repair):
            rewrite_keys.append(new_key)
            rewrite.append((key, cells))
    if rewrite:
        repair.rows_written += _write_batch(store, target, rewrite_keys, rewrite)[0]
