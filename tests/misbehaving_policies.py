"""Policies that misbehave on purpose, one class per kind (issue 36): each must be refused, named, on every path
(simulate, gap, bench --policy, adversary --policy).  Loaded by path, as a user's file would be
(``tests/misbehaving_policies.py:Kind``); every class is generic over the instance it is given."""
from __future__ import annotations

import math
import time

import bace_opt as bo
from bace_opt.policies import PolicyBase


def _fits_alone(job, state):
    """The cheapest region whose free GPUs hold the whole job, or None."""
    ok = [r for r in state.inst.eligible_regions(job) if state.free(r) >= job.gpus]
    return min(ok, key=lambda r: (state.price(r), r)) if ok else None


def _whole(job, now, region, **kw):
    return bo.JobPlan(job.name, kw.get("status", "done"), kw.get("start_s", now), (bo.Block(region, job.stages),),
                      ())


def _split(job, state):
    """(a, b): two regions joined by a link, for a plan over two regions."""
    link = state.inst.links[0]
    return link.a, link.b


class Base(PolicyBase):
    """A policy that starts nothing unless a subclass says otherwise."""

    options: dict = {}

    @property
    def name(self):
        return "mis-" + type(self).__name__.lower()

    def place(self, job, state):
        return None

    def decide(self, now, queue, state):
        return self.bad(now, list(queue), state)

    def first(self, queue):
        return max(queue, key=lambda j: (j.stages, j.name))

    def bad(self, now, queue, state):
        return []


# ---------------------------------------------------------------------- failures inside the policy
class Raises(Base):
    def bad(self, now, queue, state):
        return {}["no such key"]


class ExitsZero(Base):
    def bad(self, now, queue, state):
        raise SystemExit(0)


class ExitsThree(Base):
    def bad(self, now, queue, state):
        raise SystemExit(3)


class Interrupts(Base):
    def bad(self, now, queue, state):
        raise KeyboardInterrupt


class NeverReturns(Base):
    """Loops in Python code (the watchdog's exception stops it)."""

    def bad(self, now, queue, state):
        while True:
            time.sleep(0.01)


class RaisesBaceError(Base):
    """A bace_opt error raised from the policy's own code is still the policy's."""

    def bad(self, now, queue, state):
        raise bo.InputError("made up by the policy")


# ---------------------------------------------------------------------- wrong return types
class ReturnsDict(Base):
    def bad(self, now, queue, state):
        return {j.name: None for j in queue}


class ReturnsOnePlan(Base):
    def bad(self, now, queue, state):
        j = self.first(queue)
        return _whole(j, now, _fits_alone(j, state) or state.inst.regions[0].name)


class ReturnsString(Base):
    def bad(self, now, queue, state):
        return "start everything"


class ReturnsGenerator(Base):
    def bad(self, now, queue, state):
        return (p for p in [])


class ReturnsTuples(Base):
    def bad(self, now, queue, state):
        j = self.first(queue)
        return [(j.name, "done", now, ((state.inst.regions[0].name, j.stages),), ())]


class ReturnsNumber(Base):
    def bad(self, now, queue, state):
        return 42


# ---------------------------------------------------------------------- over-commits
class AllOnBiggest(Base):
    """Every job on the region with the most GPUs: each fits alone, not all together."""

    def bad(self, now, queue, state):
        r = max(state.inst.regions, key=lambda r: (r.gpus, r.name)).name
        return [_whole(j, now, r) for j in queue]


class _OverALink(Base):
    """The first job over the two ends of a link (one stage on one end, the rest on the other) with the hops
    ``hops(a, b)`` gives: one class for every kind whose plan is wrong only in its hops (each kind a subclass)."""

    @staticmethod
    def hops(a, b):
        return ()

    def bad(self, now, queue, state):
        j = self.first(queue)
        a, b = _split(j, state)
        return [bo.JobPlan(j.name, "done", now, (bo.Block(a, 1), bo.Block(b, j.stages - 1)), self.hops(a, b))]


class HugeReservation(_OverALink):
    """100,000 Gbit/s on a link of a few Gbit/s."""
    hops = staticmethod(lambda a, b: (bo.Hop((a, b), 1e5),))


class ZeroReservation(_OverALink):
    hops = staticmethod(lambda a, b: (bo.Hop((a, b), 0.0),))


class NanReservation(_OverALink):
    hops = staticmethod(lambda a, b: (bo.Hop((a, b), math.nan),))


class ForgedState(Base):
    """Writes more free GPUs into its state, then starts what that state says fits."""

    def bad(self, now, queue, state):
        object.__setattr__(state, "_free", {r.name: 10 ** 6 for r in state.inst.regions})
        r = state.inst.regions[0].name
        return [_whole(j, now, r) for j in queue]


