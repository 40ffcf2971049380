"""``infodiv zoo train|finetune`` keep what they did not write, and reuse only what their
manifest confirms; ``infodiv zoo report --from-contributions`` reads only contributions its
manifest confirms (DESIGN.md 2.10).

- A file of the user's where training writes (a model's ``state.pt``, the root's settings) is
  kept byte for byte and refused in one line, exit 2, before any work (nothing written).
- ``--overwrite`` trains again from step 0 replacing only the files the manifests list, names
  them, and keeps the user's files; without it a root of other settings is refused with it.
  A root trained before manifests is refused, and reused with ``--adopt``.
- A checkpoint edited since training wrote it is not resumed from (trained again from step 0,
  to the same weights, and said); an edited finished model is trained again from its
  checkpoint (said); an untouched one is skipped.
- ``finetune``: the same, for its run folder (``<root>/finetune/<name>``).
- ``report --from-contributions``: an edited or truncated contribution is refused in one line
  naming the file and the command that re-extracts it, exit 2, nothing written; folders
  extracted before manifests are read only with ``--adopt`` (git-unchanged files).

Tiny pointer-chasing models trained 2 steps; a tiny saved model fine-tuned 2 steps.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from _cli_checks import one_line_error
from _paths import ROOT

from infodiv.cli import main
from infodiv.outputs import MANIFEST, read_manifest
from reliability.test_experiment_outputs import NAMES, snapshot, tiny_zoo, zoo

torch = pytest.importorskip("torch")

MODEL = "llama-d16-L1-s0"
TRAIN = "infodiv zoo train"


def train(root: Path, *more: str, steps: int = 2) -> list[str]:
    """``infodiv zoo train`` of one depth-1 pointer-chasing model, ``steps`` steps."""
    return ["zoo", "train", "--task", "hops", "--hops", "2", "--symbols", "16", "--n-heldout",
            "20", "--root", str(root), "--depths", "1", "--shared-depths", "--seeds", "0",
            "--width", "16", "--heads", "2", "--mlp", "32", "--steps", str(steps),
            "--warmup", "1", "--batch-size", "4", "--checkpoint-every", "1", "--quiet", *more]


def run(capsys, argv) -> str:
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("zoo") / "root"
    assert main(train(root)) == 0
    return root


@pytest.fixture
def root(trained, tmp_path):
    return Path(shutil.copytree(trained, tmp_path / "root"))


def record(root: Path) -> dict:
    return json.loads((root / "models" / MODEL / "model" / "zoo.json").read_text())


# ------------------------------------------------------------------ train
def test_train_refuses_a_users_file_before_any_work(capsys, tmp_path):
    mine = tmp_path / "root" / "models" / MODEL
    mine.mkdir(parents=True)
    (mine / "state.pt").write_bytes(b"my checkpoint")
    before = snapshot(tmp_path)
    one_line_error(capsys, train(tmp_path / "root"), str(mine), "1 file(s)", "state.pt",
                   f"{TRAIN} did not write", "nothing was replaced")
    one_line_error(capsys, train(tmp_path / "root", "--overwrite"), "state.pt",
                   "nothing was replaced")
    assert snapshot(tmp_path) == before            # no settings, no tokenizer: no work


def test_train_refuses_a_users_file_in_the_root(capsys, tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "depth.json").write_text("my settings")
    one_line_error(capsys, train(tmp_path / "root"), "1 file(s)", "depth.json",
                   f"{TRAIN} did not write", "--adopt")
    assert snapshot(tmp_path) == {"root/depth.json": b"my settings"}


def test_a_root_trained_before_manifests_is_reused_only_adopted(capsys, root):
    for folder in (root, root / "models" / MODEL):
        (folder / MANIFEST).unlink()
    before = snapshot(root)
    one_line_error(capsys, train(root), "5 file(s)", f"{TRAIN} did not write", "--adopt")
    assert snapshot(root) == before
    said = run(capsys, train(root, "--adopt"))
    assert "adopted 5 file(s)" in said and "already finished, skipped" in said
    assert "state.pt" in read_manifest(root / "models" / MODEL)["files"]


def test_overwrite_replaces_only_its_own_files_and_says_which(capsys, root):
    (root / "NOTES.md").write_text("mine")
    (root / "models" / MODEL / "notes.txt").write_text("mine too")
    assert "already finished, skipped" in run(capsys, train(root))
    one_line_error(capsys, train(root, steps=3), "different settings (train)", "--overwrite")
    said = run(capsys, train(root, "--overwrite", steps=3))
    assert f"{root}: replaced 3 file(s) {TRAIN} wrote before (depth.json, tokenizer/" in said
    assert f"{root / 'models' / MODEL}: --overwrite: training it again from step 0; " \
           f"replacing 7 file(s) {TRAIN} wrote before (model/config.json" in said
    assert record(root)["step"] == 3
    assert (root / "NOTES.md").read_text() == "mine"
    assert (root / "models" / MODEL / "notes.txt").read_text() == "mine too"
    listed = read_manifest(root / "models" / MODEL)["files"]
    assert {"state.pt", "model/zoo.json", "model/model.safetensors"} <= set(listed)
    assert "notes.txt" not in listed and "NOTES.md" not in read_manifest(root)["files"]


def test_an_edited_checkpoint_is_not_resumed_and_said(capsys, trained, root, monkeypatch):
    import infodiv.experiments.train as train_module

    shutil.rmtree(root / "models")
    real = train_module.train_model
    monkeypatch.setattr(train_module, "train_model",
                        lambda *a, **k: real(*a, **{**k, "stop_after": 1}))
    assert "0/1 model(s) finished" in run(capsys, train(root))    # interrupted after step 1
    monkeypatch.undo()
    state = root / "models" / MODEL / "state.pt"
    doc = torch.load(state, weights_only=False)
    doc["model"] = {k: v * 2 for k, v in doc["model"].items()}     # loadable, but not ours
    torch.save(doc, state)
    said = run(capsys, train(root))
    assert f"{state.parent}: 1 file(s) missing or changed since {TRAIN} wrote them (e.g. " \
           "state.pt); not reused: training it again from step 0" in said
    assert "resuming" not in said
    assert record(root)["losses"] == record(trained)["losses"]     # as if never interrupted


def test_an_edited_finished_model_is_trained_again_and_said(capsys, trained, root):
    weights = root / "models" / MODEL / "model" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-64])                # truncated
    said = run(capsys, train(root))
    assert "already finished" not in said
    assert "(e.g. model/model.safetensors); not reused: training it again from its " \
           "checkpoint" in said
    fresh = trained / "models" / MODEL / "model" / "model.safetensors"
    assert weights.read_bytes() == fresh.read_bytes()
    assert "already finished, skipped" in run(capsys, train(root))


# ------------------------------------------------------------------ finetune
@pytest.fixture(scope="module")
def base(shared_data_dir, tmp_path_factory):
    """A tiny saved model on the zoo's task, standing in for SmolLM2."""
    from infodiv.experiments.configs import ModelSpec, build_model, save_model
    from infodiv.experiments.data import subset, zoo_tasks
    from infodiv.experiments.tokenizer import train_tokenizer

    train_rows, _ = zoo_tasks(shared_data_dir)
    tok = train_tokenizer(subset(train_rows, range(0, 5600, 28)), vocab_size=300)
    path = tmp_path_factory.mktemp("base") / "tiny"
    save_model(build_model(ModelSpec(2, width=16, heads=2, mlp=32, max_len=48), tok), tok, path)
    return path


