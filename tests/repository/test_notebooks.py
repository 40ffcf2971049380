"""The notebooks execute top to bottom in a Jupyter kernel (nbclient, as `jupyter nbconvert
--execute` does) on small settings, draw their figures as images, say each kind of warning once,
and are stored without outputs.

Execution is the slow tier (``python -m pytest -m slow``, run by ``.ci/run``): stories260K
(``../shared/models``) stands in for SmolLM2, on SST-2 (its 512-token vocabulary cannot tell
AG News's options apart at one position).
"""

import json
import os
import re

import pytest
from _paths import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SMALL = {"quickstart": {"INFODIV_NOTEBOOK_N": "60", "INFODIV_NOTEBOOK_TASK": "sst2"},
         "reproducing_the_paper": {"INFODIV_NOTEBOOK_N": "96", "INFODIV_NOTEBOOK_TASK": "sst2"},
         "estimator_validation": {"INFODIV_NOTEBOOK_N": "300"}}
#: at most this many warning lines in a notebook's stream outputs (one per kind and stage,
#: and the one tqdm gives without ipywidgets)
MAX_WARNING_LINES = 4
#: a warning as Python prints it (``file.py:12: SomeWarning: ...``) or as collect_warnings does
WARNING_LINE = re.compile(r"^(\S+:\d+: \w*Warning: |warning( \(.*?\))?: )")


def _code(path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]
            if c["cell_type"] == "code"]


def test_the_three_notebooks_exist():
    assert {p.stem for p in NOTEBOOKS} == set(SMALL)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path):
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_setting_a_notebook_reads_is_documented(path):
    readme = (ROOT / "README.md").read_text()
    for name in set(re.findall(r"INFODIV_NOTEBOOK_\w+", "\n".join(_code(path)))):
        assert f"`{name}`" in readme, f"{path.name} reads {name}; README.md does not list it"


def test_the_paper_notebook_uses_the_valid_information_estimator():
    """I(U;Y) by the default (usable information, never above H(Y)), not a model-based number
    (docs/design.md): no ``method=`` on the information decomposition."""
    code = "\n".join(_code(ROOT / "notebooks" / "reproducing_the_paper.ipynb"))
    calls = re.findall(r"information_decomposition\((.*?)\)\n", code, re.S)
    assert calls and not any("method=" in c for c in calls), calls


def figure_outputs(book) -> tuple[int, list]:
    """``(images, text_only)``: the number of ``image/png`` outputs, and the outputs that show
    a matplotlib figure as its text repr only."""
    images, text_only = 0, []
    for cell in book.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            images += "image/png" in data
            if "<Figure size" in data.get("text/plain", "") and "image/png" not in data:
                text_only.append(data["text/plain"])
    return images, text_only


def warning_lines(book) -> list[str]:
    """The warning lines of the notebook's stream outputs."""
    return [line for cell in book.cells for out in cell.get("outputs", [])
            if out.get("output_type") == "stream"
            for line in out.get("text", "").splitlines() if WARNING_LINE.match(line)]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes_and_shows_its_figures(path, stories_dir, tmp_path, monkeypatch):
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("INFODIV_NOTEBOOK_MODEL", str(stories_dir))   # tiny real model
    for key, value in SMALL[path.stem].items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MPLBACKEND", "Agg")   # headless: the notebooks must still show images
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(path.parents[1]), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(book, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()   # raises CellExecutionError with the cell and traceback on any error
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert outputs and not any(o.get("output_type") == "error" for o in outputs)
    images, text_only = figure_outputs(book)
    assert images >= 1 and not text_only, (images, text_only)
    warned = warning_lines(book)
    assert len(warned) <= MAX_WARNING_LINES, warned
    raw = [line for line in warned if not line.startswith("warning")]
    assert not [line for line in raw if re.search(r"(Infodiv|Calibration|Estimator)Warning",
                                                   line)], raw   # the toolkit's: collapsed


def test_the_output_checks_catch_text_figures_and_repeated_warnings():
    """The checks above fail on a notebook that prints its figure as text or repeats a
    warning."""
    nbformat = pytest.importorskip("nbformat")
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x")])
    book.cells[0].outputs = [
        nbformat.v4.new_output("display_data", {"text/plain": "<Figure size 600x500 with 1 Axes>"}),
        nbformat.v4.new_output("stream", name="stderr", text="".join(
            f"/x/readout.py:93: CalibrationWarning: calibration fit did not converge "
            f"(mi_readout): {i} of 45 member sets\n  warnings.warn(\n" for i in range(6)))]
    images, text_only = figure_outputs(book)
    assert images == 0 and text_only
    assert len(warning_lines(book)) == 6 > MAX_WARNING_LINES
    book.cells[0].outputs = [
        nbformat.v4.new_output("display_data", {"text/plain": "<Figure size 600x500 with 1 Axes>",
                                                "image/png": "iVBORw0KGgo="}),
        nbformat.v4.new_output("stream", name="stderr", text=(
            "warning (curves, 6×): CalibrationWarning: calibration fit did not converge "
            "(mi_readout): 0–5 of 45 member sets\n"))]
    assert figure_outputs(book) == (1, []) and len(warning_lines(book)) == 1
