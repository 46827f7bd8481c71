"""One gate for every call into a policy and every plan it returns (issue 36).

Every path that runs a policy -- the simulator, the decision epoch of ``gap`` and of the bench's ``p1-heur``
rows, the adversary -- calls it through a ``PolicyRunner`` and nothing else, so that a policy is judged by the
same rules, in the same words, wherever it runs:

* **A read-only view of the arrived jobs.**  The policy sees ``runner.view`` (``policies.view.InstanceView``):
  every resource of the instance, known from the start, and only the jobs that have arrived, appended by
  ``arrive`` when they do (a decision at ``t`` cannot depend on a job arriving after ``t``: docs/policies.md,
  "What a policy may know").  Its jobs, regions, links, GPU types, prices and objective are frozen views that
  refuse a write, ``object.__setattr__`` included, so nothing is fingerprinted: a refused write is named
  ``instance modified``, and after every call ``InstanceView.intact`` checks in O(1) that the view's own fields
  were not rebound.  Every plan is checked and priced against the instance as loaded, which the policy never
  holds.  Nothing here costs more with more jobs.
* **Every plan checked** (``check_decision``): the return value is a list or tuple of ``JobPlan`` (None starts
  nothing); each plan is for a known job the policy may start now, once; status ``done``, ``start_s`` equal to the
  event time; the evaluator's rule 1 (``evaluate.check_plan``: blocks, stages, regions, routes); and the GPUs and
  the summed Gbit/s of all its hops fit what is free after the plans before it.  The plan is rebuilt from its
  fields, so nothing the policy does to the object afterwards changes what was checked.
* **The policy's failure is the policy's** (``PolicyRunner.call``): an exception, ``SystemExit`` or a
  ``KeyboardInterrupt`` that no signal caused, raised inside the policy, becomes a ``PolicyError`` that names the
  policy, where it came from (``policy_origin``), the event time, what it was asked and the frames of its own
  code.  A real Ctrl-C or SIGTERM (recorded by a handler the runner chains in front of the existing one, main
  thread only) stays a ``KeyboardInterrupt``, also when the policy swallowed it: the runner raises it again as
  soon as the policy returns.
* **A limit on one call's time** (``decision_time_limit_s``, default ``DECISION_TIME_LIMIT_S``): a watchdog
  thread raises ``PolicyTimeout`` inside the policy's thread when a call runs past the limit (and a
  ``KeyboardInterrupt`` while a real signal is pending), every ``RETRY_S`` seconds.  A policy that swallows
  those or blocks in C code cannot keep the process alive: after ``GRACE_S`` more seconds, where the CLI allowed
  it (``allow_hard_exit``), the watchdog prints one line naming the policy and ends the process (exit 2, or
  128 + the signal).  Inside a library call (a notebook) it only logs, since ending the process would end the
  user's kernel.

A violation's message: ``policy 'NAME' (ORIGIN) at t=T s, job 'J': RULE: DETAIL``.
"""
from __future__ import annotations

import copy
import ctypes
import dataclasses
import itertools
import logging
import math
import numbers
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable, Container, Sequence

from ..evaluate import check_plan
from ..instance import Instance, Job
from ..schedule import Block, Hop, JobPlan
from .base import ClusterState, PolicyError
from .view import InstanceView, refused_write

log = logging.getLogger(__name__)
_get_ident, _monotonic = threading.get_ident, time.monotonic

#: the default limit on one call into a policy, seconds (``exact-p1`` solves P1 up to three times a decision,
#: 60 s each by default, well inside it); ``$BACE_OPT_DECISION_TIME_LIMIT_S`` overrides it for the process and the
#: worker processes it starts (the CLI's ``--decision-time-limit`` sets it)
DECISION_TIME_LIMIT_S = 300.0
DECISION_LIMIT_ENV = "BACE_OPT_DECISION_TIME_LIMIT_S"
#: after the limit (or a signal) the watchdog retries its exception this often, and ends the process (CLI only)
#: this long after the first try
RETRY_S = 0.5
GRACE_S = 5.0

_HARD_EXIT = False


def allow_hard_exit(on: bool = True) -> None:
    """Let the watchdog end the process when a policy cannot be stopped otherwise (the CLI calls this; a
    library caller's process, a notebook kernel, is never ended)."""
    global _HARD_EXIT
    _HARD_EXIT = bool(on)


