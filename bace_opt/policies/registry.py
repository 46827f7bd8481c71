"""The policy registry: every shipped policy by name, and ``resolve(spec)``, which turns a registered name or an
import path ``"package.module:Class"`` into the factory that builds the policy.

An entry names its factory directly, or by import path (``ByPath``) when the policy lives in a higher layer
than this package: ``exact-p1`` solves the exact models (``bace_opt.exact.online``), which import the policies,
so the registry names it ``"bace_opt.exact.online:ExactP1"`` and imports it only when that policy is built
(the way pandas resolves its plotting back end by name).  A user's own policy class is named the same way
(``make_policy("mypackage.mymodule:MyPolicy")``).
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Callable, Mapping

from ..errors import BaceOptError, InputError
from ..options import Opt, check_options
from ..solvers.registry import names as solver_names
from .allocators import ALLOCATE
from .bace_pipe import PATHFINDERS, BacePipe
from .baselines import cr_lcf, cr_ldf, fifo, lcf, ldf
from .contract import check_policy
from .ordered import HOL, ORDERS
from .pathfinder import PREFER, SEED_RULES, VIA
from .planner import PlanJct
from .price_pack import CHAINS, ORDERS as PACK_ORDERS, PricePack
from .select_pack import SelectPack


class ByPath:
    """A factory named by import path ``"package.module:Class"``, imported when a policy is built.  ``origin``:
    where the name came from (an installed package's entry point), for the messages of a failed import."""

    def __init__(self, spec: str, origin: str | None = None):
        self.spec = spec
        self.origin = origin

    def __call__(self, **options):
        return load(self.spec, self.origin)(**options)

    def __repr__(self) -> str:
        return f"ByPath({self.spec!r})"


def load(spec: str, origin: str | None = None) -> Callable:
    """The class (or factory) named by ``"package.module:Class"`` or ``"path/to/file.py:Class"``; ``InputError``
    naming ``spec`` (and ``origin``, the package that registered it) when it cannot be imported -- whatever its
    module raises on import, ``SystemExit`` included -- or is not a policy (a class needs ``decide`` and
    ``place``)."""
    module, _, attr = spec.rpartition(":")
    if not module or not attr:
        raise InputError(f"policy {spec!r}: expected a registered name, 'package.module:Class' or "
                         "'path/to/file.py:Class'")
    if module.endswith(".py") or os.sep in module or "/" in module:
        mod = _load_file(spec, module)
    else:
        try:
            mod = importlib.import_module(module)
        except ImportError as e:
            raise InputError(f"policy {spec!r}{_from(origin)}: cannot import {module!r} ({e})") from e
        except (Exception, SystemExit) as e:    # the plugin's own module failed on import: it is the plugin's
            raise InputError(f"policy {spec!r}{_from(origin)}: importing {module!r} failed: {type(e).__name__}: "
                             f"{e}") from e
    obj = mod
    for part in attr.split("."):
        if part not in vars(obj):
            raise InputError(f"policy {spec!r}: {module!r} has no {attr!r}")
        obj = vars(obj)[part]
    if not callable(obj) or (isinstance(obj, type) and not (callable(_defined(obj, "decide"))
                                                             and callable(_defined(obj, "place")))):
        raise InputError(f"policy {spec!r}: {attr!r} is not a policy (a class with decide(now, queue, state) "
                         "and place(job, state))")
    return obj


def _load_file(spec: str, path: str):
    """The module of a policy file, imported once per resolved path (as ``bace_opt_user_policies.<stem>_<hash>``,
    so that two files of one name do not collide and worker processes, which resolve the same spec, agree)."""
    import hashlib
    import importlib.util
    import sys
    p = Path(path).expanduser().resolve()
    if not p.is_file():
        raise InputError(f"policy {spec!r}: no such file {path!r}")
    name = f"bace_opt_user_policies.{p.stem}_{hashlib.sha1(str(p).encode()).hexdigest()[:8]}"
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, p)
    if loader_spec is None or loader_spec.loader is None:
        raise InputError(f"policy {spec!r}: {path!r} is not a Python file")
    mod = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = mod
    try:
        loader_spec.loader.exec_module(mod)
    except (Exception, SystemExit) as e:      # the user's file failed to import: name it, keep the reason
        del sys.modules[name]
        raise InputError(f"policy {spec!r}: importing {path!r} failed: {type(e).__name__}: {e}") from e
    return mod


