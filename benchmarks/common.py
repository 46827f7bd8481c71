"""What the benchmarks share: where the repository and the results folder are, the commit, the machine's load,
and writing a result.

Run every benchmark from the repository root as a module, e.g. ``python -m benchmarks.bench_evaluator``; that
is how ``benchmarks.common`` (and ``bace_opt`` from a checkout) is found, so no script edits ``sys.path``.
Results go through ``bace_opt.files`` (atomic replace, or an atomic append of CSV rows), never a bare write.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

import bace_opt as bo
from bace_opt.files import append_csv_rows, atomic_write

#: the repository root (the folder that holds ``benchmarks/``, ``instances/`` and ``bace_opt/``)
ROOT = Path(__file__).resolve().parents[1]
#: where the maintained benchmarks write; ``benchmarks/README.md`` cites every file kept there
RESULTS = ROOT / "benchmarks" / "results"


def git_commit(missing: str = "?") -> str:
    """The short commit of the checkout's HEAD, or ``missing`` when git cannot say (no git, not a checkout)."""
    try:
        r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                           text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return missing
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else missing


def load_1min() -> float:
    """The 1-minute load average, rounded to 0.01 (wall times scale with it on a shared machine)."""
    return round(os.getloadavg()[0], 2)


def load_line() -> str:
    """One line that says how loaded the machine is: load averages over 1, 5 and 15 minutes and the cores."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) on {os.cpu_count()} cores"


def write_result(path: Path, text: str) -> Path:
    """Replace ``path`` with ``text`` atomically (``bace_opt.files.atomic_write``); the folder is created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
    return path


def append_rows(path: Path, header: Sequence[str], rows: Iterable, **fmt) -> Path:
    """Append CSV ``rows`` under ``header`` to ``path`` atomically (``bace_opt.files.append_csv_rows``, which
    takes ``fmt``); the folder is created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    append_csv_rows(path, header, rows, **fmt)
    return path


# ---------------------------------------------------------------- instance families used by more than one script

CONTENDED_SPREAD_S = 1.0        # arrivals uniform over [0, spread * N] s
UNCONTENDED_SPREAD_S = 100.0


def contended_instance(n_jobs: int, spread_s_per_job: float = CONTENDED_SPREAD_S) -> bo.Instance:
    """The issue-15 family: ``generate random --seed 3 --regions 20 --max-gpus-per-region 64 --max-stages 16
    --hourly-prices --mixed-gpus --topology sparse`` with arrivals over [0, spread * N] s."""
    from bace_opt.builders.synthetic import random_instance
    return random_instance(3, n_regions=20, n_jobs=n_jobs, topology="sparse", hourly_prices=True, mixed_gpus=True,
                           max_gpus_per_region=64, max_stages=16, max_arrival_s=spread_s_per_job * n_jobs)


REALISTIC_REGIONS = ("aws:us-east-1", "aws:us-west-1", "aws:us-east-2", "aws:eu-central-1", "aws:ap-northeast-1",
                     "aws:ap-northeast-2", "aws:ap-southeast-1", "aws:ap-southeast-2")

#: the solvers suite's "large" random instances (bace_opt.bench.suites.SOLVER_SIZES), issue 11's 600 s target
RANDOM_LARGE = {"10r-24j": {"n_regions": 10, "n_jobs": 24, "max_gpus_per_region": 32, "max_stages": 12},
                "12r-32j": {"n_regions": 12, "n_jobs": 32, "max_gpus_per_region": 32, "max_stages": 12}}


def realistic(seed: int):
    """The issue-11 instance: as ``bace-opt generate realistic --regions <8 AWS> --jobs 16 --seed S --gpu-types
    A100-80GB,H100-80GB``, from the tables shipped with the package (the same bytes as from the raw data)."""
    from bace_opt.builders.realistic import realistic_instance
    return realistic_instance(None, REALISTIC_REGIONS, seed=seed, jobs=16,
                              gpu_mix=("A100-80GB", "H100-80GB"))
