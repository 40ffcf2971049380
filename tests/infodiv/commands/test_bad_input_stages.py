"""Bad input, stages: every option checked at parse time, failed stages fail loudly
and are never reused, and every damaged file of a run folder is detected.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from _cli_checks import one_line_error

from infodiv.cli import main

ONE_LINE_OPTIONS = [
    (["curves", "x", "--n-curve-orders", "-3"], "--n-curve-orders: must be at least 2"),
    (["curves", "x", "--n-curve-orders", "1"], "--n-curve-orders: must be at least 2"),
    (["curves", "x", "--n-triples", "0"], "--n-triples: must be at least 1"),
    (["curves", "x", "--n-bootstrap", "0"], "--n-bootstrap: must be at least 20"),
    (["curves", "x", "--n-bootstrap", "19"], "--n-bootstrap: must be at least 20"),
    (["curves", "x", "--n-permutations", "19"], "--n-permutations: must be at least 20"),
    (["run", "--n-bootstrap", "5"], "--n-bootstrap: must be at least 20"),
    (["curves", "x", "--n-jobs", "0"], "--n-jobs: must not be 0"),
    (["curves", "x", "--seed", "-1"], "--seed: must be at least 0"),
    (["curves", "x", "--ridge", "-1"], "--ridge: must be a finite number >= 0"),
    (["curves", "x", "--ridge", "nan"], "--ridge: must be a finite number >= 0"),
    (["curves", "x", "--ridge", "inf"], "--ridge: must be a finite number >= 0"),
    (["curves", "x", "--stability", "-1"], "--stability: must be at least 0"),
    (["decompose", "x", "--inference", "5"], "--inference: must be 0 (skip) or at least 20"),
    (["decompose", "x", "--inference", "-1"], "--inference: must be at least 0"),
    (["decompose", "x", "--seed", "-2"], "--seed: must be at least 0"),
    (["run", "--n-curve-orders", "1"], "--n-curve-orders: must be at least 2"),
    (["run", "--seed", "-1"], "--seed: must be at least 0"),
    (["run", "--n", "3"], "--n: must be at least 4"),
]


@pytest.mark.parametrize("argv, needle", ONE_LINE_OPTIONS)
def test_every_option_is_checked_at_parse_time(capsys, argv, needle):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "\n" not in err and needle in err, err



def synthetic_contrib(n=60, m=4):
    from infodiv.controls import conditionally_independent_ensemble

    run = conditionally_independent_ensemble(n, m, mu=0.5, random_state=0)
    run.meta.update(model={"model_id": "synthetic"}, task="ci-control", n_examples=n)
    return run


def snapshot(path):
    return {p: p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_out_naming_an_existing_file_or_folder(capsys, tmp_path):
    d = synthetic_contrib().save(tmp_path / "run")
    f = tmp_path / "taken.txt"
    f.write_text("mine")
    for cmd in ("curves", "decompose"):
        one_line_error(capsys, [cmd, str(d), "--out", str(f)], "--out", "is a file")
    assert f.read_text() == "mine"
    # --out a folder of the user's: report.* there are never replaced
    write_stage(d, "decompose", {"decompositions.json": "{}"})
    theirs = tmp_path / "pages"
    theirs.mkdir()
    (theirs / "report.json").write_text("mine")
    one_line_error(capsys, ["report", str(d), "--out", str(theirs)], "report.json")
    assert (theirs / "report.json").read_text() == "mine"
    assert not (theirs / "report.html").exists()
    # --out a page of the user's (or the .json beside it): replaced only with --overwrite
    page = tmp_path / "page.html"
    page.write_text("my page")
    one_line_error(capsys, ["report", str(d), "--out", str(page)], "add --overwrite",
                   "page.html")
    assert page.read_text() == "my page"
    (tmp_path / "other.json").write_text("my json")
    one_line_error(capsys, ["report", str(d), "--out", str(tmp_path / "other.html")],
                   "other.json")
    assert (tmp_path / "other.json").read_text() == "my json"
    assert not (tmp_path / "other.html").exists()


def test_a_failed_objective_fails_the_curves_stage(capsys, tmp_path):
    """An objective the run cannot support: exit 1, one line naming the stage and objective."""
    run = synthetic_contrib(n=8, m=3)
    run.u[:, 0, :] = 0.0   # a member with zero variance: the Gaussian objective is undefined
    d = run.save(tmp_path / "run")
    err = one_line_error(capsys, ["curves", str(d), "--objective", "mi_gaussian",
                                  "--n-curve-orders", "4", "--n-triples", "2", "--stability",
                                  "0", "--no-graph", "--no-inference"],
                         "curves failed", "mi_gaussian", code=1)
    assert "report.json" in err


# ------------------------------------------------------------------ run folder manifest
def write_stage(root, stage, files):
    """Write ``files`` ({name: text}) as the output of ``stage`` in the run folder ``root``,
    through the stage folder's manifest, as the stage itself does."""
    from infodiv.outputs import staged_output
    from infodiv.study.runfolder import STAGE_DIRS, STAGE_WRITERS

    with staged_output(root / STAGE_DIRS[stage], STAGE_WRITERS[stage],
                       replace_changed=True) as tmp:
        for name, text in files.items():
            (tmp / name).write_text(text)


