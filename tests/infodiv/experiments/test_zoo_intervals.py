"""Valid information replicates of the zoo (infodiv.experiments.intervals): the usable decomposition
fitted once, its per-example terms averaged over the shared resamples, centred on the point."""

import json

import numpy as np
import pytest
from _paths import ROOT

from infodiv.experiments.intervals import (
    INFORMATION,
    centre_replicates,
    information_points,
    information_replicates,
    shared_indices,
)
from infodiv.inference.synthetic import dependent_ensemble


def test_information_replicates_are_the_paired_bootstrap_of_the_usable_terms():
    from estimators.label_decomposition import label_decomposition

    run = dependent_ensemble(240, 5, n_options=2, signal=0.5)
    idx = shared_indices(run.labels, 20)
    a = information_replicates(run, idx)
    assert set(a) == set(INFORMATION) and a["usable_d"].shape == (20,)
    dec = label_decomposition(run.u, run.labels, bias=run.bias, random_state=0)
    # by hand: resample b's joint = mean of the held-out terms of its rows; D likewise
    for b in (0, 7, 19):
        assert a["usable_joint"][b] == pytest.approx(dec.joint_pointwise[idx[b]].mean())
        assert a["usable_d"][b] == pytest.approx(dec.diversity_pointwise[idx[b]].mean())
    assert np.allclose(a["usable_relevancy"], a["usable_joint"] - a["usable_d"])
    assert dec.diversity_pointwise.mean() == pytest.approx(dec.diversity)
    h_y = 1.0
    assert np.all(a["usable_joint"] <= h_y + 1e-9)
    b2 = information_replicates(run, idx)
    assert all(np.array_equal(a[k], b2[k]) for k in INFORMATION)
    points = {"usable_d": -1.5, "usable_joint": 0.25}
    c = centre_replicates(points, a)
    for k, v in points.items():
        assert np.mean(c[k]) == pytest.approx(v)
        assert np.allclose(c[k] - c[k].mean(), a[k] - a[k].mean())
    assert np.array_equal(c["usable_relevancy"], a["usable_relevancy"])  # no point: unchanged
    inf = {"joint": {"value": 1.0}, "diversity": {"value": -2.0, "corrected": -1.9},
           "relevancy": {"value": 3.0}}
    pts = information_points(inf)
    assert pts["usable_joint"] == 1.0 and pts["usable_relevancy"] == 3.0
    assert pts["usable_d"] == -2.0 and pts["usable_d_corrected"] == -1.9
    assert np.isnan(information_points({})["usable_d"])


@pytest.mark.slow
def test_curves_per_objective_sizes_merge_and_resume(tmp_path):
    from infodiv.experiments.analyses import (
        curve_summary,
        curves_settings,
        reduce_curves,
        run_analyses,
    )

    run_dir = dependent_ensemble(240, 4, n_options=2, signal=0.6).save(tmp_path / "run")
    settings = curves_settings(20, 0, secondary=(0, 0), objectives=("accuracy", "mi_gaussian"))
    settings.update(n_permutations=20, n_triples=10)
    logs = []
    assert run_analyses(run_dir, tmp_path / "out", ("curves",), curves=settings,
                        log=logs.append) == {"curves": "done"}
    doc = json.loads((tmp_path / "out" / "curves" / "report.json").read_text())
    acc, mi = doc["objectives"]["accuracy"], doc["objectives"]["mi_gaussian"]
    assert acc["zoo_settings"]["n_bootstrap"] == 20 and acc["verdicts"]
    assert all(r["n_bootstrap"] == 20 for r in acc["verdicts"].values())
    assert mi["zoo_settings"]["inference"] is False and "verdicts" not in mi
    assert doc["run"]["dir"] == "../../run" and doc["settings"]["zoo"] == settings
    summary = curve_summary(tmp_path / "out" / "curves" / "report.json")
    dr = summary["accuracy"]["verdict_details"]["diminishing_returns"]
    assert dr["finding"] == summary["accuracy"]["verdicts"]["diminishing_returns"]
    assert summary["accuracy"]["gain_slope"]["slope"] == acc["verdicts"][
        "diminishing_returns"]["estimate"]
    # an objective that fails is reported, not hidden: a constant member has no Gaussian I
    broken = dependent_ensemble(240, 4, n_options=2, signal=0.6)
    broken.u[:, 0, :] = 0.0
    bad_dir = broken.save(tmp_path / "broken")
    assert run_analyses(bad_dir, tmp_path / "bad", ("curves",), curves=settings,
                        log=logs.append)["curves"].startswith("failed: RuntimeError: mi_gaussian")
    # an unchanged objective is reused, a changed one recomputed; same settings: nothing runs
    logs.clear()
    other = reduce_curves(settings, 21, ["accuracy"])
    assert other["sizes"]["accuracy"]["inference"] == 21
    run_analyses(run_dir, tmp_path / "out", ("curves",), curves=other, log=logs.append)
    assert any("mi_gaussian: reused" in m for m in logs)
    assert any("accuracy: computed" in m for m in logs)
    assert run_analyses(run_dir, tmp_path / "out", ("curves",), curves=other,
                        log=logs.append) == {"curves": "exists"}
    # M = 3 cannot host the planted-XOR power surrogate (2 member pairs): run without power
    small = dependent_ensemble(240, 3, n_options=2, signal=0.6).save(tmp_path / "small")
    powered = curves_settings(20, 19, secondary=(0, 0), objectives=("accuracy",))
    powered.update(n_permutations=20, n_triples=10, n_bootstrap=100)
    assert run_analyses(small, tmp_path / "small_out", ("curves",), curves=powered,
                        log=logs.append) == {"curves": "done"}
    entry = json.loads((tmp_path / "small_out" / "curves" / "report.json").read_text())
    assert entry["objectives"]["accuracy"]["zoo_settings"]["power_replicates"] == 0