def finetune(base: Path, root: Path, shared_data_dir, *more: str) -> list[str]:
    return ["zoo", "finetune", "--model", str(base), "--root", str(root), "--train-top", "1",
            "--max-len", "48", "--steps", "2", "--warmup", "1", "--batch-size", "4",
            "--checkpoint-every", "1", "--data-dir", str(shared_data_dir), "--no-heldout-eval",
            "--quiet", *more]


def test_finetune_refuses_a_users_file_then_overwrites_only_its_own(capsys, base, tmp_path,
                                                                    shared_data_dir,
                                                                    monkeypatch):
    from infodiv.experiments import data
    from infodiv.experiments import finetune as module

    real = data.zoo_tasks
    monkeypatch.setattr(data, "zoo_tasks", lambda *a, **k: tuple(       # 200 rows: seconds
        data.subset(t, range(0, len(t), 28)) for t in real(*a, **k)))
    writer = "infodiv zoo finetune"
    argv = finetune(base, tmp_path / "root", shared_data_dir)
    folder = tmp_path / "root" / "finetune" / "tiny-ft-top1-s0"
    (folder / "model").mkdir(parents=True)
    (folder / "model" / "zoo.json").write_text("{}")
    before = snapshot(tmp_path / "root")
    with monkeypatch.context() as m:
        m.setattr(module, "finetune", lambda *a, **k: pytest.fail("fine-tuning started"))
        one_line_error(capsys, argv, str(folder), "1 file(s)", "model/zoo.json",
                       f"{writer} did not write", "nothing was replaced")
    assert snapshot(tmp_path / "root") == before
    shutil.rmtree(folder / "model")
    (folder / "notes.txt").write_text("mine")
    assert "2/2 steps" in run(capsys, argv)
    listed = read_manifest(folder)["files"]
    assert {"state.pt", "model/zoo.json", "prefix_cache/cache.json"} <= set(listed)
    chunk = next(n for n in listed if n.startswith("prefix_cache/chunk-"))
    said = run(capsys, [*argv, "--overwrite"])
    assert f"{folder}: --overwrite: training it again from step 0; replacing " \
           f"{len(listed)} file(s) {writer} wrote before" in said
    assert (folder / "notes.txt").read_text() == "mine"
    listed = read_manifest(folder)["files"]
    assert "notes.txt" not in listed
    weights = folder / "model" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-64])
    (folder / chunk).write_bytes(b"edited")
    said = run(capsys, argv)
    assert f"{folder}: 2 file(s) missing or changed since {writer} wrote them" in said
    assert "training it again from its checkpoint" in said
    again = read_manifest(folder)["files"]                          # the same bytes again
    assert [again[n] for n in ("model/model.safetensors", chunk)] == \
           [listed[n] for n in ("model/model.safetensors", chunk)]


