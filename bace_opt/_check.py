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


def refuse_other_schema(data: Any, path, expected: str, what: str) -> None:
    """A file of another of the toolkit's kinds (an instance given where a schedule is due, two files swapped) is
    named as such in one line, instead of a list of every field it lacks."""
    schema = data.get("schema") if isinstance(data, dict) else None
    if not (isinstance(schema, str) and schema.startswith("bace-opt/") and schema != expected):
        return
    kind, want = _kind(schema), _kind(expected)
    if kind == want:        # the same kind, another version: not a swap (before: "an instance file ..., not an
        # instance file ...")
        raise InputError(f"{path}: schema {schema!r} is a version of {what} that this bace-opt does not read (it "
                         f"reads {expected!r}); was it written by another version of bace-opt?")
    if kind is None:
        raise InputError(f"{path}: schema {schema!r} is not a schema of bace-opt's files; {what} has schema "
                         f"{expected!r}")
    article = "an" if kind[:1] in "aeiou" else "a"
    raise InputError(f"{path}: this is {article} {kind} file (schema {schema!r}), not {what} "
                     f"(schema {expected!r}); are the files in the right order?")


def _kind(schema: str) -> str | None:
    """The kind of file a schema ``bace-opt/KIND/vN`` names (``instance``, ``schedule``), None if it names none."""
    parts = schema.split("/")
    return parts[1] if len(parts) == 3 and parts[1] and parts[2][:1] == "v" else None


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
    return loads_strict(text, str(p))


#: JSON nesting deeper than this is refused (no file of bace_opt needs more than a handful of levels)
MAX_DEPTH = 64
#: a number written with more characters than this is refused (no figure needs more than ~20 digits)
MAX_NUMBER_CHARS = 100


class _Obj(dict):
    """A JSON object that remembers the keys it saw twice (``json`` would silently keep the last)."""
    __slots__ = ("dups",)


class _Bad:
    """A JSON token that is not a finite number: NaN, Infinity, an overflowing or a huge literal."""
    __slots__ = ("text", "why")

    def __init__(self, text: str, why: str):
        self.text, self.why = text, why


def _pairs(pairs):
    d = _Obj()
    d.dups = []
    for k, v in pairs:
        if k in d and k not in d.dups:
            d.dups.append(k)
        d[k] = v
    return d


def _constant(s: str):
    return _Bad(s, f"{s} is not a JSON number (JSON has no NaN or Infinity)")


def _float(s: str):
    if len(s) > MAX_NUMBER_CHARS:
        return _Bad(s[:20] + "...", f"number with {len(s)} characters is too long")
    v = float(s)
    if not math.isfinite(v):
        return _Bad(s, f"{s} overflows a double")
    return v


def _int(s: str):
    if len(s) > MAX_NUMBER_CHARS:
        return _Bad(s[:20] + "...", f"integer with {len(s)} digits is too long")
    return int(s)


def loads_strict(text: str, source: str = "input") -> Any:
    """Parse JSON strictly: duplicate keys, NaN/Infinity, numbers that overflow or have more than
    ``MAX_NUMBER_CHARS`` characters, and nesting deeper than ``MAX_DEPTH`` are all refused with their field
    path, as one InputError listing every such fault."""
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float,
                          parse_int=_int)
    except json.JSONDecodeError as e:
        raise InputError(f"{source}: not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    except RecursionError:
        raise InputError(f"{source}: JSON nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ValueError as e:   # e.g. a number the parser cannot convert
        raise InputError(f"{source}: not valid JSON: {e}") from None
    p = Problems()
    data = _clean(p, data)
    p.raise_if_any(source)
    return data


def _clean(p: Problems, root: Any) -> Any:
    """Report the marks left by the strict parser (with paths) and return plain dicts; iterative."""
    out_root: list = [None]
    stack = [(root, "", 0, out_root, 0)]   # (value, path, depth, parent container, key in parent)
    while stack:
        v, where, depth, parent, key = stack.pop()
        if depth > MAX_DEPTH:
            p.add(where, f"nested too deeply (at most {MAX_DEPTH} levels)")
            parent[key] = None
            continue
        if isinstance(v, _Bad):
            p.add(where or "(top level)", v.why)
            parent[key] = None
        elif isinstance(v, dict):
            for k in getattr(v, "dups", ()):
                p.add(f"{where}.{k}" if where else k, "duplicate key (each field may appear once)")
            d = dict.fromkeys(v)          # keys in file order; values filled as the stack unwinds
            parent[key] = d
            for k, x in v.items():
                stack.append((x, f"{where}.{k}" if where else str(k), depth + 1, d, k))
        elif isinstance(v, list):
            lst = [None] * len(v)
            parent[key] = lst
            for i, x in enumerate(v):
                stack.append((x, f"{where}[{i}]", depth + 1, lst, i))
        else:
            parent[key] = v
    return out_root[0]


def finite_tree(p: Problems, where: str, value: Any) -> None:
    """Report every non-finite number (and nesting deeper than MAX_DEPTH) inside a JSON-like value built in
    code (e.g. an instance's ``meta``), so that what is accepted can be written back as valid JSON."""
    stack = [(value, where, 0)]
    while stack:
        v, w, depth = stack.pop()
        if depth > MAX_DEPTH:
            p.add(w, f"nested too deeply (at most {MAX_DEPTH} levels)")
        elif isinstance(v, float) and not math.isfinite(v):
            p.add(w, f"must be finite, got {v}")
        elif isinstance(v, dict):
            for k, x in v.items():
                if not isinstance(k, str):
                    p.add(w, f"keys must be strings, got {k!r}")
                stack.append((x, f"{w}.{k}" if w else str(k), depth + 1))
        elif isinstance(v, (list, tuple)):
            stack.extend((x, f"{w}[{i}]", depth + 1) for i, x in enumerate(v))
        elif not (v is None or isinstance(v, (str, int, float, bool))):
            p.add(w, f"must be a JSON value, got {type(v).__name__}")


def _fmt(v: Any) -> str:
    try:
        s = json.dumps(v) if not isinstance(v, float) else repr(v)
    except (TypeError, ValueError, RecursionError):
        s = f"<{type(v).__name__}>"
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
    if isinstance(value, int) and abs(value) > 1e300:   # a huge integer literal: float() would overflow
        p.add(where, f"out of range, got {_fmt(value)}")
        return None
    if not math.isfinite(value):
        p.add(where, f"must be finite, got {value}")
        return None
    if gt is not None and not value > gt:
        p.add(where, f"must be > {gt:g}, got {_fmt(value)}")
        return None
    if ge is not None and not value >= ge:
        p.add(where, f"must be >= {ge:g}, got {_fmt(value)}")
        return None
    if le is not None and not value <= le:
        p.add(where, f"must be <= {le:g}, got {_fmt(value)}")
        return None
    return float(value)


def integer(p: Problems, where: str, value: Any, *, ge: int | None = None, le: int | None = None,
            default: Any = _MISSING) -> int | None:
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
    if le is not None and value > le:
        p.add(where, f"must be <= {le:g}, got {_fmt(value)}")
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
