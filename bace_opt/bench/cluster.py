"""Dask for the batch runners (``bench --dask``, ``adversary --dask``): a client that is refused within seconds
when its scheduler cannot be reached, and a LocalCluster that never outlives the command.

``dask_client(address, workers)`` is a context manager yielding a ``distributed.Client``:

- ``address == "local"``: a LocalCluster of ``workers`` worker processes, started in a helper process of its
  own session (``procs.popen_group``): a terminal's Ctrl-C never reaches its nannies and workers (no
  traceback from them), and leaving the block, normally or by Ctrl-C / SIGTERM, kills the whole group at
  once (``procs.kill_group``), so no worker keeps running.  The helper gets the parent's ``sys.path``, so a
  task function the parent can import, its workers can import too.
- any other address: an existing scheduler, reached within ``CONNECT_TIMEOUT_S`` or refused with an
  ``InputError`` naming the address (exit 2).  Its workers are not ours: leaving the block cancels our
  futures and closes the client.

A scheduler that dies mid-batch is the caller's to report, in one message (``runner.ClusterLost``): while the
client is ours, the tracebacks Dask logs when the client's connection breaks and its reconnection fails
(``NOISY_LOGGERS``) are dropped (``_ConnectionNoise``), and so is the leaked-semaphore warning of a killed
LocalCluster's resource tracker.
"""
from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from contextlib import contextmanager

from ..errors import InputError
from ..procs import deferred_signals, kill_group, popen_group

#: seconds to reach a Dask scheduler (or to start a local one: ``LOCAL_START_S``) before giving up
CONNECT_TIMEOUT_S = 5
LOCAL_START_S = 120

_HOST = """
import logging, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
from bace_opt.procs import die_with_parent, unblock_signals
unblock_signals()
die_with_parent(int(sys.argv[2]))
level = int(sys.argv[3])     # the parent's verbosity for Dask (-vv: its INFO lines), set as the CLI sets it
logging.basicConfig(format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr, level=level)
from dask.distributed import LocalCluster
logging.getLogger("distributed").setLevel(level)
cluster = LocalCluster(n_workers=int(sys.argv[1]), threads_per_worker=1, processes=True, dashboard_address=None)
print(cluster.scheduler_address, flush=True)
sys.stdin.read()       # until the parent closes it or dies
"""


#: Dask's loggers whose tracebacks of a broken connection the caller reports in its own words
NOISY_LOGGERS = ("distributed.client", "distributed.core", "distributed.utils")


class _ConnectionNoise(logging.Filter):
    """Drops a log record that carries the traceback of a broken connection (the scheduler is gone), and the
    client's "Failed to reconnect to scheduler after 120 s" (said at once when we close it, and wrong then)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, (OSError, TimeoutError, asyncio.CancelledError)):
            return False
        return not str(record.msg).startswith("Failed to reconnect to scheduler")


@contextmanager
def dask_client(address: str, workers: int):
    """A ``distributed.Client`` on ``address`` (``"local"``: a LocalCluster of our own); see module doc."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise InputError("--dask needs dask[distributed] (pip install 'dask[distributed]')") from None
    host = None
    if address == "local":
        # a killed cluster's resource tracker would warn of its leaked semaphores: nothing of the user's
        quiet = "ignore:resource:UserWarning"   # the message starts so (a prefix: see warnings.filterwarnings)
        warn = os.environ.get("PYTHONWARNINGS")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
                   PYTHONWARNINGS=f"{warn},{quiet}" if warn else quiet)
        level = logging.getLogger("distributed").getEffectiveLevel()
        try:
            with deferred_signals():    # host known before an interrupt can unwind us
                host = popen_group([sys.executable, "-c", _HOST, str(max(1, workers)), str(os.getpid()),
                                    str(level)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
            address = host.stdout.readline().strip()
            if not address:
                raise InputError("--dask local: the local Dask cluster did not start (see the messages above)")
        except BaseException:
            if host is not None:
                kill_group(host)
            raise
    client = None
    noise = _ConnectionNoise()
    try:
        for name in NOISY_LOGGERS:
            logging.getLogger(name).addFilter(noise)
        try:
            client = Client(address, timeout=CONNECT_TIMEOUT_S if host is None else LOCAL_START_S)
        except (OSError, TimeoutError, ValueError) as e:
            raise InputError(f"--dask {address}: cannot reach the Dask scheduler within {CONNECT_TIMEOUT_S} s "
                             f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no answer'})") from None
        yield client
    finally:
        if client is not None:
            try:
                client.close(timeout=2)
            except Exception:
                pass
        if host is not None:
            kill_group(host)
        for name in NOISY_LOGGERS:
            logging.getLogger(name).removeFilter(noise)
