"""Everything that describes a key or a table: ``KeySchema`` (``keyschema``) and its parts —
fields and encodings (``fields``), salt/hash prefixes (``prefixes``), the TOML parser
(``parse``), index tables (``index``), table specs (``specs``), lint and the shell DDL.
Modules inside this package import each other by module path, never through this file.
"""

from keyshape.schema.keyschema import KeySchema
from keyshape.schema.specs import FamilySpec, SplitSpec, TableSpec

__all__ = ["FamilySpec", "KeySchema", "SplitSpec", "TableSpec"]
