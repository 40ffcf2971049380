"""The notebooks execute top to bottom in a Jupyter kernel (nbclient) on small settings, and are
stored without outputs."""

import json
import os

import pytest
from _paths import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SMALL = {"quickstart": {"INFODIV_NOTEBOOK_N": "60"},
         "reproducing_the_paper": {"INFODIV_NOTEBOOK_N": "80"},
         "estimator_validation": {"INFODIV_NOTEBOOK_N": "300"}}


def test_the_three_notebooks_exist():
    assert {p.stem for p in NOTEBOOKS} == set(SMALL)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path):
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, stories_dir, tmp_path, monkeypatch):
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("INFODIV_NOTEBOOK_MODEL", str(stories_dir))   # tiny real model
    for key, value in SMALL[path.stem].items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(path.parents[1]), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(book, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()   # raises CellExecutionError with the cell and traceback on any error
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert outputs and not any(o.get("output_type") == "error" for o in outputs)
