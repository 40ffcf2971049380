"""Mutation check of the analysis layer: does the test suite catch each known breakage?

    python scripts/mutations.py [--tests tests/infodiv/reports/test_reports.py ...] [--only N ...]
        [--working-tree]

Exports the committed tree (``git archive HEAD``; with ``--working-tree`` the checkout's
tracked and untracked, not ignored files as they are on disk) into a temporary folder, runs
the chosen tests once unmodified (they must pass), then applies each one-line breakage below
on its own, reruns the tests and reports which tests failed. Exit status 1 when a mutation
survives (no test fails) or the unmodified run is red. The shared checkout is never
modified. The tests run as pytest runs them by default, in the fast tier: every breakage must
be caught without the tests marked ``slow``.

The breakages are deliberate one-line errors that the suite once let through, in the
diagnostics, selection and report code, the violations verdict's multiplicity over triples,
the growth laws' held-out half at arbitrary x, and three in the inference engine (a null that
does not permute, a bootstrap that does not refit, power that counts shuffled-label
detections).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (name, file, original text, mutated text); the original must occur exactly once
MUTATIONS = [
    ("error attached to the Eq. 12 bounds is the accuracy, not 1 - accuracy",
     "infodiv/curves.py",
     'curve.extra["error_raw"] = 1.0 - order_values(raw, curve.order)',
     'curve.extra["error_raw"] = order_values(raw, curve.order)'),
    ("greedy-path curvature without its '1 -'",
     "infodiv/curvature.py",
     "path[pos] = 1.0 - steps[pos] / single_of_step[pos]",
     "path[pos] = steps[pos] / single_of_step[pos]"),
    ("growth-law extrapolation error forced to 0",
     "infodiv/growth.py",
     'entry["extrapolation_rmse"] = float(np.sqrt(',
     'entry["extrapolation_rmse"] = 0.0 * float(np.sqrt('),
    ("k >= 2 gain slope equal to the k >= 1 slope",
     "infodiv/submodularity.py",
     'out["from_k2"] = (_slope_summary(per_order[:, 1], boot_mc[:, 1],',
     'out["from_k2"] = (_slope_summary(per_order[:, 0], boot_mc[:, 0],'),
    ("Theorem-7 premise ratio inverted",
     "infodiv/information.py",
     "return cond / np.where(tc != 0, tc, np.nan)",
     "return tc / np.where(cond != 0, cond, np.nan)"),
    ("Eq. 12 lower and upper bounds swapped in the decomposition report",
     "infodiv/information.py",
     "lower, upper = error_bounds(dec.joint, h_y, _n_classes(labels, n_classes))",
     "upper, lower = error_bounds(dec.joint, h_y, _n_classes(labels, n_classes))"),
    ("best-of-random subsets chosen on the scoring half",
     "infodiv/selection.py",
     "perms, np.argmax(sign * sel_curves, axis=0)",
     "perms, np.argmax(sign * np.stack([order_values(f.restrict(ev), p) for p in perms]), "
     "axis=0)"),
    ("Kendall tau of greedy stability on orders instead of ranks",
     "infodiv/selection.py",
     "kendalltau(ref_rank, np.argsort(o)).statistic",
     "kendalltau(ref, o).statistic"),
    # issue 9: the violations verdict and the growth laws at arbitrary x
    ("violation test without the minimum over triples (per-triple permutation p, no "
     "multiplicity)",
     "infodiv/inference/verdicts.py",
     "q = np.minimum.accumulate(zk[:, order[::-1]], axis=1)[:, ::-1]",
     "q = zk[:, order]"),
    ("growth laws at arbitrary x fitted without sorting x (wrong held-out half)",
     "infodiv/growth.py",
     "k, y = k[order], y[order]",
     "k, y = k, y"),
    # the inference engine (infodiv.inference.engine and its replicates)
    ("label-permutation null that does not permute the labels",
     "infodiv/inference/replicates.py",
     "run = with_arrays(run, labels=data_rng.permutation(run.labels))",
     "run = with_arrays(run, labels=run.labels)"),
    ("bootstrap that does not refit: one set function fitted once and reused by every "
     "replicate",
     "infodiv/inference/claim.py",
     'return self.cached("f", fit)',
     'return self.design.__dict__.setdefault("_fit", fit())'),
    ("power counting the shuffled-label detections instead of the matched surrogate's",
     "infodiv/inference/engine.py",
     "pw = (power or {}).get(claim.surrogate, {}).get(claim.name)",
     'pw = (power or {}).get("shuffled_labels", {}).get(claim.name)'),
]

DEFAULT_TESTS = ["tests/infodiv/reports/test_reports.py", "tests/infodiv/test_submodularity.py",
                 "tests/infodiv/test_selection.py", "tests/infodiv/test_curves.py",
                 "tests/infodiv/commands/test_curves_cli.py",
                 "tests/infodiv/inference/test_inference_violations.py",
                 "tests/infodiv/inference/test_inference_verdicts.py",
                 "tests/infodiv/inference/test_engine.py"]


def export_tree(dest: Path, working_tree: bool = False) -> None:
    """The committed tree of the repository at ``dest`` (``git archive HEAD``), or with
    ``working_tree`` the files git knows or would add (``git ls-files -co
    --exclude-standard``) as they are in the checkout (files deleted there are left out)."""
    if not working_tree:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return
    names = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard",
                            "-z"], check=True, capture_output=True).stdout.split(b"\0")
    for name in filter(None, names):
        src = ROOT / os.fsdecode(name)
        if src.is_file():
            (dest / src.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / src.relative_to(ROOT))


def run_tests(tree: Path, tests: list[str]) -> tuple[int, list[str]]:
    """Run pytest in ``tree``; return its exit code and the ids of the failed tests."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(tree)}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfE", "-p",
                          "no:cacheprovider", *tests], cwd=tree, env=env,
                         capture_output=True, text=True)
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", res.stdout, flags=re.M)
    return res.returncode, failed


