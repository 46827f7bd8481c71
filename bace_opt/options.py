"""Declared options and the one check every entry point runs on them (issue 29: one validation for every option).

An option is declared once, as an ``Opt`` (its kind, range or choices), in the table of whatever takes it:

* a shipped policy: ``bace_opt.policies.registry.POLICY_OPTIONS`` (by registered name);
* a policy of your own: the class attribute ``OPTIONS`` (a mapping name -> ``Opt``; docs/policies.md); a class
  that declares none accepts whatever its constructor accepts;
* the exact solve: ``SOLVE_OPTIONS`` below (``bo.solve``, ``bo.gap``, ``bace-opt solve``, ``gap``, ``pipeline``,
  ``adversary --time-limit``);
* the simulator's own: ``bace_opt.sim.SIM_OPTIONS`` (mode, seed, track_hol, iteration_model).

``check_options`` is the check: the CLI (``--option KEY=VALUE``, ``--policy-options JSON``) and the Python API
(``bo.simulate(..., k_routes=2)``, ``bo.solve(..., time_limit=...)``, ``bo.gap(..., policy_options=...)``) run
the same function on the same table, so a value is refused with the same message wherever it is given, and the
message states exactly the range that is accepted (it is written from the declaration, not by hand).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from .errors import InputError

KINDS = ("int", "float", "bool", "choice", "str")


@dataclass(frozen=True)
class Opt:
    """One option: ``kind`` (int, float, bool, choice, str); for numbers the bounds ``ge``/``gt`` and
    ``le``/``lt`` (a float must also be finite); for ``choice`` the allowed ``choices``; ``none`` whether
    ``None`` is accepted (meaning: the default)."""
    kind: str
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple = ()
    none: bool = False
    help: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Opt kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError("a choice option needs its choices")

    def describe(self) -> str:
        """What is accepted, in words: 'an integer >= 1', 'a finite number > 0 and < 1', "one of 'a', 'b'"."""
        if self.kind == "choice":
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind == "bool":
            text = "true or false"
        elif self.kind == "str":
            text = "a string"
        else:
            text = "an integer" if self.kind == "int" else "a finite number"
            bounds = [f"{op} {_num(v)}" for op, v in ((">=", self.ge), (">", self.gt), ("<=", self.le),
                                                     ("<", self.lt)) if v is not None]
            if bounds:
                text += " " + " and ".join(bounds)
        return text

    def check(self, value: Any, where: str) -> Any:
        """``value`` as the option takes it (an integral float such as 4.0 stays refused for an int: JSON and
        Python both say 4); ``InputError`` '<where>: must be <describe()>, got <value>' otherwise."""
        if value is None and self.none:
            return None
        ok = False
        if self.kind == "bool":
            ok = isinstance(value, bool)
        elif self.kind == "str":
            ok = isinstance(value, str)
        elif self.kind == "choice":
            ok = isinstance(value, (str, int, float)) and not isinstance(value, bool) and value in self.choices
        elif self.kind == "int":
            ok = isinstance(value, int) and not isinstance(value, bool) and self._in_range(value)
        else:
            ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                  and self._in_range(value))
            if ok:
                value = float(value)
        if not ok:
            raise InputError(f"{where}: must be {self.describe()}, got {value!r}")
        return value

    def _in_range(self, v) -> bool:
        return ((self.ge is None or v >= self.ge) and (self.gt is None or v > self.gt)
                and (self.le is None or v <= self.le) and (self.lt is None or v < self.lt))


def _num(v: float) -> str:
    if float(v).is_integer() and abs(v) < 1e6:
        return str(int(v))
    return f"{v:g}".replace("e+0", "e").replace("e+", "e")


def check_options(owner: str, declared: Mapping[str, Opt] | None, given: Mapping[str, Any],
                  where: str = "option") -> dict:
    """``given`` checked against ``declared``: each value as ``Opt.check`` returns it.  An unknown key is
    refused naming it and listing the valid ones; ``declared=None`` (an owner that declares nothing) passes
    everything through.  ``where`` names how the options were given ('--option', '--policy-options', 'option'),
    ``owner`` whose options they are ("policy 'bace-pipe'", 'solve')."""
    if declared is None:
        return dict(given)
    out = {}
    for key, value in given.items():
        spec = declared.get(key)
        if spec is None:
            valid = ", ".join(sorted(declared)) or "none"
            raise InputError(f"{where} {key}: {owner} has no option {key!r} (its options: {valid})")
        out[key] = spec.check(value, f"{where} {key}")
    return out


def describe_options(declared: Mapping[str, Opt] | None) -> list[str]:
    """One line per option, 'name: what is accepted' (for help texts and ``bace-opt policies``)."""
    if declared is None:
        return ["(declares none: any keyword its class accepts)"]
    return [f"{k}: {v.describe()}" + (f" ({v.help})" if v.help else "") for k, v in sorted(declared.items())]


# ---------------------------------------------------------------------- the exact solve's options

#: the options of the exact solve (``bo.solve``, ``bace-opt solve``) and of its limit in ``bo.gap``
SOLVE_OPTIONS: dict[str, Opt] = {
    "time_limit": Opt("float", gt=0, le=1e9, none=True, help="wall-clock limit of the whole call or command, s"),
    "gap": Opt("float", ge=0, lt=1, none=True, help="relative gap to stop at"),
    "threads": Opt("int", ge=1, le=1024, none=True, help="solver threads"),
    "mu": Opt("float", ge=0, le=1e12, none=True, help="P2 weight of cost, s/USD"),
    "log_output": Opt("bool", none=True, help="show the solver's log"),
    "online_time_limit": Opt("float", gt=0, le=1e9, none=True, help="bo.gap: a cap on the online part (simulations, bounds, bracket) inside time_limit, s"),
    "t0": Opt("float", ge=0, le=1e12, none=True, help="P1: the decision epoch, s"),
    "slot_s": Opt("float", gt=0, le=1e9, none=True, help="P2 (MILP): the time slot, s"),
    "time_resolution_s": Opt("float", gt=0, le=1e9, none=True, help="P2 (CP-SAT): the time unit, s"),
    "max_blocks": Opt("int", ge=1, le=10**6, none=True, help="P2: blocks per job"),
    "routes_k": Opt("int", ge=1, le=64, none=True, help="P2: routes per region pair"),
}


def check_solve_options(given: Mapping[str, Any], names: Mapping[str, str] | None = None) -> dict:
    """``given`` (keys of ``SOLVE_OPTIONS``; others are left to the caller) checked against ``SOLVE_OPTIONS``;
    ``names``: how to name a key in a message (the command line's ``--time-limit``; default the keyword)."""
    names = names or {}
    return {k: SOLVE_OPTIONS[k].check(v, names.get(k, k)) for k, v in given.items() if k in SOLVE_OPTIONS}
