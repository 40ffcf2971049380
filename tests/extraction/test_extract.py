"""extract(): batching, bad input, half precision, meta, run directories, load_model, CLI."""

from __future__ import annotations

import hashlib
import shutil
import warnings

import numpy as np
import pytest
import torch
from _tiny_models import tiny_model, torch_threads
from _tiny_tasks import TEXTS, tiny_task

from extraction.contributions import Contributions
from extraction.models import SMOLLM2_HUB_ID, load_model, model_source, resolve_model_name
from extraction.prompts import encode_task
from extraction.runner import EXACTNESS_RTOL, extract, plan_batches
from extraction.shards import partial_dir
from extraction.tasks import Task


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    with torch_threads(1):   # several times faster on 2 shared cores
        yield


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt2")
    model, tok = tiny_model("gpt2", folder)
    return folder, model, tok


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    folder = tmp_path_factory.mktemp("llama")
    model, tok = tiny_model("llama", folder)
    return folder, model, tok


class DuckTask:
    """Minimal task-like object, to reach extract's own checks."""

    def __init__(self, labels, options=("negative", "positive")):
        self.labels = np.asarray(labels, dtype=np.int64)
        self.options, self.name = list(options), "duck"

    def __len__(self):
        return len(self.labels)


def test_plan_batches_sorted_and_budgeted():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 50, size=101)
    for plan in (plan_batches(lengths, 8), plan_batches(lengths, "auto", 200, 16)):
        order = np.concatenate(plan)
        assert sorted(order.tolist()) == list(range(101))
        assert np.all(np.diff(lengths[order]) <= 0)           # longest first
    assert all(len(b) <= 8 for b in plan_batches(lengths, 8))
    for b in plan_batches(lengths, "auto", 200, 16):
        assert len(b) <= 16 and (len(b) == 1 or len(b) * lengths[b].max() <= 200)
    with pytest.raises(ValueError, match="batch_size"):
        plan_batches(lengths, 0)
    with pytest.raises(ValueError, match="split_cost"):
        plan_batches(lengths, 8, split_cost=-1)
    # "auto" without an explicit budget uses the CPU defaults (a None budget is never divided)
    default = plan_batches(lengths, "auto")
    assert [b.tolist() for b in default] == [b.tolist() for b in plan_batches(lengths, "auto",
                                                                                4096, 64)]


def _brute_force_cost(s, cap, split_cost):
    """Least Σ (b · T_max + split_cost) over every cut of the sorted lengths (2^(N-1) plans)."""
    import itertools

    n, best = len(s), np.inf
    for mask in itertools.product((0, 1), repeat=n - 1):
        cuts = [0] + [k + 1 for k, m in enumerate(mask) if m] + [n]
        sizes = np.diff(cuts)
        if sizes.max() <= cap:
            best = min(best, sum(b * s[i] + split_cost for i, b in zip(cuts[:-1], sizes)))
    return best


def test_plan_batches_minimises_padding_plus_split_cost():
    from extraction.batching import padded_tokens

    rng = np.random.default_rng(1)
    for trial in range(20):
        lengths = rng.integers(1, 40, size=int(rng.integers(2, 11)))
        cap, cost = int(rng.integers(1, 6)), float(rng.choice([0, 3, 16, 100]))
        plan = plan_batches(lengths, cap, split_cost=cost)
        got = padded_tokens(lengths, plan) + cost * len(plan)
        s = np.sort(lengths)[::-1]
        assert got == _brute_force_cost(s, cap, cost), (trial, lengths, cap, cost)
    lengths = np.array([30, 30, 30, 10, 10, 10, 10, 10])
    assert [len(b) for b in plan_batches(lengths, 8, split_cost=0)] == [3, 5]   # no padding
    assert len(plan_batches(lengths, 8, split_cost=float("inf"))) == 1           # fewest
    assert padded_tokens(lengths, plan_batches(lengths, 8, split_cost=0)) == lengths.sum()


