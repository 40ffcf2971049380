"""k-hop pointer chasing: the generator, its held-out task file, and training on it.

Answers are checked by following the chains here, independently of the generator; the held-out
set must be balanced, deterministic and never drawn into the training stream; the task file must
read back through the toolkit's reader and tokenise exactly as the training stream encodes it;
a 2-step training run stopped after 1 step must resume to the weights of a straight run.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

import numpy as np
import pytest

from infodiv.experiments.hops import (
    OPTIONS,
    HopsTask,
    heldout_examples,
    prompt_len,
    train_batch_examples,
)

SMALL = HopsTask(hops=3, min_hops=1, symbols=24, n_heldout=200, heldout_seed=7)


def chase(pairs, start, limit=100):
    """End of the chain from ``start``, written independently of infodiv.experiments.hops.follow."""
    cur = start
    for _ in range(limit):
        nxt = [b for a, b in pairs if a == cur]
        if not nxt:
            return cur
        assert len(nxt) == 1, f"{cur} has {len(nxt)} successors"
        cur = nxt[0]
    raise AssertionError("chain longer than the limit")


def hops_of(pairs, start):
    n, cur = 0, start
    succ = dict(pairs)
    while cur in succ:
        cur, n = succ[cur], n + 1
    return n


def check_example(ex, hops):
    a_side = [a for a, _ in ex.pairs]
    b_side = [b for _, b in ex.pairs]
    assert len(ex.pairs) == 4 * hops and len(set(a_side)) == 4 * hops
    assert sorted(b for b in b_side if b in OPTIONS) == sorted(OPTIONS)   # each option once
    assert chase(ex.pairs, ex.start) == OPTIONS[ex.label]
    for marker, sym, ans in ex.before:
        assert ans == (chase(ex.pairs, sym) if marker == "|" else dict(ex.pairs)[sym])
    starts = set(a_side) - set(b_side)
    assert len(starts) == 4
    assert all(hops_of(ex.pairs, s) == hops for s in starts)


def test_heldout_answers_balance_and_determinism():
    held = heldout_examples(SMALL)
    assert len(held) == 200 and len({e.key for e in held}) == 200
    for ex in held:
        check_example(ex, SMALL.hops)
        assert hops_of(ex.pairs, ex.start) == SMALL.hops and ex.before == ()
    assert Counter(e.label for e in held) == {y: 50 for y in range(4)}
    again = heldout_examples(SMALL)
    assert [e.pairs for e in again] == [e.pairs for e in held]
    other = heldout_examples(HopsTask(**{**SMALL.to_dict(), "heldout_seed": 8}))
    assert [e.pairs for e in other] != [e.pairs for e in held]


def test_training_stream_answers_mixture_and_determinism():
    exs = [e for s in range(40) for e in train_batch_examples(SMALL, 0, s, 8)]
    chains = Counter(len(e.pairs) // 4 for e in exs)
    assert set(chains) == {1, 2, 3} and min(chains.values()) > 60
    asked, kinds = Counter(), Counter()
    for ex in exs:
        check_example(ex, len(ex.pairs) // 4)
        assert len(ex.before) == SMALL.queries - 1
        asked.update(hops_of(ex.pairs, q) for m, q, _ in ex.before if m == "|")
        kinds.update(m for m, _, _ in ex.before)
    assert set(asked) == {1, 2, 3}                   # end questions need 1..k hops
    assert kinds.keys() == {"|", ">"} and 0.4 < kinds[">"] / sum(kinds.values()) < 0.6
    assert Counter(e.label for e in exs).keys() == {0, 1, 2, 3}
    a = train_batch_examples(SMALL, 1, 5, 8)
    assert a == train_batch_examples(SMALL, 1, 5, 8)          # same step, same seed: same batch
    assert a != train_batch_examples(SMALL, 2, 5, 8)          # another seed: another stream
    assert a != train_batch_examples(SMALL, 1, 6, 8)
    fixed = HopsTask(**{**SMALL.to_dict(), "min_hops": 3, "queries": 1})
    one = train_batch_examples(fixed, 0, 0, 16)
    assert {hops_of(e.pairs, e.start) for e in one} == {3} and all(not e.before for e in one)


def test_stream_targets_are_the_answers():
    from infodiv.experiments.hops import HopsStream, hops_tokenizer

    tok = hops_tokenizer(SMALL.symbols)
    stream = HopsStream(SMALL, tok)
    seqs, targets = stream.batch(3, 6, 0)
    exs = stream.examples(3, 6, 0)
    for ids, tg, ex in zip(seqs, targets, exs):
        words = tok.convert_ids_to_tokens(ids)
        assert len(tg) == SMALL.queries and tg[-1][0] == len(ids) - 1
        for (pos, tid), (marker, sym, ans) in zip(tg, ex.before):
            assert words[pos - 1: pos + 2] == [marker, sym, ans]     # answered in the prompt
            assert tok.convert_ids_to_tokens(tid) == ans
            assert ans == (chase(ex.pairs, sym) if marker == "|" else dict(ex.pairs)[sym])
        assert words[-2:] == ["|", ex.start] and tg[-1][1] == tok.convert_tokens_to_ids(
            chase(ex.pairs, ex.start))


def test_heldout_never_in_training_stream():
    # a pool so small that collisions are frequent: 5 symbols, 1 hop -> 120 pair sets
    tiny = HopsTask(hops=1, min_hops=1, symbols=5, n_heldout=20, heldout_seed=3)
    held = {e.key for e in heldout_examples(tiny)}
    assert len(held) == 20
    clash = [e for s in range(50) for e in train_batch_examples(tiny, 0, s, 8)
             if e.key in held]
    assert clash, "without exclusion the tiny pool must collide (else this test proves nothing)"
    seen = {e.key for s in range(50) for e in train_batch_examples(tiny, 0, s, 8, held)}
    assert not seen & held and len(seen) > 50
    # the grid's setting, through the stream the trainer uses
    from infodiv.experiments.hops import HopsStream, hops_tokenizer

    task = HopsTask(hops=4, symbols=64, n_heldout=2000)
    heldout = heldout_examples(task)
    stream = HopsStream(task, hops_tokenizer(64), heldout)
    keys = {e.key for e in heldout}
    assert stream.exclude == keys
    trained = {e.key for s in range(100) for e in stream.examples(s, 32, 0)}
    assert len(trained) == 3200 and not trained & keys


def test_task_file_round_trip_and_encoding(tmp_path):
    from extraction.prompts import encode_task
    from infodiv.experiments.hops import (
        HopsStream,
        hops_tokenizer,
        read_task_file,
        to_task,
        write_task_file,
    )

    held = heldout_examples(SMALL)
    path = write_task_file(held, tmp_path / "heldout.jsonl")
    side = json.loads((tmp_path / "heldout.task.json").read_text())
    assert side == {"template": "{pairs} | {start} {answer}", "options": list(OPTIONS),
                    "label_field": "label"}
    task = read_task_file(path)
    direct = to_task(held, SMALL)
    assert len(task) == 200 and np.array_equal(task.labels, [e.label for e in held])
    assert [task.prompt(i) for i in range(len(task))] == \
        [direct.prompt(i) for i in range(len(direct))]
    assert task.prompt(0).endswith(f"| {held[0].start}")
    tok = hops_tokenizer(SMALL.symbols)
    enc = encode_task(tok, task, max_length=prompt_len(SMALL.hops))
    stream = HopsStream(SMALL, tok, held)
    assert enc.input_ids == [stream.encode(e) for e in held]
    assert list(enc.option_ids) == stream.option_ids
    assert {len(ids) for ids in enc.input_ids} == {prompt_len(SMALL.hops)}
    assert tok.unk_token_id not in {t for ids in enc.input_ids for t in ids}


def _cli(argv) -> int:
    from infodiv.commands import zoo

    parser = argparse.ArgumentParser(prog="infodiv zoo")
    zoo.configure(parser)
    return zoo.run(parser.parse_args(argv))


def test_train_resume_and_cli(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    from infodiv.experiments.configs import ModelSpec
    from infodiv.experiments.depth import train_depth
    from infodiv.experiments.train import TrainConfig, train_model

    task = HopsTask(hops=2, symbols=16, n_heldout=40)
    spec = ModelSpec(2, width=16, heads=2, mlp=32, max_len=prompt_len(2, task.queries))
    cfg = TrainConfig(steps=2, batch_size=4, lr=3e-3, warmup=1, checkpoint_every=1)
    torch.set_num_threads(1)
    lines = []
    part = train_depth(tmp_path / "a", [spec], cfg, task, progress=False, log=lines.append)
    assert part[0]["finished"] and 0 <= part[0]["heldout"]["accuracy"] <= 1
    assert part[0]["heldout"]["n"] == 40 and part[0]["n_train"] == 8
    assert part[0]["losses"][0] > 0 and len(part[0]["losses"]) == 2

    from infodiv.experiments.depth import prepare_depth_root
    tok, stream, held = prepare_depth_root(tmp_path / "b", task, cfg)
    run = tmp_path / "b" / "models" / spec.name
    first = train_model(spec, tok, stream, run, cfg, heldout_task=held, progress=False,
                        stop_after=1)
    assert first["step"] == 1 and not first["finished"]
    lines = []
    done = train_model(spec, tok, stream, run, cfg, heldout_task=held, progress=False,
                       log=lines.append)
    assert "resuming at step 1/2" in lines[0] and done["finished"]
    assert done["losses"] == part[0]["losses"]
    a = load_file(run / "model" / "model.safetensors")
    b = load_file(tmp_path / "a" / "models" / spec.name / "model" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

    from extraction.models import load_model
    model, tok2 = load_model(str(run / "model"), device="cpu", dtype="float32")
    assert tok2.get_vocab() == tok.get_vocab()

    args = ["train", "--task", "hops", "--hops", "2", "--symbols", "16", "--n-heldout", "40",
            "--root", str(tmp_path / "a"), "--depths", "2", "--shared-depths", "--seeds", "0",
            "--width", "16", "--heads", "2", "--mlp", "32", "--steps", "2", "--warmup", "1",
            "--batch-size", "4", "--checkpoint-every", "1", "--lr", "3e-3", "--quiet"]
    assert _cli(args) == 0 and "already finished" in capsys.readouterr().out
    assert _cli(args[:-1] + ["--steps", "3", "--quiet"]) == 2
    assert "different settings (train)" in capsys.readouterr().err
    assert _cli(args[:-1] + ["--max-len", "20", "--quiet"]) == 2
    assert "max_len must be >= 47" in capsys.readouterr().err


def test_init_std_reaches_the_config_and_keeps_old_fingerprints():
    pytest.importorskip("torch")
    from infodiv.experiments.configs import ModelSpec, _config
    from infodiv.experiments.hops import hops_tokenizer

    old = ModelSpec(2, width=16, heads=2, mlp=32)
    assert "init_std" not in old.to_dict()           # AG News zoo fingerprints unchanged
    wide = ModelSpec(2, width=16, heads=2, mlp=32, init_std=0.125)
    assert wide.to_dict()["init_std"] == 0.125
    tok = hops_tokenizer(8)
    assert _config(wide, tok).initializer_range == 0.125
    assert _config(old, tok).initializer_range == 0.02
    with pytest.raises(ValueError, match="init_std"):
        ModelSpec(2, init_std=0)


def test_depth_root_held_out_file_is_checked(tmp_path):
    from infodiv.experiments.depth import prepare_depth_root
    from infodiv.experiments.train import TrainConfig

    task = HopsTask(hops=2, symbols=16, n_heldout=12)
    cfg = TrainConfig(steps=2, batch_size=4, warmup=1)
    _, stream, held = prepare_depth_root(tmp_path, task, cfg)
    assert len(held) == 12 and held.options == list(OPTIONS)
    assert stream.exclude == {e.key for e in heldout_examples(task)}
    path = tmp_path / "heldout.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[1:] + lines[:1]) + "\n")       # reordered: not the same set
    with pytest.raises(ValueError, match="differs from the held-out set"):
        prepare_depth_root(tmp_path, task, cfg)
    with pytest.raises(ValueError, match="different settings"):
        prepare_depth_root(tmp_path, HopsTask(hops=3, symbols=16, n_heldout=12), cfg)
