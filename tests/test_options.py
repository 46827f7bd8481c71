"""One validation for every option (issue 29): each policy's, the simulator's and the exact solve's options
are declared once (``bace_opt.options.Opt``), and the command line (``--option``, ``--policy-options``, the
solve flags) and the Python API (``bo.simulate``, ``bo.solve``, ``bo.gap``) run the same check on them.

The declarations are tested against the code they describe: every declared option is accepted by the class that
takes it, every keyword a shipped class takes is declared, and each message states exactly the range accepted
(a bound in the message is accepted when it says ``>=``, refused when it says ``>``).
"""
from __future__ import annotations

import inspect
import json
import textwrap
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.errors import InputError
from bace_opt.options import SOLVE_OPTIONS, Opt, check_options
from bace_opt.policies import make_policy
from bace_opt.policies.bace_pipe import BacePipe
from bace_opt.policies.baselines import CrossRegion, SingleRegion
from bace_opt.policies.price_pack import PricePack
from bace_opt.policies.registry import POLICY_OPTIONS, REGISTRY, check_policy_options
from bace_opt.sim import SIM_OPTIONS

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "instances" / "tiny-2r-2j.json"

#: the class behind each shipped policy (exact-p1's lives in the exact layer)
CLASSES = {"bace-pipe": BacePipe, "bace-pipe-no-priority": BacePipe, "bace-pipe-no-pathfinder": BacePipe,
           "bace-pipe-no-costmin": BacePipe, "fifo": BacePipe, "price-pack": PricePack,
           "price-pack-no-enum": PricePack, "price-pack-no-order": PricePack, "price-pack-no-search": PricePack,
           "lcf": SingleRegion, "ldf": SingleRegion, "cr-lcf": CrossRegion, "cr-ldf": CrossRegion}
#: constructor parameters that the registry fixes per name and a user does not set
FIXED = {"self", "name", "rule"}


def _valid(o: Opt):
    """A value the option accepts (at its lower bound when it has one)."""
    if o.kind == "choice":
        return o.choices[-1]
    if o.kind == "bool":
        return False
    if o.kind == "str":
        return "x"
    lo = o.ge if o.ge is not None else (o.gt + 1 if o.gt is not None else 0)
    return int(lo) if o.kind == "int" else float(lo)


def test_every_shipped_policy_is_declared():
    assert set(POLICY_OPTIONS) == set(REGISTRY)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_declarations_match_the_class(name):
    params = {p for p in inspect.signature(CLASSES[name].__init__).parameters} - FIXED
    assert params == set(POLICY_OPTIONS[name]), "declared and accepted options differ"


@pytest.mark.parametrize("name", sorted(POLICY_OPTIONS))
def test_every_declared_option_builds_the_policy(name):
    for key, o in POLICY_OPTIONS[name].items():
        make_policy(name, **{key: _valid(o)})


def _all_opts():
    seen = {}
    for table in (*POLICY_OPTIONS.values(), SOLVE_OPTIONS, SIM_OPTIONS):
        for k, o in table.items():
            seen.setdefault((k, o), o)
    return list(seen.values())


@pytest.mark.parametrize("o", _all_opts(), ids=lambda o: o.describe())
def test_messages_state_exactly_what_is_accepted(o):
    """At each bound: accepted iff the message says so; just outside: refused, with the same message."""
    if o.kind not in ("int", "float"):
        bad = 12345 if o.kind == "choice" else "not-a-bool" if o.kind == "bool" else 5
        with pytest.raises(InputError, match="must be " + o.describe().replace("(", r"\(").replace(")", r"\)")):
            o.check(bad, "x")
        return
    step = 1 if o.kind == "int" else 1e-9
    for bound, closed, outside in ((o.ge, True, -step), (o.gt, False, -step), (o.le, True, step),
                                   (o.lt, False, step)):
        if bound is None:
            continue
        v = int(bound) if o.kind == "int" else float(bound)
        if closed:
            o.check(v, "x")
        else:
            with pytest.raises(InputError, match="must be "):
                o.check(v, "x")
        with pytest.raises(InputError) as e:
            o.check(v + outside * max(1, abs(v)), "x")
        assert f"must be {o.describe()}" in str(e.value)
    for bad in (True, float("nan"), float("inf"), "3"):
        with pytest.raises(InputError):
            o.check(bad, "x")


