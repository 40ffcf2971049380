"""Bad input, output folders: ``--out`` never loses anything and one writer at a time.

Every case: one line on stderr, exit 2, no traceback, and every file that was there before is
there after, byte for byte.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from _cli_checks import one_line_error
from _paths import ROOT
from _synthetic_runs import synthetic_run

from extraction.contributions import Contributions
from extraction.outdir import OutputLocked, OutputRefused, output_lock


def snapshot(path: Path) -> dict:
    """Every file under ``path`` (or the file itself) -> its bytes."""
    path = Path(path)
    if path.is_file():
        return {path: path.read_bytes()}
    return {p: p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------ library: Contributions.save
def test_save_refuses_a_folder_with_other_things(tmp_path):
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    (d / "notes.txt").write_text("thesis")
    (d / "sub" / "x.txt").write_text("more")
    before = snapshot(d)
    with pytest.raises(OutputRefused, match="notes.txt"):
        synthetic_run().save(d)
    assert snapshot(d) == before
    with pytest.raises(OutputRefused):
        synthetic_run().save(d, overwrite=True)   # never, even when asked
    assert snapshot(d) == before and not list(tmp_path.glob(".d*"))


def test_save_refuses_a_file(tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("x")
    with pytest.raises(OutputRefused, match="is a file"):
        synthetic_run().save(f, overwrite=True)
    assert f.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_save_refuses_another_run_unless_overwrite(tmp_path):
    d = synthetic_run(task="sst2").save(tmp_path / "run")
    before = snapshot(d)
    for other in (synthetic_run(task="rte"), synthetic_run(n=12),
                  synthetic_run(model="other/model")):
        with pytest.raises(OutputRefused, match="another extraction"):
            other.save(d)
        assert snapshot(d) == before
    same = synthetic_run(seed=3)   # the same run (same settings), other numbers: replaced
    same.save(d)
    np.testing.assert_array_equal(Contributions.load(d).u, same.u)
    synthetic_run(task="rte").save(d, overwrite=True)
    assert Contributions.load(d).meta["task"] == "rte"


def test_edited_meta_json_is_detected(tmp_path):
    d = synthetic_run().save(tmp_path / "run")
    text = (d / "meta.json").read_text()
    doc = json.loads(text)
    for edit in (lambda x: x["options"].reverse(),
                 lambda x: x["members"][1].update(name="renamed"),
                 lambda x: x["meta"].update(n_examples=21)):
        changed = json.loads(json.dumps(doc))
        edit(changed)
        (d / "meta.json").write_text(json.dumps(changed))
        with pytest.raises(ValueError, match="edited or damaged"):
            Contributions.load(d)
    (d / "meta.json").write_text(text)   # the bytes it was written with (its manifest's)
    assert Contributions.load(d).n_examples == 20


def test_a_held_lock_refuses_a_second_writer_in_one_line(tmp_path):
    d = tmp_path / "run"
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from extraction.outdir import output_lock
        with output_lock({str(d)!r}):
            print("held", flush=True)
            time.sleep(60)
    """)
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputLocked, match=f"process {holder.pid}"):
            synthetic_run().save(d)
        assert not d.exists()
    finally:
        holder.kill()
        holder.wait()
    synthetic_run().save(d)   # the killed holder left no stale lock behind
    with output_lock(d), output_lock(d):   # re-entrant in one process
        synthetic_run().save(d)
    assert not (tmp_path / ".run.lock").exists()


WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[1] + "/tests")
    from _synthetic_runs import synthetic_run
    from extraction.outdir import OutputRefused
    try:
        synthetic_run(task=sys.argv[3], n=int(sys.argv[4])).save(sys.argv[2])
    except OutputRefused as exc:
        print(" ".join(str(exc).split()), file=sys.stderr)
        sys.exit(2)
""")


@pytest.mark.slow
def test_two_concurrent_writers_never_corrupt_or_replace(tmp_path):
    """Trials of two processes saving different runs into one folder at the same moment: one
    wins, the other is refused with one line (locked, or another extraction is there); the
    folder always loads, with the winner's run."""
    for trial in range(4):
        d = tmp_path / f"run{trial}"
        procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(ROOT), str(d), task, n],
                                  stderr=subprocess.PIPE, text=True)
                 for task, n in (("sst2", "20"), ("rte", "12"))]
        results = [(p.wait(), p.stderr.read().strip()) for p in procs]
        codes = sorted(rc for rc, _ in results)
        assert codes == [0, 2], results
        winner = ("sst2", 20) if results[0][0] == 0 else ("rte", 12)
        err = results[1][1] if results[0][0] == 0 else results[0][1]
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert "being written by" in err or "another extraction" in err, err
        c = Contributions.load(d)
        assert (c.meta["task"], c.n_examples) == winner