# ------------------------------------------------------------------ report --from-contributions
@pytest.mark.parametrize("name", ["arrays.npz", "meta.json"])
def test_report_refuses_an_edited_contribution_before_any_work(capsys, tmp_path, name):
    out = tiny_zoo(tmp_path / "out")
    path = out / "contributions" / NAMES[1] / name
    if name == "meta.json":
        path.write_text(path.read_text().replace('"tiny-', '"edited-', 1))
    else:
        path.write_bytes(path.read_bytes()[:-100])                 # truncated
    before = snapshot(out)
    one_line_error(capsys, zoo(out), str(path.parent), f"e.g. {name}",
                   "changed since infodiv extract wrote them",
                   f"infodiv zoo report --root runs/zoo --out {out} --only {NAMES[1]}")
    assert snapshot(out) == before                                  # the first model neither


def test_report_reads_contributions_without_a_manifest_only_adopted(capsys, tmp_path):
    out = tiny_zoo(tmp_path / "out")
    runs = [out / "contributions" / n for n in NAMES]
    for folder in runs:
        (folder / MANIFEST).unlink()                # extracted before manifests
    before = snapshot(out)
    one_line_error(capsys, zoo(out), "2 contributions folder(s)", f"no {MANIFEST}", "--adopt")
    assert snapshot(out) == before
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], cwd=out, check=True)
    subprocess.run(git + ["add", "."], cwd=out, check=True)
    subprocess.run(git + ["commit", "-qm", "x"], cwd=out, check=True)
    meta = runs[1] / "meta.json"
    meta.write_text(meta.read_text() + " ")
    one_line_error(capsys, zoo(out, "--adopt"), "meta.json", "differs from its version in git")
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=out, check=True)
    assert "adopted 2 file(s) as infodiv extract's" in run(capsys, zoo(out, "--adopt"))
    assert all(set(read_manifest(f)["files"]) == {"arrays.npz", "meta.json"} for f in runs)


def test_the_committed_zoo_contributions_pass_the_check():
    from infodiv.experiments.sources import from_contributions

    out = ROOT / "docs" / "results" / "zoo"
    if not (out / "summary.json").is_file():
        pytest.skip("no committed zoo results")
    rows = json.loads((out / "summary.json").read_text())
    assert [s.name for s in from_contributions(out)] == [r["model"] for r in rows]