def _from(origin: str | None) -> str:
    return f" ({origin})" if origin else ""


def _defined(cls: type, name: str):
    """``name`` defined by ``cls`` or one of its bases (None if none does)."""
    for c in cls.__mro__:
        if name in vars(c):
            return vars(c)[name]
    return None


def _bace(name, **fixed):
    def factory(**kw):
        opts = {**fixed, **kw}
        return BacePipe(name=name, **opts)
    return factory


REGISTRY: dict[str, tuple[Callable, str]] = {
    "bace-pipe": (_bace("bace-pipe"), "BACE-Pipe: dynamic priority, bandwidth-aware pathfinder, cost-min allocator"),
    "bace-pipe-no-priority": (_bace("bace-pipe-no-priority", order="fifo"),
                              "ablation: FIFO order (jobs that do not fit are still skipped)"),
    "bace-pipe-no-pathfinder": (_bace("bace-pipe-no-pathfinder", pathfinder="price"),
                                "ablation: chain by price, bandwidth unchecked (reserves what is left, may stall)"),
    "bace-pipe-no-costmin": (_bace("bace-pipe-no-costmin", allocator="even"),
                             "ablation: stages spread evenly over the chain"),
    "price-pack": (lambda **kw: PricePack(**kw),
                   "price-aware chain enumeration, long jobs packed first into cheap GPUs, local search over the "
                   "packing order (never fewer jobs than BACE-Pipe)"),
    "price-pack-no-enum": (lambda **kw: PricePack(**{"name": "price-pack-no-enum", "chains": "bace", **kw}),
                           "ablation: BACE-Pipe's pathfinder and allocator instead of the chain enumeration"),
    "price-pack-no-order": (lambda **kw: PricePack(**{"name": "price-pack-no-order", "order": "priority", **kw}),
                            "ablation: BACE-Pipe's priority order instead of the cost order"),
    "price-pack-no-search": (lambda **kw: PricePack(**{"name": "price-pack-no-search", "search": False, **kw}),
                             "ablation: no local search over the packing order"),
    "select-pack": (lambda **kw: SelectPack(**kw),
                    "price-pack with a selection step: the most jobs, then the cheapest set of them (knapsack and "
                    "swap search), then packed long jobs first (never fewer jobs than BACE-Pipe)"),
    "plan-jct": (lambda **kw: PlanJct(**kw),
                 "plans the waiting jobs' start order for the least mean JCT (pooled list scheduler, local search "
                 "over orders, deterministic budget) and starts what the plan starts now"),
    "fifo": (fifo, "BACE-Pipe placement in FIFO order with head-of-line blocking"),
    "lcf": (lcf, "baseline: single region, cheapest with room (FIFO)"),
    "ldf": (ldf, "baseline: single region, most free GPUs (FIFO)"),
    "cr-lcf": (cr_lcf, "baseline: cross-region, regions in ascending price, no bandwidth check (FIFO)"),
    "cr-ldf": (cr_ldf, "baseline: cross-region, greedy by free GPUs and link bandwidth (FIFO)"),
    "exact-p1": (ByPath("bace_opt.exact.online:ExactP1"),
                 "reference: solve P1 exactly on the residual resources at every event"),
}

# ---------------------------------------------------------------------- the options each policy takes
# (issue 29, one validation for every option: one declaration per option, checked by
# ``bace_opt.options.check_options`` wherever options are given: ``--option``, ``--policy-options``,
# ``simulate(..., k_routes=2)``, ``gap(policy_options=)``)

_SEED = {"seed": Opt("int", help="the simulator's seed; unused by deterministic policies")}
_ORDERED = {**_SEED, "order": Opt("choice", choices=ORDERS), "hol": Opt("choice", choices=HOL)}
_BACE = {**_ORDERED, "pathfinder": Opt("choice", choices=PATHFINDERS),
         "allocator": Opt("choice", choices=tuple(ALLOCATE)), "seeds": Opt("choice", choices=SEED_RULES),
         "via": Opt("choice", choices=VIA), "k_routes": Opt("int", ge=1, le=64, help="routes tried per hop"),
         "prefer": Opt("choice", choices=PREFER)}
