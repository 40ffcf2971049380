"""``infodiv zoo depth-report``: a tiny pointer-chasing grid trained here (width 16, depths 1-2
and a shared twin, 10 steps), analysed end to end at tiny sizes.

The numbers the summary prints are recomputed here from the stored contributions (accuracy,
the truncated model's logit-lens accuracy, the Table 1 differences); a rerun must reuse every
analysed model and say so; a model that is still training must be listed as training; bad input
gives one line and exit 2.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _cli_checks import one_line_error

SIZES = ["--n-bootstrap", "20", "--n-permutations", "39", "--n-power", "2", "--n-orders", "2",
         "--n-triples", "3", "--report-resamples", "0", "--resamples", "20",
         "--depths", "3", "2", "1", "--shared-depths", "1", "--seeds", "0", "--width", "16",
         "--planned-hops", "2", "1", "--quiet"]
NAMES = ("llama-d16-L1-s0", "llama-d16-L2-s0", "llama-d16-L1-share2-s0")


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    torch = pytest.importorskip("torch")
    from infodiv.experiments.configs import ModelSpec
    from infodiv.experiments.depth import train_depth
    from infodiv.experiments.hops import HopsTask, prompt_len
    from infodiv.experiments.train import TrainConfig

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("depth") / "k2"
    task = HopsTask(hops=2, symbols=16, n_heldout=60)      # 15 per class: the folds' minimum
    specs = [ModelSpec(d, repeats=r, width=16, heads=2, mlp=32,
                       max_len=prompt_len(2, task.queries)) for d, r in ((1, 1), (2, 1), (1, 2))]
    cfg = TrainConfig(steps=10, batch_size=8, lr=3e-3, warmup=1, checkpoint_every=10)
    train_depth(root, specs, cfg, task, progress=False, log=lambda m: None)
    return root


@pytest.fixture(scope="module")
def report(grid):
    from infodiv.cli import main

    out = grid.parent / "docs"
    assert main(["zoo", "depth-report", str(grid), "--out", str(out), *SIZES]) == 0
    return out, json.loads((out / "summary.json").read_text())


@pytest.mark.slow
def test_summary_records_carry_the_grid_and_the_verdicts(grid, report):
    from extraction import Contributions
    from infodiv.experiments.depth_analysis import CLAIM_NAMES, REPORT_CLAIMS

    out, summary = report
    recs = {r["model"]: r for r in summary["records"]}
    assert set(recs) == set(NAMES)
    for name, r in recs.items():
        run = Contributions.load(grid / "analysis" / "contributions" / name)
        acc = float(np.mean(run.logits.argmax(1) == run.labels))
        assert r["accuracy"] == pytest.approx(acc, abs=1e-12)
        assert r["task"] == "hops" and r["hops"] == 2 and r["seed"] == 0
        assert r["n_members"] == run.n_members == 2 * r["executions"] + 1
        assert r["shared"] == ("share2" in name) and r["params"] > 0
        lo, hi = r["accuracy_interval"]
        assert lo <= r["accuracy"] <= hi
        ui = r["usable_information"]
        assert ui["interval"][0] <= ui["estimate"] <= ui["interval"][1] <= ui["h_y"] + 1e-9
        assert set(r["verdicts"]) == set(CLAIM_NAMES) | set(REPORT_CLAIMS)
        for claim in CLAIM_NAMES:
            v = r["verdicts"][claim]
            assert v["power"]["n"] == 2 and v["false_positive"]["n"] == 2, claim
            assert v["finding"] == (v["detected"] and v["calibrated"]), claim
            assert {"estimate", "interval", "p"} <= set(v), claim
        t8 = r["verdicts"]["theorem8"]
        assert not t8["finding"] and t8["report"]["error_upper_bound"] >= 0
    assert summary["settings"]["n_bootstrap"] == 20 and summary["settings"]["n_power"] == 2


@pytest.mark.slow
def test_table1_and_truncated_model_recomputed(grid, report):
    from extraction import Contributions

    _, summary = report
    recs = {r["model"]: r for r in summary["records"]}
    rows = {r["compare"]: r for r in summary["by_hops"]["2"]["table1"]["rows"]}
    assert set(rows) == {"equal parameters", "equal executions"}
    shared = recs["llama-d16-L1-share2-s0"]["accuracy"]
    assert rows["equal parameters"]["accuracy"]["mean"] == pytest.approx(
        shared - recs["llama-d16-L1-s0"]["accuracy"])
    assert rows["equal executions"]["accuracy"]["mean"] == pytest.approx(
        shared - recs["llama-d16-L2-s0"]["accuracy"])
    (tv,) = summary["by_hops"]["2"]["truncated_vs_depth"]     # L2 after block 1 vs L1
    assert tv["model"] == "llama-d16-L2-s0" and tv["after_block"] == 1
    run = Contributions.load(grid / "analysis" / "contributions" / "llama-d16-L2-s0")
    k = 3                                       # embedding + attention + MLP of block 1
    lens = (run.scale[:, -1] / run.scale[:, k - 1])[:, None] * run.u[:, :k].sum(1) + run.bias
    assert tv["truncated_accuracy"] == pytest.approx(np.mean(lens.argmax(1) == run.labels))
    assert tv["depth_model_accuracy"] == recs["llama-d16-L1-s0"]["accuracy"]


@pytest.mark.slow
def test_page_lists_status_and_has_no_history(report):
    from _history_words import history_words

    out, summary = report
    text = (out / "README.md").read_text()
    assert history_words(text) == []
    status = {r["model"]: r["status"] for r in summary["status"]["2"]}
    assert status["llama-d16-L3-s0"] == "not started"
    assert all(status[n] == "finished" for n in NAMES)
    assert "| llama-d16-L3-s0 | not started | 0 / 10 |" in text
    assert "3 finished, 0 training, 1 not started" in text
    assert "**K = 1**: no root yet; its 4 planned models are not started." in text
    lens = dict(zip(*(summary["records"][1]["truncated"][k] for k in ("k", "accuracy"))))
    assert summary["records"][1]["model"] == "llama-d16-L2-s0"
    assert (f"| llama-d16-L2-s0 | {lens[1]:.3f} | {lens[3]:.3f} | {lens[5]:.3f} |" in text)
    assert (out / "depth.png").stat().st_size > 0 and (out / "truncated.png").is_file()
    # answer first: the saturation line and the first figure before the setup; the long
    # status table last
    sat = summary["by_hops"]["2"]["saturation"]
    accs = {d: a for d, a in zip(sat["depths"], sat["accuracy"])}
    curve = ", ".join(f"{d}: {a:.3f}" for d, a in accs.items())
    assert f"- **K = 2**: seed-median accuracy by depth {curve};" in text
    order = [text.index(s) for s in ("## Answer", "seed-median accuracy by depth", "(depth.png)",
                                     "## Setup", "## Models: finished and still training",
                                     "| llama-d16-L3-s0 | not started")]
    assert order == sorted(order), order


@pytest.mark.slow
def test_rerun_reuses_finished_analyses_and_lists_training(grid, report, capsys):
    import torch

    from infodiv.cli import main

    out, _ = report
    stored = {n: (grid / "analysis" / f"{n}.json").stat().st_mtime_ns for n in NAMES}
    part = grid / "models" / "llama-d16-L3-s0"
    part.mkdir()
    torch.save({"step": 4}, part / "state.pt")        # a model in training: no model/ yet
    try:
        capsys.readouterr()
        assert main(["zoo", "depth-report", str(grid), "--out", str(out), *SIZES]) == 0
        said = capsys.readouterr().out
    finally:
        (part / "state.pt").unlink()
        part.rmdir()
    assert "resuming (3 of 3 finished model(s) already analysed" in said
    assert said.count("already analysed, reused") == 3
    assert {n: (grid / "analysis" / f"{n}.json").stat().st_mtime_ns for n in NAMES} == stored
    summary = json.loads((out / "summary.json").read_text())
    row = next(r for r in summary["status"]["2"] if r["model"] == "llama-d16-L3-s0")
    assert row["status"] == "training" and row["step"] == 4
    assert "| llama-d16-L3-s0 | training | 4 / 10 |" in (out / "README.md").read_text()


@pytest.mark.slow
def test_bad_input_one_line(tmp_path, capsys, grid):
    from infodiv.experiments.depth import prepare_depth_root
    from infodiv.experiments.hops import HopsTask
    from infodiv.experiments.train import TrainConfig

    cmd = ["zoo", "depth-report"]
    one_line_error(capsys, [*cmd, str(tmp_path / "nope"), *SIZES], "no such folder")
    (tmp_path / "plain").mkdir()
    one_line_error(capsys, [*cmd, str(tmp_path / "plain"), *SIZES], "not a depth root")
    empty = tmp_path / "empty"
    prepare_depth_root(empty, HopsTask(hops=2, symbols=16, n_heldout=60),
                       TrainConfig(steps=2, batch_size=4, warmup=1))
    one_line_error(capsys, [*cmd, str(empty), "--out", str(tmp_path / "o"), *SIZES],
                   "no finished model")
    assert not (tmp_path / "o").exists()
    bad = [*SIZES[:2], "--n-permutations", "10", *SIZES[4:]]
    one_line_error(capsys, [*cmd, str(grid), "--out", str(tmp_path / "o"), *bad],
                   "n_permutations must be an integer >= 39")
    (tmp_path / "file").write_text("x")
    one_line_error(capsys, [*cmd, str(grid), "--out", str(tmp_path / "file"), *SIZES],
                   "is a file")


@pytest.mark.slow
def test_growth_laws_across_depth_with_replicates():
    from infodiv.experiments.depth_across import growth

    rng = np.random.default_rng(0)
    depths, seeds, b = (1, 2, 3, 4, 6, 8), (0, 1, 2), 40
    records, points, reps = [], {}, {}
    for s in seeds:
        for d in depths:
            name = f"L{d}-s{s}"
            acc = 0.95 - 0.7 * d ** -1.5 + 0.005 * s            # saturating power law
            records.append({"model": name, "depth": d, "shared": False, "seed": s,
                            "n_members": 2 * d + 1, "params": 1000 * d})
            points[name] = {"accuracy": acc, "usable_information": 2 * acc}
            noise = rng.normal(0, 0.003, b)
            reps[name] = {"accuracy": acc + noise, "usable_information": 2 * (acc + noise)}
    rows = growth(records, points, reps)
    assert {(r["figure"], r["x"]) for r in rows} == {
        (f, x) for f in ("accuracy", "usable_information")
        for x in ("depth", "n_members", "params")}
    acc = next(r for r in rows if r["figure"] == "accuracy" and r["x"] == "depth")
    assert acc["seed_mean"]["best_aicc"] == "power"
    assert acc["replicates"]["aicc_winner_share"]["power"] > 0.9
    lo, hi = acc["replicates"]["power_asymptote_ci95"]
    assert lo <= 0.955 <= hi and hi - lo < 0.05
    assert growth(records[:4], points, reps) == []        # fewer than 5 depths: no fit
    # depth 8 still training for seed 2: the five complete depths keep all three seeds
    partial = [r for r in records if r["model"] != "L8-s2"]
    rows = growth(partial, points, reps)
    assert {tuple(r["depths"]) for r in rows} == {(1, 2, 3, 4, 6)}
    assert all(r["seeds"] == [0, 1, 2] for r in rows)
    # without a fifth complete depth: every depth, on the seeds they all have
    fewer = [r for r in partial if r["model"] not in ("L6-s2",)]
    assert {tuple(r["seeds"]) for r in growth(fewer, points, reps)} == {(0, 1)}


def _synthetic(depth_acc, seeds=(0, 1, 2), b=40, shared_acc=None):
    """Records, points and replicates of a synthetic grid: accuracy per (shared, depth) plus a
    seed offset, replicates = point + noise; diversity = accuracy / 10 (a gap that explains)."""
    rng = np.random.default_rng(1)
    records, points, reps = [], {}, {}
    cells = [(False, d, a) for d, a in depth_acc.items()]
    cells += [(True, d, a) for d, a in (shared_acc or {}).items()]
    for s in seeds:
        for shared, d, a in cells:
            name = f"L{d}{'-share2' if shared else ''}-s{s}"
            acc = a + 0.01 * s
            records.append({"model": name, "depth": d, "shared": shared, "seed": s,
                            "width": 16, "n_members": 2 * d * (1 + shared) + 1,
                            "executions": d * (1 + shared), "params": 1000 * d})
            points[name] = {"accuracy": acc, "usable_information": 2 * acc,
                            "cross_entropy": 1 - acc, "sq_diversity": acc / 10,
                            "ce_diversity": acc / 5, "k": [1, 3], "truncated_accuracy": [0, 0]}
            noise = rng.normal(0, 0.002, b)
            reps[name] = {k: v + noise for k, v in points[name].items()
                          if k not in ("k", "truncated_accuracy")}
    return records, points, reps


@pytest.mark.slow
def test_table1_gap_regression_and_reading_from_synthetic_grid():
    from infodiv.experiments.depth_across import by_depth, growth, table1
    from infodiv.experiments.depth_reading import reading

    depth_acc = {1: 0.30, 2: 0.55, 3: 0.75, 4: 0.85, 6: 0.91, 8: 0.93}
    records, points, reps = _synthetic(depth_acc, shared_acc={2: 0.70, 4: 0.88})
    t1 = table1(records, points, reps)
    rows = {(r["shared_depth"], r["compare"]): r for r in t1["rows"]}
    assert set(rows) == {(2, "equal parameters"), (2, "equal executions"),
                         (4, "equal parameters"), (4, "equal executions")}
    assert rows[(2, "equal parameters")]["accuracy"]["mean"] == pytest.approx(0.70 - 0.55)
    assert rows[(4, "equal executions")]["accuracy"]["mean"] == pytest.approx(0.88 - 0.93)
    assert t1["n_pairs"] == 12
    g = t1["gap_regression"]["sq_diversity"]
    assert g["r"] == pytest.approx(1.0) and g["slope"] == pytest.approx(10.0)
    summary = {"records": [{**r, "hops": 2, "accuracy": points[r["model"]]["accuracy"],
                            "verdicts": {}} for r in records],
               "by_hops": {"2": {"by_depth": by_depth(records, points, reps), "table1": t1,
                                 "growth": growth(records, points, reps), "verdicts": {},
                                 "truncated_vs_depth": []}}}
    text = "\n".join(reading(summary, "2"))
    assert "depth 1: 0.310" in text and "depth 8: 0.940" in text
    assert "the interval at depth 8 lies above the one at depth 1" in text
    assert "depth 8: 0.940, depth 1: 0.310; met." in text
    assert "(interval above 0)" in text and "(interval below 0)" in text
    assert "r = 1.00" in text
    flat = {d: 0.5 for d in depth_acc}                 # no rise: nothing may be claimed
    records, points, reps = _synthetic(flat)
    summary["by_hops"]["2"]["by_depth"] = by_depth(records, points, reps)
    summary["records"] = [{**r, "hops": 2, "accuracy": points[r["model"]]["accuracy"],
                           "verdicts": {}} for r in records]
    text = "\n".join(reading(summary, "2"))
    assert "the two intervals overlap" in text and "not met." in text
    assert "lies above" not in text and "lies below" not in text and "falls" not in text
    dip = {**depth_acc, 8: 0.80}                      # a fall from depth 6 to 8 is said
    records, points, reps = _synthetic(dip)
    summary["by_hops"]["2"]["by_depth"] = by_depth(records, points, reps)
    text = "\n".join(reading(summary, "2"))
    assert "it falls, intervals apart, from depth 6 to 8)" in text
    assert "Flag" not in text
    for name in points:                               # depth 1 at chance: I estimates < 0
        if name.startswith("L1-"):
            points[name]["usable_information"] = -0.002
            reps[name]["usable_information"] = reps[name]["usable_information"] * 0 - 0.002
    summary["by_hops"]["2"]["by_depth"] = by_depth(records, points, reps)
    text = "\n".join(reading(summary, "2"))
    assert ("Flag: the usable-information mean is below 0 at depth 1; I(U;Y) cannot be"
            in text)


def test_verdict_counts_and_reading_of_a_finding_without_power():
    from infodiv.experiments.depth_across import verdict_counts
    from infodiv.experiments.depth_reading import _holds

    def verdict(detected, calibrated, power):
        return {"detected": detected, "calibrated": calibrated,
                "finding": detected and calibrated, "no_test": not detected and power < 0.1,
                "power": {"rate": power, "ci": [max(power - 0.2, 0), min(power + 0.2, 1)]},
                "false_positive": {"rate": 0.0 if calibrated else 0.3, "ci": [0, 0.2]}}
    records = [{"model": "a", "verdicts": {"c": verdict(True, True, 0.0)}},
               {"model": "b", "verdicts": {"c": verdict(True, False, 1.0)}},
               {"model": "c", "verdicts": {"c": verdict(True, True, 1.0)}}]
    cell = verdict_counts(records)["c"]
    assert (cell["n_models"], cell["n_detected"], cell["n_finding"]) == (3, 3, 2)
    assert cell["findings"] == ["a", "c"] and cell["findings_without_power"] == ["a"]
    assert cell["not_calibrated"] == ["b"] and cell["false_positive_max"] == 0.3
    text = _holds(cell)
    assert text.startswith("a finding in 2 of 3 analysed models (a, c); in a the rule's power")
    assert "detected but not calibrated" in text and "in 1 model(s)" in text


def test_a_finding_at_chance_is_counted_apart():
    """A model whose accuracy's Wilson interval reaches the majority rate does not solve the
    task: its detections are listed apart, not counted as findings."""
    from infodiv.experiments.depth_across import verdict_counts
    from infodiv.experiments.depth_reading import _holds

    v = {"detected": True, "calibrated": True, "finding": True, "no_test": False,
         "power": {"rate": 1.0, "ci": [0.8, 1.0]}, "false_positive": {"rate": 0.0, "ci": [0, 0.2]}}
    records = [{"model": "chance", "at_chance": True, "verdicts": {"c": v}},
               {"model": "solves", "at_chance": False, "verdicts": {"c": v}}]
    cell = verdict_counts(records)["c"]
    assert (cell["n_detected"], cell["n_finding"]) == (2, 1)
    assert cell["findings"] == ["solves"] and cell["findings_at_chance"] == ["chance"]
    text = _holds(cell)
    assert text.startswith("a finding in 1 of 2 analysed models (solves); also detected in "
                           "chance, a model at chance")
    assert "not calibrated" not in text


@pytest.mark.slow
def test_records_say_whether_the_model_is_at_chance(report):
    _, summary = report
    for r in summary["records"]:
        lo = r["accuracy_interval"][0]
        assert r["majority"] == pytest.approx(0.25, abs=0.05)
        assert r["at_chance"] == (lo <= r["majority"])


def test_gap_regression_interval_resamples_the_pairs():
    """With no example noise at all, an interval over example resamples alone would collapse
    onto the point estimate; the pairs are the units the regression generalises over, so the
    interval must have the width the scatter of the pairs gives (and contain the estimate)."""
    from infodiv.experiments.across import gap_regression

    depth_acc = {1: 0.30, 2: 0.55, 3: 0.75, 4: 0.85, 6: 0.91, 8: 0.93}
    records, points, reps = _synthetic(depth_acc, shared_acc={2: 0.70, 4: 0.88})
    rng = np.random.default_rng(3)
    for name, pt in points.items():     # diversity explains the gap only partly
        pt["sq_diversity"] = pt["accuracy"] / 10 + rng.normal(0, 0.01)
        reps[name] = {k: np.full(40, v) for k, v in pt.items()
                      if k not in ("k", "truncated_accuracy")}
    g = gap_regression(records, points, reps, n_permutations=99)
    lo, hi = g["r_ci95"]
    assert g["n_pairs"] == 12 and lo <= g["r"] <= hi
    assert hi - lo > 0.05, g["r_ci95"]
    gaps = [(p["diversity_gap"], p["accuracy_gap"]) for p in g["pairs"]]
    assert g["r"] == pytest.approx(np.corrcoef(*zip(*gaps))[0, 1])


@pytest.mark.slow
def test_a_stored_analysis_of_another_key_is_recomputed_whole(grid, report, capsys):
    """A stored analysis whose key differs (here: an older code version) is recomputed whole,
    never patched, and the log says why; the others are reused (and Theorem 8's I(U;Y) is the
    fit of the model's information terms: one value on the page)."""
    from infodiv.cli import main
    from infodiv.experiments.depth_analysis import ANALYSIS_VERSION
    from infodiv.experiments.owned import DEPTH, write_owned

    out, _ = report
    path = grid / "analysis" / f"{NAMES[1]}.json"
    fresh = {k: v for k, v in json.loads(path.read_text()).items() if k != "cpu_s"}
    doc = json.loads(path.read_text())
    doc["key"]["version"] = ANALYSIS_VERSION - 1
    doc["verdicts"]["theorem8"]["extra"]["mi"] = -1.0
    doc["figures"]["accuracy"] = -1.0
    write_owned(path.parent, {path.name: json.dumps(doc)}, DEPTH)   # as an older code wrote it
    capsys.readouterr()
    assert main(["zoo", "depth-report", str(grid), "--out", str(out), *SIZES]) == 0
    said = capsys.readouterr().out
    assert f"{NAMES[1]}: stored analysis of another key (code version); recomputed whole" in said
    assert said.count("already analysed, reused") == 2
    new = json.loads(path.read_text())
    assert new["key"]["version"] == ANALYSIS_VERSION
    assert {k: v for k, v in new.items() if k != "cpu_s"} == fresh
    t8 = new["verdicts"]["theorem8"]["extra"]
    assert t8["mi"] == pytest.approx(new["information"]["joint"], rel=0, abs=1e-12)
    assert [t8["mi_interval_low"], t8["mi_interval_high"]] == pytest.approx(
        new["information"]["joint_interval"], rel=0, abs=1e-12)


@pytest.mark.slow
def test_records_say_where_the_training_loss_ended(grid, report):
    """Each record's training outcome, recomputed from the model's zoo.json losses."""
    out, summary = report
    for r in summary["records"]:
        zoo = json.loads((grid / "models" / r["model"] / "model" / "zoo.json").read_text())
        losses = np.asarray(zoo["losses"], np.float64)
        window = int(np.ceil(len(losses) / 100))
        t = r["training"]
        assert t["window"] == window and t["n_options"] == 4
        assert t["final_loss"] == pytest.approx(losses[-window:].mean(), abs=1e-12)
        assert t["chance_loss"] == pytest.approx(np.log(4), abs=1e-12)
        assert t["on_plateau"] == (losses[-window:].mean() >= 0.95 * np.log(4))
    page = (out / "README.md").read_text()
    assert "| final training loss |" in page


def test_training_outcome_marks_the_chance_plateau():
    from infodiv.experiments.depth_report import training_outcome

    ln4 = np.log(4)
    stuck = training_outcome({"losses": [3.0] * 990 + [ln4] * 10, "option_ids": [1, 2, 3, 4]})
    assert stuck["window"] == 10 and stuck["on_plateau"]
    assert stuck["final_loss"] == pytest.approx(ln4)
    # it left the plateau only in the last 1%: the window sees it
    learnt = training_outcome({"losses": [ln4] * 990 + [0.3] * 10, "option_ids": [1, 2, 3, 4]})
    assert not learnt["on_plateau"] and learnt["final_loss"] == pytest.approx(0.3)
    near = training_outcome({"losses": [0.96 * ln4] * 50, "option_ids": [1, 2, 3, 4]})
    assert near["window"] == 1 and near["on_plateau"]
    assert not training_outcome({"losses": [0.94 * ln4], "option_ids": [1, 2, 3, 4]})[
        "on_plateau"]
    assert training_outcome({"option_ids": [1, 2]}) is None
    assert training_outcome({"losses": [1.0], "option_ids": [1]}) is None


def test_answer_separates_models_that_never_learned_from_those_at_chance_held_out():
    from infodiv.experiments.depth_answer import _training

    def rec(depth, seed, shared, final, at_chance, hops=1):
        return {"hops": hops, "depth": depth, "seed": seed, "shared": shared,
                "at_chance": at_chance,
                "training": {"final_loss": final, "window": 160, "n_options": 4,
                             "chance_loss": np.log(4), "plateau_share": 0.95,
                             "on_plateau": final >= 0.95 * np.log(4)}}

    records = [rec(1, 0, False, 1.386, True), rec(1, 1, False, 1.5, True),
               rec(6, 2, False, 1.386, True), rec(2, 0, True, 1.386, True),
               rec(2, 1, False, 0.1, True), rec(4, 0, False, 0.0, False),
               rec(1, 2, False, 1.386, True, hops=2)]
    line = _training({"records": records}, "1")
    assert line.startswith("- **Training (K = 1)**: 4 of 6 models ended training on the "
                           "chance plateau")
    assert f"= {0.95 * np.log(4):.3f} nats" in line
    assert ("depth 1 (seeds 0, 1), depth 6 (seed 2), shared L = 2 (seed 0); all at "
            "chance on the held-out rows.") in line
    assert "1 more left the plateau in training but is at chance on the held-out rows: " \
           "depth 2 (seed 1)." in line
    assert "found no solution, not that its depth has none." in line
    half = [{**records[0], "at_chance": False}, *records[1:]]
    assert "; 3 of them at chance" in _training({"records": half}, "1")
    good = [rec(4, s, False, 0.0, False) for s in range(3)]
    assert "every one of the 3 models left the chance plateau" in _training(
        {"records": good}, "1")
    assert _training({"records": [{"hops": 1}]}, "1") is None


@pytest.mark.slow
def test_gap_regression_is_also_given_over_pairs_that_both_solve_the_task():
    """A twin at chance differs from its partner in accuracy and diversity because it learned
    nothing; the regression over pairs whose two models solve the task leaves those pairs out
    (recomputed here from the points)."""
    from infodiv.experiments.depth_across import table1
    from infodiv.experiments.depth_reading import reading

    records, points, reps = _synthetic({2: 0.9, 4: 0.95, 8: 0.97}, shared_acc={2: 0.9, 4: 0.9})
    rng = np.random.default_rng(7)
    for name in points:                                   # diversity unrelated to accuracy
        points[name]["sq_diversity"] = float(rng.normal())
        reps[name]["sq_diversity"] = points[name]["sq_diversity"] + reps[name]["accuracy"] * 0
    chance = {"L2-share2-s0", "L8-s1"}
    for name in chance:                                   # learned nothing: both gaps large
        points[name].update(accuracy=0.25, sq_diversity=-5.0)
        reps[name].update(accuracy=reps[name]["accuracy"] * 0 + 0.25,
                          sq_diversity=reps[name]["sq_diversity"] * 0 - 5.0)
    records = [{**r, "at_chance": r["model"] in chance} for r in records]
    t1 = table1(records, points, reps)
    every, solving = t1["gap_regression"]["sq_diversity"], t1["gap_regression_solving"][
        "sq_diversity"]
    pairs = [(f"L{L}-share2-s{s}", f"L{u}-s{s}") for s in (0, 1, 2) for L in (2, 4)
             for u in (L, 2 * L)]
    kept = [(a, b) for a, b in pairs if a not in chance and b not in chance]
    assert every["n_pairs"] == len(pairs) == 12 and solving["n_pairs"] == len(kept) == 9

    def r(ps):
        da = [points[a]["accuracy"] - points[b]["accuracy"] for a, b in ps]
        dd = [points[a]["sq_diversity"] - points[b]["sq_diversity"] for a, b in ps]
        return np.corrcoef(dd, da)[0, 1]

    assert every["r"] == pytest.approx(r(pairs)) and solving["r"] == pytest.approx(r(kept))
    assert every["r"] > 0.9 and abs(solving["r"]) < every["r"]   # the chance pairs drive it
    summary = {"records": [{**r, "hops": 2, "accuracy": points[r["model"]]["accuracy"],
                            "verdicts": {}} for r in records],
               "by_hops": {"2": {"by_depth": [], "table1": t1, "growth": [], "verdicts": {},
                                 "truncated_vs_depth": []}}}
    text = "\n".join(reading(summary, "2"))
    assert (f"(sq_diversity, 9 pairs whose two models are both above chance)? Correlation r = "
            f"{solving['r']:.2f}") in text
    assert f"(sq_diversity, 12 shared/unshared pairs)? Correlation r = {every['r']:.2f}" in text
    from infodiv.experiments.depth_answer import _sharing
    from infodiv.experiments.depth_seeds import derive

    d = {"table1": t1}
    d["seeds"] = derive(summary["records"], d)
    line = _sharing(d, "2")
    da = [points[a]["accuracy"] - points[b]["accuracy"] for a, b in kept]
    dd = [points[a]["ce_diversity"] - points[b]["ce_diversity"] for a, b in kept]
    assert (f"Over the 9 pairs whose two models are both above chance: r = "
            f"{np.corrcoef(dd, da)[0, 1]:.2f} (Spearman ") in line


@pytest.mark.slow
def test_the_bundle_reproduces_every_record_and_refuses_an_edited_file(grid, report, tmp_path,
                                                                      capsys):
    from infodiv.cli import main

    out, summary = report
    bundle = tmp_path / "bundle"
    assert main(["zoo", "depth-bundle", str(grid), "--bundle", str(bundle)]) == 0
    sums = json.loads((bundle / "CHECKSUMS.json").read_text())
    assert {f"k2/analysis/contributions/{n}/arrays.npz" for n in NAMES} <= set(sums)
    slim = json.loads((bundle / "k2" / "models" / NAMES[1] / "model" / "zoo.json").read_text())
    assert "losses" not in slim and slim["training"]["window"] >= 1
    assert not list(bundle.rglob("*.safetensors"))           # no weights in the bundle
    again = tmp_path / "page"
    capsys.readouterr()
    assert main(["zoo", "depth-reproduce", "--bundle", str(bundle), "--out", str(again),
                 "--work", str(tmp_path / "work"), *SIZES]) == 0
    assert "files match CHECKSUMS.json" in capsys.readouterr().out
    redo = json.loads((again / "summary.json").read_text())

    def strip(records):
        return [{k: v for k, v in r.items() if k != "cpu_s"} for r in records]

    assert strip(redo["records"]) == strip(summary["records"])
    assert redo["by_hops"]["2"]["table1"] == summary["by_hops"]["2"]["table1"]
    # an edited number in a committed file is refused before anything is recomputed
    meta = bundle / "k2" / "analysis" / "contributions" / NAMES[0] / "meta.json"
    meta.write_text(meta.read_text().replace('"', "'", 0) + " ")
    one_line_error(capsys, ["zoo", "depth-reproduce", "--bundle", str(bundle), "--out",
                            str(tmp_path / "x"), "--work", str(tmp_path / "w2"), *SIZES],
                   "1 file(s) changed", "nothing was recomputed")
    assert not (tmp_path / "x").exists()
    # a folder of the user's is not taken for a bundle
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    one_line_error(capsys, ["zoo", "depth-bundle", str(grid), "--bundle",
                            str(tmp_path / "mine")], "not a bundle this toolkit wrote")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "mine"


@pytest.mark.slow
def test_a_grid_with_a_mixed_held_out_set_scores_it_and_bundles_it(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    from extraction import Contributions
    from infodiv.cli import main
    from infodiv.experiments.configs import ModelSpec
    from infodiv.experiments.depth import train_depth
    from infodiv.experiments.hops import HopsTask, example_hops, prompt_len, read_task_file
    from infodiv.experiments.train import TrainConfig

    torch.set_num_threads(1)
    root = tmp_path / "k2"
    task = HopsTask(hops=2, symbols=16, n_heldout=60, n_mixed_heldout=60)
    spec = ModelSpec(1, width=16, heads=2, mlp=32, max_len=prompt_len(2, task.queries))
    cfg = TrainConfig(steps=4, batch_size=8, lr=3e-3, warmup=1, checkpoint_every=4)
    train_depth(root, [spec], cfg, task, progress=False, log=lambda m: None)
    sizes = [s for s in SIZES if s != "--quiet"][:14] + ["--quiet"]
    out = tmp_path / "page"
    assert main(["zoo", "depth-report", str(root), "--out", str(out), *sizes]) == 0
    rec, = json.loads((out / "summary.json").read_text())["records"]
    run = Contributions.load(root / "analysis" / "contributions_mixed" / spec.name)
    hops = np.asarray([example_hops(r["pairs"])
                       for r in read_task_file(root / "heldout_mixed.jsonl").records])
    right = run.logits.argmax(1) == run.labels
    assert rec["mixed"]["accuracy"] == pytest.approx(right.mean())
    assert rec["mixed"]["by_hops"]["1"]["accuracy"] == pytest.approx(right[hops == 1].mean())
    bundle = tmp_path / "bundle"
    assert main(["zoo", "depth-bundle", str(root), "--bundle", str(bundle)]) == 0
    assert (bundle / "k2" / "heldout_mixed.jsonl").is_file()
    assert main(["zoo", "depth-reproduce", "--bundle", str(bundle), "--out",
                 str(tmp_path / "again"), "--work", str(tmp_path / "w"), *sizes]) == 0
    redo, = json.loads((tmp_path / "again" / "summary.json").read_text())["records"]
    assert redo["mixed"] == rec["mixed"]