def test_results_do_not_depend_on_batching(gpt2):
    # GPT-2 has absolute learned positions: wrong position ids under left padding would show
    _, model, tok = gpt2
    task = tiny_task()
    runs = [extract(model, tok, task, batch_size=b, progress=False) for b in (1, 2, 7, "auto")]
    for c in runs[1:]:
        np.testing.assert_allclose(c.u, runs[0].u, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(c.logits, runs[0].logits, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(c.scale, runs[0].scale, rtol=1e-5)
    # LayerNorm: the constant member is W_opt·beta (+ no LM-head bias in GPT-2)
    w = model.lm_head.weight.detach()[runs[0].option_ids].double()
    beta = model.transformer.ln_f.bias.detach().double()
    np.testing.assert_allclose(runs[0].bias, (w @ beta).numpy(), rtol=1e-5, atol=1e-6)


def test_bad_input_raises_clear_errors(llama):
    _, model, tok = llama
    with pytest.raises(ValueError, match="no examples"):
        extract(model, tok, DuckTask([]), progress=False)
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 2\)"):
        extract(model, tok, DuckTask([0, 2, 1]), progress=False)
    with pytest.raises(ValueError, match="outside the 2 options"):
        Task.from_records([{"text": "good", "label": 3}], template="{text} Answer:",
                          options=["negative", "positive"], label="label")
    with pytest.raises(ValueError, match="granularity"):
        extract(model, tok, tiny_task(), granularity="expert", progress=False)
    with pytest.raises(ValueError, match="neuron_top_k"):
        extract(model, tok, tiny_task(), neuron_top_k=3, progress=False)
    with pytest.raises(ValueError, match="batch_size"):
        extract(model, tok, tiny_task(), batch_size=0, progress=False)


def test_model_without_lm_head_and_unsupported_family(llama, tmp_path):
    import transformers as tf

    folder, _, tok = llama
    base = tf.AutoModel.from_pretrained(folder)
    with pytest.raises(ValueError, match="no causal LM head"):
        extract(base, tok, tiny_task(), progress=False)
    gpt1 = tf.OpenAIGPTLMHeadModel(tf.OpenAIGPTConfig(vocab_size=len(tok), n_embd=16,
                                                       n_layer=1, n_head=2))   # post-norm
    with pytest.raises(ValueError, match=r"unsupported architecture 'openai-gpt'.*gpt2.*llama"):
        extract(gpt1, tok, tiny_task(), progress=False)
    post = tf.OPTForCausalLM(tf.OPTConfig(vocab_size=len(tok), hidden_size=16, ffn_dim=32,
                                          num_hidden_layers=1, num_attention_heads=2,
                                          word_embed_proj_dim=16, do_layer_norm_before=False))
    with pytest.raises(ValueError, match="unsupported 'opt' variant: do_layer_norm_before"):
        extract(post, tok, tiny_task(), progress=False)


def test_final_norm_without_gain_and_a_norm_that_is_not_one(tmp_path):
    # a LayerNorm without elementwise affine (weight None) is read with G = 1 and stays exact;
    # a module that does not behave as the family's norm is refused by the probe
    from extraction.architectures import resolve

    model, tok = tiny_model("gpt2", tmp_path)
    model.transformer.ln_f = torch.nn.LayerNorm(model.config.n_embd, elementwise_affine=False)
    assert torch.equal(resolve(model).final_norm.gain, torch.ones(model.config.n_embd))
    assert extract(model, tok, tiny_task(), progress=False).meta["max_exactness_error"] < 1e-5
    model.transformer.ln_f = torch.nn.RMSNorm(model.config.n_embd, eps=1e-5)  # GPT-2 row: LN
    with pytest.raises(ValueError, match="does not behave as a layer norm"):
        resolve(model)


def test_nan_logits_raise_and_leave_no_valid_run(tmp_path):
    model, tok = tiny_model("llama", tmp_path / "m")
    with torch.no_grad():
        model.model.layers[1].mlp.down_proj.weight[3, 5] = float("nan")
    out = tmp_path / "run"
    with warnings.catch_warnings(record=True) as caught, \
            pytest.raises(FloatingPointError, match="non-finite"):
        warnings.simplefilter("always")
        extract(model, tok, tiny_task(), out=out, progress=False)
    # the model itself fails: the savings' check says so instead of blaming the savings
    assert not [w for w in caught if "savings switched off" in str(w.message)]
    assert not out.exists()
    assert not list(partial_dir(out).glob("shard-*"))
    with pytest.raises(FileNotFoundError):
        Contributions.load(out)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_projects_in_float32_and_reports_tolerance(tmp_path, dtype):
    model, tok = tiny_model("llama", tmp_path, dtype=dtype)
    assert next(model.parameters()).dtype == getattr(torch, dtype)
    task = tiny_task()
    c = extract(model, tok, task, batch_size=3, progress=False)
    assert c.u.dtype == np.float32 and c.meta["projection_dtype"] == "float32"
    assert c.meta["dtype"] == dtype and c.meta["exactness_rtol"] == EXACTNESS_RTOL[dtype]
    rel = c.exactness_error() / (1 + np.abs(c.logits).max(axis=1))
    assert c.meta["max_relative_exactness_error"] == pytest.approx(rel.max(), rel=1e-3)
    assert rel.max() <= EXACTNESS_RTOL[dtype] and c.meta["exactness_ok"]
    enc = encode_task(tok, task, max_length=128)
    for i, ids in enumerate(enc.input_ids):   # the model's own half-precision logits
        with torch.no_grad():
            ref = model(torch.tensor([ids])).logits[0, -1, enc.option_ids].float().numpy()
        assert np.abs(ref - c.logits[i]).max() <= EXACTNESS_RTOL[dtype] * (1 + np.abs(ref).max())


def test_run_directory_meta_and_truncation(llama, tmp_path):
    folder, model, tok = llama
    long_texts = TEXTS + [" ".join(["very"] * 60) + " good"]
    recs = [{"text": t, "label": i % 2} for i, t in enumerate(long_texts)]
    task = Task.from_records(recs, template="{text} Question: Was that sentence positive or "
                             "negative? Answer:", options=["negative", "positive"],
                             label="label", truncatable=["text"])
    out = tmp_path / "run"
    c = extract(model, tok, task, out=out, progress=False, max_length=20)
    too_long = sum(len(ids) > 20 for ids in encode_task(tok, task, max_length=None).input_ids)
    assert too_long >= 2 and c.meta["n_truncated"] == too_long and c.meta["exactness_ok"]
    loaded = Contributions.load(out)
    np.testing.assert_array_equal(loaded.u, c.u)
    assert loaded.names == c.names and loaded.options == ["negative", "positive"]
    m = loaded.meta
    sha = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert m["model"]["weights_sha256"] == sha and m["family"] == "llama"
    assert m["template"] == task.template and m["options"] == ["negative", "positive"]
    assert m["device"] == "cpu" and m["dtype"] == "float32" and "seed" in m
    assert set(m["versions"]) >= {"torch", "transformers", "numpy", "infodiv"}
    assert len(m["exactness_error"]) == len(task) and m["max_length"] == 20
    assert not partial_dir(out).exists()


def test_finished_run_is_reused_and_resume_keeps_first_plan(llama, tmp_path, monkeypatch):
    import extraction.forward as ex

    _, model, tok = llama
    out = tmp_path / "run"
    first = extract(model, tok, tiny_task(), out=out, batch_size=2, progress=False)

    def refuse(*a, **k):
        raise AssertionError("recomputed a finished run")

    with monkeypatch.context() as mp:
        mp.setattr(ex.BatchRunner, "run", refuse)
        again = extract(model, tok, tiny_task(), out=out, batch_size=2, progress=False)
    np.testing.assert_array_equal(again.u, first.u)
    assert again.meta["fingerprint"] == first.meta["fingerprint"]
    # the same weights read from another folder are the same run (identified by their sha256)
    folder = llama[0]
    moved = tmp_path / "moved"
    shutil.copytree(folder, moved)
    model2, _ = load_model(str(moved), device="cpu", dtype="float32")
    assert model_source(model2)["resolved"] != model_source(model)["resolved"]
    with monkeypatch.context() as mp:
        mp.setattr(ex.BatchRunner, "run", refuse)
        moved_again = extract(model2, tok, tiny_task(), out=out, batch_size=2, progress=False)
    assert moved_again.meta["fingerprint"] == first.meta["fingerprint"]
    # another task is never served from the finished run
    other = extract(model, tok, tiny_task(TEXTS[:3]), out=out, progress=False, overwrite=True)
    assert other.n_examples == 3
    # interrupted state from batch_size=2: a resume with another batch size keeps its plan
    out2 = tmp_path / "run2"
    calls = []
    real = ex.BatchRunner.run

    def interrupt(self, seqs, position):
        calls.append(len(seqs))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, seqs, position)

    with monkeypatch.context() as mp, pytest.raises(KeyboardInterrupt):
        mp.setattr(ex.BatchRunner, "run", interrupt)
        extract(model, tok, tiny_task(), out=out2, batch_size=2, shard_size=2, progress=False)
    closed, filled = 0, 0          # shards (>= 2 examples each) the two finished batches closed
    for size in calls[:2]:
        filled += size
        if filled >= 2:
            closed, filled = closed + 1, 0
    assert len(list(partial_dir(out2).glob("shard-*.npz"))) == closed >= 1
    resumed = extract(model, tok, tiny_task(), out=out2, batch_size=7, progress=False)
    assert resumed.meta["n_batches"] == 4
    np.testing.assert_array_equal(resumed.u, first.u)