def test_unknown_key_names_it_and_lists_the_valid_ones():
    with pytest.raises(InputError) as e:
        check_policy_options("lcf", {"k_routes": 2}, where="--option")
    assert str(e.value) == "--option k_routes: policy 'lcf' has no option 'k_routes' (its options: hol, order, seed)"


# ---------------------------------------------------------------------- every entry point, the same check

def test_python_api_runs_the_check():
    inst = bo.load_instance(TINY)
    for kw, msg in ((dict(k_routes=0), "option k_routes: must be an integer >= 1"),
                    (dict(bogus=1), "has no option 'bogus' (its options: allocator, hol, k_routes"),
                    (dict(track_hol=3), "option track_hol: must be true or false, got 3"),
                    (dict(seed=True), "seed: must be an integer, got True")):
        with pytest.raises(InputError, match=msg.replace("(", r"\(")):
            bo.simulate(inst, **kw)
    for kw, msg in ((dict(time_limit=True), "time_limit: must be a finite number > 0"),
                    (dict(time_limit=float("inf")), "time_limit: must be a finite number > 0"),
                    (dict(threads=0), "threads: must be an integer >= 1 and <= 1024, got 0"),
                    (dict(mu=-1.0), "mu: must be a finite number >= 0")):
        with pytest.raises(InputError, match=msg):
            bo.solve(inst, **kw)
    from bace_opt.solvers import SolveOptions
    with pytest.raises(InputError, match="options.time_limit_s: must be a finite number > 0"):
        bo.solve(inst, options=SolveOptions(time_limit_s=-1.0))
    with pytest.raises(InputError, match="options.threads: must be an integer >= 1"):
        bo.solve(inst, options=SolveOptions(threads=0))
    with pytest.raises(InputError, match="policy 'bace-pipe': option k_routes: must be an integer >= 1"):
        bo.gap(inst, policy_options={"k_routes": 0})
    with pytest.raises(InputError, match="online_time_limit: must be a finite number > 0"):
        bo.gap(inst, online_time_limit=float("nan"))


@pytest.mark.parametrize("argv, msg", [
    (["simulate", TINY, "--option", "k_routes=0"], "--option k_routes: must be an integer >= 1 and <= 64, got 0"),
    (["simulate", TINY, "--option", "k_routes=2.5"], "--option k_routes: must be an integer >= 1"),
    (["simulate", TINY, "--option", "max_evals=3"], "--option max_evals: policy 'bace-pipe' has no option"),
    (["simulate", TINY, "--policy", "price-pack", "--option", "max_evals=-1"],
     "--option max_evals: must be an integer >= 0"),
    (["simulate", TINY, "--option", "seed=3"], "--option seed: not a policy option; use --seed"),
    (["simulate", TINY, "--option", "k_routes="], "--option k_routes: empty value"),
    (["simulate", TINY, "--option", "mode=queue"], "--option mode: not a policy option; use --mode"),
    (["gap", TINY, "--policy", "lcf", "--option", "via=links"], "policy 'lcf' has no option 'via'"),
    (["solve", TINY, "--time-limit", "0", "-o", "x.json"], "--time-limit: must be a finite number > 0"),
    (["solve", TINY, "--threads", "0", "-o", "x.json"], "--threads: must be an integer >= 1 and <= 1024"),
    (["solve", TINY, "--problem", "schedule", "--max-blocks", "0", "-o", "x.json"],
     "--max-blocks: must be an integer >= 1"),
])
def test_command_line_refuses_with_the_same_message(tmp_path, monkeypatch, capsys, argv, msg):
    from bace_opt.cli.main import main
    monkeypatch.chdir(tmp_path)
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("popts, msg", [
    ({"bogus": 1}, "--policy-options bogus: policy 'bace-pipe' has no option 'bogus' (its options: allocator, "
                   "hol, k_routes, order, pathfinder, prefer, seed, seeds, via)"),
    ({"k_routes": 0}, "--policy-options k_routes: must be an integer >= 1 and <= 64, got 0"),
])
def test_adversary_refuses_policy_options_up_front(tmp_path, capsys, popts, msg):
    """Before: a value out of range ran the whole search; an unknown key listed no valid one."""
    from bace_opt.cli.main import main
    assert main(["adversary", "--budget", "1", "--policy-options", json.dumps(popts), "-o", str(tmp_path / "adv")]) == 2
    err = capsys.readouterr().err
    assert msg in err, err
    assert not (tmp_path / "adv").exists()


