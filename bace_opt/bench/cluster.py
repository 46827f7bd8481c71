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
"""
from __future__ import annotations

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


@contextmanager
def dask_client(address: str, workers: int):
    """A ``distributed.Client`` on ``address`` (``"local"``: a LocalCluster of our own); see module doc."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise InputError("--dask needs dask[distributed] (pip install 'dask[distributed]')") from None
    host = None
    if address == "local":
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
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
    try:
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
