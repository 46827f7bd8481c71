"""One deadline per command, and the true wall clock (issue 42).

A limit the user gives (``--time-limit S``, ``bo.solve(time_limit=S)``, ``bo.gap(time_limit=S)``) bounds the whole
command's or call's wall clock, not one stage of it.  The command line counts from the start of the process
(imports included: ``PROCESS_START``), the Python API from the call.  One ``Deadline`` is set for it
(``scope``) and every stage takes its share of what is left (``left``, ``budget``): setup, candidate
generation, model builds, each level and engine, the bracket, the policies' runs, writing.

Scopes nest: an inner scope can only shorten the deadline in force (``bo.gap`` calls ``bo.solve`` inside its
own scope; the solve then ends by the gap's deadline even if its own limit is longer).  The deadline lives in a
``contextvars.ContextVar`` (a thread started inside a scope sees no deadline unless it is handed the value:
stages pass plain seconds to their solver threads, as before).

``wall_s()`` is what the clock says since the process started; every ``--json`` output's top-level ``wall_s``
is that figure, and stage times go under their own keys.
"""
from __future__ import annotations

import contextlib
import contextvars
import gc
import logging
import math
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator

__all__ = ["PROCESS_START", "Deadline", "DeadlineReached", "budget", "cancel_at_deadline", "command_start",
           "current", "left", "process_elapsed", "raise_at_deadline", "scope", "start_command", "wall_s"]


def _process_start() -> float:
    """``time.perf_counter()`` value of the moment this process started (Linux: ``/proc/self/stat``'s start time
    against the boot-time clock; elsewhere the moment this module was first imported)."""
    now = time.perf_counter()
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
        fields = stat[stat.rindex(")") + 2:].split()
        ticks = int(fields[19])                      # field 22 of proc(5), counted after the command name
        hz = os.sysconf("SC_CLK_TCK")
        since = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / hz
        if 0.0 <= since < 7 * 86400.0:
            return now - since
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    return now


#: ``time.perf_counter()`` at the start of this process (see ``_process_start``)
PROCESS_START: float = _process_start()


def process_elapsed() -> float:
    """Seconds since this process started, by the wall clock."""
    return time.perf_counter() - PROCESS_START


#: where the running command's clock starts: the process start for ``bace-opt ...``; the call of
#: ``bace_opt.cli.main.main(argv)`` when a program (a test) runs a command inside its own process
_COMMAND_START = [PROCESS_START]


def start_command(at: float | None = None) -> float:
    """Set (and return) where the command's clock starts (``time.perf_counter()`` value; default now)."""
    _COMMAND_START[0] = time.perf_counter() if at is None else at
    return _COMMAND_START[0]


def command_start() -> float:
    return _COMMAND_START[0]


def wall_s() -> float:
    """The command's wall clock so far: what every ``--json`` output's top-level ``wall_s`` says."""
    return time.perf_counter() - _COMMAND_START[0]


class DeadlineReached(BaseException):
    """The deadline passed inside a stage that cannot return a partial result (a model build, a model's transfer
    to a solver): raised by ``Deadline.check`` and, in the main thread, by ``raise_at_deadline``.  A
    ``BaseException`` (as ``KeyboardInterrupt``) so that no ``except Exception`` on the way swallows it; the
    stage's caller catches it and returns what it has with status ``time_limit``."""


@dataclass(frozen=True)
class Deadline:
    """The wall-clock deadline of one command or call: ``at`` is a ``time.perf_counter()`` value (``inf``: none)."""
    at: float
    limit_s: float
    start: float

    def left(self) -> float:
        """Seconds left (at least 0; ``inf`` without a limit)."""
        return max(self.at - time.perf_counter(), 0.0)

    def expired(self) -> bool:
        return time.perf_counter() >= self.at

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def check(self, what: str = "") -> None:
        """Raise ``DeadlineReached`` once the deadline has passed (checks inside long Python loops)."""
        if self.expired():
            raise DeadlineReached(f"time limit of {self.limit_s:g} s reached" + (f" during {what}" if what else ""))


_CURRENT: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("bace_opt_deadline", default=None)


def current() -> Deadline | None:
    """The deadline in force here, or None."""
    return _CURRENT.get()


def left(default: float = math.inf) -> float:
    """Seconds left of the deadline in force (``default`` when there is none)."""
    d = _CURRENT.get()
    return default if d is None else d.left()


def budget(requested: float | None, reserve: float = 0.0) -> float | None:
    """The time a stage may take: ``requested`` (None: no limit of its own) cut to what is left of the deadline in
    force less ``reserve`` (the time kept for what follows it), never below 0.  None only when neither limits."""
    d = _CURRENT.get()
    if d is None or math.isinf(d.at):
        return requested
    avail = max(d.left() - reserve, 0.0)
    return avail if requested is None else max(min(float(requested), avail), 0.0)


