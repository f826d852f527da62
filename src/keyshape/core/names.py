"""What HBase accepts as a table name and as split keys, checked once before a statement is printed
or applied (``create --dry-run``/``--hbase``, ``splits ... --table``, ``analyze``'s split keys, the
schema loader), so an operator never meets HBase's refusal first.

Table names follow ``org.apache.hadoop.hbase.TableName`` (hbase-common):

- ``isLegalNamespaceName``: not empty, not ``zookeeper`` (``DISALLOWED_TABLE_NAME``), every character
  a letter (``Character.isAlphabetic``), a digit (``Character.isDigit``) or ``_``;
- ``isLegalTableQualifierName``: not empty, not ``zookeeper``, not starting with ``.`` or ``-``, every character a
  letter, a digit, ``_``, ``-`` or ``.``;
- ``TableName.valueOf`` refuses the old catalog names ``-ROOT-`` and ``.META.``.

On top of HBase's character rules, keyshape refuses the ``hbase`` system namespace for the tables it
creates: HBase keeps it for its own tables (``hbase:meta``, ``hbase:namespace``, ``hbase:acl``...;
``NamespaceDescriptor.SYSTEM_NAMESPACE``), where a user table would sit beside the catalog.

Split keys are checked by :func:`keyshape.core.splits.check_split_keys` (HBase's
``RawAsyncHBaseAdmin.verifySplitKeys``).
"""

from __future__ import annotations

import unicodedata
from keyshape.errors import BadInput

__all__ = [
    "SYSTEM_NAMESPACE",
    "check_namespace",
    "check_table_name",
    "namespace_problem",
    "qualifier_problem",
    "system_namespace_problem",
    "table_name_problem",
]

SYSTEM_NAMESPACE = "hbase"  # NamespaceDescriptor.SYSTEM_NAMESPACE_NAME_STR
DEFAULT_NAMESPACE = "default"
_DISALLOWED = "zookeeper"  # TableName.DISALLOWED_TABLE_NAME
_OLD_CATALOG = ("-ROOT-", ".META.")  # TableName.OLD_ROOT_STR, OLD_META_STR


def _alphabetic(c: str) -> bool:
    # Java's Character.isAlphabetic: the letter categories and letter numbers (Nl).
    return unicodedata.category(c) in ("Lu", "Ll", "Lt", "Lm", "Lo", "Nl")


def _digit(c: str) -> bool:
    return unicodedata.category(c) == "Nd"  # Java's Character.isDigit


def _bad_char(text: str, allowed: str) -> str | None:
    for i, c in enumerate(text):
        if not (_alphabetic(c) or _digit(c) or c in allowed):
            return f"character {c!r} at {i}"
    return None


def namespace_problem(namespace: str) -> str | None:
    """Why HBase refuses ``namespace`` as a namespace name (``TableName.isLegalNamespaceName``), or None."""
    if not namespace:
        return "the namespace is empty"
    if namespace == _DISALLOWED:
        return f"HBase refuses the name {_DISALLOWED!r}"
    bad = _bad_char(namespace, "_")
    return f"{bad} is not allowed: a namespace takes letters, digits and '_'" if bad else None


def system_namespace_problem(namespace: str) -> str | None:
    """Why ``namespace`` may not hold a user table (it is HBase's ``hbase``), or None."""
    if namespace == SYSTEM_NAMESPACE:
        return f"the {SYSTEM_NAMESPACE!r} namespace holds HBase's own tables (hbase:meta...); put user tables in another namespace"
    return None


def qualifier_problem(name: str) -> str | None:
    """Why HBase refuses ``name`` as a table qualifier (``TableName.isLegalTableQualifierName``), or None."""
    if not name:
        return "the table name is empty"
    if name == _DISALLOWED:
        return f"HBase refuses the name {_DISALLOWED!r}"
    if name in _OLD_CATALOG:
        return f"{name!r} is HBase's old catalog table"
    if name[0] in ".-":
        return f"it starts with {name[0]!r}: a table name starts with a letter, a digit or '_'"
    bad = _bad_char(name, "_-.")
    return f"{bad} is not allowed: a table name takes letters, digits, '_', '-' and '.'" if bad else None


def table_name_problem(full_name: str, *, user_table: bool = True) -> str | None:
    """Why ``full_name`` (``"ns:name"`` or ``"name"``) is not a legal table name, or None.

    - ``user_table``: also refuse the ``hbase`` system namespace (a table keyshape creates or
      splits is a user table); False for a name only read (``hbase:meta`` may be scanned).
    """
    if not isinstance(full_name, str):
        return f"a table name is text, not {type(full_name).__name__}"
    namespace, sep, name = full_name.partition(":")
    if not sep:
        namespace, name = DEFAULT_NAMESPACE, full_name
    problem = namespace_problem(namespace) or qualifier_problem(name)
    if problem is None and ":" in name:
        problem = "it has more than one ':'"
    if problem is None and user_table:
        problem = system_namespace_problem(namespace)
    return problem


def check_table_name(full_name: str, what: str = "table name", *, user_table: bool = True) -> str:
    """``full_name`` when HBase accepts it as a table name, else BadInput naming the problem.

    - ``what``: how the message names the value (e.g. ``"--table"`` or ``"schema.toml: table.name"``).
    """
    problem = table_name_problem(full_name, user_table=user_table)
    if problem:
        raise BadInput(f"{what} {full_name!r} is not a table HBase can create: {problem}")
    return full_name


def check_namespace(namespace: str, what: str = "namespace", *, user_table: bool = True) -> str:
    """``namespace`` when HBase accepts it (and, for a user table, it is not ``hbase``), else BadInput."""
    problem = namespace_problem(namespace) or (system_namespace_problem(namespace) if user_table else None)
    if problem:
        raise BadInput(f"{what} {namespace!r} is not a namespace HBase accepts: {problem}")
    return namespace
