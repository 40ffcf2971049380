"""Make the committed JSON under docs/ hold no interval that excludes its own estimate and no
NaN or Infinity, without changing any number.

Two kinds of legacy entries are rewritten in place (idempotent: a clean file is left as it is):

- an interval that does not contain its estimate — the 2.5–97.5% range of a model-based
  (Gaussian / copula) estimate refitted on resampled rows, which duplicated rows bias upward,
  written by an earlier version of the decompositions before intervals were re-centred — is
  renamed to a *range* (``ci`` → ``bootstrap_range``, ``ci_low``/``ci_high`` →
  ``bootstrap_range_low``/``_high``, ``X_ci`` → ``X_bootstrap_range``) beside a note saying
  what it is. The numbers stay; they are no longer called an interval of the estimate;
- a NaN or an infinite number becomes null beside ``<key>_reason`` (in a list: the list's
  ``<key>_reason``) that says why it could not be computed.

Run from the repository root: ``python scripts/clean_committed_json.py [--check]``; ``--check``
changes nothing and exits 1 when a file would change.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

RANGE_NOTE = ("the 2.5-97.5% range of the estimate refitted on bootstrap resamples of the rows; "
              "duplicated rows bias a model-based estimate upward, so this range does not "
              "contain the estimate and is not its interval")

#: why a number of a legacy file is missing, by its key (``*`` = any other)
REASONS = {
    "aicc": "AICc needs more points than parameters + 1 (too few depths for this law)",
    "extrapolation_rmse": "too few points in the first half to fit this law and extrapolate",
    "depth_model_accuracy": "no model of this depth was trained (n_depth_models = 0)",
    "p": "the correlation is undefined on this series (a constant series)",
    "*": "not computable on these data",
}

AVERAGE = "a Fisher-z average of the tasks' correlations carries no test"

POINTS = ("value", "estimate", "r", "mean", "slope", "rate")


def _bad(x) -> bool:
    return isinstance(x, float) and (math.isnan(x) or math.isinf(x))


def _outside(lo, hi, x) -> bool:
    nums = [v for v in (lo, hi, x) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(nums) < 3 or any(_bad(v) for v in nums):
        return False
    tol = 16 * math.ulp(max(abs(lo), abs(hi), abs(x)))
    return not lo - tol <= x <= hi + tol


def _pair(v) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)


def _rename_ranges(d: dict) -> int:
    """Rename every interval of ``d`` that excludes its estimate (module docstring)."""
    changed = 0
    point = next((k for k in POINTS if isinstance(d.get(k), (int, float))), None)
    if point and _pair(d.get("ci")) and _outside(*d["ci"], d[point]):
        d["bootstrap_range"] = d.pop("ci")
        d["bootstrap_range_note"] = RANGE_NOTE
        changed += 1
    for key in [k for k in d if k.endswith("_ci") and _pair(d[k])]:
        stem = key[:-3]
        if isinstance(d.get(stem), (int, float)) and _outside(*d[key], d[stem]):
            d[f"{stem}_bootstrap_range"] = d.pop(key)
            d[f"{stem}_bootstrap_range_note"] = RANGE_NOTE
            changed += 1
    lows, highs = d.get("ci_low"), d.get("ci_high")
    values = next((d[k] for k in ("values", "differences", "value", "mean")
                   if isinstance(d.get(k), list)), None)
    if isinstance(lows, list) and isinstance(highs, list) and values is not None and any(
            _outside(lo, hi, x) for lo, hi, x in zip(lows, highs, values)):
        d["bootstrap_range_low"], d["bootstrap_range_high"] = d.pop("ci_low"), d.pop("ci_high")
        d["bootstrap_range_note"] = RANGE_NOTE
        changed += 1
    return changed


def clean(node) -> int:
    """Rewrite ``node`` in place; the number of entries changed."""
    changed = 0
    if isinstance(node, dict):
        changed += _rename_ranges(node)
        for key in list(node):
            value = node[key]
            if _bad(value):
                node[key] = None
                node[f"{key}_reason"] = (AVERAGE if key == "p" and node.get("task") == "Avg."
                                         else REASONS.get(key, REASONS["*"]))
                changed += 1
            elif isinstance(value, list) and any(_bad(v) for v in value):
                node[key] = [None if _bad(v) else v for v in value]
                node[f"{key}_reason"] = f"a null entry: {REASONS.get(key, REASONS['*'])}"
                changed += 1
            changed += clean(node[key])
    elif isinstance(node, list):
        changed += sum(clean(v) for v in node)
    return changed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="docs", help="folder whose *.json are cleaned")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if unclean")
    args = ap.parse_args(argv)
    unclean = 0
    for path in sorted(Path(args.root).rglob("*.json")):
        text = path.read_text()
        doc = json.loads(text)
        n = clean(doc)
        if not n:
            continue
        unclean += 1
        print(f"{path}: {n} entr{'y' if n == 1 else 'ies'}" + (" to clean" if args.check
                                                               else " cleaned"))
        if not args.check:
            second = text.split("\n", 2)[1] if "\n" in text else ""
            indent = (len(second) - len(second.lstrip(" "))) or None
            path.write_text(json.dumps(doc, indent=indent, allow_nan=False) + (
                "\n" if text.endswith("\n") else ""))
    return 1 if args.check and unclean else 0


if __name__ == "__main__":
    sys.exit(main())
