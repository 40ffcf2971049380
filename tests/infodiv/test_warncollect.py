"""Repeated warnings collapse into one line per kind (``infodiv.collect_warnings``): in a block,
in a command (``infodiv.cli.main``) and in each stage of a study; the filters in force are kept;
the calibration warning is the toolkit's own class with a stable prefix."""

import json
import re
import warnings

import numpy as np
import pytest
from _synthetic_runs import synthetic, synthetic_run

import infodiv
from infodiv.warncollect import (
    CalibrationWarning,
    InfodivWarning,
    collect_warnings,
    message_template,
)

CALIBRATION = ("calibration fit did not converge (mi_readout): {} of {} member sets "
               "(scaled gradient norm up to {})")


def noisy(n_first=500, n_second=3):
    """``n_first`` calibration warnings (their numbers vary) and ``n_second`` of another kind."""
    for i in range(n_first):
        norm = "inf" if i == 123 else f"{0.001 * (i + 1):.3g}"
        warnings.warn(CALIBRATION.format(1 + i % 4, 37 + i % 9, norm), CalibrationWarning,
                      stacklevel=2)
    for i in range(n_second):
        warnings.warn(f"too few samples for {10 + i} bins", UserWarning, stacklevel=2)


def test_500_and_3_warnings_are_two_lines_with_their_counts_and_ranges():
    lines = []
    with collect_warnings("curves", emit=lines.append) as got:
        noisy()
    assert got.count == 503
    assert lines == [
        "warning (curves, 500×): CalibrationWarning: calibration fit did not converge "
        "(mi_readout): 1–4 of 37–45 member sets (scaled gradient norm up to 0.001–inf)",
        "warning (curves, 3×): UserWarning: too few samples for 10–12 bins"]


def test_a_single_warning_is_its_own_message_and_nothing_leaks_out():
    lines = []
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        with infodiv.collect_warnings(emit=lines.append):   # the public helper
            warnings.warn("n=120 with 0.5 bits", UserWarning, stacklevel=2)
    assert lines == ["warning: UserWarning: n=120 with 0.5 bits"] and outside == []


def test_the_lines_go_to_stderr_also_when_the_block_raises(capsys):
    with pytest.raises(KeyError), collect_warnings("extract"):
        noisy(7, 0)
        raise KeyError("x")
    err = capsys.readouterr().err.splitlines()
    assert err == [line for line in err if line.startswith("warning (extract, 7×)")] and err


def test_filters_in_force_are_kept():
    lines = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", CalibrationWarning)
        with collect_warnings(emit=lines.append):
            noisy(0, 5)                                  # ignored: not recorded
        with pytest.raises(CalibrationWarning), collect_warnings(emit=lines.append):
            noisy(1, 0)                                  # an error stays an error
        before = list(warnings.filters)
        with collect_warnings(emit=lines.append):
            pass
        assert warnings.filters == before                # restored on exit
    assert lines == []


def test_nested_blocks_report_their_own_warnings():
    outer, inner = [], []
    with collect_warnings("run", emit=outer.append):
        with collect_warnings("curves", emit=inner.append):
            noisy(4, 0)
        noisy(0, 2)
    assert [line.split(":")[0] for line in inner] == ["warning (curves, 4×)"]
    assert [line.split(":")[0] for line in outer] == ["warning (run, 2×)"]


@pytest.mark.parametrize("message, template, numbers", [
    ("1 of 45 sets, norm 1.5e-03, inf", "\0 of \0 sets, norm \0, \0",
     ["1", "45", "1.5e-03", "inf"]),
    ("information in L3.attn#0 is -0.2 bits", "information in L\0.attn#\0 is \0 bits",
     ["3", "0", "-0.2"]),
    ("the 2-fold split", "the \0-fold split", ["2"]),
])
def test_message_template(message, template, numbers):
    assert message_template(message) == (template, numbers)


def test_the_readout_raises_the_calibration_warning_with_its_prefix(monkeypatch):
    from infodiv.setfunctions import make_set_function, readout

    orig = readout.fit_calibration
    monkeypatch.setattr(readout, "fit_calibration",
                        lambda *args, **kw: orig(*args, **{**kw, "max_iter": 0}))
    f = make_set_function(synthetic(n=200), "mi_readout")
    with pytest.warns(CalibrationWarning) as got:
        f.value([0, 1, 2])
    assert issubclass(CalibrationWarning, InfodivWarning)
    assert issubclass(CalibrationWarning, RuntimeWarning)       # as before, for old filters
    assert all(str(w.message).startswith("calibration fit did not converge (mi_readout): ")
               for w in got)


