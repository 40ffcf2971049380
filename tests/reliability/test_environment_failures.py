"""Failures of the machine, not of the input: a full disk, a read-only file system, a denied
permission end in one line naming the path and the reason (exit 1, no traceback); Ctrl-C says
how many examples are saved and where (exit 130); an extraction saves every SHARD_SIZE
examples, whichever command runs it, as the README says."""

from __future__ import annotations

import errno
import inspect
import json
import os
import re
from pathlib import Path

import pytest
from _cli_checks import one_line_error
from _paths import ROOT
from _synthetic_runs import saved_tiny_run
from _tiny_tasks import word_records

from extraction.contributions import Contributions
from extraction.planning import SHARD_SIZE
from infodiv.cli import main


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_disk_is_one_line_naming_the_file(capsys, tmp_path):
    out = tmp_path / "rows.json"
    out.symlink_to("/dev/full")          # every write there fails with ENOSPC
    one_line_error(capsys, ["validate", "--cases", "gaussian_entropy", "--methods", "gaussian",
                            "--seeds", "1", "--n", "200", "--out", str(out), "--overwrite"],
                   "infodiv validate: error:", "rows.json", "No space left on device (ENOSPC)",
                   code=1)


@pytest.mark.parametrize("code, name", [(errno.EACCES, "EACCES"), (errno.EROFS, "EROFS"),
                                        (errno.ENOSPC, "ENOSPC")])
def test_an_os_error_of_a_stage_is_one_line_exit_1(capsys, tmp_path, monkeypatch, code, name):
    import infodiv.study.pipeline as pipeline

    run = saved_tiny_run(tmp_path / "run")
    target = tmp_path / "run" / "decompositions" / "decompositions.json"

    def stage(*a, **k):
        raise (PermissionError if code == errno.EACCES else OSError)(
            code, os.strerror(code), str(target))

    monkeypatch.setattr(pipeline, "decompose_stage", stage)
    one_line_error(capsys, ["decompose", str(run), "--no-every-variant"],
                   str(target), f"{os.strerror(code)} ({name})", code=1)


# ------------------------------------------------------------------ Ctrl-C
@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    from _tiny_models import tiny_model

    folder = tmp_path_factory.mktemp("tiny") / "llama"
    tiny_model("llama", folder)
    return folder


@pytest.mark.parametrize("command", ["extract", "run"])
def test_ctrl_c_says_how_many_examples_are_saved_and_a_rerun_resumes(
        capsys, tmp_path, monkeypatch, tiny_llama, command):
    import extraction.shardloop as shardloop

    n = 2 * SHARD_SIZE + 8
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in word_records(n)))
    out = tmp_path / "out"
    argv = [command, "--model", str(tiny_llama), "--task-file", str(data), "--template",
            "{text} Answer: {answer}", "--options", "negative,positive", "--label-field",
            "label", "--n", str(n), "--out", str(out), "--device", "cpu", "--dtype", "float32",
            "--batch-size", "8", "--quiet"]
    if command == "run":
        argv += ["--info-method", "none", "--no-inference", "--no-every-variant",
                 "--decompose-inference", "0"]
    real, calls = shardloop._compute_shard, []

    def interrupted_third(*a, **k):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(shardloop, "_compute_shard", interrupted_third)
    err = one_line_error(capsys, argv, f"infodiv {command}: interrupted: {2 * SHARD_SIZE} of "
                                       f"{n} examples saved in ", "to resume", code=130)
    if command == "extract":
        assert "rerun the same command to resume" in err
    else:
        assert re.search(r"rerun `infodiv run .*--model .*` to resume", err), err
    # the rerun computes the one shard left
    calls.clear()
    monkeypatch.setattr(shardloop, "_compute_shard",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    if command == "extract":
        assert main(argv) == 0
        assert len(calls) == 1 and Contributions.load(out).n_examples == n
    capsys.readouterr()


def test_every_extraction_saves_every_shard_size_examples_as_the_readme_says():
    from extraction.runner import extract
    from infodiv.study import pipeline, prompt_choice

    assert inspect.signature(extract).parameters["shard_size"].default == SHARD_SIZE
    assert pipeline.SHARD_SIZE is SHARD_SIZE
    takers = [fn for _, fn in inspect.getmembers(prompt_choice, inspect.isfunction)
              if "shard_size" in inspect.signature(fn).parameters]
    assert takers and all(inspect.signature(fn).parameters["shard_size"].default == SHARD_SIZE
                          for fn in takers if inspect.signature(fn).parameters[
                              "shard_size"].default is not inspect.Parameter.empty)
    readme = Path(ROOT / "README.md").read_text()
    assert f"finished examples every {SHARD_SIZE} (`extraction.planning.SHARD_SIZE`" in readme
    assert "every 256" not in readme
