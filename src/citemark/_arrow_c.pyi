"""Typed face of the compiled Arrow path (`_arrow_c.pyx`); `citemark.arrow` wraps it."""

from typing import Any

# Buffers: any object with the buffer protocol (pyarrow.Buffer, bytes, memoryview).

class OwnedBuffer:
    """Memory filled by the kernel, exported read-only through the buffer protocol."""

    def __buffer__(self, flags: int, /) -> memoryview: ...
    def __len__(self) -> int: ...

def strip_utf8(
    validity: Any,
    offsets: Any,
    data: Any,
    offset: int,
    length: int,
    width: int,
    families: tuple[bytes, ...],
) -> tuple[OwnedBuffer | None, OwnedBuffer, OwnedBuffer] | None: ...
def extract_utf8(
    validity: Any,
    offsets: Any,
    data: Any,
    offset: int,
    length: int,
    width: int,
    families: tuple[bytes, ...],
) -> dict[str, Any]: ...
