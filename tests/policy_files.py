"""Policies as a user keeps them in files of their own, and a fake installed package that registers one: shared by
the tests that write such files (test_own_policy, test_bench_rows, test_policy_gate)."""
from __future__ import annotations

import textwrap
from pathlib import Path

#: the example policy of docs/policies.md: each job, in arrival order, on the cheapest region that holds it
CHEAPEST_REGION = textwrap.dedent('''
    import bace_opt as bo
    from bace_opt.policies import PolicyBase


    class CheapestRegion(PolicyBase):
        """Each job, in arrival order, on the cheapest region whose free GPUs hold all its stages."""

        name = "cheapest-region"

        def __init__(self, max_price: float | None = None):
            self.max_price = max_price
            self.options = {"max_price": max_price}

        def place(self, job, state):
            fits = [r for r in state.inst.eligible_regions(job)
                    if state.free(r) >= job.gpus and (self.max_price is None or state.price(r) <= self.max_price)]
            if not fits:
                return None
            r = min(fits, key=lambda r: (state.price(r), r))
            return bo.JobPlan(job.name, "done", state.now, (bo.Block(r, job.stages),), ())

        def decide(self, now, queue, state):
            res = state.copy()
            out = []
            for job in sorted(queue, key=lambda j: (j.arrival_s, j.name)):
                plan = self.place(job, res)
                if plan is not None:
                    res.commit(job, plan)
                    out.append(plan)
            return out
''')


def fake_dist(where: Path, module: str, body: str, dist: str, version: str, entry_points: str) -> Path:
    """``where/module.py`` holding ``body``, and beside it the ``.dist-info`` of a package ``dist`` ``version``
    whose ``bace_opt.policies`` entry points are ``entry_points`` (lines ``name = module:Class``), as pip would
    leave them: put ``where`` on the path and the package is installed.  Returns ``where``."""
    (where / f"{module}.py").write_text(body)
    info = where / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text("[bace_opt.policies]\n" + entry_points)
    return where
