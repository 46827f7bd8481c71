"""Small helpers to check JSON-like input and collect *every* problem with its place.

Used by the instance and schedule loaders.  A ``Problems`` object gathers messages such as
``links[2].bandwidth_gbps: must be > 0, got -5``; the loader raises one ``InputError`` with all of them.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .errors import InputError

_MISSING = object()


class Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, msg: str) -> None:
        self.items.append(f"{where}: {msg}" if where else msg)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self, source: str | None = None) -> None:
        if self.items:
            raise InputError(self.items, source)


def read_json(path, what: str = "file") -> Any:
    """Read a JSON file; a missing file or malformed JSON becomes one clear InputError line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} not found: {p}") from None
    except IsADirectoryError:
        raise InputError(f"{what} is a directory, not a file: {p}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {what} {p}: {e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{p}: not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None


def _fmt(v: Any) -> str:
    s = json.dumps(v) if not isinstance(v, float) else repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def obj(p: Problems, where: str, value: Any, required: set[str], optional: set[str]) -> dict | None:
    """Check that value is a JSON object with the required keys and no unknown ones."""
    if not isinstance(value, dict):
        p.add(where, f"must be an object, got {_fmt(value)}")
        return None
    for k in sorted(required - value.keys()):
        p.add(f"{where}.{k}" if where else k, "is required")
    for k in sorted(value.keys() - required - optional):
        allowed = ", ".join(sorted(required | optional))
        p.add(f"{where}.{k}" if where else k, f"unknown field (allowed: {allowed})")
    return value


def num(p: Problems, where: str, value: Any, *, gt: float | None = None, ge: float | None = None,
        le: float | None = None, default: Any = _MISSING) -> float | None:
    """A finite JSON number (not a bool) within bounds; returns it as float, or None on a problem."""
    if value is _MISSING:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        p.add(where, f"must be a number, got {_fmt(value)}")
        return None
    if not math.isfinite(value):
        p.add(where, f"must be finite, got {value}")
        return None
    if gt is not None and not value > gt:
        p.add(where, f"must be > {gt:g}, got {value:g}")
        return None
    if ge is not None and not value >= ge:
        p.add(where, f"must be >= {ge:g}, got {value:g}")
        return None
    if le is not None and not value <= le:
        p.add(where, f"must be <= {le:g}, got {value:g}")
        return None
    return float(value)


def integer(p: Problems, where: str, value: Any, *, ge: int | None = None, default: Any = _MISSING) -> int | None:
    if value is _MISSING:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            p.add(where, f"must be an integer (write {int(value)}, not {value!r})")
        else:
            p.add(where, f"must be an integer, got {_fmt(value)}")
        return None
    if ge is not None and value < ge:
        p.add(where, f"must be >= {ge}, got {value}")
        return None
    return value


def string(p: Problems, where: str, value: Any, *, default: Any = _MISSING, nonempty: bool = True) -> str | None:
    if value is _MISSING:
        return default
    if not isinstance(value, str):
        p.add(where, f"must be a string, got {_fmt(value)}")
        return None
    if nonempty and not value.strip():
        p.add(where, "must be a non-empty string")
        return None
    return value


def boolean(p: Problems, where: str, value: Any, *, default: Any = _MISSING) -> bool | None:
    if value is _MISSING:
        return default
    if not isinstance(value, bool):
        p.add(where, f"must be true or false, got {_fmt(value)}")
        return None
    return value


def array(p: Problems, where: str, value: Any, *, nonempty: bool = False) -> list | None:
    if not isinstance(value, list):
        p.add(where, f"must be an array, got {_fmt(value)}")
        return None
    if nonempty and not value:
        p.add(where, "must not be empty")
        return None
    return value


MISSING = _MISSING
