"""The depth grid's training rule (infodiv.experiments.restarts): a model still on the chance
plateau at the check step restarts from a new initialisation, every attempt recorded; a model
that passes the check trains exactly as without the rule; an interrupted restart resumes to the
same weights; the held-out question format can be mixed into training."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest

from infodiv.experiments.hops import HopsTask, prompt_len, train_batch_examples
from infodiv.experiments.restarts import RestartRule, init_seed, plateau


def test_plateau_is_the_window_mean_against_ln_c():
    losses = [2.0] * 50 + [1.0] * 50
    p = plateau(losses, 4, window=10)
    assert p["final_loss"] == 1.0 and p["chance_loss"] == pytest.approx(math.log(4))
    assert not p["on_plateau"]                       # 1.0 < 0.95 ln 4 = 1.317
    assert plateau([1.33] * 10, 4)["on_plateau"] and plateau([1.31] * 10, 4)["on_plateau"] is False
    assert plateau(losses, 4)["window"] == 1         # default: 1% of 100 steps
    assert plateau([], 4) is None and plateau([1.0], 1) is None


def test_init_seeds_and_rule_validation():
    assert init_seed(3, 0) == 3
    seeds = {init_seed(3, a) for a in range(1, 5)}
    assert len(seeds) == 4 and 3 not in seeds and init_seed(3, 1) == init_seed(3, 1)
    with pytest.raises(ValueError, match="window must be <= check_step"):
        RestartRule(10, 2, 20)
    with pytest.raises(ValueError, match="max_restarts"):
        RestartRule(10, -1)


def test_heldout_format_share_and_unchanged_stream_without_it():
    base = HopsTask(hops=3, symbols=24, queries=4, n_heldout=10)
    assert "heldout_frac" not in base.to_dict()
    mixed = HopsTask(hops=3, symbols=24, queries=4, n_heldout=10, heldout_frac=0.5)
    assert mixed.to_dict()["heldout_frac"] == 0.5
    exs = [e for s in range(20) for e in train_batch_examples(mixed, 0, s, 32)]
    plain = [e for e in exs if not e.before]
    # every plain example is a held-out-format question: K hops, so 4K pairs (4 chains)
    assert all(len(e.pairs) == 4 * 3 for e in plain)
    assert abs(len(plain) / len(exs) - 0.5) < 0.07, len(plain) / len(exs)
    assert not [e for e in (e for s in range(5) for e in train_batch_examples(base, 0, s, 32))
                if not e.before]
    with pytest.raises(ValueError, match="heldout_frac must be in"):
        HopsTask(heldout_frac=1.5)


@pytest.fixture()
def tiny(tmp_path):
    torch = pytest.importorskip("torch")
    from infodiv.experiments.configs import ModelSpec
    from infodiv.experiments.depth import prepare_depth_root
    from infodiv.experiments.train import TrainConfig

    torch.set_num_threads(1)
    task = HopsTask(hops=2, symbols=16, n_heldout=20)
    spec = ModelSpec(2, width=16, heads=2, mlp=32, max_len=prompt_len(2, task.queries))
    # lr so small that nothing leaves the plateau (the answer loss starts near ln V > ln 4)
    cfg = TrainConfig(steps=6, batch_size=4, lr=1e-9, warmup=1, checkpoint_every=1)
    return task, spec, cfg, prepare_depth_root(tmp_path / "root", task, cfg)


def _weights(folder):
    from safetensors.torch import load_file

    return load_file(folder / "model" / "model.safetensors")


def test_a_model_on_the_plateau_restarts_and_every_attempt_is_recorded(tmp_path, tiny):
    from infodiv.experiments.restarts import train_with_restarts

    task, spec, cfg, (tok, stream, held) = tiny
    rule = RestartRule(check_step=2, max_restarts=2, window=2)
    run = tmp_path / "run"
    lines = []
    rec = train_with_restarts(spec, tok, stream, run, cfg, rule, heldout_task=held,
                              progress=False, log=lines.append)
    assert rec["finished"] and rec["init_seed"] == init_seed(spec.seed, 2)
    assert [a["restarted"] for a in rec["attempts"]] == [True, True]
    assert [a["init_seed"] for a in rec["attempts"]] == [init_seed(0, 0), init_seed(0, 1)]
    assert all(a["loss_at_check"] >= 0.95 * math.log(4) for a in rec["attempts"])
    assert (run / "attempts" / "0" / "state.pt").is_file()
    assert sum("restarting from a new initialisation" in x for x in lines) == 2
    stored = json.loads((run / "model" / "zoo.json").read_text())
    assert stored["attempts"] == rec["attempts"] and stored["restart_rule"]["check_step"] == 2

    # interrupted inside the last attempt, resumed: the same weights
    run2 = tmp_path / "run2"
    part = train_with_restarts(spec, tok, stream, run2, cfg, rule, heldout_task=held,
                               progress=False, stop_after=5)
    assert not part.get("finished")
    again = train_with_restarts(spec, tok, stream, run2, cfg, rule, heldout_task=held,
                                progress=False)
    assert again["finished"] and again["losses"] == rec["losses"]
    a, b = _weights(run), _weights(run2)
    import torch
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_model_that_passes_the_check_trains_as_without_the_rule(tmp_path, tiny, monkeypatch):
    import torch

    import infodiv.experiments.restarts as restarts
    from infodiv.experiments.train import train_model

    task, spec, cfg, (tok, stream, held) = tiny
    plain = train_model(spec, tok, stream, tmp_path / "plain", cfg, heldout_task=held,
                        progress=False)
    real = restarts.plateau
    monkeypatch.setattr(restarts, "plateau", lambda *a, **k: {**real(*a, **k),
                                                              "on_plateau": False})
    rec = restarts.train_with_restarts(spec, tok, stream, tmp_path / "ruled", cfg,
                                       RestartRule(2, 2, 2), heldout_task=held, progress=False)
    assert [a["restarted"] for a in rec["attempts"]] == [False]
    assert rec["init_seed"] == spec.seed and rec["losses"] == plain["losses"]
    a, b = _weights(tmp_path / "plain"), _weights(tmp_path / "ruled")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_restart_options_on_the_command_line(tmp_path, capsys):
    from infodiv.commands import zoo

    parser = argparse.ArgumentParser(prog="infodiv zoo")
    zoo.configure(parser)
    args = parser.parse_args(["train", "--root", str(tmp_path / "z"), "--restart-check", "5"])
    assert zoo.run(args) == 2
    assert "--restart-check applies to --task hops only" in capsys.readouterr().err
    args = parser.parse_args(["train", "--task", "hops", "--hops", "2", "--symbols", "16",
                              "--n-heldout", "20", "--root", str(tmp_path / "h"), "--depths",
                              "1", "--shared-depths", "--seeds", "0", "--width", "16",
                              "--heads", "2", "--mlp", "32", "--steps", "3", "--warmup", "1",
                              "--batch-size", "4", "--checkpoint-every", "1", "--lr", "1e-9",
                              "--restart-check", "1", "--max-restarts", "1",
                              "--restart-window", "1", "--quiet"])
    assert zoo.run(args) == 0
    rec = json.loads(next((tmp_path / "h" / "models").glob("*/model/zoo.json")).read_text())
    assert len(rec["attempts"]) == 1 and rec["attempts"][0]["restarted"]
    settings = json.loads((tmp_path / "h" / "depth.json").read_text())
    assert settings["restart_rule"] == {"check_step": 1, "max_restarts": 1, "window": 1}
    assert np.isfinite(rec["losses"]).all()
