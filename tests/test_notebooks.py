"""The notebooks run top to bottom (code cells executed in order, small N)."""

import json
import os
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, stories_dir, shared_data_dir, monkeypatch):
    monkeypatch.setenv("INFODIV_NOTEBOOK_N", "120")
    monkeypatch.chdir(path.parent)
    cells = json.loads(path.read_text())["cells"]
    namespace = {"__name__": "__notebook__"}
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{path.name}[{i}]", "exec"), namespace)
    assert os.environ["INFODIV_NOTEBOOK_N"] == "120"
    assert namespace["c"].n_examples == 120