def test_a_command_prints_one_line_per_kind(monkeypatch, capsys):
    from infodiv import cli
    from infodiv.commands import validate

    monkeypatch.setattr(validate, "run", lambda args: noisy() or 0)
    assert cli.main(["validate"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in err] == ["warning (validate, 500×)",
                                                    "warning (validate, 3×)"]


def _fake_stages(monkeypatch):
    """``infodiv run``'s stages replaced by ones that warn (no model, no computation)."""
    from infodiv.reports import html, summary
    from infodiv.study import curves, pipeline

    def extract_stage(folder, *args, **kw):
        noisy(2, 0)
        run = synthetic_run(n=20)
        run.save(folder.contributions, overwrite=True)
        return run

    def decompose_stage(contrib, out, settings, **kw):
        noisy(500, 3)
        return {"run": {"N": 20, "M": 3, "C": 2, "accuracy": 0.5}}

    def curves_stage(contrib, out, settings, **kw):
        noisy(40, 0)
        return {"objectives": {}}

    def write_report(folders, page):
        warnings.warn("a figure without data", UserWarning, stacklevel=2)
        page.write_text("<html></html>")
        return page

    monkeypatch.setattr(pipeline, "extract_stage", extract_stage)
    monkeypatch.setattr(pipeline, "decompose_stage", decompose_stage)
    monkeypatch.setattr(curves, "curves_stage", curves_stage)
    monkeypatch.setattr(html, "write_report", write_report)
    monkeypatch.setattr(summary, "print_summary", lambda *a, **k: None)


@pytest.mark.parametrize("quiet", [True, False])
def test_each_stage_of_a_run_prints_one_line_per_kind(monkeypatch, capsys, tmp_path, quiet):
    from infodiv.cli import main
    from infodiv.data import bundled_data_dir

    _fake_stages(monkeypatch)
    model = tmp_path / "tiny"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "llama"}))
    argv = ["run", "--model", str(model), "--task", "sst2", "--n", "20", "--data-dir",
            str(bundled_data_dir()), "--out", str(tmp_path / "runs")]
    assert main(argv + (["--quiet"] if quiet else [])) == 0
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert [line.split(":")[0] for line in err] == [
        "warning (extract, 2×)", "warning (decompose, 500×)", "warning (decompose, 3×)",
        "warning (curves, 40×)", "warning (report)"]
    assert not re.search(r"\.py:\d+: \w*Warning", captured.out + captured.err)   # raw form
    progress = [line for line in captured.out.splitlines()
                if re.match(r"(decompose|curves): (computing|done in)", line)]
    assert len(progress) == (0 if quiet else 4)


def test_quiet_numbers_are_unchanged_by_collecting():
    """Collecting changes what is printed, never what is computed."""
    f_args = (synthetic(n=120, m=5, c=2, seed=3), "mi_readout")
    from infodiv.setfunctions import make_set_function

    plain = make_set_function(*f_args).value([0, 1, 2])
    with collect_warnings(emit=lambda line: None):
        collected = make_set_function(*f_args).value([0, 1, 2])
    assert np.array_equal(plain, collected)


def _warn_task(task, rng):
    for i in range(task):
        warnings.warn(f"replicate warning {i} of {task}", RuntimeWarning, stacklevel=2)
    return task


@pytest.mark.slow
def test_warnings_of_worker_processes_are_collected_in_the_caller():
    """joblib's loky workers print their warnings in their own process unless parallel_map
    carries them back (``--n-jobs -1``, the demo's default)."""
    from estimators.resampling import parallel_map

    lines = []
    with collect_warnings("curves", emit=lines.append):
        assert parallel_map(_warn_task, [3, 4, 5], n_jobs=2) == [3, 4, 5]
    assert lines == ["warning (curves, 12×): RuntimeWarning: replicate warning 0–4 of 3–5"]


@pytest.mark.slow
def test_a_heads_run_prints_a_few_warning_lines(stories_dir, shared_data_dir, tmp_path, capfd):
    """The real thing: stories260K by heads (M = 46) on 120 SST-2 sentences, both default
    objectives; its calibrated readout fails to converge on a few member sets."""
    from infodiv.cli import main

    argv = ["run", "--model", str(stories_dir), "--data-dir", str(shared_data_dir), "--task",
            "sst2", "--n", "120", "--granularity", "head", "--out", str(tmp_path),
            "--n-curve-orders", "10", "--n-bootstrap", "20", "--power-replicates", "2",
            "--quiet"]
    assert main(argv) == 0
    err = capfd.readouterr().err.splitlines()
    assert err and all(line.startswith("warning (") for line in err), err
    kinds = [line.split(":")[:2] for line in err]
    assert len(err) <= 4 and len(kinds) == len({tuple(k) for k in kinds}), err
