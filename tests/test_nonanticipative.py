"""Non-anticipativity (issue 43 item 1): what a policy is handed holds only the jobs that have arrived.

* For every shipped policy (the registry) and a user's policy loaded from a file: changing the arrival times and
  sizes of the jobs that arrive after a time T, and adding one, changes no decision made up to T (queue and
  blocking mode): every job that starts by T starts then with the same plan, and no other job does.
* A probe policy sees, in every call (``queue_session``, ``decide``, ``place``), exactly the jobs that have arrived
  by ``now``: on the paper instance (batch arrivals) and on its Poisson twin.
* The view grows by appending (the same object all run); a policy that writes into it is named (the kinds of
  ``tests/misbehaving_policies.py`` cover the rest).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.policies import PolicyBase, PolicyError
from bace_opt.policies.registry import REGISTRY
from policy_files import CHEAPEST_REGION

ROOT = Path(__file__).resolve().parent.parent
PAPER = ROOT / "instances" / "paper-6r-8j-seed1.json"
POISSON = ROOT / "instances" / "paper-6r-8j-seed1-poisson.json"
#: cut after the 2nd and the 5th arrival of the Poisson instance
CUTS = (1, 4)


def perturbed(inst: bo.Instance, T: float) -> bo.Instance:
    """``inst`` with every job arriving after T moved (still after T, in another order) and resized, plus one
    more job after T."""
    jobs = []
    for k, j in enumerate(inst.jobs):
        if j.arrival_s > T:
            j = dataclasses.replace(j, arrival_s=T + 1.0 + (j.arrival_s - T) * (0.3 if k % 2 else 1.7),
                                    stages=max(1, j.stages - 1), iterations=3 * j.iterations,
                                    activation_mb=2.0 * j.activation_mb, stage_time_s=0.7 * j.stage_time_s)
        jobs.append(j)
    jobs.append(dataclasses.replace(inst.jobs[0], name="late-extra", arrival_s=T + 0.5, stages=1))
    return inst.replace(jobs=tuple(jobs)).validated()


def decisions_up_to(sched: bo.Schedule, inst: bo.Instance, T: float) -> dict:
    """Job -> (status, start, blocks, hops) of every job that arrived by T and started or was refused by T."""
    arrived = {j.name for j in inst.jobs if j.arrival_s <= T}
    out = {}
    for e in sched.jobs:
        p = e.plan
        if e.name in arrived and (p.status == "blocked" or (p.start_s is not None and p.start_s <= T)):
            out[e.name] = (p.status, p.start_s, p.blocks, p.hops)
    return out


def check_blind(policy, modes=("queue", "blocking"), cuts=CUTS, **kw) -> None:
    inst = bo.load_instance(POISSON)
    arrivals = sorted(j.arrival_s for j in inst.jobs)
    for mode in modes:
        base = bo.simulate(inst, policy, mode=mode, **kw)
        for c in cuts:
            T = arrivals[c]
            other = perturbed(inst, T)
            mine = bo.simulate(other, policy, mode=mode, **kw)
            a, b = decisions_up_to(base, inst, T), decisions_up_to(mine, inst, T)
            assert a and a == b, (policy, mode, T)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_no_decision_of_a_shipped_policy_depends_on_a_later_job(name):
    if name == "exact-p1":          # a MILP per event (and one per waiting job for the head-of-line measure)
        check_blind(name, modes=("queue",), cuts=(4,), track_hol=False)
    else:
        check_blind(name)


def test_no_decision_of_a_users_policy_depends_on_a_later_job(tmp_path):
    f = tmp_path / "mine.py"
    f.write_text(CHEAPEST_REGION)
    check_blind(f"{f}:CheapestRegion")


class Probe(PolicyBase):
    """Records, at every call, whether the jobs it can see are exactly the jobs arrived by ``now``."""

    name = "probe"
    options: dict = {}

    def __init__(self, inst: bo.Instance):
        self.arrival = {j.name: j.arrival_s for j in inst.jobs}
        self.seen: list[tuple[str, float, int, bool]] = []
        self.views: set[int] = set()

    def look(self, what, now, view, queue=()):
        names = {j.name for j in view.jobs}
        arrived = {n for n, a in self.arrival.items() if a <= now}
        ok = (names <= arrived and all(view.job(n).arrival_s <= now for n in names) and set(view.job_index) == names
              and {j.name for j in queue} <= names and (what == "session" or names == arrived))
        self.seen.append((what, now, len(names), ok))
        self.views.add(id(view))

    def queue_session(self, inst):
        self.look("session", 0.0, inst)
        return None

    def decide(self, now, queue, state):
        self.look("decide", now, state.inst, queue)
        return [p for p in (self.place(j, state) for j in queue[:1]) if p is not None]

    def place(self, job, state):
        self.look("place", state.now, state.inst, [job])
        fits = [r for r in state.inst.eligible_regions(job) if state.free(r) >= job.gpus]
        r = min(fits, default=None)
        return None if r is None else bo.JobPlan(job.name, "done", state.now, (bo.Block(r, job.stages),), ())


@pytest.mark.parametrize("path", [PAPER, POISSON])
@pytest.mark.parametrize("mode", ["queue", "blocking"])
def test_a_probe_sees_no_job_before_it_arrives(path, mode):
    inst = bo.load_instance(path)
    probe = Probe(inst)
    bo.simulate(inst, probe, mode=mode)
    assert probe.seen and all(ok for *_, ok in probe.seen), [s for s in probe.seen if not s[-1]]
    assert len(probe.views) == 1                       # one view, grown by appending
    if mode == "queue":
        assert probe.seen[0][:3] == ("session", 0.0, 0)  # before the first arrival: no job at all
    first = min(j.arrival_s for j in inst.jobs)
    assert all(n == sum(j.arrival_s <= t for j in inst.jobs) for w, t, n, _ in probe.seen if w == "decide")
    assert any(w == "decide" and t == first for w, t, _, _ in probe.seen)


class Rebinds(Probe):
    """Replaces the jobs of its view (``object.__setattr__`` gets past the read-only class)."""

    name = "rebinds"

    def decide(self, now, queue, state):
        object.__setattr__(state.inst, "jobs", ())
        return []


class Swallows(Probe):
    """Writes into a job, a region and a GPU type, and swallows the refusals: nothing changed."""

    name = "swallows"

    def decide(self, now, queue, state):
        for obj, field in ((queue[0], "stages"), (state.inst.regions[0], "gpus"),
                           (next(iter(state.inst.gpu_types.values())), "tflops")):
            for write in (setattr, object.__setattr__):
                try:
                    write(obj, field, 10 ** 6)
                except AttributeError:
                    pass
        return super().decide(now, queue, state)


def test_a_write_into_the_view_is_named_or_refused():
    inst = bo.load_instance(POISSON)
    with pytest.raises(PolicyError, match=r"policy 'rebinds' .* at t=0 s: instance modified: .*'jobs' was replaced"):
        bo.simulate(inst, Rebinds(inst))
    s = bo.simulate(inst, Swallows(inst))
    assert s.to_dict()["jobs"] == bo.simulate(inst, Probe(inst)).to_dict()["jobs"]
    assert bo.load_instance(POISSON).to_dict() == inst.to_dict()
