"""The policy's own wake-up (``wake_at``, bace_opt/sim.py and policies/contract.py): a round-based policy decides
at the times it asks for, a bad answer is the policy's error, and a policy that asks forever still lets the run end."""
from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.policies.base import PolicyError
from bace_opt.policies import PolicyBase
from bace_opt import sim

ROOT = Path(__file__).resolve().parents[1]
ROUND_S = 900.0


def _inst():
    return bo.load_instance(ROOT / "instances/paper-6r-8j-seed1-poisson.json")


class Rounds(PolicyBase):
    """Starts jobs only at multiples of ``ROUND_S`` (a round-based scheduler): each on the cheapest region that
    holds all its stages.  With ``wake`` it asks for the next round while jobs wait."""

    name = "rounds"

    def __init__(self, wake: bool = True, answer=None):
        self.wake, self.answer = wake, answer
        self.options = {"wake": wake}
        self.asked: list[float] = []
        if wake:
            self.wake_at = self._wake

    def _wake(self, now):
        self.asked.append(now)
        if self.answer is not None:
            return self.answer(now)
        return (math.floor(now / ROUND_S) + 1) * ROUND_S

    def place(self, job, state):
        fits = [r for r in state.inst.eligible_regions(job) if state.free(r) >= job.gpus]
        if not fits:
            return None
        r = min(fits, key=lambda r: (state.price(r), r))
        return bo.JobPlan(job.name, "done", state.now, (bo.Block(r, job.stages),), ())

    def decide(self, now, queue, state):
        if now % ROUND_S:
            return []
        res, out = state.copy(), []
        for job in sorted(queue, key=lambda j: (j.arrival_s, j.name)):
            if (plan := self.place(job, res)) is None:
                continue
            res.commit(job, plan)
            out.append(plan)
        return out


def test_a_round_based_policy_decides_at_the_times_it_asks_for():
    inst = _inst()
    sched = bo.simulate(inst, Rounds())
    assert bo.evaluate(inst, sched).feasible
    done = [e for e in sched.jobs if e.status == "done"]
    assert done, "the rounds started nothing"
    assert all(e.start_s % ROUND_S == 0 for e in done)
    assert all(e.start_s >= inst.job(e.name).arrival_s for e in done)
    again = bo.simulate(inst, Rounds())                  # deterministic
    assert [(e.name, e.start_s) for e in again.jobs] == [(e.name, e.start_s) for e in sched.jobs]
    # without wake-ups the same rule starts a job only when an event happens to fall on a round
    blind = bo.simulate(inst, Rounds(wake=False))
    assert sum(e.status == "done" for e in blind.jobs) < len(done) or \
        bo.evaluate(inst, blind).metrics["avg_jct_s"] > bo.evaluate(inst, sched).metrics["avg_jct_s"]


def test_wake_at_is_asked_only_while_jobs_wait_and_never_before_a_job_arrives():
    inst = _inst()
    pol = Rounds()
    bo.simulate(inst, pol)
    first = min(j.arrival_s for j in inst.jobs)
    assert pol.asked and min(pol.asked) >= first


@pytest.mark.parametrize("answer", [lambda now: now, lambda now: now - 1.0, lambda now: math.inf,
                                    lambda now: math.nan, lambda now: "soon", lambda now: True])
def test_a_wake_up_that_is_not_after_now_is_the_policys_error(answer):
    with pytest.raises(PolicyError, match="wake-up time"):
        bo.simulate(_inst(), Rounds(answer=answer))


def test_a_policy_that_asks_forever_still_lets_the_run_end(caplog):
    class Never(Rounds):
        name = "never"

        def decide(self, now, queue, state):
            return []

    inst = _inst()
    with caplog.at_level(logging.WARNING, logger="bace_opt.sim"):
        sched = bo.simulate(inst, Never(answer=lambda now: now + 1.0))
    assert all(e.status == "unscheduled" for e in sched.jobs)
    # at most MAX_IDLE_WAKES idle wake-ups after each real event (each arrival), said once
    assert sched.meta["events"] <= (len(inst.jobs) + 1) * (sim.MAX_IDLE_WAKES + 1)
    assert caplog.text.count("wake-ups in a row started nothing") == 1


def test_plan_jct_asks_for_a_wake_up_only_with_hold_wake():
    from bace_opt.builders import paper_instance
    inst = paper_instance(seed=2, jobs=24, arrivals="poisson", bandwidth_source="measured")
    off = bo.simulate(inst, "plan-jct")
    on = bo.simulate(inst, "plan-jct", hold_wake=1.0)
    for s in (off, on):
        assert bo.evaluate(inst, s).feasible and s.metrics["jobs_done"] == len(inst.jobs)
    assert off.meta["events"] == 2 * len(inst.jobs)            # arrivals and completions only
    assert on.meta["events"] > 2 * len(inst.jobs)              # and the wake-ups of its holds
    assert on.meta["policy_options"]["hold_wake"] == 1.0