_PACK = {**_SEED, "chains": Opt("choice", choices=CHAINS), "order": Opt("choice", choices=PACK_ORDERS),
         "search": Opt("bool"), "max_regions": Opt("int", ge=1, le=64), "max_evals": Opt("int", ge=0, le=10**6),
         "via": Opt("choice", choices=VIA), "k_routes": Opt("int", ge=1, le=64)}

#: the options of every shipped policy, by registered name (a user's class declares its own: ``OPTIONS``)
POLICY_OPTIONS: dict[str, dict[str, Opt]] = {
    **{n: _BACE for n in ("bace-pipe", "bace-pipe-no-priority", "bace-pipe-no-pathfinder", "bace-pipe-no-costmin",
                          "fifo")},
    **{n: _PACK for n in ("price-pack", "price-pack-no-enum", "price-pack-no-order", "price-pack-no-search")},
    "select-pack": {**_PACK, "sel_evals": Opt("int", ge=0, le=10**6, help="packings of the selection's set search"),
                    "knapsack": Opt("bool", help="the knapsack's proposal of a set")},
    "plan-jct": {**_SEED, "mu": Opt("float", ge=0, le=1e9, help="weight of cost (USD) against mean JCT (s)"),
                 "max_work": Opt("int", ge=0, le=10**8, help="job placements the order search schedules per decision"),
                 "time_cap_s": Opt("float", gt=0, le=250, help="wall-clock safety cap of one decision's search, s"),
                 "max_regions": Opt("int", ge=1, le=64), "via": Opt("choice", choices=VIA),
                 "k_routes": Opt("int", ge=1, le=64),
                 "futures": Opt("int", ge=0, le=1000, help="sampled futures per decision: whether to hold a long "
                                "job for the short ones likely to arrive (0: never hold)"),
                 "future_horizon": Opt("float", gt=0, le=1e3, help="more jobs the stream is assumed to bring, as a "
                                       "multiple of the jobs seen"),
                 "future_work": Opt("int", ge=0, le=10**7, help="job placements of each sampled future's search"),
                 "hold_wake": Opt("float", ge=0, le=1e3, help="a held job is reconsidered at the latest this many "
                                  "expected inter-arrival times later (a simulator wake-up; 0: at the next event)")},
    "lcf": _ORDERED, "ldf": _ORDERED,
    "cr-lcf": {**_ORDERED, "via": Opt("choice", choices=VIA)},
    "cr-ldf": {**_ORDERED, "via": Opt("choice", choices=VIA)},
    "exact-p1": {**_SEED, "solver": Opt("choice", choices=tuple(solver_names())),
                 "time_limit_s": Opt("float", gt=0, le=1e9, help="each P1 solve's limit, s")},
}


def declared_options(spec: str) -> dict[str, Opt] | None:
    """The options the policy ``spec`` declares: a shipped policy's from ``POLICY_OPTIONS``, a user's (entry
    point, ``package.module:Class``, ``file.py:Class``) from its class attribute ``OPTIONS``; ``None`` when it
    declares none (then its constructor alone decides what it accepts)."""
    if spec in POLICY_OPTIONS:
        return POLICY_OPTIONS[spec]
    factory = resolve(spec)
    if isinstance(factory, ByPath):
        factory = load(factory.spec, factory.origin)
    declared = getattr(factory, "OPTIONS", None)
    if declared is None:
        return None
    if not (isinstance(declared, Mapping) and all(isinstance(k, str) and isinstance(v, Opt)
                                                  for k, v in declared.items())):
        raise InputError(f"policy {spec!r}: OPTIONS must map option names to bace_opt.options.Opt")
    return dict(declared)


def check_policy_options(spec: str, options: Mapping, where: str | None = None) -> dict:
    """``options`` of the policy ``spec`` checked against what it declares (``declared_options``): an unknown
    key or a value out of range is an ``InputError`` naming it, the valid keys and the accepted range.
    ``where``: how the options were given (``--option``, ``--policy-options``; default "policy 'x': option")."""
    return check_options(f"policy {spec!r}", declared_options(spec), options,
                         where or f"policy {spec!r}: option")


#: the paper's comparison set (heuristics only; exact-p1 needs the exact models and a solver)
HEURISTICS = ("bace-pipe", "lcf", "ldf", "cr-lcf", "cr-ldf", "fifo")
ABLATIONS = ("bace-pipe-no-priority", "bace-pipe-no-pathfinder", "bace-pipe-no-costmin")