class PolicyTimeout(BaseException):
    """Raised inside a policy's thread by the watchdog (a ``BaseException``, so ``except Exception`` in the
    policy does not swallow it)."""


# ---------------------------------------------------------------------- naming
def policy_origin(pol: Any) -> str:
    """Where a policy's code comes from: "shipped with bace_opt", "PKG VERSION" (an installed package), or the
    file of a policy loaded by path."""
    fn = getattr(pol, "decide", None)
    owner = getattr(fn, "__self__", pol)
    cls = type(owner)
    modname = getattr(fn, "__module__", None) or cls.__module__
    if modname == "bace_opt" or modname.startswith("bace_opt."):
        return "shipped with bace_opt"
    mod = sys.modules.get(modname)
    where = getattr(mod, "__file__", None)
    if modname.startswith("bace_opt_user_policies.") and where:
        return f"{cls.__qualname__} from {where}"
    top = modname.split(".")[0]
    try:
        from importlib.metadata import packages_distributions, version
        dists = packages_distributions().get(top) or []
        if dists:
            return f"{cls.__qualname__} from package {dists[0]} {version(dists[0])}"
    except Exception:          # metadata of a broken environment: the module name is enough
        pass
    return f"{cls.__qualname__} from {modname}" + (f" ({where})" if where else "")


def policy_name(pol: Any) -> str:
    name = getattr(pol, "name", None)
    return name if isinstance(name, str) else type(pol).__name__


def violation(label: str, now: float, rule: str, detail: str, job: str | None = None) -> PolicyError:
    """The one wording of a policy's fault: ``policy 'NAME' (ORIGIN) at t=T s, job 'J': RULE: DETAIL``."""
    where = f"{label} at t={now:g} s" + (f", job {job!r}" if job is not None else "")
    return PolicyError(f"{where}: {rule}: {detail}")


