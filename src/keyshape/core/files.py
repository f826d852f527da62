"""Reading an input file the user named: one place that turns a file of the wrong kind into one
line naming the file and what was expected, instead of a ``UnicodeDecodeError`` or a parser's
message about line 1 (issue 40).

- :func:`sniff` names a binary format from its magic bytes (Parquet, ORC, SQLite, gzip, zip...).
- :func:`read_text` reads a text input (a TOML schema, a Phoenix DDL script, a CSV): a UTF-8 BOM
  is accepted and dropped (Windows editors write one; it carries no meaning), UTF-16/UTF-32 text,
  a binary format, NUL bytes or bytes that are not UTF-8 are refused, naming the file, what it
  looks like and what was expected.
- :func:`check_text_input` does the same check on a file's first bytes without reading it all
  (for readers that stream, such as pyarrow's CSV reader).
"""

from __future__ import annotations

import os
from pathlib import Path

from keyshape.errors import BadInput

__all__ = ["check_text_input", "read_text", "sniff"]

UTF8_BOM = b"\xef\xbb\xbf"
# Byte-order marks of the encodings keyshape does not read, longest first (UTF-32 LE starts as UTF-16 LE).
_OTHER_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))
# Magic bytes at the start of the binary formats a user may hand over by mistake.
_MAGIC = (
    (b"PAR1", "a Parquet file"),
    (b"ORC", "an ORC file"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\x1f\x8b", "a gzip file"),
    (b"PK\x03\x04", "a zip file"),
    (b"\x89PNG", "a PNG image"),
    (b"%PDF", "a PDF file"),
    (b"\x7fELF", "a program (ELF)"),
    (b"BZh", "a bzip2 file"),
    (b"\x28\xb5\x2f\xfd", "a zstd file"),
)


def sniff(head: bytes) -> str | None:
    """What a file starting with ``head`` is, when its first bytes say (``"a Parquet file"``), else None."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    for bom, kind in _OTHER_BOMS:
        if head.startswith(bom):
            return f"{kind} text"
    return None


def _open_problem(path: Path) -> str | None:
    if not path.exists():
        return "no such file" if path.parent.is_dir() or str(path.parent) in ("", ".") else f"no such file (the folder {path.parent} does not exist)"
    if path.is_dir():
        return "is a folder, not a file"
    return None


def _text_problem(data: bytes, expected: str) -> str | None:
    """Why ``data`` (a file's bytes, or its first bytes) is not the UTF-8 text ``expected``, or None."""
    kind = sniff(data)
    if kind is not None:
        fix = "; save it as UTF-8" if kind.endswith(" text") else ""
        return f"is {kind}, not {expected}{fix}"
    body = data[len(UTF8_BOM) :] if data.startswith(UTF8_BOM) else data
    if b"\x00" in body:
        return f"holds NUL bytes: a binary file, not {expected}"
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(body) - 3 and exc.reason == "unexpected end of data":
            return None  # a character cut by the end of a head read, not by the file
        return f"is not UTF-8 text (byte 0x{body[exc.start]:02x} at offset {exc.start + (len(data) - len(body))}), not {expected}; save it as UTF-8"
    return None


def read_text(path: str | os.PathLike[str], expected: str) -> str:
    """The text of the file at ``path``, read as UTF-8 (a leading UTF-8 BOM dropped).

    - ``expected``: what the caller reads, for the message (``"a key schema (TOML)"``).

    BadInput naming the file when it is missing, a folder, unreadable, empty of text it needs is
    the caller's to judge; a binary format, UTF-16/32, NUL bytes or bytes that are not UTF-8 are
    refused here.
    """
    p = Path(path)
    problem = _open_problem(p)
    if problem is None:
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise BadInput(f"{p}: cannot read it ({exc.strerror or exc})") from None
        problem = _text_problem(data, expected)
    if problem is not None:
        raise BadInput(f"{p}: {problem}")
    text = data.decode("utf-8")
    return text[1:] if text.startswith("\ufeff") else text


def check_text_input(path: str | os.PathLike[str], expected: str, head_bytes: int = 65536) -> None:
    """BadInput naming the file when its first ``head_bytes`` bytes are not UTF-8 text (see :func:`read_text`)."""
    p = Path(path)
    problem = _open_problem(p)
    if problem is None:
        try:
            with p.open("rb") as fh:
                head = fh.read(head_bytes)
        except OSError as exc:
            raise BadInput(f"{p}: cannot read it ({exc.strerror or exc})") from None
        problem = _text_problem(head, expected)
    if problem is not None:
        raise BadInput(f"{p}: {problem}")


SQLITE_MAGIC = b"SQLite format 3\x00"


def check_sqlite_path(path: str | os.PathLike[str], what: str = "the database") -> str:
    """``path`` when it can be opened as an SQLite database: an SQLite file, an empty file, or a
    new file in an existing writable folder; BadInput naming the file and the problem otherwise
    (a missing folder, a folder, a file of another kind: sqlite3's "file is not a database"
    arrives later, as a traceback, or never before the file is written)."""
    p = Path(path)
    if p.is_dir():
        raise BadInput(f"{what} {p}: is a folder; give a file name inside it (e.g. {p / 'keyshape-serve.db'})")
    if not p.exists():
        folder = p.parent if str(p.parent) else Path(".")
        if not folder.is_dir():
            raise BadInput(f"{what} {p}: the folder {folder} does not exist; create it or give another path")
        if not os.access(folder, os.W_OK):
            raise BadInput(f"{what} {p}: cannot create it: the folder {folder} is not writable")
        return os.fspath(path)
    try:
        with p.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise BadInput(f"{what} {p}: cannot read it ({exc.strerror or exc})") from None
    if head and not head.startswith(SQLITE_MAGIC):
        kind = sniff(head) or "text or another kind of file"
        raise BadInput(f"{what} {p}: is {kind}, not an SQLite database; give a new file name or an SQLite file keyshape wrote")
    return os.fspath(path)
