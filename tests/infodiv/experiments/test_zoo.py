"""The zoo: tiny models trained a few hundred steps on a subset of AG News.

Each trained model must (a) lower its loss, (b) load back through ``extraction.load_model``,
(c) give exact contributions with M = 2·executions + 1 members (shared: 4L + 1), (d) agree with
the training code's own forward pass; a training run killed with SIGKILL must resume to
bit-identical weights.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from _paths import ROOT

torch = pytest.importorskip("torch")

from infodiv.experiments.configs import ModelSpec, zoo_grid  # noqa: E402
from infodiv.experiments.train import TrainConfig, batch_order, lr_at  # noqa: E402

TINY = dict(width=32, heads=2, mlp=64, max_len=48)
CFG = TrainConfig(steps=200, batch_size=16, lr=3e-3, warmup=10, checkpoint_every=50)


@pytest.fixture(scope="module")
def zoo_data(shared_data_dir):
    from infodiv.experiments.data import subset, zoo_tasks
    from infodiv.experiments.tokenizer import train_tokenizer

    train, held = zoo_tasks(shared_data_dir)
    train = subset(train, range(0, 5600, 7))            # 800 training rows
    held = subset(held, range(64))
    return train_tokenizer(train, vocab_size=600), train, held


@pytest.fixture(scope="module")
def trained(zoo_data, tmp_path_factory):
    from infodiv.experiments.train import train_model

    tok, train, held = zoo_data
    root = tmp_path_factory.mktemp("zoo")
    out = {}
    for spec in (ModelSpec(1, **TINY), ModelSpec(2, **TINY), ModelSpec(1, repeats=2, **TINY)):
        run = root / "models" / spec.name
        rec = train_model(spec, tok, train, run, CFG, heldout_task=held, progress=False)
        out[spec.name] = (spec, rec, run / "model")
    return out


def test_split_rows_and_option_tokens(zoo_data, shared_data_dir):
    from infodiv.experiments.data import option_tokens, zoo_tasks

    train, held = zoo_tasks(shared_data_dir)
    assert (len(train), len(held)) == (5600, 2000)
    assert held.meta["rows"] == [0, 1999, 2000] and train.meta["rows"] == [2000, 7599, 5600]
    assert held.template == "What label best describes this news article?\n {text} {answer}"
    toks = option_tokens(zoo_data[0], held)
    assert [t for _, t in toks.values()] == ["world", "sports", "business", "science"]
    assert len({i for i, _ in toks.values()}) == 4


def test_grid_and_schedule():
    grid = zoo_grid()
    assert len(grid) == 21 and len({s.name for s in grid}) == 21
    assert [s.n_members for s in grid if s.seed == 0] == [3, 5, 9, 17, 5, 9, 17]
    assert grid[0].seed == 0 and grid[-1].seed == 2
    lrs = [lr_at(s, CFG) for s in range(CFG.steps)]
    assert np.argmax(lrs) == CFG.warmup - 1 and np.all(np.diff(lrs[CFG.warmup:]) <= 0)
    assert lrs[-1] >= CFG.lr * CFG.final_lr_frac
    a, b = batch_order(100, 7, 32, seed=3), batch_order(100, 7, 32, seed=3)
    assert np.array_equal(a, b) and not np.array_equal(a, batch_order(100, 7, 32, seed=4))
    epoch = np.concatenate([batch_order(100, s, 20, seed=3) for s in range(5)])
    assert sorted(epoch) == list(range(100))       # every example once per epoch
    with pytest.raises(ValueError, match="depth"):
        ModelSpec(0)
    with pytest.raises(ValueError, match="warmup"):
        TrainConfig(steps=10, warmup=10)


@pytest.mark.slow
def test_loss_decreases(trained):
    for spec, rec, _ in trained.values():
        first, last = np.mean(rec["losses"][:20]), np.mean(rec["losses"][-20:])
        assert rec["finished"] and rec["step"] == CFG.steps
        assert last < 0.5 * first, (spec.name, first, last)
        assert rec["wall_time_s"] > 0


@pytest.mark.slow
def test_checkpoints_load_and_extract_exactly(trained, zoo_data):
    from extraction import extract, load_model

    _, _, held = zoo_data
    for spec, rec, folder in trained.values():
        model, tok = load_model(folder, device="cpu")
        run = extract(model, tok, held, progress=False)
        assert run.meta["exactness_ok"] and run.meta["max_relative_exactness_error"] < 1e-5
        assert run.u.shape[1] == spec.n_members == 2 * spec.repeats * spec.depth + 1
        blocks = [(m.kind, m.block) for m in run.members]
        if spec.shared:          # shared depth 1: M = 4L + 1 = 5, one block executed twice
            assert run.u.shape[1] == 4 * spec.depth + 1
            assert blocks == [("embed", -1), ("attn", 0), ("mlp", 0), ("attn", 0), ("mlp", 0)]
        acc = float((run.logits.argmax(1) == held.labels).mean())
        assert acc == pytest.approx(rec["heldout"]["accuracy"], abs=1e-12)
        assert sum(p.numel() for p in {id(p): p for p in model.parameters()}.values()) \
            == rec["params"]


@pytest.mark.slow
def test_killed_run_resumes_to_same_weights(zoo_data, tmp_path):
    from infodiv.experiments.data import subset
    from infodiv.experiments.train import train_model

    tok, train, _ = zoo_data
    train = subset(train, range(200))
    tok_dir = tmp_path / "tok"
    tok.save_pretrained(tok_dir)
    spec = ModelSpec(1, repeats=2, **TINY)
    cfg = TrainConfig(steps=80, batch_size=8, lr=3e-3, warmup=5, checkpoint_every=5)
    killed = tmp_path / "killed"
    script = (
        "import sys; from transformers import PreTrainedTokenizerFast\n"
        "from infodiv.experiments.data import subset, zoo_tasks\n"
        "from infodiv.experiments.configs import ModelSpec\n"
        "from infodiv.experiments.train import TrainConfig, train_model\n"
        f"tok = PreTrainedTokenizerFast.from_pretrained({str(tok_dir)!r})\n"
        f"train, _ = zoo_tasks({str(train.meta['source_files'][0].rsplit('/', 2)[0])!r})\n"
        f"train = subset(subset(train, range(0, 5600, 7)), range(200))\n"
        f"train_model(ModelSpec(**{spec.to_dict()!r}), tok, train, {str(killed)!r}, "
        f"TrainConfig(**{ {**cfg.to_dict(), 'betas': tuple(cfg.betas)}!r}), progress=False)\n")
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    state = killed / "state.pt"
    deadline = time.time() + 120
    while not state.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
    st = torch.load(state, weights_only=False)
    assert 0 < st["step"] < cfg.steps and not (killed / "model").exists()

    lines = []
    resumed = train_model(spec, tok, train, killed, cfg, progress=False, log=lines.append)
    assert lines and f"resuming at step {st['step']}" in lines[0]
    straight = train_model(spec, tok, train, tmp_path / "straight", cfg, progress=False)
    assert resumed["losses"] == straight["losses"]
    from safetensors.torch import load_file

    a = load_file(killed / "model" / "model.safetensors")
    b = load_file(tmp_path / "straight" / "model" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    rec = json.loads((killed / "model" / "zoo.json").read_text())
    assert rec["step"] == cfg.steps


def _zoo_cli(argv) -> int:
    import argparse

    from infodiv.commands import zoo

    parser = argparse.ArgumentParser(prog="infodiv zoo")
    zoo.configure(parser)
    return zoo.run(parser.parse_args(argv))


@pytest.mark.slow
def test_cli_rejects_changed_settings(tmp_path, capsys, shared_data_dir):
    main = _zoo_cli

    args = ["train", "--root", str(tmp_path), "--depths", "1", "--shared-depths",
            "--seeds", "0", "--width", "16", "--heads", "2", "--mlp", "32", "--max-len", "40",
            "--steps", "3", "--warmup", "1", "--batch-size", "4", "--vocab-size", "200",
            "--data-dir", str(shared_data_dir), "--quiet"]
    assert main(args) == 0
    assert (tmp_path / "models" / "llama-d16-L1-s0" / "model" / "zoo.json").is_file()
    assert main(args) == 0 and "already finished" in capsys.readouterr().out
    assert main(args[:-1] + ["--steps", "4", "--quiet"]) == 2
    assert "different settings (train)" in capsys.readouterr().err


@pytest.mark.slow
def test_report_records_and_table1(trained, tmp_path, shared_data_dir):
    from infodiv.experiments.data import subset, zoo_tasks
    from infodiv.experiments.report import ZooSettings, report_zoo
    from infodiv.experiments.summary import table1

    held = subset(zoo_tasks(shared_data_dir)[1], range(400))   # Gaussian terms need n >> dims
    root = next(iter(trained.values()))[2].parents[2]
    (tmp_path / "README.template.md").write_text(
        "L1 {{summary.json:0.accuracy|.3f}} Wilson {{summary.json:0.accuracy_wilson95|.3f}}\n")
    settings = ZooSettings(analyses=(), n_bootstrap=20, n_permutations=19, n_resamples=20,
                           probe_null=19, info_null=2, reduced=("L1-share2",), reduced_size=21)
    recs = report_zoo(root, tmp_path, settings, heldout=held, progress=False,
                      log=lambda m: None)
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert [r["model"] for r in doc] == [r["model"] for r in recs] and len(doc) == 3
    for r in doc:
        spec, rec, _ = trained[r["model"]]
        assert (r["depth"], r["shared"], r["seed"], r["n_members"]) == (
            spec.depth, spec.shared, spec.seed, spec.n_members)
        assert r["params"] == rec["params"] and r["exactness_ok"]
        assert r["train_accuracy_check"] == rec["heldout"]["accuracy"]
        ce = r["cross_entropy_sum"]      # exact: CE of the model = bias - diversity (bits)
        assert ce["loss"] == pytest.approx(r["cross_entropy"] / np.log(2), rel=1e-5)
        assert ce["loss"] == pytest.approx(ce["bias"] - ce["diversity"], abs=1e-9)
        assert set(r["paper_eq14"]) >= {"mse", "bias", "diversity", "gap"}
        assert np.isfinite(r["information"]["joint"]) and r["information"]["method"] == "usable"
        inf = r["information_inference"]["joint"]
        assert inf["value"] == pytest.approx(r["information"]["joint"], rel=1e-9)
        assert inf["value"] <= inf["h_y"] and inf["bracket"][1] <= inf["h_y"] + 1e-12
        small = "share2" in r["model"]       # --reduced: its own inference sizes
        assert r["reduced_inference"] == (21 if small else None)
        assert inf["n_permutations"] == (21 if small else 19) and 0 < inf["p"] <= 1
        assert (tmp_path / "contributions" / r["model"] / "meta.json").is_file()
        assert (tmp_path / r["model"] / "figures.json").is_file()    # reused by a rerun
        lo, hi = r["accuracy_wilson95"]           # binomial interval over the 400 examples
        assert lo < r["accuracy"] < hi and hi - lo == pytest.approx(
            2 * 1.96 * np.sqrt(r["accuracy"] * (1 - r["accuracy"]) / 400), rel=0.1)
    assert (tmp_path / "summary.md").is_file() and (tmp_path / "depth.png").is_file()
    from infodiv.inference.power import wilson_interval

    k = round(doc[0]["accuracy"] * 400)
    assert (tmp_path / "README.md").read_text() == (         # filled by write_summary
        f"L1 {doc[0]['accuracy']:.3f} Wilson [{wilson_interval(k, 400)[0]:.3f}, "
        f"{wilson_interval(k, 400)[1]:.3f}]\n")
    by_name = {r["model"]: r for r in doc}
    deep = by_name["llama-d32-L2-s0"]["logit_lens"]
    assert deep["k"] == [1, 2, 3, 4, 5] and deep["accuracy"][-1] == pytest.approx(
        by_name["llama-d32-L2-s0"]["accuracy"])
    from infodiv.experiments.summary import prefix_vs_depth

    pv = prefix_vs_depth(doc)
    assert [(p["after_block"], p["n_depth_models"]) for p in pv] == [(1, 1), (2, 1)]
    assert pv[0]["truncated_accuracy"] == deep["accuracy"][2]
    # Table 1 pairs the shared L=1 twin with unshared L=1 (parameters) and L=2 (executions)
    t1 = table1(doc)
    assert [(t["compare"], t["unshared_depth"]) for t in t1] == [
        ("equal executions", 2), ("equal parameters", 1)]
    by = {(r["shared"], r["depth"]): r for r in doc}
    assert t1[1]["accuracy"]["mean"] == pytest.approx(
        by[True, 1]["accuracy"] - by[False, 1]["accuracy"])
    # seed-and-example intervals (infodiv.experiments.across) on resamples shared by every model
    across = json.loads((tmp_path / "across.json").read_text())
    assert across["n_resamples"] == 20 and len(across["by_depth"]) == 3
    for row in across["by_depth"]:
        lo, hi = row["accuracy"]["ci95"]
        assert lo <= row["accuracy"]["mean"] <= hi and hi - lo > 0
        assert 0 < row["probe_bound"]["mean"] <= 2.0       # H(Y) = 2 bits, a lower bound
        lo, hi = row["probe_bound"]["ci95"]           # centred replicates: the point inside
        assert lo <= row["probe_bound"]["mean"] <= hi
    for r in doc:                # the probe's raw resample interval is kept beside the point
        iv = r["probe_interval"]
        assert iv["point"] == r["probe_bound"] and iv["n_resamples"] == 20
        assert iv["ci95"][0] <= iv["point"] <= iv["ci95"][1]
        assert iv["bias"] == pytest.approx(iv["resample_mean"] - iv["point"])
    # valid information terms: point = the model's own (null-corrected D), centred replicates
    assert across["information_null"] == 2
    for row in across["by_depth"]:
        (rec,) = [r for r in doc if (r["shared"], r["depth"]) == (row["shared"], row["depth"])]
        d = row["usable_d_corrected"]
        assert d["mean"] == pytest.approx(rec["information_inference"]["diversity"]["corrected"])
        assert d["ci95"][0] < d["mean"] < d["ci95"][1]
        assert row["usable_joint"]["mean"] == pytest.approx(rec["information"]["joint"])
        assert row["usable_joint"]["mean"] <= 2.0
    pairs = {(t["compare"], t["unshared_depth"]): t for t in across["table1"]}
    d = pairs["equal parameters", 1]["sq_diversity"]
    assert d["mean"] == pytest.approx(by[True, 1]["squared_logit_mean"]["diversity"]
                                      - by[False, 1]["squared_logit_mean"]["diversity"])
    tv = {t["after_block"]: t for t in across["truncated_vs_depth"]}
    assert set(tv) == {1, 2}       # the truncated L2 after 2 blocks IS the L2 model: exact 0
    assert tv[2]["difference"] == 0 and tv[2]["difference_ci95"] == [0, 0]
    assert tv[1]["truncated_accuracy"] == pytest.approx(deep["accuracy"][2])
    assert by_name["llama-d32-L2-s0"]["probe_null"]["n_permutations"] == 19
    assert (tmp_path / "depth_params.png").is_file() and "Table 1 form" in (
        tmp_path / "summary.md").read_text()
    # every markdown table row has its header's number of cells ('TC|Y' escaped)
    import re

    width = None
    for line in (tmp_path / "summary.md").read_text().splitlines():
        cells = len(re.split(r"(?<!\\)\|", line)) if line.startswith("|") else None
        width = cells if width is None else width
        assert cells is None or cells == width, line
        width = None if cells is None else width
    # --skip: a finished checkpoint left out (caches reused), listed in the summary; a second
    # report recomputes nothing: no extraction, no headline / probe / replicate figures
    import extraction.forward as ex
    import infodiv.experiments.headline as headline
    import infodiv.experiments.intervals as intervals

    def refuse(*a, **k):
        raise AssertionError("recomputed on the second report")

    with pytest.MonkeyPatch.context() as mp:
        for mod, name in ((ex.BatchRunner, "run"), (headline, "headline"),
                          (intervals, "model_figures"), (intervals, "probe_null"),
                          (intervals, "replicates"), (intervals, "information_replicates")):
            mp.setattr(mod, name, refuse)
        report_zoo(root, tmp_path, settings, heldout=held, progress=False, skip=("L2-",),
                   log=lambda m: None)
    assert [r["model"] for r in json.loads((tmp_path / "summary.json").read_text())] == [
        r["model"] for r in recs if "L2-" not in r["model"]]
    assert json.loads((tmp_path / "across.json").read_text())["skipped_checkpoints"] == [
        "llama-d32-L2-s0"]
    assert "left out of this report" in (tmp_path / "summary.md").read_text()