# ---------------------------------------------------------------------- bad plans
class UnknownRegion(Base):
    def bad(self, now, queue, state):
        return [_whole(self.first(queue), now, "atlantis")]


class RouteNotALink(_OverALink):
    hops = staticmethod(lambda a, b: (bo.Hop((a, "atlantis", b), 1.0),))


class RouteWrongEnds(_OverALink):
    hops = staticmethod(lambda a, b: (bo.Hop((b, a), 1.0),))


class MissingHop(_OverALink):
    """No hop at all between the two blocks (``_OverALink``'s own ``hops``)."""


class WrongStages(Base):
    def bad(self, now, queue, state):
        j = self.first(queue)
        return [bo.JobPlan(j.name, "done", now, (bo.Block(state.inst.regions[0].name, j.stages + 1),), ())]


class ZeroStages(Base):
    def bad(self, now, queue, state):
        j = self.first(queue)
        return [bo.JobPlan(j.name, "done", now, (bo.Block(state.inst.regions[0].name, 0),), ())]


class StagesAsText(Base):
    def bad(self, now, queue, state):
        j = self.first(queue)
        return [bo.JobPlan(j.name, "done", now, (bo.Block(state.inst.regions[0].name, str(j.stages)),), ())]


class NoBlocks(Base):
    def bad(self, now, queue, state):
        return [bo.JobPlan(self.first(queue).name, "done", now, (), ())]


# ---------------------------------------------------------------------- wrong jobs, times, statuses
class StartsLate(Base):
    def bad(self, now, queue, state):
        j = min(queue, key=lambda j: (j.gpus, j.name))
        return [_whole(j, now, _fits_alone(j, state), start_s=now + 3600.0)]


class StartsNever(Base):
    def bad(self, now, queue, state):
        j = min(queue, key=lambda j: (j.gpus, j.name))
        return [bo.JobPlan(j.name, "done", None, (bo.Block(_fits_alone(j, state), j.stages),), ())]


class StartsNaN(Base):
    def bad(self, now, queue, state):
        j = min(queue, key=lambda j: (j.gpus, j.name))
        return [_whole(j, now, _fits_alone(j, state), start_s=math.nan)]


class Duplicate(Base):
    def bad(self, now, queue, state):
        j = min(queue, key=lambda j: (j.gpus, j.name))
        p = _whole(j, now, _fits_alone(j, state))
        return [p, p]


class BlockedStatus(Base):
    def bad(self, now, queue, state):
        return [bo.JobPlan(self.first(queue).name, "blocked")]


class UnknownJob(Base):
    def bad(self, now, queue, state):
        r = state.inst.regions[0].name
        return [bo.JobPlan("nobody-submitted-this", "done", now, (bo.Block(r, 1),), ())]


class NameNotText(Base):
    def bad(self, now, queue, state):
        return [bo.JobPlan(7, "done", now, (bo.Block(state.inst.regions[0].name, 1),), ())]


# ---------------------------------------------------------------------- writes into the instance
class ShrinksJob(Base):
    """Rewrites a job of the instance it was given (one stage, one GPU), then places that."""

    def bad(self, now, queue, state):
        j = self.first(queue)
        object.__setattr__(j, "stages", 1)
        object.__setattr__(j, "gpus_per_stage", 1)
        return [bo.JobPlan(j.name, "done", now, (bo.Block(state.inst.regions[0].name, 1),), ())]


class GrowsRegion(Base):
    """Gives a region of its instance 10,000 GPUs, then starts nothing."""

    def bad(self, now, queue, state):
        object.__setattr__(state.inst.regions[0], "gpus", 10 ** 4)
        return []


class CheapensPower(Base):
    """Writes a lower price into a region of its instance; starts nothing."""

    def bad(self, now, queue, state):
        object.__setattr__(state.inst.regions[0], "price_usd_per_kwh", 0.0)
        return []


#: every kind, refused on every path
KINDS = [c.__name__ for c in (
    Raises, ExitsZero, ExitsThree, Interrupts, NeverReturns, RaisesBaceError,
    ReturnsDict, ReturnsOnePlan, ReturnsString, ReturnsGenerator, ReturnsTuples, ReturnsNumber,
    AllOnBiggest, HugeReservation, ZeroReservation, NanReservation, ForgedState,
    UnknownRegion, RouteNotALink, RouteWrongEnds, MissingHop, WrongStages, ZeroStages, StagesAsText, NoBlocks,
    StartsLate, StartsNever, StartsNaN, Duplicate, BlockedStatus, UnknownJob, NameNotText,
    ShrinksJob, GrowsRegion, CheapensPower)]
