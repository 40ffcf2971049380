"""Zoo model specifications: Llama-architecture models identical except depth and sharing.

Every zoo model is a transformers ``LlamaForCausalLM`` with the same width, heads, MLP width,
vocabulary, context and initialiser; a spec differs only in ``depth`` (distinct blocks L), in
``repeats`` (r = 2: MobileLLM's immediate block-wise sharing, every block executed twice in a row,
so parameters of L blocks and 2L executions) and in ``seed`` (initialisation and data order).
Members extracted: M = 2·r·L + 1 (unshared 2L + 1, shared 4L + 1).

The default grid (:func:`zoo_grid`): depths 1, 2, 4, 8 unshared and 1, 2, 4 shared, seeds
0, 1, 2, ordered seed-major so that one full seed of the zoo finishes before the next starts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .checks import check_int_fields, non_negative, positive

__all__ = ["ModelSpec", "zoo_grid", "build_model", "save_model", "count_params", "planned_names"]


@dataclass(frozen=True)
class ModelSpec:
    """One zoo model.

    Attributes
    ----------
    depth : int
        Distinct blocks L.
    repeats : int
        Executions of each block in a row (1: unshared, 2: MobileLLM layer sharing).
    seed : int
        Seeds the initial weights and the data order.
    width, heads, mlp : int
        Hidden size, attention heads (key/value heads equal), SwiGLU MLP width.
    max_len : int
        Context (``max_position_embeddings``): prompts are truncated inside the article text to
        this many tokens, in training and in extraction alike.
    init_std : float
        Standard deviation of the normal initialiser (``initializer_range``; 0.02, the Llama
        default, for the AG News zoo). Left out of :meth:`to_dict` (and so of the resume
        fingerprint) when it is 0.02, so specs written before it existed stay the same.
    """

    depth: int = positive()
    repeats: int = positive(1)
    seed: int = non_negative(0)
    width: int = positive(128)
    heads: int = positive(4)
    mlp: int = positive(384)
    max_len: int = positive(64)
    init_std: float = 0.02

    def __post_init__(self):
        check_int_fields(self)
        if not (isinstance(self.init_std, float) and self.init_std > 0):
            raise ValueError(f"init_std must be a positive float, got {self.init_std!r}")
        if self.width % self.heads:
            raise ValueError(f"width {self.width} is not a multiple of heads {self.heads}")

    @property
    def shared(self) -> bool:
        return self.repeats > 1

    @property
    def executions(self) -> int:
        return self.depth * self.repeats

    @property
    def n_members(self) -> int:
        """Block-granularity members: embedding + attention and MLP per execution."""
        return 2 * self.executions + 1

    @property
    def name(self) -> str:
        share = f"-share{self.repeats}" if self.shared else ""
        return f"llama-d{self.width}-L{self.depth}{share}-s{self.seed}"

    def to_dict(self) -> dict:
        d = asdict(self)
        if d["init_std"] == 0.02:
            d.pop("init_std")
        return d


def zoo_grid(depths=(1, 2, 4, 8), shared_depths=(1, 2, 4), seeds=(0, 1, 2), **common):
    """Specs of the zoo, seed-major (all of seed 0 first), unshared before shared per seed."""
    out = []
    for seed in seeds:
        out += [ModelSpec(depth=int(d), seed=int(seed), **common) for d in depths]
        out += [ModelSpec(depth=int(d), repeats=2, seed=int(seed), **common)
                for d in shared_depths]
    return out


def _config(spec: ModelSpec, tokenizer):
    from transformers import LlamaConfig

    extra = {"layer_repeats": spec.repeats} if spec.shared else {}
    return LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=spec.width, intermediate_size=spec.mlp,
        num_hidden_layers=spec.depth, num_attention_heads=spec.heads,
        num_key_value_heads=spec.heads, max_position_embeddings=spec.max_len,
        rms_norm_eps=1e-5, initializer_range=spec.init_std, tie_word_embeddings=True,
        attention_dropout=0.0, use_cache=False, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, **extra)


def build_model(spec: ModelSpec, tokenizer, init_seed: int | None = None):
    """A freshly initialised model of ``spec`` (weights seeded by ``init_seed``, default
    ``spec.seed``), with its blocks repeated by :func:`extraction.models.apply_layer_repeats`
    when shared."""
    import torch
    from transformers import AutoModelForCausalLM

    from extraction.models import apply_layer_repeats

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed if init_seed is None else int(init_seed))
        model = AutoModelForCausalLM.from_config(_config(spec, tokenizer), dtype=torch.float32)
    return apply_layer_repeats(model)


def save_model(model, tokenizer, folder) -> None:
    """``save_pretrained`` a (possibly shared) zoo model so :func:`extraction.load_model`
    rebuilds it: the distinct blocks are stored once with ``num_hidden_layers`` = L and
    ``layer_repeats`` = r in the config."""
    import torch

    r = int(getattr(model, "infodiv_layer_repeats", 1))
    base = model.base_model
    full, n_exec = base.layers, model.config.num_hidden_layers
    if r > 1:
        base.layers = torch.nn.ModuleList(list(full)[::r])
        model.config.num_hidden_layers = len(base.layers)
    try:
        model.save_pretrained(folder)
    finally:
        base.layers, model.config.num_hidden_layers = full, n_exec
    tokenizer.save_pretrained(folder)


def count_params(model) -> int:
    """Distinct trainable parameters (a shared block and tied embeddings counted once)."""
    seen, n = set(), 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            n += p.numel()
    return n


def planned_names(depths, shared_depths, seeds, width) -> list[str]:
    """Model names of the planned grid, in training order (per seed: the unshared depths,
    then the shared twins)."""
    return [ModelSpec(d, repeats=r, seed=s, width=width).name
            for s in seeds for ds, r in ((depths, 1), (shared_depths, 2)) for d in ds]
