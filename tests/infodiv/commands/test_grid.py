"""``infodiv grid``: two tiny random-weight models × one tiny task (and a model that does not
exist), the extraction here and the analyses on a local Dask cluster (in-process, one worker
thread, reached through ``--scheduler``); the run folders hold the numbers of a plain
``infodiv run``; a rerun skips finished and verified runs and says so; an edited number is
recomputed; an interrupted grid continues; a failing run fails alone; bad input is one line
and exit 2. The tests that need Dask skip without it (``pip install -e '.[grid]'``)."""

import contextlib
import io
import json
import shutil
import sys

import numpy as np
import pytest

from infodiv.cli import main

SIZES = ["--n", "30", "--objective", "accuracy", "--info-method", "none",
         "--decompose-inference", "0", "--no-every-variant", "--n-curve-orders", "10",
         "--n-triples", "5", "--stability", "0", "--no-graph", "--n-bootstrap", "20",
         "--power-replicates", "2", "--n-random", "5", "--quiet"]
FAMILIES = ("llama", "gpt2")
#: what differs between two computations of the same numbers: the time they took
TIMINGS = ("cpu_s", "timings_s", "seconds", "wall_s")


def _call(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:   # argparse's own refusals
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def _numbers(path):
    """A JSON document without its timings."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in TIMINGS}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(json.loads(path.read_text()))


def _runs(out) -> dict:
    return {r["run"]: r for r in json.loads((out / "grid.json").read_text())["runs"]}


def _name(family: str) -> str:
    return f"{family}-sst2-n30-0shot-block"


@pytest.fixture(scope="module")
def scheduler():
    """A local Dask cluster in this process (one worker, one thread): its address."""
    distributed = pytest.importorskip(
        "dask.distributed", reason="infodiv grid needs dask[distributed] (the grid extra)")
    import logging

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Two tiny random-weight models, 30 SST-2-like rows of their words, and the path of a
    model that does not exist."""
    from _tiny_models import tiny_model
    from _tiny_tasks import RECORD_WORDS

    root = tmp_path_factory.mktemp("grid")
    rng = np.random.default_rng(0)
    sst2 = root / "data" / "glue" / "sst2"
    sst2.mkdir(parents=True)
    (sst2 / "dev.tsv").write_text("sentence\tlabel\n" + "".join(
        " ".join(rng.choice(RECORD_WORDS, 6)) + f"\t{i % 2}\n" for i in range(30)))
    models = {}
    for family in FAMILIES:
        models[family] = str(root / "models" / family)
        tiny_model(family, root / "models" / family)
    models["missing"] = str(root / "models" / "missing")
    return root, models


def _grid_argv(tiny, out, scheduler, *extra):
    root, models = tiny
    return ["grid", "--models", *models.values(), "--tasks", "sst2", "--data-dir",
            str(root / "data"), "--out", str(out), "--scheduler", scheduler, *SIZES, *extra]


@pytest.fixture(scope="module")
def grid_run(tiny, scheduler):
    out = tiny[0] / "runs"
    code, stdout, stderr = _call(_grid_argv(tiny, out, scheduler))
    return out, code, stdout, stderr


@pytest.fixture(scope="module")
def sequential(tiny):
    """The same two pairs through ``infodiv run``."""
    root, models = tiny
    seq = root / "sequential"
    for family in FAMILIES:
        code, _, err = _call(["run", "--model", models[family], "--task", "sst2", "--data-dir",
                              str(root / "data"), "--out", str(seq), *SIZES])
        assert code == 0, err
    return seq


def _assert_same_numbers(out, seq, family):
    name = _name(family)
    for part in ("decompositions/decompositions.json", "curves/report.json"):
        assert _numbers(out / name / part) == _numbers(seq / name / part), (family, part)
    keys = [json.loads((where / name / "run.json").read_text())["stages"] for where in (out, seq)]
    assert keys[0] == keys[1]   # the same content key for every stage


@pytest.mark.slow
def test_the_runs_hold_the_numbers_of_infodiv_run_and_a_failing_pair_fails_alone(
        grid_run, sequential):
    out, code, stdout, _ = grid_run
    assert code == 1                                   # one run failed
    failed = [ln for ln in stdout.splitlines() if ln.startswith("infodiv grid: failed:")]
    assert len(failed) == 1 and "missing" in failed[0] and "does not exist" in failed[0], stdout
    assert "2 of 3 runs finished" in stdout
    runs = _runs(out)
    for family in FAMILIES:
        _assert_same_numbers(out, sequential, family)
        verdicts = _numbers(out / _name(family) / "curves" / "report.json")["objectives"][
            "accuracy"]["verdicts"]
        assert sum(isinstance(v["estimate"], (int, float)) for v in verdicts.values()) >= 4
        assert (out / _name(family) / "report.html").stat().st_size > 1000
        stages = runs[_name(family)]["stages"]
        assert [stages[s]["status"] for s in stages] == ["done"] * 4, stages
        assert stages["curves"]["cpu_s"] > 0 and stages["decompose"]["cpu_s"] > 0
        assert runs[_name(family)]["clock"] == "thread"   # the worker shares this process
    (missing,) = [r for r in runs.values() if r["model"].endswith("missing")]
    assert missing["error"].startswith("extract: plan:")
    assert missing["stages"]["extract"]["status"] == "failed"
    assert (out / "report.html").is_file()             # the combined page of the two


@pytest.mark.slow
def test_a_rerun_skips_the_finished_runs_and_says_so(grid_run, tiny, scheduler):
    out = grid_run[0]
    before = {f: (out / _name(f) / "curves" / "report.json").stat().st_mtime_ns
              for f in FAMILIES}
    code, stdout, _ = _call([a for a in _grid_argv(tiny, out, scheduler) if a != "--quiet"])
    assert code == 1                                   # the missing model fails again
    for family in FAMILIES:
        assert f"{_name(family)}: every stage finished and verified (extract, decompose, " \
               "curves, report); skipped" in stdout
        assert (out / _name(family) / "curves" / "report.json").stat().st_mtime_ns \
            == before[family]
        stages = _runs(out)[_name(family)]["stages"]
        assert {s["status"] for s in stages.values()} == {"skipped"}, stages
    assert "analyses on" not in stdout                 # no analysis sent
    # infodiv run reads a grid's run folder as its own: nothing to recompute
    root, models = tiny
    code, stdout, err = _call(["run", "--model", models["llama"], "--task", "sst2",
                               "--data-dir", str(root / "data"), "--out", str(out), *SIZES])
    assert code == 0, err
    assert "extract: unchanged" in stdout and "decompose: unchanged, skipped" in stdout
    assert "curves: unchanged, skipped" in stdout


@pytest.mark.slow
def test_an_edited_number_is_recomputed(grid_run, tiny, scheduler, sequential, tmp_path):
    out = tmp_path / "runs"
    shutil.copytree(grid_run[0], out)
    edited = out / _name("llama") / "decompositions" / "decompositions.json"
    doc = json.loads(edited.read_text())
    doc["run"]["accuracy"] = 0.99
    edited.write_text(json.dumps(doc))
    code, _, _ = _call(_grid_argv(tiny, out, scheduler))
    assert code == 1
    runs = _runs(out)
    assert {s: v["status"] for s, v in runs[_name("llama")]["stages"].items()} == {
        "extract": "skipped", "decompose": "done", "curves": "skipped", "report": "done"}
    assert {v["status"] for v in runs[_name("gpt2")]["stages"].values()} == {"skipped"}
    _assert_same_numbers(out, sequential, "llama")


@pytest.mark.slow
def test_an_interrupted_grid_continues_and_a_failing_analysis_fails_alone(
        grid_run, tiny, scheduler, tmp_path, monkeypatch):
    """Other curve settings for both runs: the grid is interrupted while it sends the second
    analysis; the rerun redoes no finished stage, and the second run's curves, made to fail,
    fail alone."""
    from infodiv.study import grid, pipeline

    out = tmp_path / "runs"
    shutil.copytree(grid_run[0], out)
    argv = [*_grid_argv(tiny, out, scheduler), "--n-curve-orders", "12"]
    submit = grid._Analyses.submit

    def interrupt_second(self, outcome, root, settings):
        if outcome.run == _name("gpt2"):
            raise KeyboardInterrupt
        return submit(self, outcome, root, settings)

    monkeypatch.setattr(grid._Analyses, "submit", interrupt_second)
    assert _call(argv)[0] == 130
    monkeypatch.setattr(grid._Analyses, "submit", submit)
    stage = pipeline._analysis_stage

    def failing_curves(name, folder, *args):
        if name == "curves" and folder.path.name == _name("gpt2"):
            raise ValueError("a planted failure")
        return stage(name, folder, *args)

    monkeypatch.setattr(pipeline, "_analysis_stage", failing_curves)
    code, stdout, _ = _call(argv)
    assert code == 1
    runs = _runs(out)
    llama, gpt2 = runs[_name("llama")]["stages"], runs[_name("gpt2")]["stages"]
    assert llama["extract"]["status"] == llama["decompose"]["status"] == "skipped"
    assert llama["curves"]["status"] in ("done", "skipped")   # done before the interrupt or now
    assert runs[_name("llama")]["error"] is None
    assert json.loads((out / _name("llama") / "run.json").read_text())["stages"].keys() == {
        "extract", "decompose", "curves"}
    assert {s: v["status"] for s, v in gpt2.items()} == {
        "extract": "skipped", "decompose": "skipped", "curves": "failed", "report": "not run"}
    assert runs[_name("gpt2")]["error"] == (f"curves: stage curves failed on {_name('gpt2')}: "
                                            "a planted failure")
    assert f"infodiv grid: failed: {_name('gpt2')}: curves: stage curves failed" in stdout
    assert "curves" not in json.loads((out / _name("gpt2") / "run.json").read_text())["stages"]


GRID_FILES = {
    "not json": ("[{", "not JSON"),
    "no task": ('[{"model": "m"}]', "entry 1 is not"),
    "unknown task": ('[{"model": "m", "task": "sst3"}]', "unknown task 'sst3'"),
    "twice": ('[{"model": "m", "task": "sst2"}, {"model": "m", "task": "sst2"}]',
              "appears twice"),
    "empty": ("[]", "non-empty JSON list"),
    "object": ('{"model": "m", "task": "sst2"}', "non-empty JSON list"),
}


@pytest.mark.parametrize("case", sorted(GRID_FILES))
def test_bad_grid_file_is_one_line(case, tmp_path, no_model_load):
    text, needle = GRID_FILES[case]
    (tmp_path / "grid.json").write_text(text)
    code, _, err = _call(["grid", "--grid", str(tmp_path / "grid.json"), "--out",
                          str(tmp_path / "runs")])
    assert code == 2 and err.count("\n") == 1 and err.startswith("infodiv grid: error:"), err
    assert needle in err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("argv, needle", [
    (["--models", "m"], "give --tasks"),
    (["--tasks", "sst2"], "give --models"),
    (["--models", "m", "m", "--tasks", "sst2"], "--models names m twice"),
    (["--models", "m", "--tasks", "sst2", "--task-file", "x.csv"], "not both"),
    (["--grid", "g.json", "--models", "m"], "not both"),
    (["--models", "m", "--tasks", "sst2", "--workers", "0"], "--workers"),
    (["--models", "m", "--tasks", "sst2", "--device", "tpu"], "tpu"),
])
def test_bad_pairs_are_one_line(argv, needle, tmp_path, no_model_load):
    code, _, err = _call(["grid", *argv, "--out", str(tmp_path / "runs")])
    assert code == 2 and err.count("\n") == 1 and needle in err, err
    assert not (tmp_path / "runs").exists()


def test_missing_dask_is_one_line(tmp_path, monkeypatch, no_model_load):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)   # import fails
    code, _, err = _call(["grid", "--models", "m", "--tasks", "sst2", "--out",
                          str(tmp_path / "runs")])
    assert code == 2 and err.count("\n") == 1
    assert "needs Dask: pip install 'dask[distributed]" in err


