"""The policy contract (bace_opt/policies/contract.py, docs/policies.md): the guide's example policy runs through
the simulator and the evaluator; an object missing a required member is refused by name; a policy is named by
registry name or import path."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.policies import PolicyBase, make_policy, resolve
from bace_opt.policies.contract import check_policy

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "policies.md"


def _example() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    block = re.search(r"<!-- example: begin -->\s*```python\n(.*?)```\s*<!-- example: end -->", text, re.S)
    assert block, "docs/policies.md has no example block"
    return block.group(1)


def test_the_guide_example_runs_through_the_simulator_and_the_evaluator(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code = _example()
    assert 25 <= len(code.splitlines()) <= 45
    ns: dict = {}
    exec(compile(code, str(GUIDE), "exec"), ns)
    inst, schedule, report = ns["inst"], ns["schedule"], ns["report"]
    assert report.feasible and schedule.method == "cheapest-region"
    assert schedule.metrics["jobs_done"] >= 1
    assert schedule.meta["policy_options"] == {"max_price": None} and "policy_stats" not in schedule.meta
    assert bo.evaluate(inst, bo.simulate(inst, ns["CheapestRegion"](), mode="blocking")).feasible
    assert "cheapest-region" in capsys.readouterr().out


class _NoPlace:
    name, options = "no-place", {}

    def decide(self, now, queue, state):
        return []


class _Plain:
    """The four required members and nothing else: the optional members take their defaults."""
    name, options = "plain", {}

    def decide(self, now, queue, state):
        return []

    def place(self, job, state):
        return None


def test_a_policy_missing_a_required_member_is_refused_by_name():
    inst = bo.load_instance(ROOT / "instances" / "tiny-2r-2j.json")
    with pytest.raises(bo.InputError, match="'place'"):
        bo.simulate(inst, _NoPlace())
    bad = _Plain()
    bad.decide = "not a method"
    with pytest.raises(bo.InputError, match="callable 'decide'"):
        check_policy(bad)
    bound = check_policy(_Plain())
    assert isinstance(bound, PolicyBase) and bound.queue_session(inst) is None and bound.extra_meta is None
    s = bo.simulate(inst, _Plain())
    assert s.metrics["jobs_done"] == 0 and "policy_stats" not in s.meta


def test_a_policy_is_named_by_registry_name_or_import_path():
    assert resolve("bace-pipe") is not None
    pol = make_policy("bace_opt.policies.bace_pipe:BacePipe", order="fifo")
    assert pol.name == "bace-pipe" and pol.order == "fifo"
    assert make_policy("exact-p1").name == "exact-p1"      # a registry entry named by import path
    with pytest.raises(bo.InputError, match="unknown policy 'nope'"):
        resolve("nope")
    with pytest.raises(bo.InputError, match="no_such_module"):
        resolve("no_such_module:X")
    with pytest.raises(bo.InputError, match="has no 'Nothing'"):
        resolve("bace_opt.policies.bace_pipe:Nothing")
    with pytest.raises(bo.InputError, match="not a policy"):
        resolve("bace_opt.instance:Instance")
    with pytest.raises(bo.InputError, match="'name'"):         # a factory whose product is no policy
        make_policy("bace_opt.policies.registry:available")
