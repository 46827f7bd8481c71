"""Registry of solver back ends: names, what each is, whether it is installed.

    available("scip")   -> bool
    require("cpsat")    -> raises SolverUnavailableError with a clear message if missing
    names()             -> all known solver names

Besides the back ends it declares one name that is not a back end: "race", P1's racing portfolio of back ends
(kind "race"; run by ``bace_opt.exact.p1.race``).  It is declared here, as data, so that every solver name is
checked in one place; it is available when one of its default members ``RACE_MEMBERS`` is.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import SolverUnavailableError


@dataclass(frozen=True)
class Backend:
    name: str
    description: str
    kind: str                      # "milp" (the Pyomo model), "cp" (its own CP-SAT model), "race" (a portfolio),
    check: Callable[[], bool]
    warm_start: bool


def _highs():
    from . import highs
    return highs.available()


def _scip():
    from . import mathopt
    return mathopt.available("scip")


def _mo_highs():
    from . import mathopt
    return mathopt.available("mathopt-highs")


def _cpsat():
    from . import cpsat
    return cpsat.available()


#: the back ends a race runs when none are named (``--race-members``; bace_opt.exact.p1.race)
RACE_MEMBERS = ("highs", "cpsat")


def _race():
    return any(available(m) for m in RACE_MEMBERS)


BACKENDS: dict[str, Backend] = {
    "highs": Backend("highs", "HiGHS in-process through Pyomo (appsi)", "milp", _highs, True),
    "scip": Backend("scip", "SCIP through OR-Tools MathOpt, from the Pyomo model's MPS export", "milp", _scip, True),
    "mathopt-highs": Backend("mathopt-highs", "HiGHS through OR-Tools MathOpt, from the Pyomo model's MPS export",
                             "milp", _mo_highs, False),
    "cpsat": Backend("cpsat", "OR-Tools CP-SAT on its own integer model", "cp", _cpsat, True),
    "race": Backend("race", "racing portfolio (P1): HiGHS and CP-SAT (and SCIP when asked) in parallel processes, "
                            "first proof wins", "race", _race, True),
}


def names() -> list[str]:
    return list(BACKENDS)


def available(name: str) -> bool:
    b = BACKENDS.get(name)
    if b is None:
        return False
    try:
        return bool(b.check())
    except Exception:
        return False


def require(name: str) -> Backend:
    if name not in BACKENDS:
        raise SolverUnavailableError(f"unknown solver {name!r}; known: {', '.join(BACKENDS)}")
    if not available(name):
        raise SolverUnavailableError(f"solver {name!r} ({BACKENDS[name].description}) is not installed or "
                                     f"cannot be imported")
    return BACKENDS[name]
