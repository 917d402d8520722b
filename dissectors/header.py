"""Declarative header layouts: a header is a name, a size and a table of (field, bits).

One table drives three consumers: the slow reference `decode`/`encode` used by tests and the
generator's templates, the Scapy layers, and the vectorized gathers of the fast decode path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


class HeaderError(ValueError):
    """Base for header decoding problems."""


class NeedData(HeaderError):
    """The buffer ends before the header does (snap length, truncated record)."""


@dataclass(frozen=True)
class Field:
    """One field: its spec name, width in bits and bit offset from the header start."""

    name: str
    bits: int
    bit_offset: int

    @property
    def reserved(self) -> bool:
        return self.name.startswith("resv")

    @property
    def byte_offset(self) -> int:
        return self.bit_offset // 8

    @property
    def byte_span(self) -> int:
        """Bytes that must be read (big-endian) to extract this field."""
        last_bit = self.bit_offset + self.bits - 1
        return last_bit // 8 - self.byte_offset + 1

    @property
    def shift(self) -> int:
        """Right shift applied to the big-endian integer of `byte_span` bytes."""
        return self.byte_span * 8 - (self.bit_offset % 8) - self.bits

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1


@dataclass(frozen=True)
class Header:
    """A fixed-size header described by (name, bits) pairs in wire order (big-endian)."""

    name: str
    layout: tuple[tuple[str, int], ...]
    fields: tuple[Field, ...] = field(init=False)

    def __post_init__(self) -> None:
        offset = 0
        built = []
        for name, bits in self.layout:
            built.append(Field(name, bits, offset))
            offset += bits
        if offset % 8:
            raise ValueError(f"{self.name}: layout is {offset} bits, not whole bytes")
        object.__setattr__(self, "fields", tuple(built))

    @property
    def size(self) -> int:
        return sum(bits for _, bits in self.layout) // 8

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}")

    def decode(self, data: bytes, offset: int = 0) -> dict[str, int]:
        """Reference decoder: all non-reserved fields as ints. Raises NeedData if short."""
        if len(data) - offset < self.size:
            raise NeedData(f"{self.name} needs {self.size} bytes, {len(data) - offset} left")
        value = int.from_bytes(data[offset : offset + self.size], "big")
        total = self.size * 8
        return {
            f.name: (value >> (total - f.bit_offset - f.bits)) & f.mask
            for f in self.fields
            if not f.reserved
        }

    def encode(self, values: Mapping[str, int] | None = None, **kw: int) -> bytes:
        """Reference encoder: missing fields are zero; out-of-range values are an error."""
        merged = {**(values or {}), **kw}
        unknown = set(merged) - {f.name for f in self.fields}
        if unknown:
            raise KeyError(f"{self.name} has no fields {sorted(unknown)}")
        total = self.size * 8
        value = 0
        for f in self.fields:
            v = int(merged.get(f.name, 0))
            if v < 0 or v > f.mask:
                raise ValueError(f"{self.name}.{f.name}={v} does not fit {f.bits} bits")
            value |= v << (total - f.bit_offset - f.bits)
        return value.to_bytes(self.size, "big")
