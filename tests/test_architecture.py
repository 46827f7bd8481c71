"""The package's structure, read from its source with ``ast`` (nothing of ``bace_opt`` is imported).

The import graph counts every import, those inside functions included, and skips ``if TYPE_CHECKING:`` blocks.
It must hold:

* no cycle between modules;
* every import goes to the same layer or a lower one (``LAYERS``, docs/architecture.md);
* no name starting with ``_`` is imported from another module, and no module reads ``ClusterState``'s private
  fields from outside ``policies/base.py``;
* no module over ``MAX_MODULE_LINES`` lines, no function over ``MAX_FUNCTION_LINES`` lines.

The checks are functions of a source tree, so the tests also run them on small trees written here that break
each rule, and each must be caught.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "bace_opt"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 150

#: the layers, lowest first: a module may import its own layer and those below.  A module belongs to the
#: first entry whose name is the module or one of its parent packages (the package root ``bace_opt`` itself is
#: the public facade, on top).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "files", "_check", "_format", "data", "procs", "options", "clock", "installed", "progress"),  # leaves: errors, files, input checks, data readers, worker processes, option declarations, the deadline, installed packages' entry points, progress lines
    ("instance", "schedule", "formulas"),
    ("builders", "pipeline", "solvers"),
    ("evaluate", "optical"),
    ("policies",),
    ("exact",),
    ("sim",),
    ("adversary", "bench", "gaps"),
    ("plot", "cli", "__main__", ""),
)
#: ClusterState's private fields: only its own module reads them
STATE_PRIVATE = ("_free", "_bw", "_prices", "_in_use")
STATE_MODULE = "policies.base"


@dataclass
class Tree:
    """A package's modules (dotted names without the package's own name; "" is its ``__init__``)."""
    root: Path
    modules: dict[str, Path] = field(default_factory=dict)
    packages: set[str] = field(default_factory=set)

    @classmethod
    def read(cls, root: Path) -> "Tree":
        t = cls(root)
        for p in sorted(root.rglob("*.py")):
            parts = list(p.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
                t.packages.add(".".join(parts))
            t.modules[".".join(parts)] = p
        return t

    def owner(self, dotted: str) -> str:
        """The module that a dotted name inside the package lives in (its longest known prefix)."""
        while dotted not in self.modules and dotted:
            dotted = dotted.rsplit(".", 1)[0] if "." in dotted else ""
        return dotted


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            for stmt in n.body:
                for c in ast.walk(stmt):
                    skip.add(id(c))
    return skip


def imports(t: Tree, pkg: str) -> list[tuple[str, str, str | None, int]]:
    """(importer, imported module, imported name or None, line) for every import of the package's own code."""
    out = []
    for mod, path in t.modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skip = _type_checking_nodes(tree)
        here = mod.split(".") if mod else []
        if mod not in t.packages:
            here = here[:-1]
        for n in ast.walk(tree):
            if id(n) in skip:
                continue
            if isinstance(n, ast.Import):
                for a in n.names:
                    if a.name == pkg or a.name.startswith(pkg + "."):
                        out.append((mod, t.owner(a.name[len(pkg) + 1:]), None, n.lineno))
            elif isinstance(n, ast.ImportFrom):
                if n.level:
                    base = here[:len(here) - (n.level - 1)] if n.level > 1 else list(here)
                    target = ".".join(base + ([n.module] if n.module else []))
                elif n.module and (n.module == pkg or n.module.startswith(pkg + ".")):
                    target = n.module[len(pkg) + 1:]
                else:
                    continue
                for a in n.names:
                    full = f"{target}.{a.name}" if target else a.name
                    if full in t.modules:          # a submodule imported by name
                        out.append((mod, full, None, n.lineno))
                    else:
                        out.append((mod, t.owner(target), a.name, n.lineno))
    return out


def layer_of(mod: str) -> int:
    for i, names in enumerate(LAYERS):
        for name in names:
            if name == "" and mod == "":
                return i
            if name and (mod == name or mod.startswith(name + ".")):
                return i
    raise AssertionError(f"module {mod!r} belongs to no layer: add it to LAYERS (tests/test_architecture.py)")


