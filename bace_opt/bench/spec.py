"""What a benchmark run is and what its row holds: ``RunSpec`` (suite, family, size, seed, instance arguments,
method, method arguments; ``run_id`` is a hash of it) and the results file's ``COLUMNS``.

Timing and memory columns (``build_s``, ``solve_s``, ``wall_s``, ``peak_mem_mb``) vary between runs;
``DETERMINISTIC_COLUMNS`` are the ones two runs of the same spec must agree on.  The suites (``suites``) make
specs, the tasks (``tasks``) execute one, the runner (``runner``) writes the rows.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

#: the status of a run that failed (its row's ``error`` says why); a rerun of the batch retries it
FAILED = "error"
#: the statuses of a failed run: ``error`` (it raised, or its worker died) and ``infeasible-schedule`` (its
#: schedule broke the rules, e.g. a policy's over-commit: never a result).  The next batch retries such a run,
#: ``bench`` exits 1 when a run of its batch ends so, and the reports leave these rows out of every figure
FAILED_STATUSES = (FAILED, "infeasible-schedule")
#: the status of a run stopped by a time limit (a solve without a solution, a policy's decision past
#: ``--decision-time-limit``): a result, not a failure: the next batch does not retry it; a row of this status
#: without figures is listed by the report and left out of its tables
TIME_LIMIT = "time_limit"


COLUMNS = [
    "run_id", "suite", "instance", "family", "size", "seed", "method", "options", "status", "feasible",
    "objective", "bound", "gap", "jobs", "jobs_done", "jobs_blocked", "avg_jct_s", "total_electricity_usd",
    "total_egress_usd", "total_cost_usd", "p1_cost_usd", "total_run_s", "makespan_s", "nodes", "extra",
    "build_s", "solve_s", "wall_s", "peak_mem_mb", "versions", "git_commit", "error",
    # where the network binds (the evaluator's figures) and per-job figures for like-with-like comparisons
    "peak_link_utilisation", "mean_link_utilisation", "links_used", "tight_links", "links_over_90pct",
    "total_stall_s", "total_energy_kwh", "energy_weighted_price_usd_per_kwh", "idle_electricity_usd",
    "total_electricity_incl_idle_usd", "per_job",
    # P1's jobs not started at t0 (before: counted in jobs_blocked), jobs with a communication-bound hop
    "jobs_not_started", "jobs_comm_bound",
    # the P1 optimum over a heuristic's own started jobs (selection/placement split) and its decision time
    "p1_own_set_cost_usd", "p1_own_set_status", "decision_s",
]
VOLATILE_COLUMNS = {"build_s", "solve_s", "wall_s", "peak_mem_mb", "versions", "git_commit", "decision_s"}
DETERMINISTIC_COLUMNS = [c for c in COLUMNS if c not in VOLATILE_COLUMNS]


@dataclass(frozen=True)
class RunSpec:
    suite: str
    family: str                      # instance family: paper | random | file
    size: str                        # a label of the size (e.g. "6r-8j")
    seed: int
    method: str                      # e.g. sim:bace-pipe, p1:highs, p1-heur:lcf, p2:cpsat
    instance_args: Mapping[str, Any] = field(default_factory=dict)
    method_args: Mapping[str, Any] = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        blob = json.dumps({"suite": self.suite, "family": self.family, "size": self.size, "seed": self.seed,
                           "method": self.method, "instance_args": dict(self.instance_args),
                           "method_args": dict(self.method_args)}, sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["instance_args"] = dict(self.instance_args)
        d["method_args"] = dict(self.method_args)
        return d
