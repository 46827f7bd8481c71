"""Every file bace_opt writes goes through here: one atomic writer, one output-path check.

``atomic_write(path, data)`` writes a temporary file in the target's folder, flushes and fsyncs it, gives it
mode 0644 (less the umask's other bits: ordinary shared files, as a plain ``open`` would make them) and
renames it over the target with ``os.replace``.  A reader, a crash or a full disk sees either the old file or
the new one, never a truncated mix; on any failure the temporary file is removed and the old file stays.
``atomic_savefig`` does the same for a matplotlib figure, ``atomic_write_by_name`` for any writer that takes a
file name.  ``append_csv_rows`` adds rows to a CSV history file (one that accumulates rows across runs) by
replacing the whole file atomically: the old bytes, then the new rows; ``csv_text`` is the CSV text those rows
(and any whole CSV file) are written as.  tests/test_atomic_writes.py scans bace_opt/ and benchmarks/ for any
other write and lists the few allowed ones (journals, lock files) with their reasons.

``check_output(path, suffixes=..., inputs=...)`` is called by every command *before* any work starts: the
folder must exist and be a folder, the path must not be a folder, its suffix must be one the writer
supports, and it must not name one of the command's input files (an input is never overwritten).  Each
fault is one ``InputError`` line naming the option.
"""
from __future__ import annotations

import csv
import io
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .errors import InputError

FILE_MODE = 0o644


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def _tmp_in(path: Path) -> tuple[int, str]:
    # keep the suffix, so that writers that pick a format by suffix (matplotlib) see the real one
    return tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".", suffix=".tmp" + path.suffix)


