"""What a policy is handed: a read-only view of the instance that holds only the jobs that have arrived.

A policy (``decide``'s ``queue`` and ``state.inst``, ``place``, ``queue_session``) never sees a job before it
arrives (issue 43 item 1, non-anticipativity), and cannot change what it sees (issue 46).  ``InstanceView`` is
an ``Instance`` whose resources (GPU types, regions, links, prices, the objective, the optical layer) are known
from the start, and whose ``jobs`` are the jobs that have arrived, in arrival order: the gate appends a job when
it arrives (``arrive``), never copies the view.

* **Read-only values.**  Every job, region, link, GPU type, price series and the objective is a *frozen view*
  (``freeze``): an object of a subclass of its own class (``isinstance(job, Job)`` holds) whose fields live in a
  tuple, read through the same C descriptors as a named tuple's.  Reading a field costs what it costs on the
  dataclass; writing one is refused, ``job.stages = 1`` with ``ReadOnlyView`` and ``object.__setattr__(job,
  "stages", 1)`` (which gets past a frozen dataclass) with ``AttributeError`` (``refused_write`` recognizes both).
  Nothing has to be fingerprinted: a value that cannot change needs no check.  ``dataclasses.replace`` and
  ``copy`` of a view give a plain object of the base class (a policy may build instances and jobs of its own).
* **The containers.**  ``gpu_types`` is a read-only mapping, ``regions`` and ``links`` tuples, ``jobs`` an
  ``ArrivedJobs`` sequence, ``job_index`` a read-only mapping.  The view's own fields can still be rebound with
  ``object.__setattr__`` (the view keeps a ``__dict__`` for the caches the policies keep on an instance);
  ``intact()`` says so in O(1): the fields are the objects the view was made with, and the arrived jobs are the
  list the gate appended to, as long as it left it.
* ``job_index[name]`` is the job's position in the instance as loaded (its id, and the shipped policies'
  tie-break), so a decision does not depend on how many jobs arrived before; ``jobs`` is in arrival order, so
  use ``job(name)`` (not ``jobs[job_index[name]]``) to find a job by name.
"""
from __future__ import annotations

import copy
import dataclasses
from collections import namedtuple
from collections.abc import Mapping, Sequence
from operator import is_, itemgetter
from types import MappingProxyType
from typing import Any

from ..instance import Instance, Job


class ReadOnlyView(AttributeError):
    """A policy tried to write into what it was handed (an ``AttributeError``, as a frozen dataclass raises)."""


#: the messages of a refused write through ``object.__setattr__`` / ``object.__delattr__`` on a tuple field
_REFUSED = ("can't set attribute", "can't delete attribute")


def refused_write(e: BaseException) -> bool:
    """Whether ``e`` is a write into a frozen view that was refused (module doc)."""
    return isinstance(e, ReadOnlyView) or (type(e) is AttributeError and str(e) in _REFUSED)


def _rebuild(cls: type, kwargs: dict) -> Any:
    return cls(**kwargs)


def thaw(value: Any) -> Any:
    """A plain copy of ``value`` without views (frozen views, read-only mappings, arrived jobs): what ``copy`` and
    ``pickle`` of a view hold, so a worker process gets an ordinary ``Instance``."""
    base = getattr(type(value), "_view_of", None)
    if base is not None:
        return _rebuild(base, {f.name: thaw(getattr(value, f.name)) for f in dataclasses.fields(base) if f.init})
    if isinstance(value, (MappingProxyType, dict)):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (ArrivedJobs, tuple)):
        return tuple(thaw(v) for v in value)
    return value


def _refuse(self, name, value=None):
    raise ReadOnlyView(f"{type(self).__name__}.{name} is read-only: a policy must not write to what it is handed")


def _view_new(cls, *args, **kwargs):
    """Calling a view class (``dataclasses.replace``) builds a plain object of its base class."""
    return cls._view_of(*args, **kwargs)


def _view_reduce(self):
    base = self._view_of
    return _rebuild, (base, {f.name: thaw(getattr(self, f.name)) for f in dataclasses.fields(base) if f.init})


_CLASSES: dict[type, type] = {}
#: values that are immutable as they are
_PLAIN = frozenset({str, int, float, bool, type(None)})


def view_class(base: type) -> type:
    """The frozen-view subclass of the dataclass ``base`` (module doc), made once per class."""
    cls = _CLASSES.get(base)
    if cls is None:
        names = [f.name for f in dataclasses.fields(base)]
        getters = namedtuple("Fields", names, rename=True)
        ns = {"__slots__": (), "__module__": __name__, "__qualname__": base.__qualname__, "_view_of": base,
              "_view_names": tuple(names), "_view_init": tuple(f.init for f in dataclasses.fields(base)),
              "__new__": _view_new, "__init__": lambda self, *a, **k: None, "__reduce__": _view_reduce,
              "__setattr__": _refuse, "__delattr__": _refuse, "__eq__": base.__eq__, "__ne__": object.__ne__,
              "__hash__": base.__hash__, "__repr__": base.__repr__, "__copy__": lambda self: thaw(self),
              "__deepcopy__": lambda self, memo: thaw(self)}
        for i, n in enumerate(names):
            ns[n] = getattr(getters, getters._fields[i])      # the named tuple's C field descriptor
        cls = _CLASSES[base] = type(base.__name__, (tuple, base), ns)
    return cls