def make_run_folder(root, n=60, seed=0):
    """A run folder as ``infodiv run`` leaves it, with hand-written stage outputs recorded in
    run.json through RunFolder.done."""
    from infodiv.study.runfolder import RunFolder

    folder = RunFolder(root, {"model": "synthetic", "task": "ci-control", "n": n},
                       "infodiv run --model synthetic")
    folder.prepare("new")
    contrib = synthetic_contrib(n=n)
    contrib.u += seed
    contrib.save(folder.contributions)
    folder.done("extract", "k-extract", 1.0)
    for stage, sub, name, body in (
            ("decompose", "decompositions", "decompositions.json", {"rows": list(range(40))}),
            ("curves", "curves", "report.json", {"objectives": {"accuracy": [1, 2, 3]}})):
        write_stage(root, stage, {name: json.dumps(dict(body, seed=seed), indent=1),
                                  f"{sub}.md": f"# {sub} {seed}\n"})
    folder.done("decompose", "k-decompose", 1.0)
    folder.done("curves", "k-curves", 1.0)
    return folder


def damages(root, other):
    """(label, function that damages the run folder ``root``); ``other`` is a second run."""
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and p.name != "run.json"]

    def truncate(p):
        return lambda: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])

    def flip(p):
        def f():
            b = bytearray(p.read_bytes())
            i = len(b) // 2
            b[i] = (b[i] + 1) % 256 if chr(b[i]) not in "0123456789" else ord(
                "9" if chr(b[i]) != "9" else "8")
            p.write_bytes(bytes(b))
        return f

    def delete(p):
        return lambda: p.unlink()

    def swap(a, b):
        def f():
            tmp = a.read_bytes()
            a.write_bytes(b.read_bytes())
            b.write_bytes(tmp)
        return f

    def from_other(*rels):
        def f():
            for rel in rels:
                shutil.copyfile(other / rel, root / rel)
        return f

    out = []
    for p in files:
        rel = p.relative_to(root).as_posix()
        out += [(f"truncate {rel}", truncate(p)), (f"edit {rel}", flip(p)),
                (f"delete {rel}", delete(p))]
    out += [("swap the two .md files", swap(root / "curves" / "curves.md",
                                            root / "decompositions" / "decompositions.md")),
            ("swap decompositions.json and report.json",
             swap(root / "decompositions" / "decompositions.json",
                  root / "curves" / "report.json")),
            ("contributions of another run",
             from_other("contributions/meta.json", "contributions/arrays.npz")),
            ("curves of another run", from_other("curves/report.json")),
            ("a failed stage folder left behind", lambda: _forget(root, "curves"))]
    return out


def _forget(root, stage):
    from infodiv.study.runfolder import RunFolder

    RunFolder.open(root).forget(stage)


