"""Helpers for the tests that run a command in a subprocess and interrupt it (``/proc`` based)."""
from __future__ import annotations

import signal
import time
from pathlib import Path


def foreground_sigint() -> None:
    """A ``preexec_fn``: the command starts as a terminal's foreground job does, SIGINT at its default.  A test
    run itself started in the background (a CI script under ``&``, ``nohup``) has SIGINT ignored, and an ignored
    signal stays ignored across exec, so without this the command would rightly ignore the Ctrl-C a test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_line(p, text: str, timeout_s: float) -> list[str]:
    """Read ``p.stderr`` line by line until a line holds ``text`` (or it ends, or ``timeout_s`` passes);
    return the lines read."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            break
    return seen


def children(pid: int, mark: bytes | None = None) -> list[int]:
    """The live child processes of ``pid`` (with ``mark`` in their command line, when given), leaving out
    multiprocessing's resource tracker."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            parent = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid and b"resource_tracker" not in cmd and (mark is None or mark in cmd):
            out.append(int(d.name))
    return out


def gone(pid: int, wait_s: float = 3.0) -> bool:
    """The process has exited (or is a zombie) within ``wait_s``."""
    t = time.monotonic()
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        if time.monotonic() - t > wait_s:
            return False
        time.sleep(0.1)


def interrupt(p, settle_s: float = 1.0, timeout_s: float = 60.0) -> tuple[str, str, float]:
    """Wait ``settle_s``, check that ``p`` still runs, send it SIGINT (Ctrl-C) and wait for it to end; return
    (stdout, stderr, seconds from the signal to the end)."""
    time.sleep(settle_s)
    assert p.poll() is None, "the command ended before the interrupt: use a harder instance"
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=timeout_s)
    return out, err, time.monotonic() - t


def kill(p) -> None:
    """Kill ``p`` if it still runs (a test's clean-up)."""
    if p.poll() is None:
        p.kill()
        p.wait()


def _stat(pid_dir: Path) -> tuple[int, int, int, int, str] | None:
    """(pid, ppid, pgrp, session, state) of a /proc entry, or None when it is gone."""
    try:
        rest = (pid_dir / "stat").read_text().rsplit(")", 1)[1].split()
        return int(pid_dir.name), int(rest[1]), int(rest[2]), int(rest[3]), rest[0]
    except (OSError, ValueError, IndexError):
        return None


def process_table() -> list[tuple[int, int, int, int, str]]:
    """Every live process as (pid, ppid, pgrp, session, state), from ``/proc/*/stat``."""
    return [s for d in Path("/proc").iterdir() if d.name.isdigit() and (s := _stat(d)) is not None]


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (children, their children, ...; zombies left out)."""
    table = process_table()
    kids: dict[int, list[int]] = {}
    for p, pp, _, _, state in table:
        if state != "Z":
            kids.setdefault(pp, []).append(p)
    out, todo = set(), [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def sessions_and_groups(pids: set[int]) -> set[int]:
    """The process groups and sessions of ``pids`` (to find, later, processes they started)."""
    return {x for p, _, g, s, _ in process_table() if p in pids for x in (g, s)}


def survivors(pids: set[int], groups: set[int], wait_s: float = 3.0) -> list[int]:
    """Processes among ``pids``, or in one of ``groups`` (process groups or sessions), still alive (not
    zombies) after up to ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        left = [p for p, _, g, s, state in process_table()
                if state != "Z" and (p in pids or g in groups or s in groups)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)
