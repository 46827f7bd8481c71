"""``bace-opt policies``: the registered policies, shipped and from installed packages, one a line.

A policy of one's own needs no registration to run (``--policy package.module:Class`` or
``--policy path/to/file.py:Class``); a package registers one by name through the entry-point group
``bace_opt.policies`` (docs/policies.md), and it is then listed here.
"""
from __future__ import annotations

import json


def add_parser(sub):
    p = sub.add_parser("policies", help="list the registered policies (shipped and from installed packages)",
                       description="List every policy a name can select: the shipped ones and those that "
                                   "installed packages register through the entry-point group "
                                   "'bace_opt.policies'. Any other policy runs by import path: "
                                   "--policy package.module:Class or --policy path/to/file.py:Class.")
    p.add_argument("--json", action="store_true", help="print a JSON object name -> description")
    p.add_argument("--options", action="store_true",
                   help="also list each policy's options with what each accepts (what --option checks)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..options import describe_options
    from ..policies.registry import REGISTRY, declared_options, registry
    reg = registry()
    opts = {n: _options(n, declared_options, describe_options) for n in reg} if args.options else {}
    if args.json:
        print(json.dumps({n: {"description": d, "shipped": n in REGISTRY, **({"options": opts[n]} if opts else {})}
                          for n, (_, d) in reg.items()}, indent=1))
        return 0
    w = max(len(n) for n in reg)
    for n, (_, d) in reg.items():
        print(f"{n:<{w}}  {d}")
        for line in opts.get(n, ()):
            print(f"{'':<{w}}    {line}")
    return 0


def _options(name, declared_options, describe_options) -> list[str]:
    """The option lines of one policy; a package's policy that cannot be imported is listed with the reason."""
    from ..errors import InputError
    try:
        return describe_options(declared_options(name))
    except InputError as e:
        return [f"(its options cannot be read: {e})"]
