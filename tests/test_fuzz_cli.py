"""Fuzz test (hypothesis): every command, driven in-process with malformed instances, schedules, results
files and arguments, never reaches the internal-error path (exit 3) and never prints a traceback.

Mutations of a valid instance / schedule: a value anywhere in the JSON tree replaced by an odd one (NaN,
Infinity, 1e300, a 5,000-digit number, -0.0, a huge negative, a string, a list, an object, null, a bool), a
field deleted or an unknown one added, a duplicated key, the text cut short, garbage or non-UTF-8 bytes.
Arguments: each command's options with odd values.  Solves run with a 1 s limit on the tiny instance."""
from __future__ import annotations

import contextlib
import io
import json
import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bace_opt as bo
from bace_opt.cli.main import main

ODD = [None, True, False, 0, -1, -0.0, 1e300, -1e300, 1e-300, 2 ** 63, "x", "", [], [1, 2], {}, {"a": 1},
       "NaN", "Infinity", "-Infinity", "1e400", "9" * 5000, "[" * 200 + "]" * 200, 3.5, 0.5, 7]
SPECIAL_TEXT = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity", "1e400": "1e400",
                "9" * 5000: "9" * 5000, "[" * 200 + "]" * 200: "[" * 200 + "]" * 200}


def tiny():
    gt = {"A": bo.GpuType("A", 100.0, 48, 300)}
    return bo.Instance(
        name="tiny", gpu_types=gt, reference_gpu="A",
        regions=[bo.Region("r1", "A", 4, 0.2, price_series=bo.PriceSeries(0.0, 3600.0, (0.2, -0.05, 0.3))),
                 bo.Region("r2", "A", 4, 0.3), bo.Region("r3", "A", 0, 0.1)],
        links=[bo.Link("r1", "r2", 10.0, 5.0), bo.Link("r1", "r3", 10.0, 5.0), bo.Link("r3", "r2", 10.0, 5.0)],
        jobs=[bo.Job("a", 0.0, 4, 4, 10, 0.5, 20.0), bo.Job("b", 10.0, 2, 4, 10, 0.5, 20.0)]).validated()


INST = tiny()
INST_D = INST.to_dict()
SCHED_D = bo.simulate(INST, policy="bace-pipe").to_dict()


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def _mutate_tree(data, rnd: random.Random, n: int):
    data = json.loads(json.dumps(data))
    marks = {}
    for _ in range(n):
        paths = [p for p in _paths(data) if p]
        path = rnd.choice(paths)
        parent = data
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        op = rnd.random()
        if op < 0.15 and isinstance(parent, dict):
            del parent[key]
        elif op < 0.25 and isinstance(parent, dict):
            parent["zz_unknown"] = 1
        else:
            v = rnd.choice(ODD)
            if isinstance(v, str) and v in SPECIAL_TEXT:
                tag = f"__mark{len(marks)}__"
                marks[f'"{tag}"'] = SPECIAL_TEXT[v]
                v = tag
            parent[key] = v
    text = json.dumps(data)
    for tag, raw in marks.items():
        text = text.replace(tag, raw)
    return text


def _mutate_text(text: str, rnd: random.Random) -> bytes:
    op = rnd.randrange(5)
    b = text.encode()
    if op == 0:
        return b[: rnd.randrange(len(b))]
    if op == 1:   # duplicate a key
        i = text.find('"name"', rnd.randrange(len(text)))
        return (text[:i] + '"name": "dup", ' + text[i:]).encode() if i > 0 else b
    if op == 2:
        i = rnd.randrange(len(b))
        return b[:i] + b"\xff\xfe\x00" + b[i:]
    if op == 3:
        return b"[" * 5000
    return b


def mutated(kind: str, seed: int, n: int) -> bytes:
    rnd = random.Random(seed)
    base = INST_D if kind == "instance" else SCHED_D
    text = _mutate_tree(base, rnd, n) if n else json.dumps(base)
    return _mutate_text(text, rnd) if rnd.random() < 0.25 else text.encode()


def run_main(argv) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as e:      # argparse's own usage errors
            code = e.code if isinstance(e.code, int) else 2
    return code, err.getvalue()


def check(argv):
    code, err = run_main(argv)
    assert code != 3 and "Traceback" not in err, (argv, code, err[-1500:])
    return code