# ---------------------------------------------------------------------- a user's policy

USER = textwrap.dedent('''
    from bace_opt.options import Opt
    from bace_opt.policies import PolicyBase


    class Declared(PolicyBase):
        name = "declared"
        OPTIONS = {"depth": Opt("int", ge=1, le=8), "greedy": Opt("bool")}

        def __init__(self, depth=2, greedy=False):
            self.options = {"depth": depth, "greedy": greedy}

        def decide(self, now, queue, state):
            return []

        def place(self, job, state):
            return None


    class Open(Declared):
        name = "open"
        OPTIONS = None

        def __init__(self, depth=2):
            if depth < 0:
                raise ValueError("depth must be >= 0")
            self.options = {"depth": depth}
''')


def test_a_users_policy_declares_its_options_or_accepts_what_its_class_does(tmp_path):
    f = tmp_path / "mine.py"
    f.write_text(USER)
    inst = bo.load_instance(TINY)
    declared, open_ = f"{f}:Declared", f"{f}:Open"
    assert bo.simulate(inst, declared, depth=8, greedy=True).meta["policy_options"] == {"depth": 8, "greedy": True}
    with pytest.raises(InputError, match="option depth: must be an integer >= 1 and <= 8, got 9"):
        bo.simulate(inst, declared, depth=9)
    with pytest.raises(InputError, match=r"has no option 'width' \(its options: depth, greedy\)"):
        bo.simulate(inst, declared, width=1)
    bo.simulate(inst, open_, depth=0)
    with pytest.raises(InputError, match="bad options .* depth must be >= 0"):
        bo.simulate(inst, open_, depth=-1)


def test_a_malformed_declaration_is_named(monkeypatch):
    import sys
    import types
    from bace_opt.policies.registry import declared_options

    class Bad:
        OPTIONS = {"a": int}

        def decide(self, now, queue, state):
            return []

        def place(self, job, state):
            return None
    mod = types.ModuleType("bad_opts_mod")
    mod.Bad = Bad
    monkeypatch.setitem(sys.modules, "bad_opts_mod", mod)
    with pytest.raises(InputError, match="OPTIONS must map option names to bace_opt.options.Opt"):
        declared_options("bad_opts_mod:Bad")
    assert check_options("x", None, {"anything": 1}) == {"anything": 1}


def test_policies_lists_each_option_as_it_is_checked(capsys):
    from bace_opt.cli.main import main
    assert main(["policies", "--options", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "k_routes: an integer >= 1 and <= 64 (routes tried per hop)" in d["bace-pipe"]["options"]
    assert d["exact-p1"]["options"][-1].startswith("time_limit_s: a finite number > 0 and <= 1e9")
    assert {n: len(v["options"]) for n, v in d.items() if v["shipped"]} == \
        {n: len(o) for n, o in POLICY_OPTIONS.items()}


@pytest.mark.parametrize("kw, msg", [
    (dict(time_limit=float("inf")), "time_limit: must be a finite number > 0"),
    (dict(time_limit=True), "time_limit: must be a finite number > 0"),
    (dict(threads=0), "threads: must be an integer >= 1"),
])
def test_exact_solve_called_directly_gets_the_same_check(kw, msg):
    """bace_opt.exact.solve (not only bo.solve) runs the declared SOLVE_OPTIONS check, before any model is built."""
    import bace_opt.exact as E
    from bace_opt.instance import load_instance
    inst = load_instance(ROOT / "instances" / "tiny-2r-2j.json")
    with pytest.raises(InputError, match=msg):
        E.solve(inst, **kw)
    from bace_opt.solvers.base import SolveOptions
    with pytest.raises(InputError, match="options.threads: must be an integer >= 1"):
        E.solve(inst, options=SolveOptions(threads=0))
