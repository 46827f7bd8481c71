"""Issue 36 item 4: faults a user meets that are the input's, not the toolkit's: each is exit 2 with one message."""
from __future__ import annotations

from pathlib import Path

from bace_opt.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def test_a_gml_nested_thousands_deep_is_refused_naming_the_file(tmp_path, capsys):
    f = tmp_path / "deep.gml"
    f.write_text("graph [" * 20000 + "]" * 20000)
    rc = main(["generate", "realistic", "--topology-gml", str(f), "--jobs", "4", "--seed", "1", "-o",
               str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert rc == 2 and f"{f}: cannot parse GML: nested too deeply" in err
    assert not (tmp_path / "out.json").exists()


def test_a_count_that_overflows_is_refused_by_its_option(tmp_path, capsys):
    import pytest
    with pytest.raises(SystemExit) as e:
        main(["generate", "paper", "--seed", "1", "--bandwidth-source", "measured", "--parallel-connections",
              str(10 ** 400), "-o", str(tmp_path / "g.json")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--parallel-connections: must be at most 1e+12" in err and "OverflowError" not in err


def test_out_of_memory_is_exit_2_with_a_message(monkeypatch, capsys):
    import bace_opt.cli.validate as v

    def boom(args):
        raise MemoryError("Unable to allocate 23.2 GiB for an array")
    monkeypatch.setattr(v, "run", boom)
    rc = main(["validate", str(ROOT / "instances" / "tiny-2r-2j.json")])
    err = capsys.readouterr().err
    assert rc == 2 and "error: out of memory (Unable to allocate 23.2 GiB" in err and "internal error" not in err
