"""``bace-opt validate INSTANCE``: exit 0 if valid; else every problem with its place, exit 2."""
from __future__ import annotations

from ..instance import load_instance


def add_parser(sub):
    p = sub.add_parser("validate", help="check an instance file; list every problem",
                       description="Load and validate an instance file. Prints a one-line summary and exits 0 "
                                   "when valid; otherwise prints every problem with its field path and exits 2.")
    p.add_argument("instance", help="instance JSON file (schema bace-opt/instance/v1)")
    p.set_defaults(func=run)


def run(args) -> int:
    inst = load_instance(args.instance)
    print(f"{args.instance}: valid: {inst.name!r}, {len(inst.regions)} regions "
          f"({len(inst.compute_regions)} with GPUs, {inst.total_gpus} GPUs), {len(inst.links)} links, "
          f"{len(inst.jobs)} jobs")
    return 0
