"""``infodiv zoo train|report``: the controlled depth / layer-sharing zoo (DESIGN.md 2.9).

``infodiv zoo train`` trains (or resumes) every model of the grid under ``--root`` (default
``runs/zoo``, git-ignored): Llama models of width ``--width`` at depths ``--depths`` and shared
twins at ``--shared-depths`` (each block executed twice in a row), for every seed in
``--seeds``, then the optional ``--extra-depths``; all with the same steps and schedule. Rerunning
the same command continues where it stopped (finished models are skipped, an interrupted one
resumes from its last checkpoint) and says so. Bad settings: one line, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _shard(text: str):
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard must be K/N, got {text!r}") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"--shard K/N needs 0 <= K < N, got {text!r}")
    return k, n


def _configure_train(p) -> None:
    p.add_argument("--root", type=Path, default=Path("runs/zoo"), help="zoo folder")
    p.add_argument("--depths", type=int, nargs="*", default=[1, 2, 4, 8])
    p.add_argument("--shared-depths", type=int, nargs="*", default=[1, 2, 4])
    p.add_argument("--extra-depths", type=int, nargs="*", default=[],
                   help="unshared depths trained after the whole grid (e.g. 12 16)")
    p.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--mlp", type=int, default=384, help="SwiGLU MLP width")
    p.add_argument("--max-len", type=int, default=64, help="context / prompt truncation")
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--lm-weight", type=float, default=0.0,
                   help="weight of the next-token loss on the prompt (default 0: answer only)")
    p.add_argument("--checkpoint-every", type=int, default=50)
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--vocab-size", type=int, default=4096)
    p.add_argument("--data-dir", type=Path, default=None)
    p.add_argument("--shard", type=_shard, default=(0, 1),
                   help="K/N: train every N-th model starting at K (parallel processes)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def configure(parser) -> None:
    sub = parser.add_subparsers(dest="zoo_command", metavar="ZOO_COMMAND")
    _configure_train(sub.add_parser("train", help="train or resume the zoo"))


def _train(args) -> int:
    from infodiv.zoo.configs import ModelSpec, zoo_grid
    from infodiv.zoo.runner import train_zoo
    from infodiv.zoo.train import TrainConfig

    common = dict(width=args.width, heads=args.heads, mlp=args.mlp, max_len=args.max_len)
    cfg = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                      warmup=args.warmup, lm_weight=args.lm_weight,
                      checkpoint_every=args.checkpoint_every, threads=args.threads)
    specs = zoo_grid(args.depths, args.shared_depths, args.seeds, **common)
    specs += [ModelSpec(depth=d, seed=s, **common) for s in args.seeds for d in args.extra_depths]
    records = train_zoo(args.root, specs, cfg, vocab_size=args.vocab_size,
                        data_dir=args.data_dir, shard=args.shard, progress=not args.quiet,
                        log=lambda m: print(m, flush=True))
    done = sum(bool(r.get("finished")) for r in records)
    print(f"{args.root}: {done}/{len(records)} model(s) finished", flush=True)
    return 0


def run(args) -> int:
    handlers = {"train": _train}
    if args.zoo_command not in handlers:
        print("infodiv zoo: choose a subcommand: " + ", ".join(handlers), file=sys.stderr)
        return 2
    try:
        return handlers[args.zoo_command](args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"infodiv zoo {args.zoo_command}: {exc}", file=sys.stderr)
        return 2
