"""Solver-neutral options and results (after OR-Tools MathOpt's SolveParameters / Termination).

``SolveResult`` separates *why the solver stopped* (``termination``) from *whether there is a solution*
(``has_solution``), and always carries the proven bound and the relative gap.  Adapters fill it; the exact
models turn the solution into ``JobPlan``s and let the evaluator price them.
"""
from __future__ import annotations

import math
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Mapping

import logging

log = logging.getLogger(__name__)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, which a container or ``taskset`` may narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):     # no affinity call on this platform
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class SolveOptions:
    time_limit_s: float | None = 60.0
    rel_gap: float = 1e-9            # proven-optimal means gap <= rel_gap (default: to the solver's tolerance)
    threads: int | None = 1          # None: every core available (``available_cores``)
    log: bool = False
    seed: int = 0
    backend_options: Mapping[str, Any] = field(default_factory=dict)  # passed through to the back end as-is


class Termination(str, Enum):
    OPTIMAL = "optimal"             # proven optimal (within rel_gap)
    FEASIBLE = "feasible"           # stopped with a solution, optimality not proven (limit or gap)
    INFEASIBLE = "infeasible"       # proven infeasible
    TIME_LIMIT = "time_limit"       # stopped at the limit without any solution
    ERROR = "error"                 # the back end failed; ``message`` says how


@dataclass
class SolveResult:
    solver: str
    termination: Termination
    objective: float | None = None        # incumbent objective (model units)
    bound: float | None = None            # proven dual bound (model units)
    values: Any = None                    # back-end specific: the variable values the model reads back
    build_s: float = 0.0
    solve_s: float = 0.0
    nodes: int | None = None
    message: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def has_solution(self) -> bool:
        return self.objective is not None and self.termination in (Termination.OPTIMAL, Termination.FEASIBLE)

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """|objective - bound| / max(|objective|, 1e-10); None when either is missing (HiGHS' definition)."""
    if objective is None or bound is None or not (math.isfinite(objective) and math.isfinite(bound)):
        return None
    return abs(objective - bound) / max(abs(objective), 1e-10)


# ---------------------------------------------------------------------- Ctrl-C

#: after Ctrl-C, how long to wait for the back end to stop on its own cancel before giving up on it (s)
INTERRUPT_GRACE_S = 3.0
#: solver threads left running after Ctrl-C (their back end did not stop in time); the command line then
#: exits at once (``os._exit``) rather than wait for them or let the interpreter tear down under them
ABANDONED: list[str] = []


#: per thread, set by a race member (bace_opt.exact.p1.race): a callable that turns true when the running solve's
#: answer is no longer needed (another member proved the same level, or the race is over).  ``run_interruptible``
#: polls it beside the Ctrl-C flag and then calls the back end's cancel and returns whatever the back end returns
#: (no KeyboardInterrupt).
_EXTERNAL = threading.local()


def set_external_stop(poll: Callable[[], bool] | None) -> None:
    """Install (or, with None, remove) the calling thread's external-stop poll (see ``_EXTERNAL``)."""
    _EXTERNAL.poll = poll


def run_interruptible(solve: Callable[[], Any], stop: Callable[[], None]) -> Any:
    """Run ``solve()`` so that Ctrl-C stops it within seconds, whatever the back end.

    Our reading (docs/decisions.md, "Interrupts"): Ctrl-C means *abort*.  The solve runs in a worker thread
    while the main thread waits; a SIGINT calls ``stop`` (the back end's own cancel: CP-SAT's
    ``StopSearch``, MathOpt's ``SolveInterrupter``, HiGHS' ``cancelSolve``) and, once the solver has
    returned (or after ``INTERRUPT_GRACE_S``), raises ``KeyboardInterrupt``: no result, so no output file;
    the command line exits 130.  Back ends that catch SIGINT themselves and return a weaker result as if
    nothing happened (CP-SAT) are therefore consistent with the others.  Outside the main thread (where no
    signal handler can be set) only the thread's external stop (``set_external_stop``) is watched, and
    without one ``solve()`` is simply called."""
    from .. import clock
    with clock.cancel_at_deadline(stop):       # the command's deadline: the back end returns what it has
        return _run_interruptible(solve, stop)


def _run_interruptible(solve: Callable[[], Any], stop: Callable[[], None]) -> Any:
    main = threading.current_thread() is threading.main_thread()
    external = getattr(_EXTERNAL, "poll", None)
    if not main and external is None:
        return solve()
    box: dict[str, Any] = {}

    def work():
        try:
            box["result"] = solve()
        except BaseException as e:  # handed to the caller below
            box["error"] = e

    hit: list[float] = []

    def on_sigint(signum, frame):
        if not hit:
            hit.append(time.monotonic())
            try:
                stop()
            except Exception:   # a cancel that fails must not hide the interrupt
                pass

    old = None
    if main:
        try:
            old = signal.signal(signal.SIGINT, on_sigint)
        except ValueError:          # not allowed here (e.g. an embedded interpreter)
            if external is None:
                return solve()
            main = False
    try:
        t = threading.Thread(target=work, name="bace-opt-solve", daemon=True)
        t.start()
        log.info("solver running (Ctrl-C aborts)")
        cancelled = False
        while t.is_alive():
            t.join(0.05)
            if hit and time.monotonic() - hit[0] > INTERRUPT_GRACE_S:
                break
            if external is not None and not cancelled and not hit and external():
                cancelled = True        # not an abort: the back end returns what it has, the caller decides
                log.info("solve no longer needed: cancelling the back end")
                try:
                    stop()
                except Exception:
                    pass
    finally:
        if main:
            signal.signal(signal.SIGINT, old)
    if hit:
        if t.is_alive():
            ABANDONED.append(t.name)
        log.info("interrupted: the solver %s %.2f s after Ctrl-C", "stopped" if not t.is_alive() else
                 "is still running (abandoned)", time.monotonic() - hit[0])
        raise KeyboardInterrupt
    if "error" in box:
        raise box["error"]
    return box["result"]
