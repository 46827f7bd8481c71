"""The notebooks execute top to bottom on their small settings (as a user would open them: cwd notebooks/)."""
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))


def test_the_notebooks_are_there():
    assert [p.name for p in NOTEBOOKS] == ["01-quickstart.ipynb", "02-optimality-gaps.ipynb",
                                           "03-paper-reproduction.ipynb", "04-optical-cba.ipynb",
                                           "05-where-heuristics-fail.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_and_is_stripped(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name}: outputs not stripped"
            assert "/work/" not in cell.source, f"{path.name}: absolute path"
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NB_DIR)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
