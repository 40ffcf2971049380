import shutil
import subprocess

import pytest
from _paths import ROOT


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


def test_public_api_names():
    code = ("import sys, extraction; "
            "from extraction import Contributions, Task, get_task, load_model, extract; "
            "from estimators import (entropy, mutual_information, total_correlation, "
            "conditional_mutual_information, interaction_information, "
            "information_decomposition, bias_diversity, paper_eq14, bias_variance_covariance, "
            "permutation_test, bootstrap_ci); "
            "from infodiv.curves import layer_curves; "
            "from infodiv.submodularity import gain_slope; "
            "from infodiv.junctions import junction_curves; "
            "from infodiv.tables import correlation_table, module_shares, sharing_table; "
            "assert callable(extract) and extract.__name__ == 'extract'")
    res = subprocess.run(["python", "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_loading_contributions_does_not_import_torch():
    code = ("import sys, extraction; from extraction import Contributions, get_task; "
            "sys.exit(1 if 'torch' in sys.modules else 0)")
    res = subprocess.run(["python", "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_dependencies_point_one_way():
    """infodiv -> extraction, estimators; estimators never imports extraction or infodiv,
    extraction never imports infodiv (DESIGN.md section 1)."""
    import re

    forbidden = {"estimators": ("extraction", "infodiv", "torch", "transformers"),
                 "extraction": ("infodiv",)}
    bad = []
    for package, names in forbidden.items():
        pattern = re.compile(rf"^\s*(from|import)\s+({'|'.join(names)})\b", re.M)
        for path in (ROOT / package).rglob("*.py"):
            bad += [f"{path.relative_to(ROOT)}: {m.group(0).strip()}"
                    for m in pattern.finditer(path.read_text())]
    assert not bad, bad
