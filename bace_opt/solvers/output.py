"""Where the solvers' own output goes: never to standard output, which is a command's result (``--json`` prints
JSON alone there, and a script parses it).

* HiGHS prints a banner ("Running HiGHS 1.16.0 ... Copyright ...") from C, on file descriptor 1, once per process:
  when the first ``highspy.Highs`` object is made (highspy 1.16 sets its callback in the constructor, with
  output on, before any option can be set).  ``quiet_highs_banner`` makes that first object with descriptor 1
  pointed at the null device, so no later one prints it.  ``bace_opt.solvers`` calls it when imported: every
  module of bace_opt that makes a HiGHS object imports it first.
* A solver's log (``SolveOptions.log``: ``solve --log``) goes to standard error, line by line, through
  ``to_stderr``: CP-SAT's log callback, HiGHS's logging callback, MathOpt's message callback, the Pyomo HiGHS
  interface's output logger (``stderr_logger``).  Without it the logs go nowhere, except that ``-vv`` shows the
  Pyomo HiGHS interface's log through the logging module (on standard error).
"""
from __future__ import annotations

import logging
import os
import sys
import threading

_LOCK = threading.Lock()
_DONE: list[bool] = []


def quiet_highs_banner() -> None:
    """Make the process's first ``highspy.Highs`` object with descriptor 1 on the null device (module doc), once.

    Only what C code writes to descriptor 1 in that moment is lost (Python's buffered ``sys.stdout`` is not
    flushed, so nothing it holds is).  Without highspy, or with descriptor 1 closed, nothing is redirected."""
    with _LOCK:
        if _DONE:
            return
        _DONE.append(True)
        try:
            import highspy
        except ImportError:       # no HiGHS: no banner
            return
        try:
            saved = os.dup(1)
        except OSError:           # descriptor 1 closed: the banner goes nowhere anyway
            highspy.Highs()
            return
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, 1)
                highspy.Highs()
            finally:
                os.dup2(saved, 1)
                os.close(null)
        finally:
            os.close(saved)


def to_stderr(text: str, newline: bool = True) -> None:
    """Write a solver's log text to standard error (the stream current at the call), with a newline at its end
    unless it has one or ``newline`` is false (HiGHS's messages carry their own)."""
    err = sys.stderr
    if err is None or not text:
        return
    try:
        err.write(text if (text.endswith("\n") or not newline) else text + "\n")
        err.flush()
    except (OSError, ValueError):   # a closed stderr must not break a solve
        pass


def highs_log_to_stderr(h) -> None:
    """A highspy object's log to standard error instead of the console (standard output): its ``output_flag``
    is the caller's; this only moves where the lines go."""
    h.setOptionValue("log_to_console", False)
    h.cbLogging += lambda e: to_stderr(e.message, newline=False)


def stderr_logger() -> logging.Logger:
    """A logger for the Pyomo HiGHS interface's log when ``SolveOptions.log`` is set: the lines as they are, on
    standard error, whatever the logging configuration.  A new one per solve, outside the logging hierarchy
    (nothing propagates; solves in parallel threads do not share it), whose handler is a plain
    ``StreamHandler`` on ``sys.stderr``: the interface captures descriptors 1 and 2 while it solves, and points
    such handlers back at the real standard error (pyomo.common.tee.capture_output)."""
    lg = logging.Logger("bace_opt.solver_output", logging.INFO)
    h = logging.StreamHandler(sys.stderr)
    h.setFormatter(logging.Formatter("%(message)s"))
    lg.addHandler(h)
    return lg
