"""Every file the toolkit writes is written atomically (bace_opt.files).

1. ``csv_text`` / ``append_csv_rows``: the CSV history files of the benchmarks (rows accumulate across runs)
   keep their old bytes, gain the new rows, and a failed write leaves the old file as it was.
2. The benchmark scripts that keep such histories write them through ``append_csv_rows`` (run on a tmp path).
3. A static scan of ``bace_opt/`` and ``benchmarks/`` for non-atomic write calls, with an explicit allow-list.
"""
from __future__ import annotations

import ast
import csv
import io
import os
import re
import sys
from pathlib import Path

import pytest

from bace_opt.errors import InputError
from bace_opt.files import append_csv_rows, csv_text

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- csv_text, append_csv_rows

def test_csv_text_is_what_csv_writes_to_a_file(tmp_path):
    rows = [{"a": 1, "b": "x,y"}, {"a": 2.5, "b": 'q"r'}]
    with open(tmp_path / "ref.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["a", "b"])
        w.writeheader()
        w.writerows(rows)
    assert csv_text(["a", "b"], rows).encode() == (tmp_path / "ref.csv").read_bytes()
    # a sequence row is in the order of the field names; extra keys as DictWriter's extrasaction
    assert csv_text(["a", "b"], [[1, "x,y"]], header=False) == '1,"x,y"\r\n'
    assert csv_text(["a"], [{"a": 1, "z": 2}], extrasaction="ignore", lineterminator="\n") == "a\n1\n"
    with pytest.raises(ValueError):
        csv_text(["a", "b"], [{"a": 1, "z": 2}])
    with pytest.raises(ValueError, match="1 values for 2 columns"):
        csv_text(["a", "b"], [[1]])


def test_append_creates_with_header_then_keeps_old_rows_byte_identical(tmp_path):
    p = tmp_path / "h.csv"
    append_csv_rows(p, ["a", "b"], [{"a": 1, "b": 2}])
    assert p.read_bytes() == b"a,b\r\n1,2\r\n"
    # old rows as some earlier writer left them (other quoting, "\n" endings) stay byte for byte
    old = b'a,b\n"1",2\n3,4\n'
    p.write_bytes(old)
    append_csv_rows(p, ["a", "b"], [{"a": 5, "b": 6}, [7, 8]])
    assert p.read_bytes() == old + b"5,6\r\n7,8\r\n"   # no second header
    assert [r["a"] for r in csv.DictReader(io.StringIO(p.read_bytes().decode(), newline=""))] == ["1", "3", "5", "7"]


def test_append_to_an_empty_file_writes_the_header_and_a_cut_row_stays_its_own(tmp_path):
    p = tmp_path / "h.csv"
    p.write_bytes(b"")
    append_csv_rows(p, ["a"], [[1]])
    assert p.read_bytes() == b"a\r\n1\r\n"
    p.write_bytes(b"a,b\r\n1,2\r\n3")   # a row cut short by a killed non-atomic append
    append_csv_rows(p, ["a", "b"], [[5, 6]])
    assert p.read_bytes() == b"a,b\r\n1,2\r\n3\r\n5,6\r\n"


def test_a_failed_append_leaves_the_old_file_unchanged(tmp_path, monkeypatch):
    p = tmp_path / "h.csv"
    append_csv_rows(p, ["a", "b"], [[1, 2]])
    before = p.read_bytes()

    def boom(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(InputError, match=f"cannot write {re.escape(str(p))}: No space left"):
        append_csv_rows(p, ["a", "b"], [[3, 4]])
    assert p.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["h.csv"]   # the temporary file is gone


def test_a_crash_mid_write_leaves_the_old_file_unchanged(tmp_path, monkeypatch):
    """A crash between writing the temporary file and the rename (here a KeyboardInterrupt from fsync)."""
    p = tmp_path / "h.csv"
    append_csv_rows(p, ["a"], [[1]])
    before = p.read_bytes()

    def interrupted(fd):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        append_csv_rows(p, ["a"], [[2]])
    assert p.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["h.csv"]


def test_an_unreadable_history_is_an_input_error(tmp_path):
    d = tmp_path / "a-folder.csv"
    d.mkdir()
    with pytest.raises(InputError, match="cannot read"):
        append_csv_rows(d, ["a"], [[1]])
