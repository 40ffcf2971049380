"""One training rule for every model of a grid, stated before training: a model whose training
loss has not left the chance plateau by a fixed step is restarted from a new initialisation, up
to a fixed number of restarts, and every attempt is recorded (DESIGN.md 2.9).

The plateau (one home for the grid's training and its report): over a window of the last
``w`` steps, the mean answer-token loss :math:`\\bar\\ell` against the loss of a model that puts
its mass uniformly on the C options and knows nothing more, :math:`\\ln C`;

.. math:: \\text{on the plateau} \\iff \\bar\\ell \\ge s \\cdot \\ln C, \\qquad s = 0.95.

The rule (:class:`RestartRule`): at step ``check_step`` the window's mean is tested; on the
plateau, the attempt's checkpoint is set aside (``attempts/<a>/state.pt``, its loss log kept in
``attempts.json``) and attempt a + 1 starts from step 0 with the initialisation seed
:func:`init_seed` (the data stream keeps the model's seed: only the initialisation changes);
the last allowed attempt trains to the end whatever its loss. The finished record
(``zoo.json``) carries ``attempts`` (every attempt's initialisation seed and its loss at the
check) and ``init_seed``; resuming an interrupted attempt, or a finished check, is
bit-identical on CPU.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

__all__ = ["PLATEAU_SHARE", "RestartRule", "plateau", "init_seed", "train_with_restarts"]

#: a mean loss at or above this share of ln C is on the chance plateau
PLATEAU_SHARE = 0.95
ATTEMPTS = "attempts.json"


def plateau(losses, n_options: int, window: int | None = None) -> dict | None:
    """Where a loss log ends against the chance plateau (module docstring): the mean of the
    last ``window`` losses (default: 1% of the log, at least one step); None without losses or
    with fewer than 2 options."""
    losses = np.asarray(losses, np.float64)
    if losses.size == 0 or n_options < 2:
        return None
    window = max(1, -(-losses.size // 100)) if window is None else min(int(window), losses.size)
    final = float(losses[-window:].mean())
    chance = float(np.log(n_options))
    return {"final_loss": final, "window": window, "n_options": int(n_options),
            "chance_loss": chance, "plateau_share": PLATEAU_SHARE,
            "on_plateau": bool(final >= PLATEAU_SHARE * chance)}


@dataclass(frozen=True)
class RestartRule:
    """Restart a model whose loss is on the plateau at ``check_step`` (mean of the last
    ``window`` steps), at most ``max_restarts`` times."""

    check_step: int
    max_restarts: int = 2
    window: int = 100

    def __post_init__(self):
        for name in ("check_step", "window"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if isinstance(self.max_restarts, bool) or not isinstance(self.max_restarts, int) \
                or self.max_restarts < 0:
            raise ValueError(f"max_restarts must be an integer >= 0, got {self.max_restarts!r}")
        if self.window > self.check_step:
            raise ValueError(f"window must be <= check_step={self.check_step}, got "
                             f"{self.window}")

    def to_dict(self) -> dict:
        return asdict(self)


def init_seed(seed: int, attempt: int) -> int:
    """The initialisation seed of attempt ``attempt`` of a model of seed ``seed``: the seed
    itself for the first attempt (so a grid trained without restarts is unchanged), then a
    32-bit draw of ``SeedSequence([seed, attempt])``."""
    if attempt == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(attempt)]).generate_state(1)[0])


def _read_attempts(run_dir: Path) -> list[dict]:
    path = run_dir / ATTEMPTS
    return json.loads(path.read_text()) if path.is_file() else []


def _write_attempts(run_dir: Path, attempts: list[dict]) -> None:
    from .trained import TRAIN, own

    tmp = run_dir / (ATTEMPTS + ".tmp")
    tmp.write_text(json.dumps(attempts, indent=1))
    own(run_dir, TRAIN, {ATTEMPTS: tmp})       # listed first (a kill in between: recomputed)
    os.replace(tmp, run_dir / ATTEMPTS)


def _state_step(run_dir: Path) -> int:
    import torch

    path = run_dir / "state.pt"
    return int(torch.load(path, weights_only=False)["step"]) if path.is_file() else 0


def train_with_restarts(spec, tokenizer, stream, run_dir, cfg, rule: RestartRule | None, *,
                        heldout_task=None, progress: bool = True, device: str = "cpu",
                        log=print, stop_after: int | None = None) -> dict:
    """Train one model under ``rule`` (module docstring; None: one attempt, as
    :func:`infodiv.experiments.train.train_model`); returns its record, with ``attempts``."""
    from .train import read_record, train_model
    from .trained import TRAIN, open_run, own

    run_dir = Path(run_dir)
    if open_run(run_dir, TRAIN, log=log):
        return read_record(run_dir)
    if rule is not None and rule.check_step >= cfg.steps:
        raise ValueError(f"check_step must be < steps={cfg.steps}, got {rule.check_step}")
    run_dir.mkdir(parents=True, exist_ok=True)
    attempts = _read_attempts(run_dir)
    common = dict(heldout_task=heldout_task, progress=progress, device=device, log=log)
    while True:
        a = len([x for x in attempts if x["restarted"]])
        seed = init_seed(spec.seed, a)
        checked = any(x["attempt"] == a for x in attempts)
        if rule is not None and a < rule.max_restarts and not checked:
            todo = rule.check_step - _state_step(run_dir)
            if stop_after is not None and stop_after < todo:
                return train_model(spec, tokenizer, stream, run_dir, cfg, init_seed=seed,
                                   stop_after=stop_after, **common)
            rec = train_model(spec, tokenizer, stream, run_dir, cfg, init_seed=seed,
                              stop_after=todo, **common) if todo > 0 else None
            losses = rec["losses"] if rec else _losses(run_dir)
            if stop_after is not None:
                stop_after -= max(todo, 0)
            at = plateau(losses[:rule.check_step], len(stream.option_ids), rule.window)
            entry = {"attempt": a, "init_seed": seed, "check_step": rule.check_step,
                     "loss_at_check": at["final_loss"], "chance_loss": at["chance_loss"],
                     "restarted": at["on_plateau"]}
            if at["on_plateau"]:
                aside = run_dir / "attempts" / str(a)
                aside.mkdir(parents=True, exist_ok=True)
                # listed before the move, unlisted after: a kill in between leaves only
                # listed files missing (the attempt is then trained again), never one unlisted
                own(run_dir, TRAIN, {f"attempts/{a}/state.pt": run_dir / "state.pt"})
                os.replace(run_dir / "state.pt", aside / "state.pt")
                own(run_dir, TRAIN, ["state.pt"])
                log(f"{spec.name}: attempt {a} on the chance plateau at step "
                    f"{rule.check_step} (loss {at['final_loss']:.3f} >= {PLATEAU_SHARE} ln "
                    f"{at['n_options']}); restarting from a new initialisation")
            attempts.append(entry)
            _write_attempts(run_dir, attempts)
            if at["on_plateau"]:
                continue
        extra = None if rule is None else dict(init_seed=seed, attempts=attempts,
                                               restart_rule=rule.to_dict())
        return train_model(spec, tokenizer, stream, run_dir, cfg, init_seed=seed,
                           stop_after=stop_after, extra=extra, **common)


def _losses(run_dir: Path) -> list[float]:
    import torch

    return list(torch.load(run_dir / "state.pt", weights_only=False)["losses"])
