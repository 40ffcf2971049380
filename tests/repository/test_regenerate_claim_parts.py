"""scripts/regenerate_results.py: claim parts (``curves --claims``) and how the merge puts
their verdict records beside an objective's default part."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from _paths import ROOT

SCRIPT = ROOT / "scripts" / "regenerate_results.py"


@pytest.fixture(scope="module")
def regen():
    spec = importlib.util.spec_from_file_location("regenerate_results", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _part(root: Path, obj: str, claims, *, finished=True, cpu=1.5) -> Path:
    folder = root / "+".join((obj, *claims))
    folder.mkdir(parents=True)
    verdicts = {c: {"claim": c, "objective": obj, "estimate": float(i)}
                for i, c in enumerate(claims)}
    (folder / "report.json").write_text(json.dumps(
        {"objectives": {obj: {"verdicts": verdicts, "not_tested": {}}}}))
    if finished:
        (folder / "part.json").write_text(json.dumps({"claims": list(claims), "cpu_s": cpu}))
    return folder


def test_claim_sets_and_folders(regen, tmp_path):
    from infodiv.claims import claim_names

    assert regen._claim_set(None) == claim_names("curve")
    assert regen._claim_set(["premise", "theorem8"]) == ("premise", "theorem8")
    with pytest.raises(SystemExit) as exc:
        regen._claim_set(["premise", "no_such_claim"])
    assert exc.value.code == 2
    assert regen._claim_part_dir(tmp_path, "mi_readout", ("premise", "theorem8")).name \
        == "mi_readout+premise+theorem8"


def test_merge_puts_every_claim_part_beside_the_default(regen, tmp_path):
    _part(tmp_path, "accuracy_calibrated", ("premise", "redundancy_cost"), cpu=2.0)
    _part(tmp_path, "accuracy_calibrated", ("theorem8",), cpu=3.0)
    _part(tmp_path, "accuracy_calibrated", ("gains_vs_control",), finished=False)
    _part(tmp_path, "mi_readout", ("premise",))       # another objective's: not merged here
    _part(tmp_path, "accuracy", ("premise",))         # a prefix of no other objective
    entry = {"verdicts": {"diminishing_returns": {"claim": "diminishing_returns"}}}
    record = {"parts": {"accuracy_calibrated": {"cpu_s": 1.0}}}
    regen._merge_claim_parts(tmp_path, "accuracy_calibrated", entry, record)
    assert list(entry["verdicts"]) == ["diminishing_returns", "premise", "redundancy_cost",
                                       "theorem8"]
    assert all(v["objective"] == "accuracy_calibrated" for k, v in entry["verdicts"].items()
               if k != "diminishing_returns")
    assert sorted(record["parts"]) == ["accuracy_calibrated",
                                       "accuracy_calibrated+premise+redundancy_cost",
                                       "accuracy_calibrated+theorem8"]
    assert sum(p["cpu_s"] for p in record["parts"].values()) == 6.0


def test_merge_refuses_a_claim_twice(regen, tmp_path):
    _part(tmp_path, "mi_readout", ("premise", "redundancy_cost"))
    _part(tmp_path, "mi_readout", ("redundancy_cost",))
    with pytest.raises(SystemExit) as exc:
        regen._merge_claim_parts(tmp_path, "mi_readout", {"verdicts": {}}, {"parts": {}})
    assert exc.value.code == 2
    entry = {"verdicts": {"premise": {}}}   # nor a default claim again
    _part(tmp_path / "b", "mi_readout", ("premise",))
    with pytest.raises(SystemExit):
        regen._merge_claim_parts(tmp_path / "b", "mi_readout", entry, {"parts": {}})