def test_exactness_failure_is_an_error_with_the_numbers(llama, monkeypatch, tmp_path):
    import extraction.runner as ex
    from extraction.readout import ExactnessError

    _, model, tok = llama
    monkeypatch.setitem(ex.EXACTNESS_RTOL, "float32", 0.0)   # demand bit-exact sums
    out = tmp_path / "run"
    with pytest.raises(ExactnessError, match=r"for \d+ of 7 example\(s\): worst example \d+: "
                       r"max \|error\| = [0-9.e-]+ > tolerance 0"):
        extract(model, tok, tiny_task(), progress=False, out=out)
    assert not out.exists() and not list(partial_dir(out).glob("shard-*"))


@pytest.mark.parametrize("family,field", [("granite", "write_multiplier"),
                                          ("granite", "logit_multiplier"),
                                          ("cohere", "logit_multiplier"),
                                          ("bloom", "residual_in_output"),
                                          ("mpt", "residual_in_output")])
def test_a_wrong_family_row_fails_against_the_model_output(tmp_path, monkeypatch, family, field):
    # the check compares with the model's own logits, not with the tool's own recomputation of
    # them, so an adapter left out of a row is caught
    import dataclasses

    from _tiny_models import model_type

    from extraction import architectures
    from extraction.readout import ExactnessError

    model, tok = tiny_model(family, tmp_path)
    row = architectures.SPECS[model_type(family)]
    empty = {"write_multiplier": None, "logit_multiplier": None, "residual_in_output": (),
             "parallel": False}[field]
    monkeypatch.setitem(architectures.SPECS, model_type(family),
                        dataclasses.replace(row, **{field: empty}))
    with pytest.raises(ExactnessError, match=f"family '{model_type(family)}'"):
        extract(model, tok, tiny_task(), progress=False)