def test_growth_laws_with_an_extra_depth_some_seeds_lack():
    from infodiv.experiments.across import growth_across_depth

    records, points = [], {}
    for depth, seeds in ((1, (0, 1)), (2, (0, 1)), (4, (0, 1)), (8, (0, 1)), (12, (0,))):
        for seed in seeds:
            name = f"L{depth}-s{seed}"
            records.append({"model": name, "width": 8, "shared": False, "depth": depth,
                            "seed": seed, "n_members": 2 * depth + 1, "params": 10 * depth})
            points[name] = {"accuracy": 0.8 - 0.1 / depth + 0.01 * seed}
    rows = [r for r in growth_across_depth(records, points) if r["x"] == "n_members"]
    assert [(r["depth_set"], r["depths"], r["seeds"]) for r in rows] == [
        ("every seed", [1, 2, 4, 8], [0, 1]), ("all depths", [1, 2, 4, 8, 12], [0])]
    assert rows[0]["replicates"] in (True, False) and rows[1]["replicates"] is False


def test_resample_interval_centres_and_keeps_the_raw_one():
    from infodiv.experiments.intervals import resample_interval

    reps = np.linspace(0.9, 1.1, 41)          # raw resamples lean 0.2 below a point of 1.2
    iv = resample_interval(1.2, reps)
    assert iv["resample_mean"] == pytest.approx(1.0) and iv["bias"] == pytest.approx(-0.2)
    assert iv["resample_ci95"] == pytest.approx(np.percentile(reps, [2.5, 97.5]).tolist())
    assert iv["ci95"] == pytest.approx([q + 0.2 for q in iv["resample_ci95"]])
    assert iv["resample_ci95"][1] < iv["point"] and iv["ci95"][0] < 1.2 < iv["ci95"][1]
    assert iv["n_resamples"] == 41
    with pytest.raises(ValueError, match="at least 2"):
        resample_interval(1.0, [np.nan, 1.0])


def test_stale_replicate_cache_is_recomputed(tmp_path):
    from infodiv.experiments.intervals import REPLICATES_VERSION, cached_replicates

    run = dependent_ensemble(120, 3, n_options=2, signal=0.5)
    idx = shared_indices(run.labels, 20)
    path = tmp_path / "replicates.npz"
    fresh = cached_replicates(run, path, idx, probe=False)
    meta = path.with_suffix(".json")
    key = json.loads(meta.read_text())
    assert key["version"] == REPLICATES_VERSION
    np.savez_compressed(path, **{k: v + 1.0 for k, v in fresh.items()})
    said = []                     # same key, but not the file the toolkit wrote: recomputed
    edited = cached_replicates(run, path, idx, probe=False, log=said.append)
    assert np.array_equal(edited["accuracy"], fresh["accuracy"])
    assert any("replicates.npz changed since" in m and "recomputing" in m for m in said), said
    key.pop("version")                   # a cache written before the version (stale probe)
    meta.write_text(json.dumps(key))
    again = cached_replicates(run, path, idx, probe=False)
    assert np.array_equal(again["accuracy"], fresh["accuracy"])     # recomputed


