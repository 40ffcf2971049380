"""``infodiv zoo report --from-contributions`` on a tiny synthetic zoo (no checkpoint).

Two models (M = 3 and 5) whose members share a latent within each example (redundant given
the label), saved as Contributions folders with a ``summary.json`` holding only their training
records. The report must rerun every analysis from those folders, carry the claims' verdict
records into the rows and ``across.json`` (counts checked against the reports themselves),
resume per model, leave a stale curves report out of the summary, and refuse bad input with
one line and exit 2 before writing anything.
"""

from __future__ import annotations

import argparse
import json
import shutil

import numpy as np
import pytest

from extraction.contributions import Contributions, Member
from infodiv.outputs import adopt

N, C = 80, 4
MODELS = (("llama-d8-L1-s0", 1, 0), ("llama-d8-L2-s0", 2, 0))
#: tiny sizes: B = K = 20 (the smallest with p < 0.05), 2 power surrogates of each kind
FLAGS = ["--analyses", "curves", "--curves-inference", "20", "--curves-power", "2",
         "--curves-secondary", "20", "0", "--curves-report-size", "20", "--resamples", "20",
         "--probe-null", "0", "--information-null", "0", "--info-method", "none",
         "--n-bootstrap", "0", "--n-permutations", "0", "--quiet"]


