"""Batch plans: length-sorted batches that waste as few padded tokens as a split is worth.

A left-padded batch of ``b`` prompts whose longest has ``T`` tokens costs about ``b · T``
token positions through every block (the padding is computed and thrown away), plus a fixed
cost per forward (module calls, small-matrix inefficiency) worth ``split_cost`` positions.
:func:`plan_batches` sorts the prompts by length (longest first) and cuts the sorted order
into the batches that minimise

    Σ_batches (b · T_max + split_cost)

subject to ``b ≤ batch_size`` (or, for ``"auto"``, ``b ≤ max_batch`` and ``b · T_max ≤
token_budget``), by dynamic programming over the cut points (exact, ``O(N · max_batch)``).
``split_cost`` is measured: on one CPU thread a SmolLM2-135M forward of one 36-token prompt
costs what about 17 further positions cost inside a batch of 16 (``benchmarks/bench_extract.py``
records the padded positions of both plans), so the CPU default is 16; on CUDA a forward's
fixed cost dominates small batches and the default is 1024. Results never depend on the plan
(left padding, attention mask and position ids make every row its own prompt).
"""

from __future__ import annotations

import numpy as np

__all__ = ["plan_batches", "padded_tokens", "auto_budget", "CPU_SPLIT_COST", "GPU_SPLIT_COST"]

CPU_TOKENS, CPU_MAX_BATCH, GPU_MAX_BATCH = 4096, 64, 256
CPU_SPLIT_COST, GPU_SPLIT_COST = 16, 1024


def padded_tokens(lengths, batches) -> int:
    """Token positions the plan computes: Σ over batches of ``len(batch) · max length``."""
    lengths = np.asarray(lengths)
    return int(sum(len(b) * lengths[b].max() for b in batches))


def plan_batches(lengths, batch_size, token_budget: int = CPU_TOKENS,
                 max_batch: int = CPU_MAX_BATCH, split_cost: float = CPU_SPLIT_COST
                 ) -> list[np.ndarray]:
    """Length-sorted batches (longest first) as arrays of example indices.

    Parameters
    ----------
    lengths : sequence of int
        Token count of every prompt.
    batch_size : int or "auto"
        An int: at most that many prompts per batch. ``"auto"``: at most ``max_batch``
        prompts and ``b · T_max ≤ token_budget`` padded positions per batch (a prompt longer
        than the budget gets a batch of its own).
    token_budget, max_batch : int
        The ``"auto"`` limits (default: the CPU budget of ``extract``).
    split_cost : float
        Cost of one more forward in padded positions; the plan minimises
        ``Σ (b · T_max + split_cost)`` (module docstring). ``float("inf")`` gives the fewest
        batches; 0 gives no padding at all (one batch per distinct length run).

    Returns
    -------
    list of ndarray of int
        The batches in order, together a permutation of ``range(N)``.
    """
    lengths = np.asarray(lengths)
    if batch_size == "auto":
        cap, budget = int(max_batch), int(token_budget)
    elif isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 1:
        raise ValueError(f"batch_size must be 'auto' or a positive int, got {batch_size!r}")
    else:
        cap, budget = int(batch_size), None
    if not split_cost >= 0:
        raise ValueError(f"split_cost must be >= 0, got {split_cost!r}")
    order = np.argsort(-lengths, kind="stable")
    cuts = _cuts(lengths[order].astype(np.float64), cap, budget, float(split_cost))
    return [order[i:j] for i, j in zip(cuts[:-1], cuts[1:])]


def _cuts(s: np.ndarray, cap: int, budget: int | None, split_cost: float) -> list[int]:
    """Cut points ``0 = c_0 < … < c_K = N`` of the descending lengths ``s`` (module docstring).

    ``best[j]`` is the least cost of the first ``j`` prompts; the batch ``i..j-1`` costs
    ``(j − i) · s[i] + split_cost`` (``s[i]`` is its longest prompt). An infinite
    ``split_cost`` is replaced by one larger than any plan's padded total, which minimises the
    number of batches first and the padding second. Ties go to the largest batch.
    """
    n = len(s)
    per = split_cost if np.isfinite(split_cost) else float(n * s.max() + 1)
    best = np.zeros(n + 1)
    start = np.zeros(n + 1, dtype=np.int64)
    for j in range(1, n + 1):
        i = np.arange(max(0, j - cap), j)
        size = j - i
        if budget is not None:
            ok = (size == 1) | (size * s[i] <= budget)
            i, size = i[ok], size[ok]
        cost = best[i] + size * s[i] + per
        k = int(np.argmin(cost))
        best[j], start[j] = cost[k], i[k]
    cuts, j = [n], n
    while j > 0:
        j = int(start[j])
        cuts.append(j)
    return cuts[::-1]


def auto_budget(model, device) -> tuple[int, int, float]:
    """``(token_budget, max_batch, split_cost)`` of ``batch_size="auto"`` on ``device``."""
    import torch

    if device.type != "cuda":
        return CPU_TOKENS, CPU_MAX_BATCH, CPU_SPLIT_COST
    free, _ = torch.cuda.mem_get_info(device)
    cfg = model.config
    d = getattr(cfg, "hidden_size", 1024)
    ff = getattr(cfg, "intermediate_size", None) or 4 * d
    elem = next(model.parameters()).element_size()
    # live activations of one block per token (residual, norms, q/k/v/o, MLP hidden) + slack
    per_token = elem * (8 * d + 3 * ff) * 4
    return max(512, int(0.4 * free / per_token)), GPU_MAX_BATCH, GPU_SPLIT_COST
