import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff not installed")
def test_ruff_clean():
    res = subprocess.run(["ruff", "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_estimators_never_import_torch():
    code = ("import sys, pkgutil, importlib, estimators; "
            "[importlib.import_module(m.name) for m in "
            "pkgutil.walk_packages(estimators.__path__, 'estimators.')]; "
            "mods = [m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers')]; "
            "print(','.join(mods)); sys.exit(1 if mods else 0)")
    res = subprocess.run(["python", "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, f"estimators imported {res.stdout}"