# ------------------------------------------------------------------ command line: extract --out
def test_extract_out_folder_with_notes_is_refused(capsys, no_model_load, tmp_path, extract_argv):
    d = tmp_path / "d"
    d.mkdir()
    (d / "notes.txt").write_text("thesis")
    before = snapshot(d)
    one_line_error(capsys, extract_argv(d), "--out", "notes.txt", "choose another --out")
    one_line_error(capsys, extract_argv(d, "--overwrite"), "notes.txt")
    assert snapshot(d) == before


def test_extract_out_file_is_refused(capsys, no_model_load, tmp_path, extract_argv):
    f = tmp_path / "f.txt"
    f.write_text("x")
    one_line_error(capsys, extract_argv(f), "is a file")
    assert f.read_text() == "x" and not list(tmp_path.glob(".f.txt*"))


def test_extract_out_run_folder_is_refused(capsys, no_model_load, tmp_path, extract_argv):
    folder = tmp_path / "finished"
    synthetic_run().save(folder / "contributions")
    (folder / "run.json").write_text("{}")
    (folder / "curves").mkdir()
    (folder / "curves" / "report.json").write_text("{}")
    before = snapshot(folder)
    one_line_error(capsys, extract_argv(folder, "--overwrite"), "infodiv run folder")
    assert snapshot(folder) == before


def test_extract_out_another_extraction_needs_overwrite(capsys, no_model_load, tmp_path,
                                                        extract_argv):
    d = synthetic_run(task="sst2", n=20).save(tmp_path / "sst2run")
    before = snapshot(d)
    one_line_error(capsys, extract_argv(d), "another extraction", "task 'sst2' -> 'data'",
                   "--overwrite")
    assert snapshot(d) == before


def test_extract_out_locked_by_another_writer(capsys, no_model_load, tmp_path, extract_argv):
    d = tmp_path / "busy"
    code = (f"import sys, time; sys.path.insert(0, {str(ROOT)!r});"
            "from extraction.outdir import output_lock\n"
            f"with output_lock({str(d)!r}):\n print('held', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        one_line_error(capsys, extract_argv(d), "being written by", str(holder.pid))
    finally:
        holder.kill()
        holder.wait()
    assert not d.exists()


def test_run_folder_locked_by_another_run(capsys, no_model_load, tmp_path, monkeypatch):
    """A second ``infodiv run`` into a run folder another process is writing: one line naming
    the holder, before any model loads, and the folder untouched."""
    import infodiv.study.pipeline as run_cmd

    model = tmp_path / "tinymodel"
    model.mkdir()
    (model / "config.json").write_text("{}")
    data = tmp_path / "data" / "glue" / "sst2"
    data.mkdir(parents=True)
    data.joinpath("dev.tsv").write_text("sentence\tlabel\n" + "".join(
        f"film number {i} was fine\t{i % 2}\n" for i in range(8)))
    out = tmp_path / "runs"
    folder = out / "tinymodel-sst2-n8-0shot-block"
    code = (f"import sys, time; sys.path.insert(0, {str(ROOT)!r});"
            "from extraction.outdir import output_lock\n"
            f"with output_lock({str(folder)!r}):\n print('held', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    monkeypatch.setattr(run_cmd._Models, "get", lambda *a: (_ for _ in ()).throw(
        AssertionError("a model was loaded")))
    try:
        assert holder.stdout.readline().strip() == "held"
        one_line_error(capsys, ["run", "--model", str(model), "--data-dir",
                                str(tmp_path / "data"), "--n", "8", "--out", str(out),
                                "--quiet"], "being written by", str(holder.pid))
    finally:
        holder.kill()
        holder.wait()
    assert not folder.exists() or not any(folder.iterdir())


def test_an_extraction_with_its_analyses_is_reusable_but_never_replaced(tmp_path):
    """``infodiv decompose X`` writes X/decompositions/ beside an extraction: the finished run
    may be reused (the pre-checks pass), but saving over it would lose the analyses."""
    from extraction.outdir import check_target, run_identity

    run = synthetic_run()
    d = run.save(tmp_path / "x")
    (d / "decompositions").mkdir()
    (d / "decompositions" / "decompositions.json").write_text("{}")
    before = snapshot(d)
    assert check_target(d, run_identity(run.meta), analyses=True) == "same"
    with pytest.raises(OutputRefused, match="decompositions"):
        check_target(d, run_identity(run.meta))
    with pytest.raises(OutputRefused, match="not an extraction alone"):
        synthetic_run(seed=1).save(d, overwrite=True)
    assert snapshot(d) == before
