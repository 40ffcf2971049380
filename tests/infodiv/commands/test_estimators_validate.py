"""``infodiv validate``: the ground-truth table, its files and its honesty about failures."""

from __future__ import annotations

import csv
import json
import math

import pytest

from infodiv.cli import main


def test_validate_table_and_json(tmp_path, capsys):
    out = tmp_path / "v.json"
    rc = main(["validate", "--n", "400", "--seeds", "2", "--cases", "gaussian_cmi,xor",
               "--methods", "gaussian,binned", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    assert "estimate (mean +- sd)" in text and "gaussian_cmi" in text and "xor" in text
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 2 * (1 + 4)  # methods x quantities
    cmi = next(r for r in rows if r["case"] == "gaussian_cmi" and r["method"] == "gaussian")
    assert cmi["true_bits"] == pytest.approx(0.5 * math.log2(280 / 216), rel=1e-12)
    assert len(cmi["estimates"]) == 2 and cmi["consistent"]
    assert cmi["error_bits"] == cmi["mean_bits"] - cmi["true_bits"]
    xor = next(r for r in rows if r["case"] == "xor" and r["method"] == "gaussian")
    assert not xor["consistent"]


def test_validate_csv_and_same_data_for_any_case_selection(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    main(["validate", "--n", "300", "--seeds", "1", "--cases", "gaussian_entropy",
          "--methods", "gaussian", "--out", str(a)])
    main(["validate", "--n", "300", "--seeds", "1", "--cases", "xor,gaussian_entropy",
          "--methods", "gaussian", "--out", str(b)])
    ra = list(csv.DictReader(a.open()))
    rb = [r for r in csv.DictReader(b.open()) if r["case"] == "gaussian_entropy"]
    assert ra[0]["mean_bits"] == rb[0]["mean_bits"]


def test_validate_prints_knn_failure_in_high_dimension(capsys):
    rc = main(["validate", "--n", "2000", "--seeds", "1", "--cases", "highdim_tc",
               "--methods", "knn,gaussian"])
    text = capsys.readouterr().out
    assert rc == 0
    knn_row = next(line for line in text.splitlines() if line.startswith("highdim_tc")
                   and " knn " in line)
    error = float(knn_row.split()[7])
    assert error < -3.0  # KSG TC over 61 variables is far below 7.81 bits: shown, not hidden
    assert knn_row.rstrip().endswith("do not use")


def test_validate_rejects_unknown_names(capsys):
    assert main(["validate", "--cases", "nope"]) == 2
    assert main(["validate", "--methods", "kde"]) == 2
    assert main(["validate", "--list"]) == 0
    assert "highdim_tc" in capsys.readouterr().out


def test_validate_bmi_suite_prints_truth_estimate_error(tmp_path, capsys):
    out = tmp_path / "bmi.json"
    rc = main(["validate", "--suite", "bmi", "--n", "400", "--seeds", "2", "--cases",
               "student-identity-2-2-1,multinormal-sparse-25-25", "--methods",
               "knn,chain,copula", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0 and "rmse" in text and "skipped: 625 chain terms" in text
    rows = {(r["task"], r["method"]): r for r in json.loads(out.read_text())["rows"]}
    student = rows[("student-identity-2-2-1", "copula")]
    assert student["true_nats"] == pytest.approx(0.4319456, abs=1e-6)  # Arellano-Valle et al.
    assert student["error_nats"] < -0.35  # the Gaussian copula misses t dependence entirely
    assert rows[("multinormal-sparse-25-25", "copula")]["true_nats"] == pytest.approx(
        -math.log(0.36), rel=1e-12)
    assert rows[("multinormal-sparse-25-25", "knn")]["error_nats"] < -0.5  # shown, not hidden
    assert len(rows[("student-identity-2-2-1", "chain")]["estimates"]) == 2


def test_validate_bmi_list(capsys):
    assert main(["validate", "--suite", "bmi", "--list"]) == 0
    assert "spiral-multinormal-sparse-5-5" in capsys.readouterr().out


def test_validate_bmi_runs_lnc_at_twice_the_dimension_and_refuses_it_elsewhere(tmp_path, capsys):
    out = tmp_path / "bmi.json"
    rc = main(["validate", "--suite", "bmi", "--n", "300", "--seeds", "2", "--cases",
               "student-identity-2-2-1", "--methods", "knn,lnc", "--out", str(out)])
    assert rc == 0 and "lnc k=8" in capsys.readouterr().out
    rows = {r["method"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["lnc"]["k"] == 8 and len(rows["lnc"]["estimates"]) == 2
    assert rows["lnc"]["mean_nats"] != rows["knn"]["mean_nats"]
    assert main(["validate", "--methods", "lnc"]) == 2
    assert "--suite bmi" in capsys.readouterr().err
    assert main(["validate", "--suite", "bmi", "--n", "300", "--seeds", "1", "--cases",
                 "student-identity-2-2-1", "--methods", "lnc", "--lnc-k", "3"]) == 2
    err = capsys.readouterr().err
    assert "k=3" in err and "d=4" in err
