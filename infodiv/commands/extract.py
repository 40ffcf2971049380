"""``infodiv extract``: run a causal LM over a task and save its exact per-member contributions.

Loads the model (hub id, local folder, ``.gguf`` file or the alias ``smollm2-135m``), builds the
task (paper Table 3 template and options), runs :func:`extraction.extract` with a
progress bar (examples/s) and writes a ``Contributions`` run directory (resumable: rerunning the
same command after an interruption reuses the finished shards). Prints N, M, C, the largest
exactness error ``max |Σ_m u_m + bias − logits|`` and the model's accuracy; exits 1 if the
exactness check failed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path


def _batch_size(text: str):
    if text == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--batch-size must be 'auto' or an int, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--batch-size must be positive, got {value}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True,
                        help="hub id, local folder, .gguf file, or 'smollm2-135m'")
    parser.add_argument("--gguf-file", default=None, help="GGUF file name inside --model")
    parser.add_argument("--task", required=True,
                        help="ag_news, arc (= arc_challenge), arc_easy, boolq, mnli, qqp, rte, "
                             "sst2, wic")
    parser.add_argument("--n", type=int, default=2000,
                        help="first N examples of the split (default 2000)")
    parser.add_argument("--shots", type=int, default=0, help="in-context demonstrations")
    parser.add_argument("--seed", type=int, default=0, help="seed of the demonstration draws")
    parser.add_argument("--split", default=None, help="dataset split (default: the paper's)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="folder laid out like ../shared/data (default: HF datasets or "
                             "$INFODIV_DATA_DIR)")
    parser.add_argument("--out", type=Path, default=None,
                        help="run directory (default runs/<model>-<task>-<granularity>)")
    parser.add_argument("--batch-size", type=_batch_size, default="auto",
                        help="'auto' (token budget) or examples per batch")
    parser.add_argument("--device", default="auto",
                        help="auto, cpu, cuda, cuda:N, or device_map (spread over GPUs)")
    parser.add_argument("--dtype", default="auto",
                        choices=("auto", "float32", "bfloat16", "float16"))
    parser.add_argument("--granularity", default="block", choices=("block", "head"))
    parser.add_argument("--max-length", type=int, default=None,
                        help="prompt token limit (default: the model context)")
    parser.add_argument("--no-resume", action="store_true",
                        help="ignore shards of an interrupted run")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _default_out(model: str, task: str, granularity: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(model).stem if Path(model).exists() else model)
    return Path("runs") / f"{slug}-{task}-{granularity}"


def run(args) -> int:
    from extraction.models import load_model
    from extraction.runner import extract
    from extraction.tasks import get_task

    out = args.out or _default_out(str(args.model), args.task, args.granularity)
    task = get_task(args.task, data_dir=args.data_dir, split=args.split, n=args.n,
                    shots=args.shots, seed=args.seed)
    model, tokenizer = load_model(args.model, gguf_file=args.gguf_file, device=args.device,
                                  dtype=args.dtype)
    c = extract(model, tokenizer, task, granularity=args.granularity,
                batch_size=args.batch_size, out=out, resume=not args.no_resume,
                progress=not args.quiet, max_length=args.max_length)
    m = c.meta
    print(f"{out}: N={c.n_examples} M={c.n_members} C={c.n_options} "
          f"max|Σu+bias−logits|={m['max_exactness_error']:.3g} "
          f"(relative {m['max_relative_exactness_error']:.3g}, tolerance {m['exactness_rtol']:g}) "
          f"accuracy={c.accuracy():.4f} truncated={m['n_truncated']}")
    if not m["exactness_ok"]:
        print("infodiv extract: exactness check FAILED (see meta.json)", file=sys.stderr)
        return 1
    return 0
