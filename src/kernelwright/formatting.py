"""How numbers are written in tables, reports and the CLI (one place, so they agree)."""

from __future__ import annotations

from typing import Any


def fmt_mj(value: Any) -> str:
    """Millijoules ('-' when missing or not a number)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "-"
    return f"{value:.3f}"


def fmt_ms(value: Any) -> str:
    """Milliseconds ('-' when missing or not a number)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "-"
    if 0 < value < 0.001:
        return f"{value:.2g}"  # tiny times keep two significant digits
    return f"{value:.4f}" if value < 1 else f"{value:.3f}"


def fmt_x(value: float | None) -> str:
    """A speedup like ``1.84x`` ('-' when missing)."""
    if value is None:
        return "-"
    return f"{value:.2g}x" if value < 0.1 else f"{value:.2f}x"


def fmt_frac(value: float | None) -> str:
    """A fraction as a percentage ('-' when missing)."""
    if value is None:
        return "-"
    if value != 0 and abs(value) < 0.001:
        return f"{value * 100:.2g}%"  # small fractions keep two significant digits
    return f"{value:.1%}"
