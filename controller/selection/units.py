"""The one time base of the selection core: integer microseconds (service-metrics-op 6.2.2).

Computing Time and Network Delay are YANG ``cats-t:milliseconds`` (decimal64, three fraction
digits), so every value is a whole number of microseconds. Keeping them as integers makes
``TST = Computing_Time + Network_Delay`` (6.2.3 Step 4) exact and ties exact, and makes the
conversion of IGP TE / BGP-LS microsecond delays (RFC 7471, RFC 8570, RFC 8571) lossless.
"""

from __future__ import annotations

from decimal import Decimal
from typing import NewType

Micros = NewType("Micros", int)
"""A duration in whole microseconds."""

Timestamp = float
"""A point in time in seconds on the caller's clock; the core never reads a clock."""

_PER_MS = 1000
_UINT32_MAX = 2**32 - 1


def from_ms(value: int | str | Decimal) -> Micros:
    """Milliseconds (an int, or a decimal string/Decimal with at most 3 fraction digits)."""
    scaled = Decimal(value) * _PER_MS
    if scaled != scaled.to_integral_value() or scaled < 0:
        raise ValueError(f"{value} ms is not a non-negative whole number of microseconds")
    return Micros(int(scaled))


def from_us(value: int) -> Micros:
    """Microseconds as advertised by IGP TE metric extensions and BGP-LS (uint32)."""
    if not 0 <= value <= _UINT32_MAX:
        raise ValueError(f"{value} us is outside uint32")
    return Micros(value)


def to_ms(value: Micros) -> Decimal:
    """Exact milliseconds with three fraction digits, as cats-t:milliseconds renders them."""
    return (Decimal(value) / _PER_MS).quantize(Decimal("0.001"))
