# Types of the C module built from _native.c (see keyshape.core.native).
from collections.abc import Callable
from typing import Any

def string_hash(b: bytes, /) -> int: ...
def bytes_hash(b: bytes, /) -> int: ...
def md5(b: bytes, /) -> bytes: ...

class Reader:
    def __init__(
        self,
        names: tuple[str, ...],
        head: int,
        prefix_width: int,
        sep: bytes,
        sepcheck: bool,
        fields: tuple[tuple[Any, ...], ...],
        check: tuple[int, int, bool, tuple[int, ...], int] | tuple[int, int, bool, tuple[int, ...], int, int] | None,
        /,
    ) -> None: ...
    def columns(
        self, keys: object, arrow: bool = False, field_width: bool = True, threads: int = 1, chunk_rows: int = 16384, /
    ) -> tuple[Any, ...] | None: ...
    def read(self, key: object, /) -> dict[str, Any] | None: ...
    def fits(self, matrix: object, lengths: object, threads: int = 1, /) -> bytes: ...

class Decoder:
    fallback: Callable[..., dict[str, Any]]
    plain: Reader | None
    verified: Reader | None
    def __init__(self, plain: Reader | None, verified: Reader | None, fallback: Callable[..., dict[str, Any]], /) -> None: ...
    def __call__(self, key: object, verify: bool = True) -> dict[str, Any]: ...
