"""The prompt setting of a study, and its choice on held-out rows that no analysis reads.

A prompt setting (:class:`~infodiv.study.prompt_setting.PromptSetting`) is how every prompt of a
run is written: inside the tokenizer's chat template or bare, with how many demonstrations,
drawn per prompt or fixed. Its names: ``zero-shot``, ``chat-template``, ``fixed-4-shot``,
``4-shot``, and combinations joined by ``+`` (``chat-template+fixed-4-shot``).

``infodiv run --choose-prompt [SETTING ...]`` (:attr:`PromptChoiceSettings.choose_prompt`;
default candidates :data:`DEFAULT_CANDIDATES`) chooses it per (model, task) before
extraction (:func:`choose_prompt`):

1. the held-out rows (:func:`choice_rows`): ``choice_n`` rows of the same split from
   ``choice_start``, by default the rows right after the last analysed row; a range that
   overlaps an analysed row is refused. Fixed demonstrations are drawn among the rows after
   the held-out ones (on a split without a train split), and the analysed run then uses the
   same draw (``demo_start``), as the AG News pages did (rows 2000–2399 held out,
   demonstrations from row 2400, rows 0–1999 analysed);
2. each candidate is extracted on those rows (block members; only the model's own option
   logits are read), into ``<out>/<model>-<task>-prompt-choice-rows<A>-<B>/select-<SETTING>/``
   (reused while the model, rows, setting and extraction code are unchanged);
3. each candidate's readout is scored: the raw accuracy (argmax of the option logits) and the
   calibrated accuracy (softmax(a·z + c) fitted on one label-stratified half of the rows and
   scored on the other, both ways: the toolkit's ``accuracy_calibrated`` readout,
   :class:`~infodiv.setfunctions.readout.ReadoutSetFunction`), each with its Wilson 95 %
   interval;
4. the candidate of the highest ``choice_criterion`` (``accuracy_calibrated`` by default, or
   ``accuracy``) is chosen, a tie going to the candidate listed first; every other candidate
   gets its difference from the chosen one with a paired 95 % bootstrap interval over the
   rows (the calibration is not refitted inside the bootstrap);
5. ``prompt_choice.json`` in that folder holds the comparison, and ``run.json`` of the run
   folder records it (``prompt_choice``); the run is then extracted and analysed under the
   chosen setting, in a folder named after it (:func:`setting_suffix`).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from extraction.planning import SHARD_SIZE

from .prompt_setting import (
    CRITERIA,
    DEFAULT_CANDIDATES,
    MIN_CHOICE_ROWS,
    PromptSetting,
    analysed_rows,
    choice_rows,
    demo_start_for,
    rows_task,
    setting_config,
    setting_of,
    setting_suffix,
)

__all__ = ["PromptSetting", "CRITERIA", "DEFAULT_CANDIDATES", "MIN_CHOICE_ROWS", "CHOICE_FILE",
           "setting_of", "setting_suffix", "setting_config", "analysed_rows", "choice_rows",
           "demo_start_for", "rows_task", "score_readout", "compare_settings",
           "choose_prompt", "plan_with_choice"]

CHOICE_FILE = "prompt_choice.json"
N_DIFFERENCE_BOOTSTRAP = 2000


# --------------------------------------------------------------------------------- scoring
def score_readout(logits, labels, random_state=0) -> dict:
    """The raw and the calibrated accuracy of the option logits ``[n, C]`` on ``labels``.

    Raw: the argmax of the logits (ties split evenly). Calibrated: softmax(a·z + c) fitted on
    one label-stratified half and scored on the other, both ways (the ``accuracy_calibrated``
    readout of :class:`~infodiv.setfunctions.readout.ReadoutSetFunction`, split drawn from
    ``random_state``). Returns the means, Wilson 95 % intervals, the per-row scores
    (``rows_accuracy``, ``rows_accuracy_calibrated``) and the share of each argmax answer.
    """
    from infodiv.inference.power import wilson_interval
    from infodiv.setfunctions.readout import ReadoutSetFunction

    z = np.asarray(logits, dtype=np.float64)
    y = np.asarray(labels)
    if z.ndim != 2 or y.shape != (z.shape[0],):
        raise ValueError(f"logits must be [n, C] with one label per row, got {z.shape} and "
                         f"{y.shape}")
    if (y < 0).any():
        raise ValueError(f"the prompt choice needs labelled rows; {int((y < 0).sum())} of "
                         f"{y.size} have no label")
    u, bias = z[:, None, :], np.zeros(z.shape[1])
    out = {"n": int(y.size)}
    for name, calibrated in (("accuracy", False), ("accuracy_calibrated", True)):
        f = ReadoutSetFunction(u, bias, y, "accuracy", calibrated=calibrated,
                               random_state=random_state)
        rows = np.asarray(f.scores([0]), dtype=np.float64)
        out[name] = float(rows.mean())
        out[f"{name}_ci"] = list(wilson_interval(float(rows.sum()), int(rows.size)))
        out[f"rows_{name}"] = rows
    out["answers_share"] = (np.bincount(z.argmax(1), minlength=z.shape[1]) / y.size).tolist()
    return out


def compare_settings(scores: dict, criterion: str = "accuracy_calibrated",
                     random_state=0) -> tuple[str, dict]:
    """``(chosen, table)``: the candidate of the highest ``criterion`` among ``scores``
    (name → :func:`score_readout` of the same rows, in the order listed; a tie goes to the
    first listed) and, per candidate, its scores without the per-row arrays plus
    ``difference_from_chosen``: the chosen one's criterion minus its own with a paired 95 %
    percentile bootstrap interval over the rows (:data:`N_DIFFERENCE_BOOTSTRAP` resamples,
    drawn from ``random_state``)."""
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if not scores:
        raise ValueError("no prompt setting to compare")
    names = list(scores)
    n = {scores[s]["n"] for s in names}
    if len(n) != 1:
        raise ValueError(f"the settings were scored on different numbers of rows {sorted(n)}")
    values = [scores[s][criterion] for s in names]
    chosen = names[int(np.argmax(values))]   # the first of the maxima
    rng = np.random.default_rng(random_state)
    idx = rng.integers(0, n.pop(), size=(N_DIFFERENCE_BOOTSTRAP, scores[chosen]["n"]))
    key = f"rows_{criterion}"
    table = {}
    for s in names:
        row = {k: v for k, v in scores[s].items() if not k.startswith("rows_")}
        d = scores[chosen][key] - scores[s][key]
        boots = d[idx].mean(axis=1)
        row["difference_from_chosen"] = {
            "estimate": float(d.mean()),
            "ci": [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))]}
        table[s] = row
    return chosen, table


# ------------------------------------------------------------------------------ the stage
def choice_folder(out, model_name, task_name: str, rows: tuple[int, int]) -> Path:
    """``<out>/<model>-<task>-prompt-choice-rows<A>-<B>``: where a choice's extractions and
    ``prompt_choice.json`` are kept."""
    from infodiv.runfiles import model_slug

    return Path(out) / (f"{model_slug(model_name)}-{task_name}-prompt-choice-rows"
                        f"{rows[0]}-{rows[1] - 1}")


def _plan_choice(settings, model_name, task_name: str) -> dict:
    """Everything of one choice that needs no model: rows, the candidates' tasks and where
    their demonstrations come from (ValueError on user input)."""
    ext, pc = settings.extraction, settings.prompt_choice
    what = (f"{ext.task_file}" if ext.task_file is not None
            else f"the {task_name} split")
    rows, n_rows = analysed_rows(ext, task_name, settings.seed)
    first, stop = choice_rows(rows, n_rows, pc.choice_n, pc.choice_start, what)
    cands = [PromptSetting.parse(c) for c in pc.choose_prompt]
    tasks = {c.name: rows_task(ext, task_name, (first, stop), c, settings.seed) for c in cands}
    for name, task in tasks.items():
        if task.n_unlabelled:
            raise ValueError(f"the prompt choice needs labelled rows; {task.n_unlabelled} of "
                             f"rows {first}..{stop - 1} of {what} have no label")
        if len(task) != stop - first:
            raise ValueError(f"prompt setting {name}: {len(task)} rows, not {stop - first}")
    return {"rows": (first, stop), "candidates": cands, "tasks": tasks,
            "analysed": [int(rows.min()), int(rows.max())], "what": what}


def _extraction_key(settings, model_name, task, setting: PromptSetting, rows) -> str:
    from .runfolder import code_digest, stage_key

    ext = settings.extraction
    prompts = hashlib.sha256(json.dumps([task.prompt(i) for i in range(len(task))]).encode())
    return stage_key("prompt_choice", str(model_name), task.name, list(rows), setting.name,
                     ext.dtype, ext.max_length, settings.seed, task.labels.tolist(),
                     task.options, prompts.hexdigest(), code_digest("extraction"))


def _read_doc(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def choose_prompt(settings, out, model_name, task_name: str, *, models=None,
                  quiet: bool = False, shard_size: int = SHARD_SIZE, log=print) -> dict:
    """Choose the prompt setting of ``model_name`` on ``task_name`` among
    ``settings.prompt_choice.choose_prompt`` (module docstring) and return the record that
    ``run.json`` keeps: rows, criterion, rule, the comparison table, ``chosen`` and
    ``setting`` (the extraction settings it implies: ``chat_template``, ``shots``,
    ``fixed_demos``, ``demo_start``).

    ``models``: anything with ``get(name) -> (model, tokenizer)`` (loaded only when a
    candidate's extraction is not kept from an earlier run); default
    :func:`extraction.models.load_model` with the study's device and dtype. ``shard_size``:
    examples per flushed shard of the candidates' extractions.
    """
    from extraction.outdir import output_lock
    from infodiv.reports.serialize import write_json
    from infodiv.runfiles import UserError, display_path, load_run

    from .seeds import SeedPlan

    ext, pc = settings.extraction, settings.prompt_choice
    plan = _plan_choice(settings, model_name, task_name)
    rows = plan["rows"]
    folder = choice_folder(out, model_name, task_name, rows)
    if models is None:
        models = _Loader(ext)
    with output_lock(folder):
        folder.mkdir(parents=True, exist_ok=True)
        old = _read_doc(folder / CHOICE_FILE).get("extractions") or {}
        keys, scores = {}, {}
        for setting in plan["candidates"]:
            task = plan["tasks"][setting.name]
            key = _extraction_key(settings, model_name, task, setting, rows)
            sub = folder / f"select-{setting.name}"
            contrib = None
            if old.get(setting.name) == key and (sub / "meta.json").is_file():
                try:
                    contrib = load_run(sub)[0]
                except (UserError, ValueError, OSError):   # damaged: extracted again
                    contrib = None
            if contrib is None:
                contrib = _extract(models, model_name, task, setting, sub, ext, quiet,
                                   shard_size, log)
            keys[setting.name] = key
            scores[setting.name] = score_readout(
                contrib.logits, contrib.labels,
                SeedPlan(settings.seed).integer("prompt_choice", task_name, "split"))
            s = scores[setting.name]
            log(f"prompt choice: {setting.name}: accuracy {s['accuracy']:.3f}, calibrated "
                f"{s['accuracy_calibrated']:.3f} on rows {rows[0]}..{rows[1] - 1}")
        chosen, table = compare_settings(
            scores, pc.choice_criterion,
            SeedPlan(settings.seed).sequence("prompt_choice", task_name, "difference"))
        best = PromptSetting.parse(chosen)
        setting = {"chat_template": best.chat_template, "shots": best.shots,
                   "fixed_demos": best.fixed_demos,
                   "demo_start": demo_start_for(ext, task_name, best, rows[1])}
        for name, row in table.items():
            row["setting"] = asdict(PromptSetting.parse(name))
            row["demo_rows"] = (plan["tasks"][name].meta or {}).get("demo_rows")
        doc = {"task": task_name, "model": str(model_name), "rows": [rows[0], rows[1]],
               "of": plan["what"], "analysed_rows": plan["analysed"],
               "criterion": pc.choice_criterion,
               "rule": (f"the candidate of the highest {pc.choice_criterion} on rows "
                        f"{rows[0]}..{rows[1] - 1}, which no analysis reads (the analysed "
                        f"rows are {plan['analysed'][0]}..{plan['analysed'][1]}); a tie goes "
                        "to the candidate listed first. accuracy: argmax of the model's "
                        "option logits; accuracy_calibrated: softmax(a·z + c) fitted on one "
                        "label-stratified half of the rows and scored on the other, both "
                        "ways. Wilson 95% intervals; the difference from the chosen "
                        "candidate with a paired 95% bootstrap interval over the rows "
                        "(calibration not refitted)"),
               "candidates": [c.name for c in plan["candidates"]], "settings": table,
               "chosen": chosen, "setting": setting, "seed": settings.seed,
               "extractions": keys, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                               time.gmtime())}
        write_json(folder / CHOICE_FILE, doc)
    log(f"prompt choice: chosen {chosen} by {pc.choice_criterion} "
        f"({display_path(folder / CHOICE_FILE)})")
    return dict(doc, file=display_path(folder / CHOICE_FILE))


class _Loader:
    """Loads one model at a time with the study's device and dtype."""

    def __init__(self, ext):
        self.ext, self.cache = ext, {}

    def get(self, name):
        if name not in self.cache:
            from extraction.models import load_model

            self.cache.clear()
            self.cache[name] = load_model(name, device=self.ext.device, dtype=self.ext.dtype)
        return self.cache[name]


def _extract(models, model_name, task, setting: PromptSetting, sub: Path, ext, quiet,
             shard_size: int, log):
    from extraction.runner import extract

    log(f"prompt choice: extracting {setting.name} on {len(task)} held-out rows")
    model, tokenizer = models.get(model_name)
    return extract(model, tokenizer, task, granularity="block", batch_size=ext.batch_size,
                   out=sub, progress=not quiet, shard_size=shard_size,
                   max_length=ext.max_length, chat_template=setting.chat_template,
                   overwrite=True, workers=ext.workers)


def plan_with_choice(settings, out, models, *, plan, overwrite: bool = False,
                     quiet: bool = False, command=None, shard_size: int = SHARD_SIZE,
                     log=print) -> list:
    """The study's entries (:func:`infodiv.study.pipeline.plan_study`'s
    ``(model, task, folder, state)``) with each (model, task) pair's prompt setting chosen
    first (:func:`choose_prompt`) and recorded in its run folder's ``run.json``
    (``prompt_choice``). Every check that needs no model runs for every pair before the
    first model loads."""
    from dataclasses import replace

    ext = settings.extraction
    given = [flag for flag, on in (("--chat-template", ext.chat_template),
                                   ("--shots", ext.shots), ("--fixed-demos", ext.fixed_demos))
             if on]
    if given:
        raise ValueError(f"--choose-prompt chooses the prompt setting; {' '.join(given)} "
                         "would be overridden: name the settings to compare instead (e.g. "
                         "--choose-prompt zero-shot chat-template fixed-4-shot)")
    kw = {} if command is None else {"command": command}
    # the study's own checks (a folder of the unchosen setting is not refused: it is not used)
    base = plan(settings, out, overwrite=True, **kw)
    pairs = list(dict.fromkeys((m, t.name) for m, t, _, _ in base))
    for model_name, task_name in pairs:                     # the choice's own checks
        _plan_choice(settings, model_name, task_name)
    entries = []
    for model_name, task_name in pairs:
        record = choose_prompt(settings, out, model_name, task_name, models=models,
                               quiet=quiet, shard_size=shard_size, log=log)
        ext = replace(settings.extraction, models=(model_name,),
                      tasks=() if settings.extraction.task_file else (task_name,),
                      **record["setting"])
        for entry in plan(replace(settings, extraction=ext), out, overwrite=overwrite, **kw):
            entry[2].doc["prompt_choice"] = {k: v for k, v in record.items()
                                             if k != "extractions"}
            entries.append(entry)
    return entries
