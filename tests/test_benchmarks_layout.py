"""The benchmarks folder holds maintained benchmarks, and its README cites what it keeps (issue 26 item 5).

- every file in ``benchmarks/results/`` is cited by ``benchmarks/README.md``, and every file it cites exists;
- every relative link of ``benchmarks/README.md`` and of the research topics' READMEs resolves;
- no file in ``benchmarks/`` edits ``sys.path``, and no benchmark imports another (they share ``benchmarks.common``);
- every ``benchmarks/bench_*.py`` imports as ``benchmarks.bench_<name>`` without running anything.

A results file is cited when its path under ``results/`` appears in the README as ``results/<path>`` (brace
groups such as ``results/optical-ksp-ff-sweep.{txt,csv,png}`` expand; a cited folder ``results/<dir>/`` covers
the files under it).
"""
from __future__ import annotations

import ast
import contextlib
import importlib
import io
import itertools
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
RESULTS = BENCH / "results"
README = BENCH / "README.md"
RESEARCH = ROOT / "docs" / "research"

_CITED = re.compile(r"(?<![\w./-])(?:benchmarks/)?results/([\w.{},*/+-]+)")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_IGNORED = {".gitignore"}


def _expand(token: str) -> list[str]:
    """``a{b,c}d{e,f}`` -> abde, abdf, acde, acdf (one level of braces per group)."""
    parts = re.split(r"(\{[^{}]*\})", token)
    choices = [p[1:-1].split(",") if p.startswith("{") else [p] for p in parts]
    return ["".join(c) for c in itertools.product(*choices)]


def _citations(text: str) -> set[str]:
    out = set()
    for m in _CITED.finditer(text):
        token = m.group(1).rstrip(".,;:)")
        out.update(_expand(token))
    return out


def _results_files() -> list[str]:
    """Every file under results/ but those .gitignore keeps out of the repository (a batch's lock file, lines set
    aside from a damaged results file, scratch under tmp/): a working tree after a ``--results committed`` run."""
    return sorted(p.relative_to(RESULTS).as_posix() for p in RESULTS.rglob("*")
                  if p.is_file() and p.name not in _IGNORED and p.suffix not in (".lock", ".damaged")
                  and "tmp" not in p.relative_to(RESULTS).parts[:1])


def _covered(path: str, cited: set[str]) -> bool:
    if path in cited:
        return True
    parents = Path(path).parents
    return any(f"{d.as_posix()}/" in cited or d.as_posix() in cited for d in parents if d.as_posix() != ".")


def test_every_results_file_is_cited_by_the_readme():
    cited = _citations(README.read_text(encoding="utf-8"))
    orphans = [f for f in _results_files() if not _covered(f, cited)]
    assert not orphans, ("files in benchmarks/results/ that benchmarks/README.md does not cite (cite them where "
                         "their figures are read, or move them to docs/research/<topic>/):\n  " + "\n  ".join(orphans))


def test_every_file_the_readme_cites_exists():
    cited = _citations(README.read_text(encoding="utf-8"))
    missing = []
    for c in sorted(cited):
        if "*" in c:
            if not list(RESULTS.glob(c)):
                missing.append(c)
        elif not (RESULTS / c).exists():
            missing.append(c)
    assert not missing, "benchmarks/README.md cites results files that do not exist:\n  " + "\n  ".join(missing)


def _readmes() -> list[Path]:
    return [README, RESEARCH / "README.md", *sorted(RESEARCH.glob("*/README.md"))]


@pytest.mark.parametrize("doc", _readmes(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(doc):
    assert doc.is_file(), doc
    broken = []
    for target in _LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue                                    # a URL or an anchor in the same page
        path = target.split("#", 1)[0]
        if not (doc.parent / path).exists():
            broken.append(target)
    assert not broken, f"{doc.relative_to(ROOT)}: links that do not resolve: {broken}"


def test_every_research_topic_has_a_readme_and_a_log():
    topics = [d for d in sorted(RESEARCH.iterdir()) if d.is_dir()]
    assert topics
    for d in topics:
        assert (d / "README.md").is_file() and (d / "log.md").is_file(), d


def _scripts() -> list[Path]:
    return sorted(BENCH.rglob("*.py"))


def test_no_file_in_benchmarks_edits_sys_path():
    edits = []
    for p in _scripts():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
                    and node.value.id == "sys"):
                edits.append(f"{p.relative_to(ROOT)}:{node.lineno}")
    assert not edits, "benchmarks/ must not touch sys.path (run them with python -m):\n  " + "\n  ".join(edits)


def test_no_benchmark_imports_another():
    """Benchmarks share code through ``benchmarks.common`` only, never by importing one another."""
    names = {p.stem for p in BENCH.glob("*.py")} - {"__init__", "common"}
    bad = []
    for p in _scripts():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for m in mods:
                last = m.split(".")[-1]
                if last in names or m.split(".")[0] in names:
                    bad.append(f"{p.relative_to(ROOT)}:{node.lineno} imports {m}")
    assert not bad, "\n  ".join(bad)


@pytest.mark.parametrize("script", sorted(p.stem for p in BENCH.glob("bench_*.py")))
def test_every_benchmark_imports_as_a_module_without_side_effects(script, monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.chdir(tmp_path)                       # a write relative to the cwd would land here
    before = sorted(p.relative_to(ROOT).as_posix() for p in RESULTS.rglob("*"))
    out, err = io.StringIO(), io.StringIO()
    name = f"benchmarks.{script}"
    sys.modules.pop(name, None)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        mod = importlib.import_module(name)
    assert callable(getattr(mod, "main", None)), f"{name} has no main()"
    assert out.getvalue() == "" and err.getvalue() == "", f"{name} printed on import"
    assert sorted(p.relative_to(ROOT).as_posix() for p in RESULTS.rglob("*")) == before
    assert list(tmp_path.iterdir()) == []
    assert Path(mod.__file__).resolve().parent == BENCH