def own_frames(e: BaseException) -> str:
    """The traceback frames of ``e`` outside bace_opt (the policy's own code), formatted; '' when none."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tb = traceback.extract_tb(e.__traceback__) if e.__traceback__ is not None else []
    own = [f for f in tb if not os.path.abspath(f.filename).startswith(pkg + os.sep)]
    return "".join(traceback.format_list(own)).rstrip()


# ---------------------------------------------------------------------- the instance the policy sees
def private_copy(inst: Instance) -> Instance:
    """A deep copy of ``inst``'s fields as a new ``Instance`` (none of the caches of the original).  Not what a
    policy is handed (``InstanceView``); kept for callers that want a copy of their own."""
    fields = {f.name: copy.deepcopy(getattr(inst, f.name)) for f in dataclasses.fields(inst)}
    return type(inst)(**fields)


def fingerprint(inst: Instance) -> int:
    """A hash of every field a plan is checked or priced against (``meta`` is free text, read by no check): O(jobs),
    so never taken per decision (the view a policy is handed is read-only instead)."""
    return hash((inst.name, inst.reference_gpu, tuple(inst.gpu_types.items()), inst.regions, inst.links,
                 inst.jobs, inst.objective, inst.optical))


def decision_limit(value: float | None = None) -> float:
    """The limit on one call into a policy: ``value``, else ``$BACE_OPT_DECISION_TIME_LIMIT_S``, else
    ``DECISION_TIME_LIMIT_S``; ``InputError`` naming where it came from unless it is a number > 0."""
    from ..errors import InputError
    where, raw = "decision_time_limit_s", value
    if value is None:
        where, raw = DECISION_LIMIT_ENV, os.environ.get(DECISION_LIMIT_ENV)
        if raw is None:
            return DECISION_TIME_LIMIT_S
    try:
        lim = float(raw)
    except (TypeError, ValueError):
        lim = math.nan
    if isinstance(raw, bool) or not (lim > 0 and not math.isnan(lim)):
        raise InputError(f"{where}: the limit on one policy call must be a number of seconds > 0, got {raw!r}")
    return lim


# ---------------------------------------------------------------------- plans
def _shape(label: str, now: float, out: Any) -> list:
    if out is None:
        return []
    if not isinstance(out, (list, tuple)):
        raise violation(label, now, "wrong return type",
                        f"decide must return a list of JobPlan, got {type(out).__name__}")
    for i, p in enumerate(out):
        if not isinstance(p, JobPlan):
            raise violation(label, now, "wrong return type",
                            f"decide must return a list of JobPlan; item {i} is {type(p).__name__}")
    return list(out)


def _clean(label: str, now: float, p: JobPlan) -> JobPlan:
    """``p`` rebuilt from plain values (so later changes to the policy's object do not matter), or the
    violation naming the field of the wrong type."""
    def bad(field, what):
        return violation(label, now, "malformed plan", f"{field}: {what}", job=p.name if isinstance(p.name, str)
                         else None)
    if not isinstance(p.name, str):
        raise violation(label, now, "malformed plan", f"name must be a string, got {type(p.name).__name__}")
    if not isinstance(p.status, str):
        raise bad("status", f"must be a string, got {type(p.status).__name__}")
    start = p.start_s
    if start is not None and (isinstance(start, bool) or not isinstance(start, numbers.Real)):
        raise bad("start_s", f"must be a number, got {type(start).__name__}")
    blocks, hops = [], []
    for i, b in enumerate(p.blocks):
        if not (isinstance(b, Block) and isinstance(b.region, str) and (type(b.stages) is int or (
                isinstance(b.stages, numbers.Integral) and not isinstance(b.stages, bool)))):
            raise bad(f"blocks[{i}]", "must be Block(region: str, stages: int)")
        blocks.append(Block(str(b.region), int(b.stages)))
    for i, h in enumerate(p.hops):
        w = h.reserved_gbps if isinstance(h, Hop) else None
        if not (isinstance(h, Hop) and all(isinstance(r, str) for r in h.route)
                and (type(w) is float or (isinstance(w, numbers.Real) and not isinstance(w, bool)))):
            raise bad(f"hops[{i}]", "must be Hop(route: tuple of region names, reserved_gbps: number)")
        hops.append(Hop(tuple(str(r) for r in h.route), float(w)))
    return JobPlan(str(p.name), str(p.status), None if start is None else float(start), tuple(blocks), tuple(hops))


def check_start(inst: Instance, label: str, now: float, p: JobPlan, allowed: Container[str],
                started: set[str], state: ClusterState) -> Job:
    """The rules one plan meets to start now on ``state`` (the resources left by the plans before it); the
    job it starts.  ``p`` must be clean (``_clean``)."""
    job = inst.job_index.get(p.name)
    if job is None:
        raise violation(label, now, "unknown job", f"instance {inst.name!r} has no job {p.name!r}", job=p.name)
    job = inst.jobs[job]
    if p.name in started:
        raise violation(label, now, "duplicate plan", "the decision starts this job twice", job=p.name)
    if p.name not in allowed:
        raise violation(label, now, "not waiting", "the job is not one the policy may start now", job=p.name)
    if p.status != "done":
        raise violation(label, now, "status", f"a plan to start must have status 'done', got {p.status!r}",
                        job=p.name)
    if p.start_s is None or p.start_s != now:
        raise violation(label, now, "start time", f"start_s must be the event time {now!r}, got {p.start_s!r}",
                        job=p.name)
    v = check_plan(inst, p)
    if v:
        raise violation(label, now, "invalid plan", "; ".join(map(str, v)), job=p.name)
    why = state.fits(job, p)
    if why is not None:
        raise violation(label, now, "over-commits", why, job=p.name)
    return job


def check_decision(inst: Instance, label: str, now: float, out: Any, allowed: Container[str],
                   state: ClusterState) -> list[tuple[Job, JobPlan]]:
    """Every plan of one decision checked in order against the resources the plans before it left
    (``state``: the free resources at ``now``, on the instance as loaded); the (job, clean plan) pairs."""
    plans = _shape(label, now, out)
    if not plans:
        return []
    res = state.copy()
    started: set[str] = set()
    ok = []
    for p in plans:
        p = _clean(label, now, p)
        job = check_start(inst, label, now, p, allowed, started, res)
        res.commit(job, p, checked=True)
        started.add(p.name)
        ok.append((job, p))
    return ok


# ---------------------------------------------------------------------- calls
class PolicyRunner:
    """Calls into one policy for one run (module doc).  Use as a context manager around the run::

        with PolicyRunner(pol, inst) as run:
            queue = [run.arrive(n) for n in ("a", "b")]      # the jobs arrived: appended to run.view
            state = ClusterState.empty(run.view, now)
            out = run.call(pol.decide, now, "deciding on jobs 'a', 'b'", now, queue, state)
    """

    def __init__(self, pol: Any, inst: Instance, decision_time_limit_s: float | None = None):
        self.pol = pol
        self.inst = inst
        self.view = InstanceView.of(inst)        # the resources; each job is appended when it arrives
        self.name = policy_name(pol)
        self.label = f"policy {self.name!r} ({policy_origin(pol)})"
        self.limit_s = decision_limit(decision_time_limit_s)
        self.signalled: int | None = None
        self._lock = threading.Lock()
        self._call: tuple[int, float, float, str] | None = None      # (thread id, started, event time, what)
        self._sent = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._old: dict[int, Any] = {}

    def arrive(self, name: str) -> Job:
        """Job ``name`` has arrived: appended to the policy's view; its read-only ``Job`` there."""
        return self.view.arrive(self.inst.job(name), self.inst.job_index[name])

    def view_job(self, name: str) -> Job:
        """The policy's read-only ``Job`` of an arrived job."""
        return self.view.job(name)

    # -------------------------------------------------------------- context
    def __enter__(self) -> "PolicyRunner":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    prev = signal.getsignal(sig)
                    self._old[sig] = prev
                    signal.signal(sig, self._handler(prev))
                except (ValueError, OSError, TypeError):
                    self._old.pop(sig, None)
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for sig, prev in self._old.items():
            try:
                signal.signal(sig, prev)
            except (ValueError, OSError, TypeError):
                pass
        self._old.clear()

    def _handler(self, prev) -> Callable:
        def on_signal(signum, frame):
            if self.signalled is None:
                self.signalled = signum
            if callable(prev):
                return prev(signum, frame)
            if prev == signal.SIG_IGN:
                return None
            raise KeyboardInterrupt
        return on_signal

    # -------------------------------------------------------------- one call
    def call(self, fn: Callable, now: float, what: str, *args) -> Any:
        """``fn(*args)`` (a member of the policy or of its queue session) under the guard (module doc).  The
        simulator makes several calls per event: ``_begin`` and ``_end`` are inlined."""
        lock = self._lock
        with lock:
            self._call = (_get_ident(), _monotonic(), now, what)
            self._sent = False
        if self._thread is None:
            self._watchdog()
        try:
            try:
                out = fn(*args)
            finally:
                with lock:
                    call, self._call = self._call, None
                    if self._sent:
                        if call is not None:
                            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(call[0]), None)
                        self._sent = False
        except PolicyTimeout:
            self._end()
            if self.signalled is not None:
                raise KeyboardInterrupt from None
            raise violation(self.label, now, "time limit",
                            f"{what} did not return within {self.limit_s:g} s (decision_time_limit_s)") from None
        except PolicyError:
            raise
        except AttributeError as e:
            self._end()
            if refused_write(e):
                raise violation(self.label, now, "instance modified",
                                f"the policy wrote to what it was handed while {what} ({e}; the instance, its jobs "
                                "and resources are read-only)") from None
            raise self._failed(now, what, e) from e
        except KeyboardInterrupt as e:
            self._end()
            if self.signalled is not None:
                raise
            raise self._failed(now, what, e) from None
        except (Exception, SystemExit) as e:
            self._end()
            from ..errors import BaceOptError
            if isinstance(e, BaceOptError) and not own_frames(e):
                raise        # said on purpose by bace_opt itself (a missing solver): its own message
            raise self._failed(now, what, e) from e
        if self.signalled is not None:        # the policy swallowed a real Ctrl-C or SIGTERM
            raise KeyboardInterrupt
        if self.view.intact() is not None:
            self.untouched(now, what)
        return out

    def _failed(self, now: float, what: str, e: BaseException) -> PolicyError:
        frames = own_frames(e)
        err = PolicyError(f"{self.label} at t={now:g} s: raised {type(e).__name__} while {what}"
                          + (f": {e}" if str(e) else ""))
        if frames:
            err = PolicyError(f"{err}\npolicy traceback (most recent call last):\n{frames}")
        return err

    def untouched(self, now: float, what: str) -> None:
        """Raise the policy's error if its view's own fields were rebound (``InstanceView.intact``, O(1); its
        values refuse writes).  ``call`` checks it after every call."""
        why = self.view.intact()
        if why is not None:
            raise violation(self.label, now, "instance modified",
                            f"the instance the policy was given changed while {what}: {why} (policies must not "
                            "write to it; it is checked after every call)")

    # -------------------------------------------------------------- the watchdog
    def _begin(self, now: float, what: str) -> None:
        with self._lock:
            self._call = (_get_ident(), _monotonic(), now, what)
            self._sent = False
        if self._thread is None:
            self._watchdog()

    def _watchdog(self) -> None:
        self._thread = threading.Thread(target=self._watch, name="bace-opt-policy-watchdog", daemon=True)
        self._thread.start()

    def _end(self) -> None:
        with self._lock:
            call, self._call = self._call, None
            if call is not None and self._sent:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(call[0]), None)
            self._sent = False

    def _watch(self) -> None:
        first: float | None = None
        while not self._stop.wait(RETRY_S):
            with self._lock:
                call = self._call
                if call is None:
                    first = None
                    continue
                tid, t0, now, what = call
                late = time.monotonic() - t0 > self.limit_s
                if not (late or self.signalled is not None):
                    first = None
                    continue
                exc = KeyboardInterrupt if self.signalled is not None else PolicyTimeout
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), ctypes.py_object(exc))
                self._sent = True
                first = first if first is not None else time.monotonic()
            if time.monotonic() - first >= GRACE_S:
                self._give_up(now, what)
                first = time.monotonic() + 3600.0      # log once an hour in a library process

    def _give_up(self, now: float, what: str) -> None:
        why = ("did not stop after the interrupt" if self.signalled is not None
               else f"did not return within {self.limit_s:g} s (decision_time_limit_s)")
        msg = f"{self.label} at t={now:g} s: {what} {why}, and ignored being stopped"
        if not _HARD_EXIT:
            log.error("%s; it is still running", msg)
            return
        code = 2 if self.signalled is None else 128 + int(self.signalled)
        try:
            sys.stderr.write(f"bace-opt: error: {msg}; ending the process\n")
            sys.stderr.flush()
        finally:
            os._exit(code)