def _committed(name):

    path = ROOT / "docs" / "results" / "zoo" / name
    if not path.is_file():
        pytest.skip(f"no committed {name}")
    return json.loads(path.read_text())


def test_committed_zoo_intervals_bracket_their_points():
    """Every across-depth figure's seed-and-example interval and every model's probe interval
    contains its point (a refitted figure whose resamples are biased, e.g. the probe scored on
    repeats it was fitted on, put the L16 point 1.120 below its interval [1.166, 1.300])."""
    missed = []
    for row in _committed("across.json")["by_depth"]:
        for name, cell in row.items():
            if isinstance(cell, dict) and "ci95" in cell and np.isfinite(cell["mean"]):
                lo, hi = cell["ci95"]
                if not lo <= cell["mean"] <= hi:
                    missed.append((row["shared"], row["depth"], name, cell["mean"], lo, hi))
    records = _committed("summary.json")
    for r in records:
        iv = r["probe_interval"]
        assert iv["point"] == r["probe_bound"] and iv["n_resamples"] == 100
        if not iv["ci95"][0] <= iv["point"] <= iv["ci95"][1]:
            missed.append((r["model"], "probe_bound", iv["point"], *iv["ci95"]))
    assert not missed, missed


def test_decompose_of_another_inference_size_is_not_reused(tmp_path):
    from infodiv.experiments.analyses import _decompose_resamples, _decompose_size

    path = tmp_path / "decompositions.json"
    path.write_text(json.dumps({"information_inference": {"settings": {"n_resamples": 20}}}))
    assert _decompose_size(path) == 20 != _decompose_resamples(None) == 100
    assert _decompose_resamples(20) == 20
    path.write_text(json.dumps({"run": {}}))        # an older report: no size recorded
    assert _decompose_size(path) is None


@pytest.mark.slow
def test_the_decompose_analysis_is_the_library_report_and_is_reused(tmp_path):
    """The zoo's decompositions are :func:`decomposition_report`'s (seed 0, the usable terms,
    the requested resamples), written once: a rerun of the same size reuses them."""
    from extraction import Contributions
    from infodiv.experiments.analyses import run_analyses
    from infodiv.study.decompose import decomposition_report

    run_dir = dependent_ensemble(240, 4, n_options=2, signal=0.6).save(tmp_path / "run")
    out = tmp_path / "out"
    assert run_analyses(run_dir, out, ("decompose",), decompose_inference=20,
                        log=lambda m: None) == {"decompose": "done"}
    direct = tmp_path / "direct"
    decomposition_report(Contributions.load(run_dir), direct, random_state=0,
                         info_methods=("usable",), inference=20)
    for name in ("decompositions.json", "decompositions.md"):
        assert (out / "decompose" / name).read_bytes() == (direct / name).read_bytes()
    assert run_analyses(run_dir, out, ("decompose",), decompose_inference=20,
                        log=lambda m: None) == {"decompose": "exists"}


@pytest.mark.slow
def test_a_stored_entry_of_another_schema_is_recomputed_not_patched(tmp_path):
    """A stored curves entry without verdict records (written by an older schema) is stale:
    the rerun recomputes it whole, with the records a fresh run writes."""
    from infodiv.experiments.analyses import curves_settings, run_analyses

    run_dir = dependent_ensemble(240, 4, n_options=2, signal=0.6).save(tmp_path / "run")
    settings = curves_settings(20, 2, secondary=(0, 0), objectives=("accuracy",))
    settings.update(n_permutations=20, n_triples=10)
    out = tmp_path / "out"
    assert run_analyses(run_dir, out, ("curves",), curves=settings) == {"curves": "done"}
    path = out / "curves" / "report.json"
    fresh = json.loads(path.read_text())
    old = json.loads(path.read_text())
    entry = old["objectives"]["accuracy"]
    entry["report"] = {"verdicts": {"diminishing_returns": {"detected": True}}}
    for key in ("point", "verdicts"):
        entry.pop(key)
    path.write_text(json.dumps(old))
    (out / "curves" / "zoo_settings.json").unlink()
    logs = []
    assert run_analyses(run_dir, out, ("curves",), curves=settings,
                        log=logs.append) == {"curves": "done"}
    assert any("accuracy: computed" in m for m in logs)
    assert not any("accuracy: reused" in m for m in logs)
    done = json.loads(path.read_text())["objectives"]["accuracy"]
    assert "report" not in done
    assert done["verdicts"] == fresh["objectives"]["accuracy"]["verdicts"]
