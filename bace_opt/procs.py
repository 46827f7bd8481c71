"""Worker processes that a Ctrl-C never reaches, that the parent can always end, and SIGTERM read as Ctrl-C.

Our reading (docs/decisions.md, "Interrupts"): the *parent* decides what a Ctrl-C or a SIGTERM means; its
workers never see the signal.  Every worker process here starts in **its own session** (``setsid``: its own
process group, no controlling terminal), so the terminal's SIGINT, sent to the foreground process group,
reaches only the parent; the worker also ignores SIGINT from the first line it runs, and asks the kernel to
kill it when the parent dies (``PR_SET_PDEATHSIG``, Linux), so not even a ``kill -9`` of the parent leaves it
running.  Ending a worker kills its whole process group (``killpg`` with SIGKILL): helpers it started
(solver members, a Dask cluster's nannies and workers) go with it.

- ``popen_group(cmd, **popen_kwargs)``: ``subprocess.Popen`` in a new session; ``kill_group(p)`` ends its
  group and reaps ``p``.  For a command-line tool or a long-lived helper (a LocalCluster host).
- ``WorkerPool(n)``: runs ``fn(*args)`` calls, each in a fresh Python process of its own (so peak memory is
  per call), at most ``n`` at once; ``pool.run(fn, items)`` yields ``(index, ok, value)`` as each finishes
  (``ok`` False: the call raised, or its process died; ``value`` is then the message).  Leaving the ``with``
  block, normally or by an exception (KeyboardInterrupt), kills every running call's process group at once:
  calls not started are never started.  ``fn`` must be importable by name (module-level, not ``__main__``);
  the parent's ``sys.path`` is given to the worker.
- ``signals_as_interrupt()``: a context manager (main thread) under which SIGTERM does what SIGINT does at
  that moment (raises ``KeyboardInterrupt``, or calls whatever SIGINT handler a solve installed); its
  ``.signum`` says which signal came (the command line exits 128 + it: 130 for SIGINT, 143 for SIGTERM).

Layer 0: imports only the standard library (and ``errors``).
"""
from __future__ import annotations

import os
import pickle
import selectors
import signal
import subprocess
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

#: the worker's boot line: SIGINT ignored before anything else runs, then the worker loop
_BOOT = ("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
         "from bace_opt.procs import worker_main; worker_main()")

PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int | None = None) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux; elsewhere nothing).  If the parent
    ``parent_pid`` is already gone, exit at once."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)


def popen_group(cmd, **kwargs) -> subprocess.Popen:
    """``subprocess.Popen(cmd, **kwargs)`` in a new session (its own process group): a terminal's Ctrl-C does
    not reach it, ``kill_group`` ends it and everything it started."""
    kwargs.setdefault("start_new_session", True)
    return subprocess.Popen(cmd, **kwargs)


def kill_group(p: subprocess.Popen, sig: int = signal.SIGKILL, wait_s: float = 5.0) -> None:
    """Send ``sig`` to the process group of ``p`` (started by ``popen_group``) and reap ``p``."""
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        p.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        pass
    for f in (p.stdin, p.stdout, p.stderr):
        if f is not None:
            try:
                f.close()
            except OSError:
                pass


