"""What installed packages declare, read so that one damaged package cannot break every command (issue 42).

``importlib.metadata.entry_points()`` parses the ``entry_points.txt`` of every installed package, and raises on
one it cannot parse (a line without ``=``, bytes that are not UTF-8), whoever asked for which group: networkx asks
for its back ends when it is imported, so before, a damaged file of an unrelated package was a traceback and exit
1 on every command.  ``guard()`` runs once, when ``bace_opt`` is imported and before networkx is: where the
entry points cannot all be read, it finds the packages whose file is damaged, leaves them out of
``importlib.metadata.distributions()`` (which ``entry_points()`` reads) for this process, and records one
warning naming them and their files, said once per process by ``warn_damaged`` (the CLI once its logging is set
up, ``policies.registry.plugins`` for the API).  Nothing is imported or run from any package here.
"""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)

#: the packages left out, one line each (package, file, why); empty when every file could be read
DAMAGED: list[str] = []
_said = False
_held = False


def _where(dist) -> str:
    """A package's name (or its folder, where even that cannot be read) and its entry points' file."""
    path = getattr(dist, "_path", None)        # a PathDistribution's .dist-info folder (stdlib)
    try:
        name = dist.metadata["Name"] or None
    except Exception:
        name = None
    where = f"{path}/entry_points.txt" if path is not None else "its entry_points.txt"
    return f"package {name or path or '?'!s} ({where})"


def guard() -> None:
    """Leave out of ``importlib.metadata.distributions()`` every package whose ``entry_points.txt`` cannot be
    parsed, and record why (``DAMAGED``).  Costs one parse of the entry points when nothing is damaged."""
    import importlib.metadata as md
    try:
        md.entry_points()
        return
    except Exception:
        pass
    bad: set[str] = set()
    for dist in md.distributions():
        try:
            dist.entry_points
        except Exception as e:
            bad.add(str(getattr(dist, "_path", id(dist))))
            DAMAGED.append(f"{_where(dist)} cannot be parsed ({type(e).__name__}: {e})"[:300])
    if not bad:
        return
    found = md.distributions

    def distributions(**kw):
        return (d for d in found(**kw) if str(getattr(d, "_path", id(d))) not in bad)
    md.distributions = distributions


def hold() -> None:
    """Keep the warning until ``warn_damaged(now=True)``: the CLI says it once its logging is set up (its parser,
    built before, lists the policies)."""
    global _held
    _held = True


def warn_damaged(now: bool = False) -> None:
    """The one warning naming the packages ``guard`` left out (once per process; nothing when none).  Held
    (``hold``) unless ``now``."""
    global _said
    if DAMAGED and not _said and (now or not _held):
        _said = True
        log.warning("the entry points of %d installed package(s) cannot be read and are ignored: %s",
                    len(DAMAGED), "; ".join(DAMAGED))
