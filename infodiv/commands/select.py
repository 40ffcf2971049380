"""``infodiv select RUN``: the best k members, heads or whole layers of a run.

Calls :func:`infodiv.subset.select_subset` (greedy selection, its held-out score against the
depth prefix, the best random set and the full model, and its stability) and prints
:func:`selection_table`; ``--out FILE.json`` also writes every number at full precision (an
existing file is replaced only with ``--overwrite``). ``--target 0.9`` is the budget form: the
smallest k whose greedy set reaches 90 % of the full model's held-out score, measured from the
empty set.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path

from infodiv.commands.preflight import int_at_least, n_jobs, nonneg_int, positive_int

__all__ = ["configure", "run", "selection_table"]

_UNIT_WORDS = {"member": ("member", "members"), "layer": ("layer", "layers"),
               "head": ("unit", "units")}
_UNIT_NOTE = {"member": "every member alone",
              "layer": "a layer = its attention and MLP writes together",
              "head": "every head alone, every other write whole"}


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1], got {text!r}") from None
    if not math.isfinite(value) or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a fraction in (0, 1], got {text}")
    return value


def configure(parser) -> None:
    from infodiv.setfunctions import OBJECTIVE_NAMES
    from infodiv.subset import UNIT_KINDS

    parser.add_argument("run_dir", type=Path,
                        help="run folder (infodiv run) or Contributions directory")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--k", type=positive_int, default=None,
                      help="units to choose (default 8)")
    size.add_argument("--target", type=_fraction, default=None, metavar="FRACTION",
                      help="budget form: the smallest k whose greedy set reaches this fraction "
                           "of the full model's held-out score, measured from the empty set "
                           "(e.g. 0.9)")
    parser.add_argument("--unit", choices=UNIT_KINDS, default="member",
                        help="member: every member; layer: a layer's attention and MLP writes "
                             "together; head: every head (runs of head granularity)")
    parser.add_argument("--objective", choices=OBJECTIVE_NAMES, default="accuracy_calibrated",
                        metavar="OBJECTIVE",
                        help=f"the set function ({', '.join(OBJECTIVE_NAMES)})")
    parser.add_argument("--n-random", type=positive_int, default=50,
                        help="random sets of the best-of-random comparison")
    parser.add_argument("--n-bootstrap", type=nonneg_int, default=50, metavar="B",
                        help="bootstrap resamples on which greedy is rerun for the stability "
                             "(0: the two cross-fit halves only)")
    parser.add_argument("--n-resamples", type=int_at_least(100), default=2000,
                        help="paired example resamples of the held-out intervals")
    parser.add_argument("--seed", type=nonneg_int, default=0,
                        help="root of every random stream (split, random sets, resamples; "
                             "default 0)")
    parser.add_argument("--n-jobs", type=n_jobs, default=1,
                        help="joblib workers of the bootstrap reruns (numbers do not depend "
                             "on it)")
    parser.add_argument("--out", type=Path, default=None, metavar="FILE.json",
                        help="also write every number to this JSON file")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing --out file")


def _check_out_file(path: Path | None, overwrite: bool) -> None:
    from infodiv.runfiles import UserError

    if path is None:
        return
    if path.is_dir():
        raise UserError(f"--out {path} is a folder; give a file name such as "
                        f"{path / 'select.json'}")
    if path.exists() and not overwrite:
        raise UserError(f"--out {path} exists; add --overwrite to replace it")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"--out {path}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UserError(f"--out {path}: the folder {parent} is not writable")


def _write(path: Path, doc: dict) -> None:
    import json

    from infodiv.reports.serialize import jsonable

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(jsonable(doc), fh, indent=1)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)      # as an ordinary new file, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _members_text(members: list) -> str:
    if len(members) <= 3:
        return " + ".join(members)
    return f"{members[0]} + … + {members[-1]} ({len(members)} members)"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def selection_table(sel, run_label: str = "") -> list[str]:
    """The readable report of a :class:`~infodiv.subset.SubsetSelection` (one string per
    line): the chosen units, the held-out table, the budget and the stability."""
    one, many = _UNIT_WORDS[sel.units_of]
    sz, st, sc = sel.sizes, sel.stability, sel.scores
    units = sel.units["units"]
    direction = "higher" if sel.greater_is_better else "lower"
    lines = [f"infodiv select: {run_label} (N = {sz['N']} examples, M = {sz['M']} members, "
             f"{sz['U']} {many}: {_UNIT_NOTE[sel.units_of]})".replace(":  (", ": ("),
             f"objective {sel.objective} ({direction} is better)", ""]
    freq = st["frequency"]
    lines.append(f"chosen {sel.k} {many if sel.k > 1 else one}, greedy on all {sz['N']} "
                 f"examples, in the order picked, with the share of the "
                 f"{st['n_replicates']} replicate selections that contain each:")
    width = max(len(n) for n in sel.chosen)
    for i, name in enumerate(sel.chosen, 1):
        parts = units[name]
        shown = "" if parts == [name] else _members_text(parts)
        lines.append(f"  {i:>3}  {name:<{width}}  {_pct(freq.get(name, 0.0)):>4}  {shown}"
                     .rstrip())
    names = list(units)
    prefix = names[0] if sel.k == 1 else f"{names[0]}…{names[sel.k - 1]}"
    rows = [("chosen (greedy)", "chosen"), (f"depth prefix ({prefix})", "prefix"),
            (f"best of {sz['n_random']} random sets", "best_random"),
            ("full model", "full"), ("empty set (chance level)", "empty")]
    conf, w = f"{100 * sz['confidence']:.0f}%", max(30, 2 + max(len(r[0]) for r in rows))
    lines += ["", f"held-out scores: chosen on one half of the examples, scored on the other, "
              f"both ways; {conf} paired bootstrap intervals ({sz['n_resamples']} resamples)",
              f"  {'set':<{w}}{'size':>5}  {'score':>7}  {conf + ' interval':<18}"
              f"{'chosen − set':>13}  {conf + ' interval'}"]
    for label, key in rows:
        s = sc[key]
        lo, hi = s["interval"]
        line = f"  {label:<{w}}{s['size']:>5}  {s['estimate']:>7.3f}  {f'[{lo:.3f}, {hi:.3f}]':<18}"
        diff = sel.differences.get(f"chosen_minus_{key}")
        if diff:
            dlo, dhi = diff["interval"]
            line += f"{diff['estimate']:>+13.3f}  [{dlo:+.3f}, {dhi:+.3f}]"
        lines.append(line.rstrip())
    lines.append(f"  in-sample score of the chosen set on all examples: {sel.in_sample:.3f} "
                 "(selected and scored on the same data: optimistic)")
    if sel.budget:
        b = sel.budget
        f_lo, f_hi = b["fraction"]["interval"]
        lines += ["", f"budget: the smallest greedy set reaching {_pct(b['target'])} of the "
                  f"full model's held-out gain over the empty set has k = {b['k']} "
                  f"({conf} interval {b['k_interval'][0]}–{b['k_interval'][1]}); it reaches "
                  f"{_pct(b['fraction']['estimate'])} [{_pct(f_lo)}, {_pct(f_hi)}]"]
    lo_j, hi_j = st["jaccard_range"]
    shared = len(set(st["halves"][0]) & set(st["halves"][1]))
    lines += ["", f"stability: mean Jaccard {st['mean_jaccard']:.2f} between the chosen set "
              f"and the greedy sets of the 2 cross-fit halves and {st['n_bootstrap']} bootstrap "
              f"resamples (range {lo_j:.2f}–{hi_j:.2f}; two random {sel.k}-of-{sz['U']} sets: "
              f"{st['chance_jaccard']:.2f}; unstable below {st['threshold']:.2f}); the two "
              f"halves' sets share {shared} of {sel.k} (Jaccard {st['halves_jaccard']:.2f})"]
    others = [f"{n} {_pct(v)}" for n, v in freq.items() if n not in sel.chosen and v >= 0.2]
    if others:
        lines.append("  also selected in ≥ 20% of replicates: " + ", ".join(others))
    if st["unstable"]:
        lines.append(f"warning: the choice is unstable (mean Jaccard {st['mean_jaccard']:.2f} "
                     f"< {st['threshold']:.2f}: a typical resample replaces more than a third "
                     f"of the chosen {many}); these names are one of several near-equivalent "
                     "sets, not the important ones: read the frequencies")
    return lines


def run(args) -> int:
    from infodiv.runfiles import display_path, load_run
    from infodiv.runs import run_names
    from infodiv.subset import select_subset

    _check_out_file(args.out, args.overwrite)       # before any work
    contrib, _, _ = load_run(args.run_dir)
    sel = select_subset(contrib, args.k, target=args.target, unit=args.unit,
                        objective=args.objective, n_random=args.n_random,
                        n_bootstrap=args.n_bootstrap, n_resamples=args.n_resamples,
                        random_state=args.seed, n_jobs=args.n_jobs)
    label = display_path(args.run_dir)
    for line in selection_table(sel, label):
        print(line)
    if args.out is not None:
        model, task = run_names(contrib.meta)
        _write(args.out, {"run": {"dir": label, "model": model, "task": task},
                          "seed": args.seed, **sel.to_dict()})
        print(f"infodiv select: wrote {args.out}")
    return 0
