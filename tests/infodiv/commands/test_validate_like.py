"""``infodiv validate --like RUN``: a verdict for every estimator on members matched to a run
whose right answer is known, its JSON, and its refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from estimators.members_truth import MemberModel, truth
from extraction.contributions import Contributions, Member
from infodiv.cli import main

KNOWN = MemberModel("known", 3, 6, 2.0)


def _known_run(path, model=KNOWN, n=400, unlabelled=0):
    """A run folder whose members are drawn from ``model`` (exact I(U;Y) known)."""
    u, y = model.sample(n, np.random.default_rng(0))
    u = u.astype(np.float32)
    y[:unlabelled] = -1
    c = model.n_classes
    members = [Member("embed", "embed")] + [Member(f"L{i}", "attn", i)
                                           for i in range(model.n_members - 1)]
    Contributions(u, np.zeros(c, np.float32), y, u.sum(1), np.ones((n, model.n_members)),
                  members, [f"o{j}" for j in range(c)]).save(path)
    return path


def test_like_gives_every_estimator_a_verdict_trusting_the_default(tmp_path, capsys):
    run, out = _known_run(tmp_path / "run", n=400), tmp_path / "like.json"
    rc = main(["validate", "--like", str(run), "--replicates", "1", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    doc = json.loads(out.read_text())
    rows = {(r["method"], r["quantity"]): r for r in doc["rows"]}
    for method in ("usable", "gaussian", "copula", "knn", "binned"):
        assert rows[(method, "I(U;Y)")]["verdict"] in ("trust", "usable with caution",
                                                       "do not use")
        assert any(line.startswith("usable (default)" if method == "usable" else method)
                   and line.rstrip().endswith(rows[(method, "I(U;Y)")]["verdict"])
                   for line in text.splitlines())
    # the design's truth is the model's to its fitting error, and the default is within 10 %
    assert doc["truth"]["joint"] == pytest.approx(truth(KNOWN)["joint"], abs=0.06)
    assert rows[("usable", "I(U;Y)")]["verdict"] == "trust"
    # 18 coordinates in 8 bins each: every row its own histogram cell, so I reads H(Y)
    binned = rows[("binned", "I(U;Y)")]
    assert binned["verdict"] == "do not use" and binned["bias_bits"] > 0.3
    assert binned["null_bits"] > 1.0 and abs(rows[("usable", "I(U;Y)")]["null_bits"]) < 0.05
    assert doc["recommendation"]["I(U;Y)"]["methods"][0] == "usable"
    assert rows[("usable", "I(U;Y)")]["interval_kind"] == "bracket"
    assert "10% of |truth|" in text and "which estimator to trust" in text
    assert "not expected to be accurate" not in text


def test_like_refuses_bad_input_in_one_line(tmp_path, capsys):
    run = _known_run(tmp_path / "run", n=120)
    existing = tmp_path / "old.json"
    existing.write_text("{}")
    for argv, words in (
            (["--like", str(tmp_path / "nope")], "does not exist"),
            (["--like", str(run), "--out", str(tmp_path / "x.csv")], ".json"),
            (["--like", str(run), "--out", str(existing)], "--overwrite"),
            (["--like", str(run), "--suite", "bmi"], "exclude"),
            (["--like", str(run), "--methods", "lnc"], "label"),
            (["--like", str(run), "--n", "30"], "15 per class")):
        assert main(["validate", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, (argv, err)
    assert existing.read_text() == "{}"
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--like", str(run), "--variance", "1.5"])
    assert exc.value.code == 2


def test_suite_table_verdict_is_measured_and_out_is_not_overwritten(tmp_path, capsys):
    out = tmp_path / "gt.json"
    assert main(["validate", "--n", "400", "--seeds", "2", "--cases", "gaussian_cmi",
                 "--methods", "gaussian", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    row = json.loads(out.read_text())["rows"][0]
    assert row["verdict"] == "trust" and text.splitlines()[2].rstrip().endswith("trust")
    assert "10% of |truth|" in text and "not expected" not in text
    assert main(["validate", "--n", "400", "--seeds", "1", "--cases", "gaussian_cmi",
                 "--methods", "gaussian", "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err


@pytest.mark.slow
def test_like_at_the_demo_size_with_the_run_estimates(tmp_path, capsys):
    """M = 61 members of 4 options at n = 1000: the Gaussian methods refuse (a class has
    fewer examples than the 244 coordinates) and say so; every method still gets a verdict."""
    run = _known_run(tmp_path / "run", MemberModel("demo_like", 4, 61, 2.5), n=1000,
                     unlabelled=5)
    out = tmp_path / "like.json"
    assert main(["validate", "--like", str(run), "--replicates", "1", "--on-run",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["meta"]["n"] == 995 and doc["meta"]["n_members"] == 61
    rows = {(r["method"], r["quantity"]): r for r in doc["rows"]}
    assert rows[("gaussian", "I(U;Y)")]["verdict"] == "do not use"
    assert "refused" in rows[("gaussian", "I(U;Y)")]["reason"] and "gaussian refused" in text
    assert "on_run_bits" in rows[("usable", "I(U;Y)")]
    assert doc["meta"]["member_match"]["correlation"] > 0.8