@contextlib.contextmanager
def scope(limit_s: float | None, start: float | None = None, reserve: float = 0.0) -> Iterator[Deadline | None]:
    """Set the deadline ``start + limit_s - reserve`` (``start``: now by default; ``PROCESS_START`` for a command)
    for the block, or keep the one in force when it is earlier.  ``limit_s`` None: the deadline in force (if any)
    stays.  ``reserve``: seconds kept after the block for what the caller still does (writing its output)."""
    outer = _CURRENT.get()
    if limit_s is None:
        yield outer
        return
    t0 = time.perf_counter() if start is None else start
    at = t0 + float(limit_s) - reserve
    if outer is not None and outer.at <= at:
        yield outer
        return
    token = _CURRENT.set(Deadline(at=at, limit_s=float(limit_s), start=t0))
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)


# --- stopping what cannot look at the clock itself -------------------------------------------------------------
#: cancels armed by ``cancel_at_deadline``: id -> (deadline's perf_counter value, callable); one watcher thread
#: calls each once its deadline has passed
_ARMED: dict[int, tuple[float, Callable[[], None]]] = {}
_LOCK = threading.Lock()
_WATCHER: list[threading.Thread] = []
#: how often the watcher looks at the clock (s)
WATCH_EVERY_S = 0.05


def _watch() -> None:
    while True:
        time.sleep(WATCH_EVERY_S)
        now = time.perf_counter()
        with _LOCK:
            due = [k for k, (at, _) in _ARMED.items() if at <= now]
            fns = [_ARMED.pop(k)[1] for k in due]
            if not _ARMED and not fns:
                _WATCHER.clear()
                return
        for fn in fns:
            try:
                fn()
            except Exception:      # a cancel that fails must not kill the watcher
                pass


@contextlib.contextmanager
def cancel_at_deadline(cancel: Callable[[], None]) -> Iterator[None]:
    """Call ``cancel()`` (a back end's own stop: HiGHS's ``cancelSolve``, CP-SAT's ``StopSearch``) from a watcher
    thread once the deadline in force passes while the block runs; the back end then returns what it has.
    Nothing is armed without a deadline."""
    d = _CURRENT.get()
    if d is None or math.isinf(d.at):
        yield
        return
    key = id(cancel) ^ threading.get_ident() ^ int(time.perf_counter_ns())
    with _LOCK:
        _ARMED[key] = (d.at, cancel)
        if not _WATCHER:
            t = threading.Thread(target=_watch, name="bace-opt-deadline", daemon=True)
            _WATCHER.append(t)
            t.start()
    try:
        yield
    finally:
        with _LOCK:
            _ARMED.pop(key, None)


#: ``raise_at_deadline`` fires this long after the deadline, so that a back end stopped at the deadline by
#: ``cancel_at_deadline`` inside the block returns its result first (the stage then ends without the raise)
ALARM_GRACE_S = 0.4


@contextlib.contextmanager
def raise_at_deadline(what: str) -> Iterator[None]:
    """Raise ``DeadlineReached`` in the block if the deadline in force passes while it runs (a long Python stage:
    a model build, a model's transfer to a solver).  Main thread only (a timer signal, as Ctrl-C's
    ``KeyboardInterrupt``); elsewhere the block runs as it is.  Raises at once when the deadline has passed."""
    d = _CURRENT.get()
    if d is None or math.isinf(d.at):
        yield
        return
    d.check(what)
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer") \
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    def on_alarm(signum, frame):
        # an exception raised inside a gc callback (a library's: hypothesis installs one) is printed and dropped
        # by the interpreter, and the stage would go on: try again a moment later instead
        if frame is not None and any(getattr(cb, "__code__", None) is frame.f_code for cb in gc.callbacks):
            signal.setitimer(signal.ITIMER_REAL, 0.02)
            return
        raise DeadlineReached(f"time limit of {d.limit_s:g} s reached during {what}")

    try:
        old = signal.signal(signal.SIGALRM, on_alarm)
    except ValueError:
        yield
        return
    pyomo_log = logging.getLogger("pyomo.core")
    pyomo_log.addFilter(_not_our_stop)
    try:
        signal.setitimer(signal.ITIMER_REAL, max(d.at - time.perf_counter(), 0.0) + ALARM_GRACE_S)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        pyomo_log.removeFilter(_not_our_stop)


def _not_our_stop(record: logging.LogRecord) -> bool:
    """Pyomo logs an ERROR ("Constructing component ... failed: DeadlineReached: ...") when the deadline stops a
    model's build inside one of its components: that is the limit doing its work, not an error; dropped."""
    return "DeadlineReached:" not in record.getMessage()
