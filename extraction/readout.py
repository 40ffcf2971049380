"""What an extraction reads and how it is checked: vocabulary, position, memory, exactness.

- ``vocab``: the C columns of ``u``. ``"options"`` (default) the scored option tokens;
  ``"full"`` every row of the LM head; a sequence of ids that holds every option token. With
  ``"full"`` or ids, ``Contributions.options`` are the token strings and the labels index the
  gold option's token among them.
- ``position``: where the model is read; -1 (default) the last prompt token, other negative
  values count from the end, non-negative ones from the first token (BOS included); an int for
  all examples or one per example. Positions index the encoded input, which ends with the
  options' shared prefix when they have one (:mod:`extraction.prompts`); the option columns
  are the next-token logits at the read position.
- Memory guard: ``u`` takes ``4·N·M·C`` bytes; above ``max_bytes`` the extraction refuses
  before running, naming N, M, C and the size.
- Exactness against the model's own output: per example
  ``err = max_c |f(Σ_m u_m + bias) − logits_model|`` with ``f`` the identity, or the family's
  soft-cap ``cap·tanh(z / cap)``; the model's logits come from its own forward
  (:mod:`extraction.forward`). Beyond ``rtol · (1 + max_c |logits_model|)`` it is an
  :class:`ExactnessError` with the numbers.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["EXACTNESS_RTOL", "ExactnessError", "exactness_against_model", "resolve_vocab",
           "resolve_positions", "check_memory", "DEFAULT_MAX_BYTES", "top_k_neurons"]

# max error ≤ rtol · (1 + max |logits|), per example, by model dtype. Float32: 1e-4. Half
# precision: the model's own residual additions and final norm round to the model dtype while
# the projections are float32, so the tolerance is 4 machine epsilons of that dtype
# (bf16: 4·2⁻⁷ ≈ 0.031, fp16: 4·2⁻¹⁰ ≈ 0.0039); the measured error is stored.
EXACTNESS_RTOL = {"float32": 1e-4, "float64": 1e-4, "bfloat16": 4 * 2.0 ** -7,
                  "float16": 4 * 2.0 ** -10}
DEFAULT_MAX_BYTES = 4 * 2 ** 30


def dtype_rtol(model) -> tuple[str, float]:
    """The model's parameter dtype (``"float32"``, ...) and its exactness tolerance."""
    dtype = str(next(model.parameters()).dtype).replace("torch.", "")
    return dtype, EXACTNESS_RTOL.get(dtype, 1e-4)


class ExactnessError(ArithmeticError):
    """Σ_m u_m + bias does not reproduce the model's own output logits within tolerance."""


def exactness_against_model(u, bias, model_logits, softcap, rtol: float, *, index=None,
                            family: str = "", dtype: str = "") -> np.ndarray:
    """Per-example error against the model's output; raise :class:`ExactnessError` beyond
    tolerance (the message gives the count, the worst example, its error and tolerance)."""
    z = u.astype(np.float64).sum(axis=1) + np.asarray(bias, dtype=np.float64)
    if softcap is not None:
        z = softcap * np.tanh(z / softcap)
    ref = model_logits.astype(np.float64)
    err = np.abs(z - ref).max(axis=1)
    tol = rtol * (1 + np.abs(ref).max(axis=1))
    bad = ~(err <= tol)
    if bad.any():
        worst = int(np.argmax(np.where(np.isnan(err), np.inf, err - tol)))
        ex = worst if index is None else int(index[worst])
        raise ExactnessError(
            f"Σu + bias differs from the model's own output logits for {int(bad.sum())} of "
            f"{len(err)} example(s): worst example {ex}: max |error| = {err[worst]:.3g} > "
            f"tolerance {tol[worst]:.3g} (rtol {rtol:g}, dtype {dtype}, family {family!r}); "
            "the family row does not describe this model")
    return err


