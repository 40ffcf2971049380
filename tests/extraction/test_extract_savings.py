"""Exact savings (extraction.savings): the saved extraction equals the plain hooked one.

Tiny random-weight models of several families (rotary, learned positions, ALiBi, sliding
windows, parallel blocks, residual-in-output modules, mixture of experts, layer sharing) on a
task whose prompts share a 10-token prefix and have different lengths (padding in every batch):
the shared-prefix cache, the last-block pruning and the cut after the read position must give
the same members as ``savings=False`` to float32 rounding, and the reference check against a
real forward must catch a wrong cache.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _tiny_models import tiny_model, torch_threads
from _tiny_tasks import TEXTS

from extraction import savings as sv
from extraction.architectures import resolve
from extraction.prompts import encode_task
from extraction.runner import extract
from extraction.tasks import Task

HEAD = "I really loved this story and the plot . "   # 9 words + BOS: a 10-token prefix
TEMPLATE = HEAD + "{text} Question: Was that sentence positive or negative? Answer:"
FAMS = ("llama", "gpt2", "gemma2", "gemma3_text", "falcon", "bloom", "mpt", "opt",
        "qwen2_moe", "llama_shared")


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    with torch_threads(1):
        yield


def _task(template=TEMPLATE) -> Task:
    recs = [{"text": t, "label": i % 2} for i, t in enumerate(TEXTS)]
    return Task.from_records(recs, template=template, options=["negative", "positive"],
                             label="label", name="tiny")


def _close(a, b) -> float:
    """max |a − b| relative to (1 + max |b|)."""
    return float(np.abs(a.u.astype(np.float64) - b.u).max() / (1 + np.abs(b.u).max()))


def _check_passed(check, plain, *, one_prompt: bool) -> None:
    """The savings' check against a real forward passed: one prompt alone (with a shared
    prefix cache) or the first batch unpruned, its pruned modules verified on their read rows."""
    tol = check["rtol"] * (1 + np.abs(plain.logits).max())
    assert check["kind"] == ("one prompt alone" if one_prompt else "first batch, real forward")
    if one_prompt:
        assert check["max_abs_error_model_logits"] <= tol
    else:
        assert check["pruned_modules_checked"] >= 1 and check["pruned_module_last_execution"]
        assert check["max_abs_error_pruned_modules"] <= check["rtol"]
    assert check["max_abs_error_sum_u"] <= tol


@pytest.fixture(scope="module", params=FAMS)
def fam(request, tmp_path_factory):
    model, tok = tiny_model(request.param, tmp_path_factory.mktemp(request.param))
    return request.param, model, tok


def test_shared_prefix_and_cut():
    assert sv.shared_prefix([[1, 2, 3], [1, 2, 4, 5]]) == 2
    assert sv.shared_prefix([[1, 2], [1, 2, 3]]) == 1          # the read token stays
    assert sv.shared_prefix([[1, 2, 3], [4, 2, 3]]) == 0
    assert sv.shared_prefix([[7, 8, 9]]) == 2
    cut, at = sv.cut_after([[1, 2, 3, 4], [5, 6]], [1, -1])
    assert cut == [[1, 2], [5, 6]] and at.tolist() == [1, 1]


@pytest.mark.parametrize("position", [-1, -3])
def test_saved_extraction_equals_plain_hooked_forward(fam, position):
    family, model, tok = fam
    task = _task()
    saved = extract(model, tok, task, batch_size=3, progress=False, position=position)
    plain = extract(model, tok, task, batch_size=3, progress=False, position=position,
                    savings=False)
    assert _close(saved, plain) <= 1e-5
    assert np.abs(saved.logits - plain.logits).max() <= 1e-5 * (1 + np.abs(plain.logits).max())
    s = saved.meta["savings"]
    assert s["enabled"] and s["last_block_pruned"]
    _check_passed(s["reference_check"], plain, one_prompt=family != "llama_shared")
    lengths = [len(x) for x in encode_task(tok, task, max_length=128).input_ids]
    run = sum(n + position + 1 for n in lengths)   # tokens after the read one are cut
    if family == "llama_shared":
        assert s["prefix_cache_tokens"] == 0 and "layer sharing" in s["prefix_cache"]
        assert s["tokens_run"] == run
    else:
        assert s["prefix_cache"] == "used" and s["prefix_cache_tokens"] == 10
        assert s["tokens_run"] == run - 10 * len(task)
    assert plain.meta["savings"]["enabled"] is False
    head = s["head_columns"]     # after the first real forward: the head's read columns only
    real_forward_batches = 0 if s["prefix_cache_tokens"] else 1
    assert head["narrowed_batches"] == saved.meta["n_batches"] - real_forward_batches >= 1
    assert head["max_abs_error"] <= head["tolerance"] and head["columns"] == 2
    assert "read columns only" in saved.meta["exactness_reference"]


def test_head_columns_check_catches_wrong_rows(tmp_path, monkeypatch):
    """The head's rows of the wrong ids: the check on the first real forward fails, the head
    stays whole (no batch narrowed) and the extraction is still exact."""
    model, tok = tiny_model("llama", tmp_path)
    task = _task(BARE)
    real = sv.HeadColumns.__init__

    def shifted(self, head, ids):
        real(self, head, [i + 1 for i in ids])

    monkeypatch.setattr(sv.HeadColumns, "__init__", shifted)
    c = extract(model, tok, task, batch_size=3, progress=False)
    head = c.meta["savings"]["head_columns"]
    assert head["narrowed_batches"] == 0 and "differs from the head's own output" in head["reason"]
    assert head["max_abs_error"] > head["tolerance"]
    assert c.meta["exactness_reference"].endswith("every batch)")
    plain = extract(model, tok, task, batch_size=3, progress=False, savings=False)
    assert _close(c, plain) <= 1e-5


def test_head_columns_refused_for_the_full_vocabulary(tmp_path):
    model, tok = tiny_model("gpt2", tmp_path)
    c = extract(model, tok, _task(BARE), batch_size=3, progress=False, vocab="full")
    head = c.meta["savings"]["head_columns"]
    assert head["narrowed_batches"] == 0 and head["reason"] == "every vocabulary column is read"


@pytest.mark.parametrize("family,granularity", [("llama", "head"), ("gpt2", "neuron"),
                                                ("mixtral", "expert"), ("llama_shared",
                                                                        "head")])
def test_saved_split_granularities(family, granularity, tmp_path):
    model, tok = tiny_model(family, tmp_path)
    task = _task()
    saved = extract(model, tok, task, batch_size=4, granularity=granularity, progress=False)
    plain = extract(model, tok, task, batch_size=4, granularity=granularity, progress=False,
                    savings=False)
    assert saved.names == plain.names and _close(saved, plain) <= 1e-5
    np.testing.assert_allclose(saved.scale, plain.scale, rtol=1e-5)


def test_layer_sharing_prunes_only_the_last_execution(tmp_path):
    model, tok = tiny_model("llama_shared", tmp_path)
    arch = resolve(model)
    assert len(arch.blocks) == 2 * len(arch.distinct_blocks)
    pruner = sv.LastBlockPruner(arch)
    assert pruner.total == 2
    ids = torch.tensor([[1, 5, 6, 7, 8]])
    with torch.inference_mode():
        ref = model(ids).logits[0, -1]
        with pruner.at(torch.tensor([4]), 5):
            out = model(ids).logits[0, -1]
    assert pruner.pruned == 2      # o_proj and MLP of the last execution, not the first
    assert torch.allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_fixed_demonstrations_are_one_cached_prefix(tmp_path):
    model, tok = tiny_model("qwen2", tmp_path)
    base = _task("{text} Question: Was that sentence positive or negative? Answer:")
    pool = _task("{text} Question: Was that sentence positive or negative? Answer:")
    fixed = base.with_demonstrations(2, pool=pool, seed=3, fixed=True)
    assert len({fixed.prompt(i).split("\n\n")[0] for i in range(len(fixed))}) == 1
    saved = extract(model, tok, fixed, batch_size=3, progress=False)
    plain = extract(model, tok, fixed, batch_size=3, progress=False, savings=False)
    assert _close(saved, plain) <= 1e-5
    assert saved.meta["savings"]["prefix_cache_tokens"] > 10
    per_example = base.with_demonstrations(2, pool=pool, seed=3)
    assert extract(model, tok, per_example, batch_size=3, progress=False
                   ).meta["savings"]["prefix_cache_tokens"] <= 2
    with pytest.raises(ValueError, match="need a pool"):
        base.with_demonstrations(2, fixed=True)


def test_reference_check_catches_a_wrong_cache(tmp_path, monkeypatch):
    """Position ids off by one after the prefix: the check against a real forward fails, the
    run falls back to the plain hooked forward (still exact) and says so."""
    model, tok = tiny_model("llama", tmp_path)
    task = _task()
    plain = extract(model, tok, task, batch_size=3, progress=False, savings=False)
    real = sv.PrefixCache.inputs

    def shifted(self, suffixes, pad_id):
        kw = real(self, suffixes, pad_id)
        kw["position_ids"] = kw["position_ids"] + 1
        return kw

    monkeypatch.setattr(sv.PrefixCache, "inputs", shifted)
    with pytest.warns(UserWarning, match="savings switched off"):
        c = extract(model, tok, task, batch_size=3, progress=False)
    assert "ExactnessError" in c.meta["savings"]["reference_check"]["failed"]
    assert c.meta["savings"]["enabled"] is False and _close(c, plain) <= 1e-5


def test_model_without_cache_runs_without_it(tmp_path, monkeypatch):
    model, tok = tiny_model("gpt2", tmp_path)
    task = _task()

    def refuse(self, *args, **kwargs):
        raise ValueError("GPT2Model returned no key/value cache")

    monkeypatch.setattr(sv.PrefixCache, "__init__", refuse)
    c = extract(model, tok, task, batch_size=3, progress=False)
    s = c.meta["savings"]
    assert s["prefix_cache_tokens"] == 0 and "no key/value cache" in s["prefix_cache"]
    assert s["last_block_pruned"] and s["reference_check"]["max_abs_error_sum_u"] < 1e-4


BARE = "{text} Question: Was that sentence positive or negative? Answer:"


@pytest.mark.parametrize("family,modules", [("llama", 2), ("gpt2", 2), ("qwen2_moe", 2),
                                             ("llama_shared", 2), ("bloom", 2), ("opt", 1)])
def test_no_shared_prefix_checks_the_pruning_on_the_first_batch(family, modules, tmp_path):
    """No prefix worth caching: the first batch is the real forward (no extra forward of one
    prompt), the pruned modules are verified on its read rows, later batches are pruned."""
    model, tok = tiny_model(family, tmp_path)
    task = _task(BARE)
    saved = extract(model, tok, task, batch_size=3, progress=False)
    plain = extract(model, tok, task, batch_size=3, progress=False, savings=False)
    assert _close(saved, plain) <= 1e-5
    s = saved.meta["savings"]
    assert s["enabled"] and s["last_block_pruned"] and s["prefix_cache_tokens"] == 0
    _check_passed(s["reference_check"], plain, one_prompt=False)
    assert s["reference_check"]["rows"] == 3
    assert s["reference_check"]["pruned_modules_checked"] == modules   # OPT: no MLP module


def _position_mixing_mlp(model, monkeypatch):
    """The last block's MLP made to mix positions (a cumulative sum): pruning it is wrong."""
    arch = resolve(model)
    mlp = sv._mlp_module(arch, arch.blocks[-1])
    real = type(mlp).forward

    def mixing(self, x, *args, **kwargs):
        y = real(self, x, *args, **kwargs)
        return y.cumsum(1) if self is mlp else y

    monkeypatch.setattr(type(mlp), "forward", mixing)


def _first_block_pruned(model, monkeypatch):
    """The pruner pointed at the first block instead of the last."""
    real = sv.LastBlockPruner.__init__

    def first(self, arch):
        real(self, arch)
        self.block = arch.blocks[0]
        self.total = sum(b is self.block for b in arch.blocks)
        self.targets = [arch.submodule(self.block, arch.spec.o_proj),
                        sv._mlp_module(arch, self.block)]

    monkeypatch.setattr(sv.LastBlockPruner, "__init__", first)


@pytest.mark.parametrize("broken", [_position_mixing_mlp, _first_block_pruned])
def test_first_batch_check_catches_a_wrong_pruning(broken, tmp_path, monkeypatch):
    model, tok = tiny_model("llama", tmp_path)
    task = _task(BARE)
    broken(model, monkeypatch)
    plain = extract(model, tok, task, batch_size=3, progress=False, savings=False)
    with pytest.warns(UserWarning, match="savings switched off"):
        c = extract(model, tok, task, batch_size=3, progress=False)
    assert "last-block pruning" in c.meta["savings"]["reference_check"]["failed"]
    assert c.meta["savings"]["enabled"] is False and _close(c, plain) <= 1e-5
