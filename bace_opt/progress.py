"""Progress lines of long work (issue 42 item 3): the P2 search's best schedule and lower bound, the P1 solve's
bound and incumbent, stage by stage.

Every line goes to a ``bace_opt.progress.<what>`` logger at INFO: standard error only, never standard output.
The command line shows them with ``-v``, and on a terminal without it (``cli.main.configure_logging`` sets
``bace_opt.progress`` to INFO there); ``-q`` silences them.  Each line carries the command's clock
(``clock.wall_s``) and the time left of its deadline.  A program that configures logging itself sees them at
INFO, like every ``bace_opt`` log.
"""
from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from typing import Iterator

from . import clock
from ._format import short

#: the parent of every progress logger (``cli.main.configure_logging`` enables it on a terminal)
ROOT = "bace_opt.progress"
#: a moving figure (a search's best) is told at most this often, s; a stage line always
EVERY_S = 1.0


def logger(what: str) -> logging.Logger:
    return logging.getLogger(f"{ROOT}.{what}")


def when(deadline: clock.Deadline | None = None) -> str:
    """``[12.3 s in, 47.7 s left]``: the command's clock and what is left of its deadline (the one in force, or
    ``deadline``: a thread sees none of its own)."""
    left = clock.left() if deadline is None else deadline.left()
    return f"[{short(clock.wall_s(), 's')} in" + ("]" if math.isinf(left) else f", {short(left, 's')} left]")


def value(v: float | None, unit: str = "s") -> str:
    return "none" if v is None or not math.isfinite(v) else short(v, unit)


class Moving:
    """The lines of one figure that moves as a search runs (``tell``): a line when it improves, at most every
    ``every_s`` s; the last improvement held back is told by ``flush`` (at the stage's end)."""

    def __init__(self, log: logging.Logger, label: str, every_s: float = EVERY_S):
        self.log, self.label, self.every_s = log, label, every_s
        self.last = -math.inf
        self.pending: str | None = None

    def tell(self, text: str, force: bool = False) -> None:
        if not self.log.isEnabledFor(logging.INFO):
            return
        now = time.monotonic()
        if force or now - self.last >= self.every_s:
            self.log.info("%s: %s %s", self.label, text, when())
            self.last, self.pending = now, None
        else:
            self.pending = text

    def flush(self) -> None:
        if self.pending is not None:
            self.tell(self.pending, force=True)


#: a long stage with nothing to tell (a model's build) says it is still running this often, s
HEARTBEAT_S = 5.0


@contextlib.contextmanager
def heartbeat(log: logging.Logger, what: str, every_s: float = HEARTBEAT_S) -> Iterator[None]:
    """A line every ``every_s`` s while the block runs (``what``: still running after N s), from a thread of its
    own: a long Python stage (a model's build) is not silent for minutes.  Nothing when ``log`` shows nothing."""
    if not log.isEnabledFor(logging.INFO):
        yield
        return
    done, t0, deadline = threading.Event(), time.perf_counter(), clock.current()

    def beat():
        while not done.wait(every_s):
            log.info("%s: still running after %s %s", what, short(time.perf_counter() - t0, "s"), when(deadline))

    th = threading.Thread(target=beat, name="bace-opt-heartbeat", daemon=True)
    th.start()
    try:
        yield
    finally:
        done.set()
        th.join()