def test_unreachable_scheduler_is_one_line(tmp_path, monkeypatch, no_model_load):
    pytest.importorskip("dask.distributed", reason="infodiv grid needs dask[distributed]")
    from infodiv.study import grid_cluster

    monkeypatch.setattr(grid_cluster.Cluster, "timeout", "1s")
    code, _, err = _call(["grid", "--models", "m", "--tasks", "sst2", "--out",
                          str(tmp_path / "runs"), "--scheduler", "tcp://127.0.0.1:9"])
    assert code == 2 and err.count("\n") == 1
    assert "--scheduler tcp://127.0.0.1:9: cannot connect" in err


def test_importing_infodiv_needs_no_dask():
    import subprocess

    code = ("import sys, infodiv, infodiv.cli, infodiv.study.grid, infodiv.commands.grid; "
            "assert not any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def _grid_section() -> str:
    from _paths import ROOT

    text = (ROOT / "docs" / "performance.md").read_text()
    return text.split("## Running the paper's grid on a cluster")[1].split("\n## ")[0]


def test_performance_page_quotes_the_grid_benchmark():
    """The grid's cost on ``docs/performance.md``, recomputed from
    ``benchmarks/results/grid.json`` (``benchmarks/bench_grid.py``)."""
    from _paths import ROOT

    results = ROOT / "benchmarks" / "results" / "grid.json"
    if not results.is_file():
        pytest.skip("benchmarks/results/grid.json not written: python benchmarks/bench_grid.py")
    page = " ".join(_grid_section().split())
    doc = json.loads(results.read_text())
    a, p, st = doc["analysis"], doc["projection"], doc["analysis"]["stages"]
    assert (f"decompositions **{st['decompose']['cpu_s']:.0f} CPU s**, curves and verdicts "
            f"**{st['curves']['cpu_s']:.0f} CPU s**, the page **{st['report']['cpu_s']:.1f} "
            f"CPU s**: **{a['cpu_s']:.0f} CPU s per run**") in page
    assert f"**{p['analysis_cpu_s'] / 3600:.0f} CPU hours** for the grid" in page
    lo, hi = p["extract_gpu_s"]
    assert f"**{lo / 3600:.1f} to {hi / 3600:.0f} GPU hours**" in page
    assert (f"(load average {doc['load_average_start'][0]:.1f} at its start, "
            f"{doc['load_average_end'][0]:.1f} at its end;") in page
    for n, digits in (("1", 0), ("8", 0), ("64", 1)):
        w = p["cpu_workers"][n]["wall_s"]
        assert (f"| {n} CPU workers | {w[0] / 3600:.{digits}f} to {w[1] / 3600:.{digits}f} |"
                .replace("1 CPU workers", "1 CPU worker")) in page


def test_performance_page_grid_commands_parse():
    """Every ``infodiv grid`` line of the page's grid section takes real options."""
    import re
    import shlex

    from infodiv.cli import build_parser

    words = [shlex.split(line, comments=True)
             for block in re.findall(r"```bash\n(.*?)```", _grid_section(), re.S)
             for line in block.splitlines()]
    grids = [w for w in words if w[:2] == ["infodiv", "grid"]]
    assert len(grids) >= 2
    parser = build_parser()
    for argv in grids:
        args = parser.parse_args(argv[1:])
        assert args.command == "grid" and args.out is not None


def test_grid_takes_the_study_options_of_run():
    """Both commands define the study's options in one place: the grid's options are run's
    less the pair and prompt-choice ones, its --workers the Dask workers (not extraction)."""
    from infodiv.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices

    def dests(name):
        return {a.dest for a in sub[name]._actions if a.option_strings} - {"help"}

    run_only = {"model", "task", "workers", "choose_prompt", "choice_n", "choice_start",
                "choice_criterion"}
    grid_only = {"models", "tasks", "grid", "scheduler", "dask_workers"}
    assert dests("grid") - grid_only == dests("run") - run_only
    assert run_only <= dests("run") and grid_only <= dests("grid")
    args = sub["grid"].parse_args(["--models", "m", "--tasks", "sst2", "--workers", "3"])
    assert args.dask_workers == 3 and not hasattr(args, "workers")