@contextmanager
def deferred_signals():
    """Hold SIGINT and SIGTERM back (main thread) until the block ends: a process started inside is always
    registered before an interrupt can unwind the caller.  Processes started inside inherit the blocked mask;
    ``worker_main`` and ``unblock_signals`` lift it in the child."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def unblock_signals() -> None:
    """In a child started under ``deferred_signals``: let SIGINT and SIGTERM through again."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def worker_main() -> None:
    """The body of a ``WorkerPool`` process: read (sys.path, fn, args) from stdin, write (ok, value) to the
    result descriptor named by argv[1]."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    unblock_signals()
    fd, parent = int(sys.argv[1]), int(sys.argv[2])
    die_with_parent(parent)
    stdin = sys.stdin.buffer
    try:
        path = pickle.load(stdin)
        sys.path[:0] = [p for p in path if p not in sys.path]
        fn, args = pickle.load(stdin)
    except BaseException:        # the parent stopped before sending the call: nothing to do, nothing to say
        os._exit(1)
    try:
        out: tuple[bool, Any] = (True, fn(*args))
    except BaseException as e:   # reported to the parent, which decides
        out = (False, f"{type(e).__name__}: {e}")
    try:
        data = pickle.dumps(out)
    except Exception as e:
        data = pickle.dumps((False, f"result not picklable: {type(e).__name__}: {e}"))
    with os.fdopen(fd, "wb") as f:
        f.write(data)


class _Call:
    def __init__(self, index: int, proc: subprocess.Popen, rfd: int):
        self.index, self.proc, self.rfd, self.buf = index, proc, rfd, bytearray()


class WorkerPool:
    """At most ``workers`` calls at once, each in a fresh process in its own session (module docstring)."""

    def __init__(self, workers: int, env: dict | None = None):
        self.workers = max(1, int(workers))
        self.env = env
        self.running: dict[int, _Call] = {}

    def _start(self, index: int, fn: Callable, args: tuple) -> _Call:
        payload = pickle.dumps(list(sys.path)) + pickle.dumps((fn, tuple(args)))
        with deferred_signals():   # registered before an interrupt can leave it unknown to close()
            rfd, wfd = os.pipe()
            try:
                proc = popen_group([sys.executable, "-c", _BOOT, str(wfd), str(os.getpid())],
                                   stdin=subprocess.PIPE, pass_fds=(wfd,), env=self.env)
            except BaseException:
                os.close(rfd)
                raise
            finally:
                os.close(wfd)
            call = _Call(index, proc, rfd)
            self.running[rfd] = call
        try:
            proc.stdin.write(payload)
            proc.stdin.close()
        except OSError:          # the worker died at once: its empty result says so
            pass
        return call

    def run(self, fn: Callable, items: Iterable[tuple]) -> Iterator[tuple[int, bool, Any]]:
        """Call ``fn(*item)`` for each item; yield ``(index, ok, value)`` as each call ends."""
        pending = list(enumerate(items))[::-1]
        sel = selectors.DefaultSelector()
        try:
            while pending or self.running:
                while pending and len(self.running) < self.workers:
                    i, item = pending.pop()
                    sel.register(self._start(i, fn, item).rfd, selectors.EVENT_READ)
                for key, _ in sel.select(timeout=1.0):
                    call = self.running[key.fd]
                    chunk = os.read(key.fd, 1 << 20)
                    if chunk:
                        call.buf += chunk
                        continue
                    sel.unregister(key.fd)
                    yield self._finish(call)
        finally:
            sel.close()
            self.close()

    def _finish(self, call: _Call) -> tuple[int, bool, Any]:
        del self.running[call.rfd]
        os.close(call.rfd)
        rc = call.proc.wait()
        # anything the call started and left behind goes with it
        try:
            os.killpg(call.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if call.buf:
            try:
                ok, value = pickle.loads(bytes(call.buf))
                return call.index, ok, value
            except Exception as e:
                return call.index, False, f"unreadable result ({type(e).__name__}: {e})"
        how = f"killed by signal {-rc}" if rc < 0 else f"exit code {rc}"
        return call.index, False, f"the worker process died ({how}) before returning a result"

    def close(self) -> None:
        """Kill every running call's process group (all at once, then reap them)."""
        calls = list(self.running.values())
        for c in calls:
            try:
                os.killpg(c.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for c in calls:
            kill_group(c.proc)
            try:
                os.close(c.rfd)
            except OSError:
                pass
        self.running.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _Received:
    signum: int | None = None


@contextmanager
def signals_as_interrupt():
    """Within the block (main thread only; elsewhere nothing changes), SIGTERM acts as SIGINT would at that
    moment.  Yields an object whose ``signum`` is ``signal.SIGTERM`` once a SIGTERM came (else None: a
    KeyboardInterrupt then came from SIGINT)."""
    got = _Received()
    if threading.current_thread() is not threading.main_thread():
        yield got
        return

    def on_term(signum, frame):
        got.signum = signum
        h = signal.getsignal(signal.SIGINT)
        if callable(h):
            h(signal.SIGINT, frame)
        else:    # SIG_DFL, or SIG_IGN (a background job of a shell without job control): a SIGTERM still stops
            raise KeyboardInterrupt

    try:
        old_term = signal.signal(signal.SIGTERM, on_term)
    except (ValueError, OSError):
        yield got
        return
    try:
        yield got
    finally:
        signal.signal(signal.SIGTERM, old_term)
