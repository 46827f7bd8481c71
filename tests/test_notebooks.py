"""The notebooks execute top to bottom on their small settings (as a user would open them: cwd notebooks/), and
an executed copy holds its figures: every cell that draws has an image/png output (not '<Figure ...>' text),
and no cell prints a warning."""
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))
# what a cell that draws contains (pyplot shown, a Schedule or placement picture, an image file displayed)
DRAWS = ("plt.show()", ".plot(inst", "plot_placement(", "plot_timeline(", "Image(")


def test_the_notebooks_are_there():
    names = [p.name for p in NOTEBOOKS]
    assert {"01-quickstart.ipynb", "02-optimality-gaps.ipynb", "03-paper-reproduction.ipynb",
            "04-optical-cba.ipynb", "05-where-heuristics-fail.ipynb", "06-your-own-policy.ipynb",
            "07-real-traces.ipynb"} <= set(names)


def drawing_cells(nb):
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and any(d in c.source for d in DRAWS)]


def test_drawing_cells_are_found():
    """The check below is not vacuous: every notebook that plots has cells it recognises as drawing."""
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        src = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        if "matplotlib" in src or ".plot(" in src or "Image(" in src:
            assert drawing_cells(nb), path.name
        assert "matplotlib.use(" not in src, f"{path.name}: a non-interactive backend hides the figures"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_is_stripped_and_shows_its_figures(path):
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
    for i in drawing_cells(nb):
        outs = nb.cells[i].outputs
        assert any("image/png" in o.get("data", {}) for o in outs), \
            f"{path.name} cell {i} draws but holds no image:\n{nb.cells[i].source[:200]}"
    for i, c in enumerate(nb.cells):
        for o in c.get("outputs", []):
            text = o.get("data", {}).get("text/plain", "")
            assert not (text.startswith("<Figure") and "image/png" not in o.get("data", {})), \
                f"{path.name} cell {i}: a figure shown as text"
            if o.output_type == "stream" and o.name == "stderr":
                assert "Warning" not in o.text, f"{path.name} cell {i}: {o.text[:300]}"
