"""Every estimator formula has one home: no log-determinant, Cholesky, digamma, rank
transform or log-sum-exp is computed in ``infodiv/`` — it calls ``estimators`` for them.
Spearman correlations of junction series rank with ``scipy.stats.rankdata`` (a rank correlation,
not a rank-to-normal transform), imported from scipy, not re-implemented."""

import re

from _paths import ROOT

FORBIDDEN = re.compile(r"\b(slogdet|cholesky|cho_factor|digamma|rankdata|ndtri|logsumexp|"
                       r"log_softmax|helmert)\s*\(")
ALLOWED = {"infodiv/junctions.py": {"logsumexp"}, "infodiv/information.py": {"helmert"},
           "infodiv/setfunctions/calibration.py": {"logsumexp", "log_softmax"},
           "infodiv/inference/correlations.py": {"rankdata"}}


def test_no_estimator_formula_outside_estimators():
    bad = []
    for path in sorted((ROOT / "infodiv").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text()
        imported = set(re.findall(
            r"from (?:estimators|scipy\.linalg|scipy\.stats)[\w.]* import ([^\n]+)", text))
        for m in FORBIDDEN.finditer(text):
            name = m.group(1)
            if name in ALLOWED.get(rel, set()) and any(name in i for i in imported):
                continue  # called from estimators (or scipy.linalg.helmert), not re-implemented
            bad.append(f"{rel}: {name}(")
    assert not bad, bad