def resolve_vocab(vocab, option_ids, vocab_size: int, id_to_token) -> tuple[list[int], list]:
    """``(ids, option_columns)``: the projected vocabulary and the column of each option."""
    option_ids = [int(i) for i in option_ids]
    if isinstance(vocab, str):
        if vocab == "options":
            return option_ids, list(range(len(option_ids)))
        if vocab == "full":
            return list(range(vocab_size)), option_ids
        raise ValueError(f"vocab must be 'options', 'full' or a sequence of token ids, "
                         f"got {vocab!r}")
    ids = [int(i) for i in vocab]
    if not ids or len(set(ids)) != len(ids):
        raise ValueError(f"vocab ids must be distinct and non-empty ({len(ids)} given, "
                         f"{len(ids) - len(set(ids))} repeated)")
    bad = [i for i in ids if not 0 <= i < vocab_size]
    if bad:
        raise ValueError(f"{len(bad)} vocab id(s) outside [0, {vocab_size}), e.g. {bad[0]}")
    missing = [i for i in option_ids if i not in ids]
    if missing:
        raise ValueError(f"vocab ids must include the {len(option_ids)} option tokens; "
                         f"{len(missing)} missing: {[id_to_token(i) for i in missing]}")
    return ids, [ids.index(i) for i in option_ids]


def resolve_positions(position, lengths) -> np.ndarray:
    """Per-example read positions, checked against the prompt lengths."""
    lengths = np.asarray(lengths)
    n = len(lengths)
    if isinstance(position, numbers.Integral) and not isinstance(position, bool):
        pos = np.full(n, int(position), dtype=np.int64)
    else:
        pos = np.asarray(position)
        if pos.shape != (n,) or not np.issubdtype(pos.dtype, np.integer):
            raise ValueError(f"position must be an int or {n} ints (one per example), got "
                             f"{position!r:.60}")
        pos = pos.astype(np.int64)
    bad = np.flatnonzero((pos >= lengths) | (pos < -lengths))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"position {int(pos[i])} is outside the prompt of example {i} "
                         f"({int(lengths[i])} tokens); {bad.size} example(s) affected")
    return pos


def check_memory(n: int, m: int, c: int, max_bytes) -> int:
    """Bytes of ``u`` ([N, M, C] float32); ValueError above ``max_bytes`` (None: no limit)."""
    size = 4 * n * m * c
    if max_bytes is not None and size > max_bytes:
        raise ValueError(f"u would take {size / 2 ** 30:.2f} GiB (N={n} × M={m} × C={c} float32)"
                         f" > max_bytes={max_bytes / 2 ** 30:.2f} GiB; use vocab='options', "
                         "fewer vocabulary ids or examples, neuron_top_k, or raise max_bytes")
    return size


def _neuron_group(member) -> str | None:
    """``"L3.mlp#0"`` for a neuron or MLP-bias member ``"L3.mlp#0.n17"``; None otherwise."""
    parts = member.name.split(".")
    return ".".join(parts[:2]) if member.kind == "mlp" and len(parts) == 3 else None


def top_k_neurons(u, scale, members, k: int):
    """Keep, per MLP execution, the ``k`` neurons of largest mean |u| over examples and
    columns, plus one ``.rest`` member holding the sum of the others (and the bias member), so
    every block still sums exactly. Returns ``(u, scale, members, selected)`` with
    ``selected[group]`` the kept neuron indices."""
    from dataclasses import replace

    from .contributions import Member

    mean_abs = np.abs(u).mean(axis=(0, 2))
    groups: dict[str, list[int]] = {}
    for j, mem in enumerate(members):
        key = _neuron_group(mem)
        if key is not None:
            groups.setdefault(key, []).append(j)
    cols, new, selected = [], [], {}
    for j, mem in enumerate(members):
        key = _neuron_group(mem)
        if key is None:
            cols.append([j])
            new.append(mem)
            continue
        if key in selected:
            continue
        idx = groups[key]
        neurons = [i for i in idx if members[i].neuron is not None]
        top = sorted(sorted(neurons, key=lambda i: -mean_abs[i])[:k])
        others = [i for i in idx if i not in set(top)]
        selected[key] = [members[i].neuron for i in top]
        last = members[idx[-1]]
        for i in top:
            cols.append([i])
            new.append(replace(members[i], junction=False))
        if others:
            cols.append(others)
            new.append(Member(f"{key}.rest", "mlp", last.block, last.execution, None,
                              last.junction))
        else:
            new[-1] = replace(new[-1], junction=last.junction)
    out = np.stack([u[:, c].astype(np.float64).sum(axis=1) for c in cols], axis=1)
    sc = np.stack([scale[:, c[0]] for c in cols], axis=1)
    return out.astype(np.float32), sc, new, selected