def test_device_map_auto_is_accepted(llama):
    from extraction.models import load_model

    folder, model, tok = llama
    b = extract(model, tok, tiny_task(), progress=False)
    for kw in ({"device": "device_map"}, {"device_map": "auto"}):
        mapped, _ = load_model(folder, dtype="float32", **kw)
        a = extract(mapped, tok, tiny_task(), progress=False)
        np.testing.assert_allclose(a.u, b.u, rtol=1e-5, atol=1e-6)


def test_captured_writes_do_not_keep_activations_alive(llama):
    # memory is O(N·M·C) + one batch: each captured write must own a [B, d] buffer, not be a
    # view into the [B, T, d] activation it was sliced from
    from extraction.architectures import resolve
    from extraction.capture import WriteRecorder

    _, model, _ = llama
    arch = resolve(model)
    ids = torch.randint(4, 20, (3, 9))
    with torch.inference_mode(), WriteRecorder(arch, heads=True, device="cpu") as rec:
        arch.base(input_ids=ids, use_cache=False)
    assert [w.kind for w in rec.writes] == ["embed", "attn", "mlp", "attn", "mlp"]
    for w in rec.writes:
        for t in (w.r, w.z) if w.z is not None else (w.r,):
            assert t.shape[0] == 3 and t.untyped_storage().nbytes() == t.numel() * 4