NUM = st.sampled_from(["nan", "inf", "-1", "0", "1e300", "-1e300", "abc", "1", "0.5", "2", "1e-300", "99999999999"])
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@SETTINGS
@given(seed=st.integers(0, 10 ** 6), n=st.integers(0, 3), which=st.sampled_from(["instance", "schedule", "both"]))
def test_fuzz_inputs_validate_evaluate_simulate_pipeline(seed, n, which):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        i, s = d / "i.json", d / "s.json"
        i.write_bytes(mutated("instance", seed, n) if which in ("instance", "both") else json.dumps(INST_D).encode())
        s.write_bytes(mutated("schedule", seed + 1, n) if which in ("schedule", "both")
                      else json.dumps(SCHED_D).encode())
        check(["validate", i])
        check(["evaluate", i, s, "--jobs"])
        check(["evaluate", i, s, "--json", "-o", d / "p.json"])
        check(["simulate", i, "--policy", "bace-pipe", "-o", d / "o.json"])
        check(["pipeline", i, s, "--job", "a", "--kind", "greedy"])


@SETTINGS
@given(seed=st.integers(0, 10 ** 6), n=st.integers(0, 2), solver=st.sampled_from(["highs", "cpsat"]),
       problem=st.sampled_from(["placement", "schedule"]), opt=st.sampled_from(
           ["--t0", "--gap", "--threads", "--mu", "--time-unit", "--max-blocks", "--routes-k", "--time-limit"]),
       val=NUM)
def test_fuzz_solve(seed, n, solver, problem, opt, val):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        i = d / "i.json"
        i.write_bytes(mutated("instance", seed, n))
        argv = ["solve", i, "--problem", problem, "--solver", solver, "--time-limit", "1", "-o", d / "o.json"]
        argv += [opt, val]
        check(argv)


@SETTINGS
@given(fam=st.sampled_from(["random", "paper"]), opt=st.sampled_from(
    ["--seed", "--jobs", "--regions", "--max-arrival", "--gpu-scale", "--bandwidth-scale", "--max-stages",
     "--mean-interarrival", "--transit"]), val=NUM, out=st.sampled_from(["ok", "dir", "missing", "suffix"]))
def test_fuzz_generate(fam, opt, val, out):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        o = {"ok": d / "g.json", "dir": d, "missing": d / "no" / "g.json", "suffix": d / "g.csv"}[out]
        if opt in ("--jobs", "--regions", "--max-stages", "--transit") and val in ("99999999999", "1e300"):
            val = "-1"     # a valid but enormous instance: slow, not wrong
        argv = ["generate", fam] + ([] if opt == "--seed" else ["--seed", "1"]) + [opt, val, "-o", o]
        check(argv)


@SETTINGS
@given(seed=st.integers(0, 10 ** 6), damage=st.sampled_from(["header", "utf8", "cut", "fields", "dup", "empty",
                                                              "binary"]),
       opt=st.sampled_from(["--workers", "--size", "--suite", "none"]), val=NUM)
def test_fuzz_bench_results_and_arguments(seed, damage, opt, val):
    rnd = random.Random(seed)
    src = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "gap-small.csv"
    lines = src.read_bytes().splitlines(keepends=True)[: rnd.randint(1, 12)]
    if damage == "header":
        lines[0] = lines[0][: rnd.randrange(len(lines[0]))] + b"#\n"
    elif damage == "utf8":
        lines.append(b"\xc3\x28" + bytes(rnd.randrange(256) for _ in range(20)) + b"\n")
    elif damage == "cut" and len(lines) > 1:
        lines[-1] = lines[-1][: rnd.randrange(len(lines[-1]))]
    elif damage == "fields":
        lines.append(b"a,b,c\n")
    elif damage == "dup":
        lines += lines[1:]
    elif damage == "empty":
        lines = []
    else:
        lines = [bytes(rnd.randrange(256) for _ in range(200))]
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "r.csv"
        p.write_bytes(b"".join(lines))
        argv = ["bench", "--suite", "gap", "--size", "small", "-o", p, "--no-run"]
        if opt != "none":
            argv += [opt, val]
        check(argv)
        check(["bench", "--suite", "gap", "--size", "small", "-o", p, "--no-run", "--report", Path(d) / "r.md"])