def test_fuzz_every_damaged_run_folder_is_detected(capsys, tmp_path):
    from infodiv.study.runfolder import RunFolder, verify_files

    clean = tmp_path / "clean" / "synthetic-ci-control-n60-0shot-block"
    make_run_folder(clean)
    other = tmp_path / "other" / "synthetic-ci-control-n60-0shot-block"
    make_run_folder(other, seed=1)
    assert verify_files(clean) == []
    assert all(RunFolder.open(clean).stale(s, f"k-{s}") is None
               for s in ("extract", "decompose", "curves"))
    cases = damages(clean, other)
    assert len(cases) >= 20
    for label, damage in cases:
        root = tmp_path / "case" / clean.name
        shutil.rmtree(root.parent, ignore_errors=True)
        shutil.copytree(clean, root)
        # the damage closures name paths under ``clean``: rebind them by running in a copy
        os.replace(clean, tmp_path / "pristine")
        os.replace(root, clean)
        try:
            damage()
            before = snapshot(clean)
            problems = verify_files(clean)
            folder = RunFolder.open(clean)
            stale = [s for s in ("extract", "decompose", "curves")
                     if folder.stale(s, f"k-{s}") is not None]
            assert problems or stale, label
            err = one_line_error(capsys, ["report", str(clean)])
            assert "recompute" in err or "re-extract" in err, (label, err)
            assert snapshot(clean) == before, label   # report changed nothing
            assert not (clean / "report.html").exists(), label
        finally:
            shutil.rmtree(clean)
            os.replace(tmp_path / "pristine", clean)


def test_a_failed_curves_stage_is_forgotten_so_the_next_run_redoes_it(capsys, tmp_path):
    from infodiv.study.runfolder import RunFolder

    root = tmp_path / "synthetic-ci-control-n8-0shot-block"
    folder = make_run_folder(root, n=8)
    run = synthetic_contrib(n=8, m=3)
    run.u[:, 0, :] = 0.0
    run.save(folder.contributions, overwrite=True)
    RunFolder.open(root).done("extract", "k-extract", 1.0)
    assert RunFolder.open(root).stale("curves", "k-curves") is None
    one_line_error(capsys, ["curves", str(root), "--objective", "mi_gaussian",
                            "--n-curve-orders", "4", "--n-triples", "2", "--stability", "0",
                            "--no-graph", "--no-inference"], "curves failed", code=1)
    assert RunFolder.open(root).stale("curves", "k-curves") == "not computed yet"
    one_line_error(capsys, ["report", str(root)], "no finished curves stage", "infodiv curves")


@pytest.mark.parametrize("argv, needle", [
    (["--n", "0"], "--n: must be at least 1"),
    (["--shots", "-1"], "--shots: must be at least 0"),
    (["--seed", "-1"], "--seed: must be at least 0"),
    (["--neuron-top-k", "0"], "--neuron-top-k: must be at least 1"),
    (["--max-length", "0"], "--max-length: must be at least 1"),
])
def test_extract_options_are_checked_at_parse_time(capsys, argv, needle):
    with pytest.raises(SystemExit) as exc:
        main(["extract", "--model", "m", "--task", "sst2", *argv])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "\n" not in err and needle in err, err


def test_a_negative_relevancy_is_flagged_in_the_summary(tmp_path):
    from infodiv.reports.summary import print_summary

    root = tmp_path / "synthetic-ci-control-n60-0shot-block"
    make_run_folder(root)
    write_stage(root, "curves", {"report.json": "{}"})
    terms = {"joint": 0.2, "relevancy": -0.35, "diversity": 0.55}
    write_stage(root, "decompose", {"decompositions.json": json.dumps(
        {"run": {"N": 60, "accuracy": 0.7}, "information": {"usable": terms}})})
    with open(os.devnull, "w") as sink:
        lines = print_summary(root, file=sink)
    flagged = [line for line in lines if "relevancy R" in line]
    assert flagged and "NEGATIVE" in flagged[0], lines
    terms["relevancy"] = 0.35
    write_stage(root, "decompose", {"decompositions.json": json.dumps(
        {"run": {"N": 60, "accuracy": 0.7}, "information": {"usable": terms}})})
    with open(os.devnull, "w") as sink:
        assert not any("NEGATIVE" in line for line in print_summary(root, file=sink))