def test_model_name_resolution(tmp_path, monkeypatch):
    import extraction.models as models

    gguf = tmp_path / "pkg" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(models, "_smollm2_gguf", lambda: gguf)
    assert resolve_model_name("smollm2-135m") == (str(gguf.parent), gguf.name)
    assert resolve_model_name(str(gguf)) == (str(gguf.parent), gguf.name)
    monkeypatch.setattr(models, "_smollm2_gguf", lambda: None)
    assert resolve_model_name("SmolLM2-135M") == (SMOLLM2_HUB_ID, None)
    assert resolve_model_name("org/model") == ("org/model", None)
    with pytest.raises(FileNotFoundError):
        resolve_model_name(str(tmp_path / "missing.gguf"))


def test_cli_extract(stories_dir, shared_data_dir, tmp_path, capsys):
    from infodiv.cli import main

    out = tmp_path / "cli-run"
    code = main(["extract", "--model", str(stories_dir), "--task", "sst2", "--n", "12",
                 "--data-dir", str(shared_data_dir), "--out", str(out), "--batch-size", "5",
                 "--device", "cpu", "--quiet"])
    assert code == 0
    assert "N=12 M=11 C=2" in capsys.readouterr().out
    c = Contributions.load(out)
    assert c.u.shape == (12, 11, 2) and c.meta["batch_size"] == 5 and c.meta["task"] == "sst2"


def test_resolve_model_source_is_offline_and_lists_aliases(tmp_path, monkeypatch):
    import extraction.models as models
    from extraction.models import model_aliases, resolve_model_source

    monkeypatch.setattr(models, "_in_hub_cache", lambda repo: repo == "org/cached")
    assert "smollm2-135m" in model_aliases()
    (tmp_path / "m").mkdir()
    with pytest.raises(ValueError, match="no config.json"):
        resolve_model_source(tmp_path / "m")
    (tmp_path / "m" / "config.json").write_text("{}")
    assert resolve_model_source(tmp_path / "m").kind == "folder"
    gguf = tmp_path / "x.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_model_source(gguf) == models.ModelSource(str(gguf), str(tmp_path), "x.gguf",
                                                            "gguf")
    assert resolve_model_source("org/cached", allow_hub=False).kind == "hub-cache"
    assert resolve_model_source("org/other").kind == "hub"
    with pytest.raises(ValueError, match="not in the local Hugging Face cache"):
        resolve_model_source("org/other", allow_hub=False)
    for bad in ("nosuch-model", str(tmp_path / "missing"), str(tmp_path / "missing.gguf")):
        with pytest.raises(ValueError, match="aliases: smollm2-135m"):
            resolve_model_source(bad)