def _fresh(v: Any) -> Any:
    """A field not set by ``__init__`` (a cache): an empty one of its kind."""
    return type(v)() if isinstance(v, (dict, list, set)) else v


def freeze(value: Any) -> Any:
    """A read-only view of ``value`` (module doc): a frozen dataclass as its frozen view (its fields frozen in
    turn; a field not set by ``__init__``, a cache, starts empty), a tuple of frozen values, a mapping as a
    read-only mapping; anything else (numbers, strings, None) as it is."""
    if type(value) in _PLAIN:
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        base = getattr(type(value), "_view_of", type(value))
        cls = view_class(base)
        vals = [(v if type(v) in _PLAIN else freeze(v)) if init else _fresh(v)
                for init, v in zip(cls._view_init, map(value.__getattribute__, cls._view_names))]
        return tuple.__new__(cls, vals)
    if isinstance(value, tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    return value


class ArrivedJobs(Sequence):
    """The jobs that have arrived, in arrival order: a read-only sequence the gate appends to (``InstanceView``)."""

    __slots__ = ("_jobs",)

    def __init__(self, jobs: list):
        self._jobs = jobs

    def __len__(self) -> int:
        return len(self._jobs)

    def __getitem__(self, i):
        return tuple(self._jobs[i]) if isinstance(i, slice) else self._jobs[i]

    def __iter__(self):
        return iter(self._jobs)

    def __eq__(self, other) -> bool:
        if isinstance(other, (ArrivedJobs, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __reduce__(self):
        return tuple, (tuple(thaw(j) for j in self._jobs),)

    def __repr__(self) -> str:
        return f"ArrivedJobs({len(self._jobs)} jobs)"


_FIELDS = tuple(f.name for f in dataclasses.fields(Instance))
_GET_FIELDS = itemgetter(*_FIELDS)


class InstanceView(Instance):
    """The instance a policy is handed (module doc): every resource, the jobs arrived so far.  Made by ``of``;
    calling the class (``dataclasses.replace``, ``replace``) builds a plain ``Instance``."""

    def __new__(cls, *args, **kwargs):
        return Instance(*args, **kwargs)

    @classmethod
    def of(cls, inst: Instance) -> "InstanceView":
        """A view of ``inst``'s resources, with no job yet (``arrive`` adds them)."""
        v = object.__new__(cls)
        jobs: list = []
        fields = {"name": inst.name, "gpu_types": freeze(dict(inst.gpu_types)), "reference_gpu": inst.reference_gpu,
                  "regions": freeze(tuple(inst.regions)), "links": freeze(tuple(inst.links)),
                  "jobs": ArrivedJobs(jobs), "objective": freeze(inst.objective),
                  "meta": copy.deepcopy(dict(inst.meta)), "optical": freeze(inst.optical)}
        d = v.__dict__
        d.update(fields)
        d["_view_fields"] = tuple(fields[k] for k in _FIELDS)
        d["_view_jobs"] = jobs
        d["_view_index"] = {}
        d["_view_by_name"] = {}
        d["_view_index_ro"] = MappingProxyType(d["_view_index"])
        return v

    def __setattr__(self, name, value):
        _refuse(self, name)

    def __delattr__(self, name):
        _refuse(self, name)

    def __reduce__(self):
        return _rebuild, (Instance, {k: thaw(getattr(self, k)) for k in _FIELDS})

    def __copy__(self):
        return thaw_instance(self)

    def __deepcopy__(self, memo):
        return thaw_instance(self)

    # ------------------------------------------------------------------ the jobs
    @property
    def job_index(self) -> Mapping[str, int]:
        """Each arrived job's position in the instance as loaded (read-only; module doc)."""
        return self.__dict__["_view_index_ro"]

    def job(self, name: str) -> Job:
        return self.__dict__["_view_by_name"][name]

    def arrive(self, job: Job, index: int) -> Job:
        """``job`` (of the instance as loaded, at position ``index``) has arrived: its frozen view is appended and
        returned.  Called by the gate only."""
        d = self.__dict__
        jv = freeze(job)
        d["_view_jobs"].append(jv)
        d["_view_index"][job.name] = index
        d["_view_by_name"][job.name] = jv
        return jv

    def intact(self) -> str | None:
        """None, or what of the view's own fields a policy rebound (O(1), all in C while nothing changed)."""
        d = self.__dict__
        try:
            now = _GET_FIELDS(d)
        except KeyError as e:
            return f"its field {e.args[0]!r} was deleted"
        snap = d["_view_fields"]
        if not all(map(is_, now, snap)):
            return "its field " + ", ".join(repr(k) for k, a, b in zip(_FIELDS, now, snap) if a is not b) \
                + " was replaced"
        lst, by_name = d["_view_jobs"], d["_view_by_name"]
        if d["jobs"]._jobs is not lst or len(lst) != len(by_name) \
                or (lst and by_name.get(lst[-1].name) is not lst[-1]):
            return "its list of arrived jobs was changed"
        return None


def thaw_instance(view: InstanceView) -> Instance:
    """A plain ``Instance`` of what the view holds now (its copy, its pickle)."""
    return Instance(**{k: thaw(getattr(view, k)) for k in _FIELDS})