def describe_jobs(names: Sequence[str], k: int = 5) -> str:
    """``job 'a'`` or ``jobs 'a', 'b' and 3 more``: what a decision was asked about (``names``: a sequence or a
    dict of names; reads the first ``k`` only, so a long queue costs nothing)."""
    n = len(names)
    head = ", ".join(repr(x) for x in itertools.islice(names, k))
    if n == 1:
        return f"job {head}"
    return f"jobs {head}" + (f" and {n - k} more" if n > k else "")


class Described:
    """What a call is about (``describe_jobs``), worded only when a message needs it: an event's queue can be long
    and the words are read only on a failure."""

    __slots__ = ("verb", "names", "tail")

    def __init__(self, verb: str, names: Sequence[str], tail: str = ""):
        self.verb, self.names, self.tail = verb, names, tail

    def __str__(self) -> str:
        return f"{self.verb} {describe_jobs(self.names)}{self.tail}"


def epoch_plans(inst: Instance, pol: Any, t0: float, names: Sequence[str],
                decision_time_limit_s: float | None = None) -> tuple[list[JobPlan], float, float]:
    """One decision of the policy object ``pol`` at ``t0`` on the jobs ``names`` with every resource free,
    through the gate (``PolicyRunner``, ``check_decision``): (the plans it starts, wall s, CPU s of the
    decision).  A broken rule, an exception or a call past ``decision_time_limit_s`` is the policy's
    ``PolicyError``."""
    asked = set(names)
    with PolicyRunner(pol, inst, decision_time_limit_s) as guard:
        # the view holds the jobs arrived by t0 (and those asked about), in arrival order
        for j in sorted(inst.jobs, key=lambda j: (j.arrival_s, inst.job_index[j.name])):
            if j.arrival_s <= t0 or j.name in asked:
                guard.arrive(j.name)
        queue = [guard.view_job(n) for n in names]
        state = ClusterState.empty(guard.view, t0)
        what = f"deciding on {describe_jobs(names)}"
        t, c = time.perf_counter(), time.process_time()
        out = guard.call(pol.decide, t0, what, t0, queue, state)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        ok = check_decision(inst, guard.label, t0, out, frozenset(names), ClusterState.empty(inst, t0))
    return [p for _, p in ok], wall, cpu
