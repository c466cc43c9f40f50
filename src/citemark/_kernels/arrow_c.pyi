"""Typed face of the compiled Arrow kernel (`arrow_c.pyx`); the twin `arrow_py` has the same
entry points.  Buffers: any object with the buffer protocol (pyarrow.Buffer, bytes);
`allocate(size)` returns a writable one (pyarrow.allocate_buffer)."""

import sys
from collections.abc import Callable
from typing import Any

from typing_extensions import disjoint_base

UTF8_CHECK: str

@disjoint_base
class OwnedBuffer:
    """Memory filled by the kernel, exported read-only through the buffer protocol."""

    if sys.version_info >= (3, 12):
        def __buffer__(self, flags: int, /) -> memoryview: ...
        def __release_buffer__(self, buffer: memoryview, /) -> None: ...

    def __len__(self) -> int: ...

@disjoint_base
class Layout:
    """The checked input buffers of one string array (internal to the entry points)."""

@disjoint_base
class Output:
    """One output buffer being filled (internal to the entry points)."""

def strip_utf8(
    validity: Any,
    offsets: Any,
    data: Any,
    offset: int,
    length: int,
    width: int,
    families: tuple[bytes, ...],
    allocate: Callable[[int], Any] | None = None,
) -> tuple[OwnedBuffer | None, Any, Any] | None: ...
def extract_utf8(
    validity: Any,
    offsets: Any,
    data: Any,
    offset: int,
    length: int,
    width: int,
    families: tuple[bytes, ...],
    allocate: Callable[[int], Any] | None = None,
) -> dict[str, Any]: ...
