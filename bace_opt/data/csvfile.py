"""A strict CSV reader: every fault is an ``InputError`` naming file:line:column and the column's name.

Both the raw third-party files (``raw``) and the tables shipped as package data (``tables``) are read through
``CsvFile``, so a damaged file is refused the same way wherever it comes from:

- the header must hold every required column (``file:1: no column(s) ...``);
- every row must have as many fields as the header (a row cut short, e.g. the last line of a file cut in the
  middle: ``file:LINE: 7 field(s), the header has 12``), and the file must end with a line end (a file whose
  last line has none was cut while being written or copied);
- ``number`` parses a field as a finite float or says ``file:LINE:COL: column 'x': not a number: 'n/a'``.

Lines starting with ``#`` before the header are comments (the shipped tables carry their source there).
Blank lines are skipped.
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Iterator, Sequence

from ..errors import InputError


class CsvFile:
    """One CSV file, read whole and checked for shape; ``rows()`` yields (line number, fields)."""

    def __init__(self, path, required: Sequence[str] = (), *, label: str | None = None, text: str | None = None):
        self.path = Path(path)
        self.label = label or str(path)
        if text is None:
            if not self.path.is_file():
                raise InputError(f"data file not found: {self.path}")
            try:
                raw = self.path.read_bytes()
            except OSError as e:
                raise InputError(f"{self.label}: cannot read: {e.strerror or e}") from None
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:     # where, as every other fault of the file: line and column
                line = raw.count(b"\n", 0, e.start) + 1
                col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
                raise InputError(f"{self.label}:{line}:{col}: not UTF-8 (byte {raw[e.start]:#04x})") from None
        lines = text.splitlines(keepends=True)
        if lines and not lines[-1].endswith(("\n", "\r")):
            raise InputError(f"{self.label}:{len(lines)}: the last line is incomplete (no line end: "
                             "the file was cut?)")
        first = 0
        while first < len(lines) and lines[first].startswith("#"):
            first += 1
        self._first = first
        self._reader = csv.reader(io.StringIO("".join(lines[first:]), newline=""))
        try:
            self.header = [h.strip() for h in next(self._reader)]
        except StopIteration:
            raise InputError(f"{self.label}: empty (no header line)") from None
        except csv.Error as e:
            raise InputError(f"{self.label}:{first + 1}: not CSV: {e}") from None
        lacking = [c for c in required if c not in self.header]
        if lacking:
            raise InputError(f"{self.label}:{first + 1}: no column(s) {', '.join(map(repr, lacking))} in the header "
                             f"({', '.join(self.header)})")
        dup = sorted({h for h in self.header if self.header.count(h) > 1})
        if dup:
            raise InputError(f"{self.label}:{first + 1}: column(s) {', '.join(map(repr, dup))} appear twice")
        self.col = {h: i for i, h in enumerate(self.header)}

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """(line number in the file, fields) of every non-blank data row, each checked for its field count."""
        n = len(self.header)
        while True:
            try:
                row = next(self._reader)
            except StopIteration:
                return
            except csv.Error as e:
                raise InputError(f"{self.label}:{self._first + self._reader.line_num}: not CSV: {e}") from None
            line = self._first + self._reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != n:
                raise InputError(f"{self.label}:{line}: {len(row)} field(s), the header has {n} "
                                 f"({'row cut short' if len(row) < n else 'extra fields'})")
            yield line, row

    def where(self, line: int, column: str) -> str:
        """'file:line:col (column name)' of a field."""
        return f"{self.label}:{line}:{self.col[column] + 1}: column {column!r}"

    def text(self, line: int, row: list[str], column: str, *, nonempty: bool = True) -> str:
        v = row[self.col[column]].strip()
        if nonempty and not v:
            raise InputError(f"{self.where(line, column)}: empty")
        return v

    def number(self, line: int, row: list[str], column: str, *, gt: float | None = None, ge: float | None = None,
               empty_ok: bool = False) -> float | None:
        """The field as a finite float (``None`` for an empty field when ``empty_ok``)."""
        v = row[self.col[column]].strip()
        if not v and empty_ok:
            return None
        try:
            x = float(v)
        except ValueError:
            raise InputError(f"{self.where(line, column)}: not a number: {v!r}") from None
        if not math.isfinite(x):
            raise InputError(f"{self.where(line, column)}: not a finite number: {v!r}")
        if gt is not None and not x > gt:
            raise InputError(f"{self.where(line, column)}: must be > {gt:g}, got {v}")
        if ge is not None and not x >= ge:
            raise InputError(f"{self.where(line, column)}: must be >= {ge:g}, got {v}")
        return x

    def integer(self, line: int, row: list[str], column: str, *, ge: int = 0) -> int:
        v = row[self.col[column]].strip()
        try:
            x = int(v)
        except ValueError:
            raise InputError(f"{self.where(line, column)}: not an integer: {v!r}") from None
        if x < ge:
            raise InputError(f"{self.where(line, column)}: must be >= {ge}, got {v}")
        return x

    def boolean(self, line: int, row: list[str], column: str) -> bool:
        v = row[self.col[column]].strip()
        if v in ("True", "true", "1"):
            return True
        if v in ("False", "false", "0"):
            return False
        raise InputError(f"{self.where(line, column)}: not True/False: {v!r}")