def apply(tree: Path, path: str, old: str, new: str) -> str:
    """Replace the single occurrence of ``old`` in ``tree/path``; return the original text."""
    file = tree / path
    text = file.read_text()
    count = text.count(old)
    if count != 1:
        raise SystemExit(f"mutation target occurs {count} times in {path}: {old!r}")
    file.write_text(text.replace(old, new))
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", nargs="+", default=DEFAULT_TESTS)
    parser.add_argument("--only", nargs="+", type=int, default=None,
                        help="1-based numbers of the mutations to run (default: all)")
    parser.add_argument("--working-tree", action="store_true",
                        help="test the checkout's files as they are, not the last commit")
    args = parser.parse_args(argv)
    bad = [i for i in args.only or () if not 1 <= i <= len(MUTATIONS)]
    if bad:
        parser.error(f"--only: mutations are numbered 1 to {len(MUTATIONS)}, got {bad}")
    tmp = Path(tempfile.mkdtemp(prefix="infodiv-mutations-"))
    try:
        export_tree(tmp, args.working_tree)
        rc, failed = run_tests(tmp, args.tests)
        print(f"unmodified tree: exit {rc}, {len(failed)} failing tests")
        if rc != 0:
            print("\n".join(f"  {t}" for t in failed))
            return 1
        survived = 0
        for i, (name, path, old, new) in enumerate(MUTATIONS, 1):
            if args.only and i not in args.only:
                continue
            original = apply(tmp, path, old, new)
            try:
                rc, failed = run_tests(tmp, args.tests)
            finally:
                (tmp / path).write_text(original)
            caught = rc != 0 and bool(failed)
            survived += not caught
            print(f"[{i}] {name} ({path}): {'CAUGHT' if caught else 'SURVIVED'} "
                  f"by {len(failed)} test(s)")
            for t in failed:
                print(f"      {t}")
        print(f"{survived} mutation(s) survived")
        return 1 if survived else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