def _members(m: int) -> list:
    out = [Member("embed", "embed")]
    for i in range(m - 1):
        kind = "attn" if i % 2 == 0 else "mlp"
        out.append(Member(f"L{i // 2}.{kind}#0", kind, i // 2))
    return out


def _run(m: int, seed: int) -> Contributions:
    rng = np.random.default_rng(seed)
    y = np.random.default_rng(0).permutation(np.repeat(np.arange(C), N // C))   # shared rows
    latent = rng.standard_normal((N, 1, C))
    mu = 0.5 + rng.random(m)
    u = (mu[None, :, None] * np.eye(C)[y][:, None, :] + 0.8 * latent
         + 0.6 * rng.standard_normal((N, m, C))).astype(np.float32)
    bias = (0.1 * rng.standard_normal(C)).astype(np.float32)
    run = Contributions(u, bias, y, u.sum(1) + bias, np.ones((N, m)), _members(m),
                        [f"o{j}" for j in range(C)])
    run.meta["fingerprint"] = f"tiny-{m}-{seed}"
    return run


def _tiny_zoo(out) -> list[dict]:
    rows = []
    for name, depth, seed in MODELS:
        m = 2 * depth + 1
        _run(m, 10 * depth + seed).save(out / "contributions" / name)
        rows.append({"model": name, "depth": depth, "repeats": 1, "shared": False, "seed": seed,
                     "width": 8, "params": 100 * depth, "executions": depth, "n_members": m,
                     "steps": 10, "train_accuracy_check": None})
    (out / "summary.json").write_text(json.dumps(rows))
    adopt(out, "infodiv zoo report", ["summary.json"])     # the records, as a report wrote them
    return rows


def _cli(argv) -> int:
    from infodiv.commands import zoo

    parser = argparse.ArgumentParser(prog="infodiv zoo")
    zoo.configure(parser)
    return zoo.run(parser.parse_args(argv))


def _report(out, capsys, extra=()) -> str:
    capsys.readouterr()
    assert _cli(["report", "--from-contributions", "--out", str(out), *FLAGS, *extra]) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    out = tmp_path_factory.mktemp("tinyzoo")
    rows = _tiny_zoo(out)
    assert _cli(["report", "--from-contributions", "--out", str(out), *FLAGS]) == 0
    return out, rows


@pytest.mark.slow
def test_rows_carry_the_claims_verdict_records(zoo):
    from infodiv.experiments.analyses import REPORT_CLAIMS, ZOO_CLAIMS

    out, rows = zoo
    doc = json.loads((out / "summary.json").read_text())
    assert [r["model"] for r in doc] == [r["model"] for r in rows]
    for r, given in zip(doc, rows):
        assert {k: r[k] for k in given} == given          # training fields kept as they were
        assert r["accuracy"] == pytest.approx(np.mean(
            _run(given["n_members"], 10 * given["depth"] + given["seed"]).logits.argmax(1)
            == _run(3, 0).labels))
        report = json.loads((out / r["model"] / "curves" / "report.json").read_text())
        assert list(report["objectives"]) == ["accuracy", "mi_readout"]
        acc = r["curves"]["accuracy"]["verdict_details"]
        assert set(acc) >= set(ZOO_CLAIMS) | set(REPORT_CLAIMS)
        assert set(r["curves"]["mi_readout"]["verdict_details"]) >= set(ZOO_CLAIMS)
        assert not set(REPORT_CLAIMS) & set(r["curves"]["mi_readout"]["verdict_details"])
        for claim, d in acc.items():   # the row quotes the report's own record
            v = report["objectives"]["accuracy"]["verdicts"].get(claim) or (
                report["selection"]["inference"]["verdicts"][claim])
            assert (d["finding"], d["estimate"], d["p"]) == (v["finding"], v["estimate"], v["p"])
        t8 = acc["theorem8"]["report"]
        h_y = 2.0                                          # 4 balanced classes
        assert t8["h_y"] == pytest.approx(h_y) and 0 <= t8["mi_lower"] <= t8["mi"] <= h_y
        assert 0 <= t8["error_lower_bound"] <= t8["error_upper_bound"] <= 1
        assert acc["theorem8"]["finding"] is False           # a report never detects
        assert report["objectives"]["accuracy"]["zoo_cpu_s"] > 0


@pytest.mark.slow
def test_across_counts_come_from_the_reports(zoo):
    out, rows = zoo
    across = json.loads((out / "across.json").read_text())
    assert across["curves_stale"] == []
    text = (out / "summary.md").read_text()
    for title in ("## Redundancy against the conditionally independent control",
                  "## Theorem 8 (Eq. 12) per model"):
        section = text.split(title, 1)[1].split("\n## ", 1)[0]
        assert all(f"| {r['model']} | " in section for r in rows), title
    for obj in ("accuracy", "mi_readout"):
        for claim in ("diminishing_returns", "premise", "redundancy_cost", "gains_vs_control",
                      "marginal_gain_redundancy"):
            findings = [r["model"] for r in rows if json.loads(
                (out / r["model"] / "curves" / "report.json").read_text())[
                "objectives"][obj]["verdicts"][claim]["finding"]]
            cell = across["verdicts"][obj][claim]
            assert (cell["n_models"], cell["n_finding"], cell["findings"]) == (
                len(rows), len(findings), findings)


@pytest.mark.slow
def test_rerun_resumes_per_model(zoo, capsys):
    out, rows = zoo
    before = {r["model"]: (out / r["model"] / "curves" / "report.json").read_bytes()
              for r in rows}
    text = _report(out, capsys)
    assert "computed" not in text and text.count("curves: exists (same settings)") == len(rows)
    redo = rows[0]["model"]
    shutil.rmtree(out / redo / "curves")
    text = _report(out, capsys)
    block = text.split(f"] {redo}\n", 1)[1].split("\n[", 1)[0]    # the redone model's lines
    assert text.count("computed") == 2 and block.count("computed") == 2, text
    for name, data in before.items():
        if name != redo:
            assert (out / name / "curves" / "report.json").read_bytes() == data


@pytest.mark.slow
def test_stale_curves_are_left_out(zoo, capsys):
    out, rows = zoo
    _report(out, capsys, ["--analyses", "--curves-power", "3"])   # other settings, none run
    doc = json.loads((out / "summary.json").read_text())
    across = json.loads((out / "across.json").read_text())
    assert all(r["curves"] == {} for r in doc)
    assert across["curves_stale"] == [r["model"] for r in rows]
    _report(out, capsys, ["--analyses"])    # the settings of the reports: quoted again
    assert json.loads((out / "across.json").read_text())["curves_stale"] == []


def _bad_summary(out):
    (out / "summary.json").write_text(json.dumps({"model": "x"}))


def _duplicate(out):
    rows = json.loads((out / "summary.json").read_text())
    (out / "summary.json").write_text(json.dumps(rows + rows[:1]))


def _no_contributions(out):
    shutil.rmtree(out / "contributions" / MODELS[1][0])


def _wrong_members(out):
    rows = json.loads((out / "summary.json").read_text())
    rows[1]["n_members"] = 7
    (out / "summary.json").write_text(json.dumps(rows))


@pytest.mark.parametrize("breakage, needle, extra", [
    (lambda out: (out / "summary.json").unlink(), "does not exist", ()),
    (_bad_summary, "non-empty list", ()),
    (_duplicate, "appears twice", ()),
    (_no_contributions, "lacks arrays.npz, meta.json", ()),
    (_wrong_members, "M = 5 members, the record says n_members = 7", ()),
    (lambda out: None, "report_size must be >= 20", ("--curves-report-size", "5")),
])
def test_bad_input_one_line_exit_2(tmp_path, capsys, breakage, needle, extra):
    _tiny_zoo(tmp_path)
    breakage(tmp_path)
    files = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert _cli(["report", "--from-contributions", "--out", str(tmp_path), *FLAGS,
                 *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("infodiv zoo report: ") and needle in err, err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == files
