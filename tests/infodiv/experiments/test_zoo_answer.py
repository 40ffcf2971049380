"""The zoo page's answer lines count the conclusions the models' records carry, and state the
depth comparison the intervals support (infodiv.experiments.zoo_answer)."""

from __future__ import annotations

import re

from infodiv.experiments.analyses import _verdict_detail
from infodiv.experiments.zoo_answer import answer_document


def _record(name, outcome, *, n_needed=None, margin=None, power=1.0, fp=0.0):
    detail = {"finding": outcome == "holds", "detected": outcome in ("holds", "opposite"),
              "power": {"rate": power}, "false_positive": {"rate": fp}}
    if outcome is not None:
        detail |= {"outcome": outcome, "n_needed": n_needed, "margin": margin}
    return {"model": name, "paper_eq14": {"gap": 0.01, "mse": 0.1},
            "curves": {"accuracy": {"verdict_details": {"premise": detail}}}}


def _row(depth, mean, ci, shared=False):
    return {"shared": shared, "depth": depth, "accuracy": {"mean": mean, "ci95": ci},
            "probe_bound": {"mean": 1.0, "ci95": [0.9, 1.1]}}


OUTCOMES = ["holds", "holds", "opposite", "absent", "inconclusive", "inconclusive", None]


def _doc(rows):
    records = [_record(f"m{i}", o, n_needed=[None, None, None, None, 800, 3000, None][i],
                       margin=0.02 if o == "absent" else None, power=0.4 + 0.1 * i,
                       fp=0.01 * i) for i, o in enumerate(OUTCOMES)]
    return answer_document(records, {"by_depth": rows})


def test_every_conclusion_is_counted_with_its_models_and_numbers():
    doc = _doc([_row(1, 0.8, [0.78, 0.82]), _row(16, 0.7, [0.66, 0.74])])
    line = next(x for x in doc["lines"] if "`premise`" in x)
    # counted independently of the generator: 2 holds, 1 opposite, 1 absent, 2 inconclusive
    assert "holds in 2, opposite in 1 (m2), absent in 1 (δ = 0.02), inconclusive in 2 " \
           "(n ≈ 800–3000 would decide) of 6 models" in line
    assert "1 model(s) whose record predates conclusions not counted" in line
    assert "matched-case power 0.40–1.00, shuffled labels fire at most 0.06" in line
    assert doc["outcomes"]["premise|accuracy"] == {
        "holds": ["m0", "m1"], "opposite": ["m2"], "absent": ["m3"],
        "inconclusive": ["m4", "m5"], "unrecorded": ["m6"]}
    assert doc["markdown"] == "\n".join(doc["lines"])


def test_the_depth_comparison_follows_the_intervals():
    below = _doc([_row(1, 0.8, [0.78, 0.82]), _row(16, 0.7, [0.66, 0.74])])["lines"][0]
    assert re.search(r"the deepest, L16 0\.7 \[0\.66, 0\.74\], lies below L1's", below)
    assert "highest L1" in below and "lowest L16" in below
    overlap = _doc([_row(1, 0.8, [0.78, 0.82]), _row(16, 0.79, [0.75, 0.81])])["lines"][0]
    assert "overlaps L1's" in overlap
    above = _doc([_row(1, 0.7, [0.66, 0.74]), _row(16, 0.8, [0.78, 0.82]),
                  _row(1, 0.9, [0.85, 0.95], shared=True)])["lines"][0]
    assert "lies above L1's" in above and "highest shared L1" in above


def test_the_zoo_summary_keeps_the_engines_conclusion():
    rec = {"outcome": "inconclusive", "outcome_reason": "power", "margin": {"value": 0.03},
           "mde": 0.05, "n_needed": 4100, "detected": False}
    d = _verdict_detail(rec)
    assert (d["outcome"], d["margin"], d["n_needed"], d["mde"]) == ("inconclusive", 0.03,
                                                                     4100, 0.05)
    assert "outcome" not in _verdict_detail({"detected": True})
