"""Add the diversity-effect and selection verdicts to an existing curves report, from the run.

A committed ``report.json`` (``infodiv curves`` with inference) already holds the diversity
regression's refitted example-bootstrap interval and its label null
(``objectives.<obj>.inference.diversity.beta``: value, ci, null mean, p) and the report's DR
chains (``objectives.<obj>.inference.dr.triples``). :func:`add_verdicts` computes only what
the ``diversity_effect`` verdict still needs, with the code and seeds of a fresh run:

1. the label null of β as a distribution (the report keeps its mean and p only), rerun with
   :class:`~infodiv.inference.pipelines.DiversityPipeline` on the report's own seeds — it
   reproduces the stored null exactly (``diversity.verdict_null_check`` records both);
2. the verdict by :func:`~infodiv.inference.verdicts.decide` on the stored refitted interval;
3. its power: planted-redundancy and shuffled-label surrogates (the report's seeds, so the
   shuffled-label surrogates are the ones the other verdicts' false-positive rates used)
   through :class:`~infodiv.inference.power.FixedFitDetector` with ``only="diversity"``,
   which gives the numbers a full run computes.

:func:`add_selection_verdicts` writes ``selection.inference`` (the selection comparison with
its budget-averaged statistics, label null, verdicts ``greedy_beats_random`` /
``greedy_beats_prefix`` and their power: :mod:`infodiv.claims`, through the engine) with the
arguments and seed ``curves_report`` uses by default (the report stored no selection
replicates, so this part is computed in full: B = K = 50 selections plus the power).

Nothing else of the report is recomputed. Command line (rewrites report.json and report.md)::

    python -m infodiv.inference.added REPORT_DIR RUN_DIR [--objective NAME ...]
        [--parts diversity selection] [--n-jobs N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from estimators.validation import check_seed_sequence

from .nulls import permutation_null
from .pipelines import CurvePipeline, DiversityPipeline
from .power import FixedFitDetector, surrogate_power
from .report import power_surrogate_kwargs
from .surrogates import planted_style
from .verdicts import NullReference, decide, verdict_docs

__all__ = ["add_verdicts", "add_selection_verdicts", "main"]

#: surrogate kinds the diversity verdict needs (its matched case and the shuffled labels)
KINDS = ("planted_redundancy", "shuffled_labels")


def _entry(doc, objective):
    entry = (doc.get("objectives") or {}).get(objective)
    if entry is None or "error" in entry:
        raise ValueError(f"objective {objective!r} is not in the report (or failed)")
    inf = entry.get("inference")
    if not inf or not (inf.get("diversity") or {}).get("beta") or not inf.get("dr"):
        raise ValueError(f"objective {objective!r} has no inferential diversity regression "
                         "(run infodiv curves with inference)")
    return entry, inf


def add_verdicts(doc: dict, contrib, objective: str, *, power_replicates: int | None = None,
                 n_jobs: int = 1, progress: bool = False) -> dict:
    """Add ``diversity_effect`` to ``doc["objectives"][objective]`` in place (module doc).

    Parameters
    ----------
    doc : dict
        A curves ``report.json`` loaded with ``json.load``.
    contrib : Contributions
        The run the report was computed from (same examples).
    objective : str
        One of the report's objectives.
    power_replicates : int, optional
        Surrogates of each kind (default: the report's own, else 20).
    n_jobs : int
        joblib workers (results do not depend on it).

    Writes ``report.verdicts.diversity_effect`` (= ``inference.verdicts.diversity_effect``:
    detected, calibrated, finding, rule, power, false_positive, matched_case, text),
    ``report.power.planted_redundancy.diversity_effect``,
    ``report.power.shuffled_labels.diversity_effect``,
    ``report.power.detector.planted_redundancy`` (the same in ``inference.power``) and
    ``report.diversity.verdict_null_check``. Returns the verdict.
    """
    t0 = time.process_time()
    entry, inf = _entry(doc, objective)
    rep, st = entry["report"], inf["settings"]
    seed, alpha = int(st["random_state"]), float(st["alpha"])
    kw = {"ridge": (doc.get("settings") or {}).get("ridge", 0.0)}
    if contrib.n_examples != inf["n_examples"] or contrib.n_members != inf["n_members"]:
        raise ValueError(f"contrib has N = {contrib.n_examples}, M = {contrib.n_members}; the "
                         f"report has N = {inf['n_examples']}, M = {inf['n_members']}")
    triples = [(t["A"], t["B"], t["x"]) for t in inf["dr"]["triples"]]
    beta = inf["diversity"]["beta"]
    # 1. the label null of beta as a distribution, on the report's seeds (infer -> null)
    null_seed = check_seed_sequence(seed).spawn(2)[1]
    null = permutation_null(contrib, DiversityPipeline(objective, triples=triples, **kw),
                            n_permutations=int(st["n_permutations"]),
                            observed={"diversity_beta": beta["value"],
                                      "diversity_partial_r":
                                          inf["diversity"]["partial_r"]["value"]},
                            random_state=null_seed, n_jobs=n_jobs, progress=progress)
    ref = NullReference(None, None, None, null["diversity_partial_r"].distribution)
    # 2. the verdict on the stored refitted interval (of the partial r: verdicts docstring)
    r = inf["diversity"]["partial_r"]
    detected = decide({"diversity_partial_r": {"value": r["value"], "ci": r["ci"]}}, ref,
                      alpha)
    # 3. its power on the report's seeds, the detector of a full run restricted to beta
    old = inf.get("power") or {}
    det = old.get("detector") or {}
    n_rep = power_replicates or old.get("n_replicates") or 20
    n_orders = det.get("n_orders", max(4, st["n_orders_per_replicate"] // 2))
    small = CurvePipeline(objective, n_orders=n_orders, triples=triples, information=False,
                          diversity=True, **kw)
    detect = FixedFitDetector(small, ref, n_bootstrap=det.get("n_bootstrap", 200),
                              n_bootstrap_refit=det.get("n_bootstrap_refit", 30), alpha=alpha,
                              only="diversity")
    sur_kw = power_surrogate_kwargs(contrib, planted_style(objective))
    power = surrogate_power(contrib, detect, kinds=KINDS, n_replicates=n_rep,
                            surrogate_kwargs=sur_kw, random_state=seed, n_jobs=n_jobs,
                            progress=progress)
    verdict = verdict_docs(detected, power, alpha)["diversity_effect"]
    check = {"n_permutations": null.n_permutations, "cpu_s": time.process_time() - t0}
    for name, stat in (("beta", beta), ("partial_r", r)):
        stored, new = stat.get("null") or {}, null[f"diversity_{name}"]
        check[name] = {"stored_null_mean": stored.get("mean"),
                       "recomputed_null_mean": new.null_mean, "stored_p": stored.get("p"),
                       "recomputed_p": new.p_greater}
    for part in (rep, inf):
        part.setdefault("verdicts", {})["diversity_effect"] = verdict
        pw = part.get("power")
        if pw is None:
            pw = part["power"] = {"n_replicates": n_rep}
        pw.setdefault("planted_redundancy", {})["diversity_effect"] = \
            power["planted_redundancy"]["diversity_effect"]
        pw.setdefault("shuffled_labels", {})["diversity_effect"] = \
            power["shuffled_labels"]["diversity_effect"]
        if pw.get("n_replicates") != n_rep:
            pw["n_replicates_diversity_effect"] = n_rep
        pw.setdefault("detector", {})["planted_redundancy"] = sur_kw["planted_redundancy"]
    if isinstance(rep.get("diversity"), dict):
        rep["diversity"]["verdict_null_check"] = check
    return verdict


def add_selection_verdicts(doc: dict, contrib, *, n_resamples: int = 50,
                           power_replicates: int = 20, n_jobs: int = 1,
                           progress: bool = False) -> dict:
    """Write ``doc["selection"]["inference"]`` in place as ``curves_report`` does by default
    (``CurvesSettings.inference_selection = 50``: B = 50, K = max(20, B), the report's seed
    and ridge; module docstring). Returns ``selection.inference.verdicts``."""
    from ..reports.curves import selection_inference

    sel = doc.get("selection")
    if not sel or "objective" not in sel:
        raise ValueError("the report has no selection section")
    if contrib.n_examples != doc["run"]["N"] or contrib.n_members != doc["run"]["M"]:
        raise ValueError(f"contrib has N = {contrib.n_examples}, M = {contrib.n_members}; the "
                         f"report has N = {doc['run']['N']}, M = {doc['run']['M']}")
    st = doc.get("settings") or {}
    sel["inference"] = selection_inference(
        contrib, sel["objective"], n_resamples=n_resamples, power_replicates=power_replicates,
        seed=int(st.get("seed", 0)), ridge=st.get("ridge", 0.0), n_jobs=n_jobs,
        progress=progress)
    return sel["inference"]["verdicts"]


def main(argv=None) -> int:
    """``python -m infodiv.inference.added REPORT_DIR RUN_DIR`` (module docstring)."""
    from extraction.contributions import Contributions

    from ..reports.curves import curves_markdown
    from ..reports.serialize import jsonable, write_json

    ap = argparse.ArgumentParser(prog="python -m infodiv.inference.added",
                                 description="add the diversity-effect verdict to a curves "
                                             "report (report.json + report.md rewritten)")
    ap.add_argument("report_dir")
    ap.add_argument("run_dir")
    ap.add_argument("--objective", nargs="+", default=None,
                    help="objectives (default: every one with an inferential diversity beta)")
    ap.add_argument("--power-replicates", type=int, default=None)
    ap.add_argument("--parts", nargs="+", choices=("diversity", "selection"),
                    default=["diversity", "selection"])
    ap.add_argument("--n-jobs", type=int, default=1)
    a = ap.parse_args(argv)
    path = Path(a.report_dir) / "report.json"
    try:
        doc = json.loads(path.read_text())
        contrib = Contributions.load(a.run_dir)
    except (OSError, ValueError) as exc:
        print(f"infodiv.inference.added: {exc}", file=sys.stderr)
        return 2
    names = a.objective or [k for k, v in doc["objectives"].items()
                            if ((v.get("inference") or {}).get("diversity") or {}).get("beta")]
    jobs = [(name, lambda d, n=name: {"diversity_effect": add_verdicts(
        d, contrib, n, power_replicates=a.power_replicates, n_jobs=a.n_jobs, progress=True)})
        for name in (names if "diversity" in a.parts else [])]
    if "selection" in a.parts:
        jobs.append(("selection", lambda d: add_selection_verdicts(
            d, contrib, power_replicates=a.power_replicates or 20, n_jobs=a.n_jobs,
            progress=True)))
    for name, job in jobs:
        try:
            verdicts = job(doc)
        except ValueError as exc:
            print(f"infodiv.inference.added: {name}: {exc}", file=sys.stderr)
            return 2
        for test, v in verdicts.items():
            print(f"{name}: {test} {v['text']}")
        doc = jsonable(doc)
        write_json(path, doc)       # after every part: an interruption loses one
    (Path(a.report_dir) / "report.md").write_text(curves_markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