#: the entry-point group through which installed packages register policies: in a package's pyproject.toml,
#: ``[project.entry-points."bace_opt.policies"]`` then ``my-policy = "mypackage.module:MyPolicy"``
ENTRY_POINT_GROUP = "bace_opt.policies"


#: (name, value) of the entry points already warned about in this process: each warning is said once
_WARNED: set[tuple[str, str]] = set()


def plugins() -> dict[str, tuple[Callable, str]]:
    """Policies registered by installed packages (``ENTRY_POINT_GROUP``), by name; a name that a shipped policy
    already has is left out (the shipped one wins) with one warning per process.  Nothing is imported here: a
    plugin whose module fails on import fails only where it is used, with an ``InputError`` naming it and its
    package (``load``)."""
    import logging
    from importlib.metadata import entry_points

    from ..installed import warn_damaged
    warn_damaged()          # packages whose entry_points.txt cannot be read are left out (``installed.guard``)
    out: dict[str, tuple[Callable, str]] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in REGISTRY:
            if (ep.name, ep.value) not in _WARNED:
                _WARNED.add((ep.name, ep.value))
                logging.getLogger(__name__).warning("policy entry point %r of %s: a shipped policy has that name; "
                                                    "ignored", ep.name, ep.value)
            continue
        dist = getattr(ep, "dist", None)
        origin = f"{dist.name} {dist.version}" if dist is not None else "an installed package"
        out[ep.name] = (ByPath(ep.value, f"policy {ep.name!r} of package {origin}"), f"from {origin} ({ep.value})")
    return out


def registry() -> dict[str, tuple[Callable, str]]:
    """Every registered policy: the shipped ones, then those of installed packages."""
    return {**REGISTRY, **plugins()}


def available() -> list[str]:
    return list(registry())


def describe(name: str) -> str:
    return registry()[name][1]


def resolve(spec: str) -> Callable:
    """The factory of the policy ``spec``: a registered name (shipped or from an installed package's entry
    point), ``"package.module:Class"`` or ``"path/to/file.py:Class"`` (``load``).  ``InputError`` naming
    ``spec`` when it is none of these, cannot be imported or is not a policy."""
    entry = REGISTRY.get(spec) or plugins().get(spec)
    if entry is not None:
        return entry[0]
    if ":" in spec:
        return load(spec)
    raise InputError(f"unknown policy {spec!r} (available: {', '.join(available())}; or package.module:Class, "
                     "or path/to/file.py:Class)")


def make_policy(name: str, **options):
    """Build the policy ``name`` (a registered name, ``"package.module:Class"`` or ``"path/to/file.py:Class"``)
    with ``options`` (keyword arguments of its class; ``seed`` only where the class takes one)."""
    factory = resolve(name)
    seed = {"seed": _SEED["seed"].check(options["seed"], "seed")} if "seed" in options else {}
    options = {**check_policy_options(name, {k: v for k, v in options.items() if k != "seed"}), **seed}
    if "seed" in options and not _takes(factory, "seed"):
        options = {k: v for k, v in options.items() if k != "seed"}    # the simulator's seed, for policies that draw
    try:
        pol = factory(**options)
    except (TypeError, ValueError) as e:
        raise InputError(f"policy {name!r}: bad options {options}: {e}") from e
    except BaceOptError:
        raise
    except (Exception, SystemExit) as e:        # the policy's own constructor failed: it is the policy's
        from .base import PolicyError
        raise PolicyError(f"policy {name!r}: building it raised {type(e).__name__}" + (f": {e}" if str(e) else ""))\
            from e
    try:
        check_policy(pol)
    except InputError as e:
        raise InputError(f"policy {name!r}: {e}") from e
    return pol


def _takes(factory: Callable, param: str) -> bool:
    """Whether ``factory`` accepts the keyword ``param`` (or any keyword); True when it cannot be inspected."""
    import inspect
    if isinstance(factory, ByPath):
        factory = load(factory.spec, factory.origin)
    try:
        ps = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == param or p.kind is inspect.Parameter.VAR_KEYWORD for p in ps)


#: the same as ``make_policy`` (the name other modules use)
get_policy = make_policy