def _finish(tmp: str, path: Path) -> None:
    os.chmod(tmp, FILE_MODE & ~_umask())
    os.replace(tmp, path)
    try:  # make the rename itself durable
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def _write_atomically(path: Path, write) -> Path:
    """Create a temporary file beside ``path``, let ``write(fd, tmp)`` fill it (and close ``fd``), fsync it,
    rename it over ``path``.  An OSError becomes an ``InputError`` naming the path; on any failure the
    temporary file is removed and the previous content of ``path`` stays.

    A target that exists and is not a regular file (``/dev/null``, ``/dev/full``, a FIFO) is never replaced
    by the rename: the content is written into it (``_write_into``)."""
    if _special(path):
        return _write_into(path, write)
    try:
        fd, tmp = _tmp_in(path)
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        write(fd, tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        _finish(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise InputError(f"cannot write {path}: {e.strerror or e}") from None
        raise
    return path


def _special(path: Path) -> bool:
    """``path`` exists and is a device, FIFO or socket (something a rename must not replace)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode)


def _write_into(path: Path, write) -> Path:
    """Fill a temporary file elsewhere (``write``), then copy its bytes into the special file ``path``."""
    fd, tmp = tempfile.mkstemp(prefix=".bace-opt.", suffix=".tmp" + path.suffix)
    try:
        write(fd, tmp)
        with open(tmp, "rb") as src, open(path, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
            dst.flush()
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return path


def atomic_write(path, data: str | bytes, encoding: str = "utf-8") -> Path:
    """Write ``data`` (text or bytes) to ``path`` atomically; returns the path.

    Raises ``InputError`` naming the path when it cannot be written (missing folder, no permission, disk
    full); the previous content of ``path``, if any, is then untouched."""
    raw = data.encode(encoding) if isinstance(data, str) else bytes(data)

    def write(fd, tmp):
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
    return _write_atomically(Path(path), write)


def atomic_savefig(fig, path, **kwargs) -> Path:
    """``fig.savefig`` to ``path`` atomically (the format comes from the suffix)."""
    path = Path(path)

    def write(fd, tmp):
        os.close(fd)
        fig.savefig(tmp, format=path.suffix.lstrip(".").lower() or None, **kwargs)
    return _write_atomically(path, write)


def atomic_write_by_name(path, write_to: Callable[[str], object]) -> Path:
    """``write_to(name)`` writes a file by name (a temporary file beside ``path``, with ``path``'s suffix), which
    is then renamed over ``path`` atomically; returns the path.  For writers that take a file name, such as a
    Pyomo model's ``write``.  Failures as ``atomic_write``'s."""
    def write(fd, tmp):
        os.close(fd)
        write_to(tmp)
    return _write_atomically(Path(path), write)


def csv_text(fieldnames: Sequence[str], rows: Iterable[Mapping[str, Any] | Sequence[Any]], *, header: bool = True,
             extrasaction: str = "raise", **fmt) -> str:
    """The CSV text of ``rows`` under ``fieldnames``, exactly as ``csv.DictWriter`` / ``csv.writer`` write it to a
    file opened with ``newline=""`` (lines end in ``\\r\\n`` unless ``fmt`` gives another ``lineterminator``).

    A row is a mapping (keyed by the field names; ``extrasaction`` as ``csv.DictWriter``'s) or a sequence of
    values in the order of ``fieldnames``.  ``header``: start with the header line."""
    fieldnames = list(fieldnames)
    buf = io.StringIO()
    by_name = csv.DictWriter(buf, fieldnames=fieldnames, extrasaction=extrasaction, **fmt)
    plain = csv.writer(buf, **fmt)
    if header:
        by_name.writeheader()
    for r in rows:
        if isinstance(r, Mapping):
            by_name.writerow(r)
        else:
            r = list(r)
            if len(r) != len(fieldnames):
                raise ValueError(f"a CSV row of {len(r)} values for {len(fieldnames)} columns: {r!r}")
            plain.writerow(r)
    return buf.getvalue()


def append_csv_rows(path, fieldnames: Sequence[str], rows: Iterable[Mapping[str, Any] | Sequence[Any]], *,
                    extrasaction: str = "raise", **fmt) -> Path:
    """Add ``rows`` (as ``csv_text``'s) to the CSV history file ``path``, replacing it atomically; returns the path.

    The new file is the old file's bytes unchanged, then the new rows; a missing or empty file gets the header
    line first.  An old file whose last line has no line break (a row cut short by a non-atomic append of the
    past) gets one, so that the cut row stays a row of its own.  The header of an existing file is not checked
    against ``fieldnames``.  A crash or a failed write leaves the old file as it was (``atomic_write``); an
    unreadable or unwritable file is an ``InputError`` naming it.  Not for concurrent writers: two processes
    appending at once may lose one's rows (the runner's ``ResultsFile`` journal is the tool for that)."""
    path = Path(path)
    try:
        old = path.read_bytes()
    except FileNotFoundError:
        old = b""
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    if old and not old.endswith((b"\n", b"\r")):
        old += fmt.get("lineterminator", "\r\n").encode()
    new = csv_text(fieldnames, rows, header=not old, extrasaction=extrasaction, **fmt)
    return atomic_write(path, old + new.encode("utf-8"))


#: damaged lines named one by one in a warning about a file; the rest are counted
SHOWN_ISSUES = 3


def issue_summary(issues: Sequence[str], shown: int = SHOWN_ISSUES) -> str:
    """The faults found in one file, for one warning: the first ``shown`` ("line 5: ...") joined, then a count
    of the rest (a file with 1,700 damaged lines gives one line, not 1,700)."""
    more = f"; and {len(issues) - shown} more" if len(issues) > shown else ""
    return "; ".join(issues[:shown]) + more


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _probe_folder(option: str, text: str, parent: Path) -> None:
    """Create and remove an empty file in ``parent``: what the atomic write will do first.  ``os.access`` says
    yes to root everywhere but a read-only mount, so a folder such as /proc or /sys, which takes no new file,
    is only found this way (before, the command did all its work, then failed to write)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".bace-opt-probe-")
    except OSError as e:
        raise InputError(f"{option} {text}: cannot create a file in {parent}: {e.strerror or e}") from None
    os.close(fd)
    os.unlink(tmp)


def check_output(path, *, option: str = "-o", suffixes: Iterable[str] | None = None,
                 inputs: Iterable = ()) -> Path:
    """Check that ``path`` can be written by a command, before the command does any work.

    ``suffixes``: the accepted file suffixes (e.g. ``(".json",)``), case-insensitive; None accepts any.
    ``inputs``: the command's input files; the output may not be one of them.  Raises ``InputError`` (one
    line naming ``option``) on the first fault; returns the path."""
    if path is None:
        raise InputError(f"{option}: an output path is required")
    text = str(path)
    if not text.strip():
        raise InputError(f"{option}: empty output path")
    if "\x00" in text:
        raise InputError(f"{option}: the path contains a NUL character")
    p = Path(text)
    if text.endswith(("/", os.sep)) or p.is_dir():
        raise InputError(f"{option} {text}: is a folder; give a file name")
    if suffixes is not None:
        suffixes = tuple(s.lower() for s in suffixes)
        if p.suffix.lower() not in suffixes:
            raise InputError(f"{option} {text}: unsupported file type {p.suffix or '(none)'!r}; "
                             f"use {' or '.join(suffixes)}")
    parent = p.parent
    # walk up to the first component that exists: it must be a folder, and the folder itself must exist
    probe = parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise InputError(f"{option} {text}: {probe} is a file, not a folder")
    if not parent.is_dir():
        raise InputError(f"{option} {text}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{option} {text}: folder {parent} is not writable")
    if p.exists() and not os.access(p, os.W_OK) and not os.access(parent, os.W_OK):
        raise InputError(f"{option} {text}: file is not writable")
    _probe_folder(option, text, parent)
    for inp in inputs:
        if inp is None:
            continue
        q = Path(str(inp))
        if _same_file(p, q) or (not p.exists() and p.resolve() == q.resolve()):
            raise InputError(f"{option} {text}: is an input of this command; it would be overwritten "
                             f"(write elsewhere)")
    return p

