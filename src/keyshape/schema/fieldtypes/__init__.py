"""Field types: one module per type, each holding what keyshape knows of it (see :mod:`.base`).

:data:`FIELD_TYPES` and :data:`ENCODINGS` are filled from the modules found here, so a new type is
one new module. The built-in types, in their documented order: ``string``, ``int32``, ``int64``,
``float64``, ``bytes``, ``timestamp``; then any other module's.
"""

from __future__ import annotations

import importlib
import pkgutil

from keyshape.schema.fieldtypes.base import REGISTRY, FieldPlan, FieldType, field_type

__all__ = ["ENCODINGS", "FIELD_TYPES", "REGISTRY", "FieldPlan", "FieldType", "field_type"]

# Every module of this package is a type (or the base, or the families the built-in types share):
# importing it registers its type.
for _mod in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_mod.name}")

_ORDER = ("string", "int32", "int64", "float64", "bytes", "timestamp")
FIELD_TYPES: tuple[str, ...] = _ORDER + tuple(sorted(n for n in REGISTRY if n not in _ORDER))
ENCODINGS: dict[str, tuple[str, ...]] = {n: REGISTRY[n].encodings for n in FIELD_TYPES}
