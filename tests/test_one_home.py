"""Every estimator formula has one home (issue 8): no log-determinant, Cholesky, digamma, rank
transform or log-sum-exp is computed in ``infodiv/`` — it calls ``estimators`` for them.
(``infodiv/inference`` and ``infodiv/zoo`` are checked by their owners' issues.)"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = re.compile(r"\b(slogdet|cholesky|cho_factor|digamma|rankdata|ndtri|logsumexp|"
                       r"log_softmax|helmert)\s*\(")
ALLOWED = {"infodiv/junctions.py": {"logsumexp"}, "infodiv/information.py": {"helmert"},
           "infodiv/setfunctions/calibration.py": {"logsumexp", "log_softmax"}}


def test_no_estimator_formula_outside_estimators():
    bad = []
    for path in sorted((ROOT / "infodiv").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("infodiv/inference/", "infodiv/zoo/")):
            continue
        text = path.read_text()
        imported = set(re.findall(r"from (?:estimators|scipy\.linalg)[\w.]* import ([^\n]+)",
                                  text))
        for m in FORBIDDEN.finditer(text):
            name = m.group(1)
            if name in ALLOWED.get(rel, set()) and any(name in i for i in imported):
                continue  # called from estimators (or scipy.linalg.helmert), not re-implemented
            bad.append(f"{rel}: {name}(")
    assert not bad, bad