def cycles(t: Tree, pkg: str) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {m: set() for m in t.modules}
    for a, b, _, _ in imports(t, pkg):
        if a != b:
            graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def upward(t: Tree, pkg: str) -> list[str]:
    return [f"{a or pkg} (layer {layer_of(a)}) imports {b or pkg} (layer {layer_of(b)}), line {line}"
            for a, b, _, line in imports(t, pkg) if a != b and layer_of(b) > layer_of(a)]


def private_names(t: Tree, pkg: str) -> list[str]:
    out = [f"{a or pkg} imports {name} from {b or pkg}, line {line}"
           for a, b, name, line in imports(t, pkg)
           if name and name.startswith("_") and not name.startswith("__") and a != b]
    for mod, path in t.modules.items():
        if mod == STATE_MODULE:
            continue
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(n, ast.Attribute) and n.attr in STATE_PRIVATE
                    and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"))):
                out.append(f"{mod} reads .{n.attr} (ClusterState's private field), line {n.lineno}")
    return out


def sizes(t: Tree) -> list[str]:
    out = []
    for mod, path in t.modules.items():
        text = path.read_text(encoding="utf-8")
        n = len(text.splitlines())
        if n > MAX_MODULE_LINES:
            out.append(f"{path.relative_to(t.root.parent)}: {n} lines (at most {MAX_MODULE_LINES})")
        for f in ast.walk(ast.parse(text)):
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = f.end_lineno - f.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    out.append(f"{path.relative_to(t.root.parent)}:{f.lineno} {f.name}: {length} lines "
                               f"(at most {MAX_FUNCTION_LINES})")
    return out


# ---------------------------------------------------------------------------- the package itself

@pytest.fixture(scope="module")
def tree() -> Tree:
    return Tree.read(PACKAGE)


def test_every_module_has_a_layer(tree):
    for mod in tree.modules:
        layer_of(mod)


def test_no_import_cycles(tree):
    assert cycles(tree, "bace_opt") == []


def test_imports_go_only_downward(tree):
    assert upward(tree, "bace_opt") == []


def test_no_private_names_across_modules(tree):
    assert private_names(tree, "bace_opt") == []


def test_module_and_function_sizes(tree):
    assert sizes(tree) == []


# ---------------------------------------------------------------------------- the checks catch what they must

def _write(root: Path, files: dict[str, str]) -> Tree:
    for rel, text in files.items():
        p = root / "pk" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return Tree.read(root / "pk")


def test_checks_catch_a_cycle_hidden_in_a_function(tmp_path):
    t = _write(tmp_path, {"__init__.py": "", "instance.py": "def f():\n    from .optical import net\n",
                          "optical/__init__.py": "", "optical/net.py": "from ..instance import f\n"})
    assert cycles(t, "pk") == [["instance", "optical.net"]]
    assert upward(t, "pk") == ["instance (layer 1) imports optical.net (layer 3), line 2"]


def test_checks_skip_type_checking_blocks(tmp_path):
    t = _write(tmp_path, {"__init__.py": "", "schedule.py": "from typing import TYPE_CHECKING\n"
                          "if TYPE_CHECKING:\n    from pk.sim import Sim\n", "sim.py": "from .schedule import x\n"})
    assert cycles(t, "pk") == [] and upward(t, "pk") == []


def test_checks_catch_private_names_and_state_fields(tmp_path):
    t = _write(tmp_path, {"__init__.py": "", "policies/__init__.py": "",
                          "policies/base.py": "def _eligible():\n    pass\nclass S:\n    def f(self):\n"
                                              "        return self._free\n",
                          "policies/mine.py": "from .base import _eligible\nfrom . import base as b\n"
                                              "def g(state):\n    return state._bw\n"})
    assert private_names(t, "pk") == ["policies.mine imports _eligible from policies.base, line 1",
                                      "policies.mine reads ._bw (ClusterState's private field), line 4"]


def test_checks_catch_sizes(tmp_path):
    body = "    x = 1\n" * MAX_FUNCTION_LINES
    t = _write(tmp_path, {"__init__.py": "", "errors.py": "def big():\n" + body,
                          "files.py": "x = 1\n" * (MAX_MODULE_LINES + 1)})
    got = sizes(t)
    assert len(got) == 2 and any("big: 151 lines" in g for g in got) and any("601 lines" in g for g in got)


def test_unknown_module_has_no_layer():
    with pytest.raises(AssertionError, match="belongs to no layer"):
        layer_of("somewhere_new")
