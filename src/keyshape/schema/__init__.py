"""Everything that describes a key or a table: ``KeySchema`` (``keyschema``), a façade over the key's
immutable ``KeyLayout`` (``layout``, what every codec reads) and its parts —
fields and encodings (``fields``), salt/hash prefixes (``prefixes``), the TOML parser
(``parse``), index tables (``index``), table specs (``specs``), lint and the shell DDL.
Modules inside this package import each other by module path, never through this file.
"""

from keyshape.schema.keyschema import KeySchema, load_schema
from keyshape.schema.layout import KeyLayout
from keyshape.schema.specs import FamilySpec, SplitSpec, TableSpec

__all__ = ["FamilySpec", "KeyLayout", "KeySchema", "SplitSpec", "TableSpec", "load_schema"]
