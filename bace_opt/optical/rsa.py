"""Routing and spectrum assignment (RSA) policies: one class per policy, one entry point ``choose``.

``choose(grid, links, widths)`` gets the request's candidate paths (as link-id tuples, in the network's
candidate order, eq. 2) and the block width each path needs (data + guard slots, eq. 3) and returns
``(path index, first slot)`` or None (blocked).  Policies never write the grid; the caller allocates.

    SP-FF / SD-FF  the first candidate only (shortest path; by length = shortest distance), first fit
    KSP-FF         the first candidate path with a fitting block, first fit on it
    KSP-LF         as KSP-FF with last fit (highest free block)
    KSP-BF         the first candidate path with a fitting block, best fit on it: the block at the start of the
                   smallest free run that holds it (XLRON's ksp_bf; before issue 31 this name meant BF-KSP)
    FF-KSP         first fit across all candidates: the lowest first slot any candidate offers (ties: earlier
                   candidate; XLRON's ff_ksp)
    LF-KSP         last fit across all candidates: the highest first slot (ties: earlier candidate)
    BF-KSP         best fit over all candidates: the block sitting in the smallest free run that holds it
                   (ties: earlier candidate, lower slot)
    KSP-MU         most used: among the candidate paths with a fit, the block whose slot index is used on the
                   most links of the network (ties: earlier candidate, lower slot)

The names follow XLRON (docs/heuristic_evaluation.md): KSP-x tries paths in order and takes the first path
with a fit; x-KSP searches every candidate for the globally best block.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import InputError
from .spectrum import SpectrumGrid, best_fit, first_fit, fit_starts, last_fit


class RsaPolicy:
    name = ""
    max_paths: int | None = None     # None: every candidate
    paths: tuple[str, str] | None = None   # (metric, order) the policy fixes, or None: the caller's choice

    def choose(self, grid: SpectrumGrid, links: Sequence[tuple[int, ...]], widths: Sequence[int]):
        raise NotImplementedError


class FirstFit(RsaPolicy):
    """KSP-FF (or SP-FF / SD-FF with ``max_paths=1``)."""

    def __init__(self, name: str = "ksp-ff", max_paths: int | None = None, paths: tuple[str, str] | None = None):
        self.name = name
        self.max_paths = max_paths
        self.paths = paths

    def choose(self, grid, links, widths):
        occ, full = grid.occ, grid.full
        n = len(links) if self.max_paths is None else min(self.max_paths, len(links))
        for i in range(n):
            o = 0
            for e in links[i]:
                o |= occ[e]
            f = first_fit(~o & full, widths[i])
            if f >= 0:
                return i, f
        return None


class LastFit(RsaPolicy):
    name = "ksp-lf"

    def choose(self, grid, links, widths):
        for i, ls in enumerate(links):
            f = last_fit(grid.free_mask(ls), widths[i])
            if f >= 0:
                return i, f
        return None


class FirstFitAcross(RsaPolicy):
    """FF-KSP (``last=False``) / LF-KSP (``last=True``): the globally lowest / highest first slot."""

    def __init__(self, last: bool = False):
        self.last = last
        self.name = "lf-ksp" if last else "ff-ksp"

    def choose(self, grid, links, widths):
        best = None
        fit = last_fit if self.last else first_fit
        for i, ls in enumerate(links):
            f = fit(grid.free_mask(ls), widths[i])
            if f >= 0 and (best is None or (f > best[1] if self.last else f < best[1])):
                best = (i, f)
        return best


class KspBestFit(RsaPolicy):
    name = "ksp-bf"

    def choose(self, grid, links, widths):
        for i, ls in enumerate(links):
            f, _ = best_fit(grid.free_mask(ls), widths[i])
            if f >= 0:
                return i, f
        return None


class BestFit(RsaPolicy):
    name = "bf-ksp"

    def choose(self, grid, links, widths):
        best = None
        for i, ls in enumerate(links):
            f, run = best_fit(grid.free_mask(ls), widths[i])
            if f >= 0 and (best is None or run < best[0]):
                best = (run, i, f)
        return None if best is None else (best[1], best[2])


class MostUsed(RsaPolicy):
    name = "ksp-mu"

    def choose(self, grid, links, widths):
        import numpy as np
        nbytes = (grid.slots + 7) // 8

        def bits(x: int):
            return np.unpackbits(np.frombuffer(x.to_bytes(nbytes, "little"), dtype=np.uint8),
                                 bitorder="little")[:grid.slots]
        use = np.zeros(grid.slots, dtype=np.int64)
        for o in grid.occ:
            if o:
                use += bits(o)
        cs = np.concatenate(([0], np.cumsum(use)))
        best = None
        for i, ls in enumerate(links):
            w = widths[i]
            m = fit_starts(grid.free_mask(ls), w)
            if not m:
                continue
            starts = np.flatnonzero(bits(m))
            score = cs[starts + w] - cs[starts]
            j = int(np.argmax(score))            # first maximum: lowest slot
            if best is None or score[j] > best[0]:
                best = (int(score[j]), i, int(starts[j]))
        return None if best is None else (best[1], best[2])


def get_rsa_policy(name: str) -> RsaPolicy:
    """A policy by its CLI name (RSA_POLICIES)."""
    n = name.lower()
    if n == "sp-ff":      # shortest path = fewest hops (ties: shorter)
        return FirstFit(n, max_paths=1, paths=("hops", "hops"))
    if n == "sd-ff":      # shortest distance
        return FirstFit(n, max_paths=1, paths=("length", "length"))
    if n == "ksp-ff":
        return FirstFit("ksp-ff")
    if n == "ksp-lf":
        return LastFit()
    if n == "ksp-bf":
        return KspBestFit()
    if n == "bf-ksp":
        return BestFit()
    if n in ("ff-ksp", "lf-ksp"):
        return FirstFitAcross(last=n == "lf-ksp")
    if n == "ksp-mu":
        return MostUsed()
    raise InputError(f"RSA policy must be one of {', '.join(RSA_POLICIES)}, got {name!r}")


RSA_POLICIES = ("sp-ff", "sd-ff", "ksp-ff", "ksp-lf", "ksp-bf", "ff-ksp", "lf-ksp", "bf-ksp", "ksp-mu")
