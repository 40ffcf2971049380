"""Tables behind the paper's Figure 3 (correlations), Figure 4 (module shares) and Table 1.

All three take runs as :class:`~extraction.Contributions` (model and task read from
``meta["model"]`` / ``meta["task"]``) or as already computed results, and return a
:class:`Table`: a small immutable column/row container with Markdown, records and (optional)
pandas export. Values are raw (the paper prints squared errors ×100).

References
----------
Corey, D. M., Dunlap, W. P. & Burke, M. J. (1998). Averaging correlations: expected values and
bias in combined Pearson r and Fisher's z transformations. J. General Psychology 125(3).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

from estimators.ensemble import bias_diversity, paper_eq14

from .junctions import JunctionCurves, junction_curves
from .runs import ensemble_arrays, run_names

__all__ = ["Table", "correlation_table", "module_shares", "sharing_table", "VARIANTS",
           "fisher_z_mean"]

AVG = "Avg."
VARIANTS = {
    "logit": {"loss": "squared", "space": "logit"},
    "probability": {"loss": "squared", "space": "probability"},
    "cross_entropy": {"loss": "cross_entropy", "space": "logit"},
    "paper_eq14": None,
}


@dataclass(frozen=True)
class Table:
    """An immutable table: ``columns`` (names) and ``rows`` (tuples in column order)."""

    columns: tuple
    rows: tuple
    title: str = ""

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> list:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def to_records(self) -> list[dict]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    def select(self, **equal) -> list[dict]:
        """Records whose columns equal the given values, e.g. ``select(task="Avg.")``."""
        return [r for r in self.to_records() if all(r[k] == v for k, v in equal.items())]

    def to_markdown(self, floatfmt: str = ".4g") -> str:
        def fmt(x):
            return format(x, floatfmt) if isinstance(x, float) else str(x)
        lines = ["| " + " | ".join(self.columns) + " |",
                 "|" + "|".join("---" for _ in self.columns) + "|"]
        lines += ["| " + " | ".join(fmt(x) for x in r) + " |" for r in self.rows]
        return (f"**{self.title}**\n\n" if self.title else "") + "\n".join(lines) + "\n"

    def to_dataframe(self):
        """A pandas DataFrame (pandas is an optional dependency)."""
        import pandas as pd
        return pd.DataFrame(list(self.rows), columns=list(self.columns))


# ---------------------------------------------------------------------------- helpers
def _model_task(obj) -> tuple[str, str]:
    if isinstance(obj, JunctionCurves):
        return obj.model, obj.task
    return run_names(getattr(obj, "meta", None))


def _by_model_task(runs, what: str) -> dict:
    """``{(model, task): run}`` from a mapping or an iterable (names from the runs' meta)."""
    if isinstance(runs, Mapping):
        items = [((str(k[0]), str(k[1])) if isinstance(k, tuple) else (*_model_task(v)[:1],
                  str(k)), v) for k, v in runs.items()]
    elif isinstance(runs, Iterable):
        items = [(_model_task(r), r) for r in runs]
    else:
        raise TypeError(f"{what} must be a mapping or an iterable of runs")
    out: dict = {}
    for key, run in items:
        if key in out:
            raise ValueError(f"{what}: two runs for model {key[0]!r}, task {key[1]!r}; "
                             "set meta['model'] / meta['task'] to tell them apart")
        out[key] = run
    if not out:
        raise ValueError(f"{what} is empty")
    return out


def fisher_z_mean(r, n) -> float:
    """Average correlations through Fisher's z: ``tanh(Σ w_i artanh r_i / Σ w_i)``, ``w = n − 3``.

    NaN correlations are left out; weights fall back to equal when any ``n ≤ 3``. ``|r| = 1``
    gives an infinite z, so the average is ±1 (or NaN for +1 and −1 together), as the
    transform implies. Corey et al. (1998) show this average is less biased than averaging r.
    """
    r, n = np.asarray(r, dtype=np.float64), np.asarray(n, dtype=np.float64)
    keep = np.isfinite(r)
    if not keep.any():
        return float("nan")
    r, n = r[keep], n[keep]
    w = n - 3 if (n > 3).all() else np.ones_like(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.tanh((w * np.arctanh(r)).sum() / w.sum()))


def _correlate(method, x, y):
    fn = stats.pearsonr if method == "pearson" else stats.spearmanr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        res = fn(x, y)
    return float(res.statistic), float(res.pvalue)


# ---------------------------------------------------------------------------- Figure 3
def correlation_table(runs, *, measures=("mse", "bias", "diversity"),
                      methods=("pearson", "spearman"), **curve_kwargs) -> Table:
    """Correlation of accuracy with MSE / bias / diversity over junction points (Figure 3).

    For every run (one model on one task) the junction curve gives K points
    ``(accuracy_k, measure_k)``; Pearson's r and Spearman's rho with their two-sided p-values
    are computed over those K points. One "Avg." row per model, measure and method averages
    the per-task correlations through Fisher's z (:func:`fisher_z_mean`, weights K − 3); as in
    the paper it carries no p-value. A constant series gives NaN (no correlation is defined).

    Parameters
    ----------
    runs : iterable or mapping of JunctionCurves or Contributions
        Contributions are turned into curves with ``junction_curves(run, **curve_kwargs)``.
    measures : tuple of str
        Attributes of :class:`JunctionCurves` to correlate with accuracy.
    methods : tuple of {"pearson", "spearman"}

    Returns
    -------
    Table
        Columns ``model, task, measure, method, r, p, n``; ``n`` is the number of junction
        points (per-task rows) or of tasks averaged ("Avg." rows).
    """
    bad = [m for m in methods if m not in ("pearson", "spearman")]
    if bad:
        raise ValueError(f"methods must be 'pearson' or 'spearman', got {bad}")
    curves = {key: (run if isinstance(run, JunctionCurves)
                    else junction_curves(run, **curve_kwargs))
              for key, run in _by_model_task(runs, "runs").items()}
    rows = []
    for (model, task), cur in curves.items():
        if cur.k.size < 3:
            raise ValueError(f"{model}/{task}: {cur.k.size} junction points; need at least 3 "
                             "for a correlation with a p-value")
        for measure in measures:
            for method in methods:
                r, p = _correlate(method, cur.accuracy, getattr(cur, measure))
                rows.append((model, task, measure, method, r, p, int(cur.k.size)))
    for model in dict.fromkeys(k[0] for k in curves):
        for measure in measures:
            for method in methods:
                sel = [r for r in rows if r[0] == model and r[2] == measure and r[3] == method]
                z = fisher_z_mean([r[4] for r in sel], [r[6] for r in sel])
                n_ok = sum(math.isfinite(r[4]) for r in sel)
                rows.append((model, AVG, measure, method, z, float("nan"), n_ok))
    return Table(("model", "task", "measure", "method", "r", "p", "n"), tuple(rows),
                 "Correlation of accuracy with MSE, bias and diversity over junction points")


# ---------------------------------------------------------------------------- Figure 4
def module_shares(runs, *, variant: str = "logit", scale: str = "mean", target=None) -> Table:
    """Share of bias and diversity carried by each module group (Eq. 9–10, Figure 4).

    For each run, group g's share of the bias is ``(|G|/M)·bias_g / bias`` (and likewise for
    diversity), so the shares of a run add up to one. "Avg." rows average the shares of a
    model over its tasks.

    Parameters
    ----------
    runs : iterable or mapping of Contributions or BiasDiversity
        Contributions are decomposed with ``bias_diversity(**ensemble_arrays(run),
        **VARIANTS[variant], scale=scale, target=target)`` (the member kinds are the groups).
    variant : {"logit", "probability", "cross_entropy"}

    Returns
    -------
    Table
        Columns ``model, task, term, group, share, part`` (``part`` is the group's weighted
        contribution ``(|G|/M)·term_g`` in the decomposition's units).
    """
    if VARIANTS.get(variant) is None:
        raise ValueError(f"variant must be one of {[k for k, v in VARIANTS.items() if v]}, "
                         f"got {variant!r}")
    rows = []
    for (model, task), run in _by_model_task(runs, "runs").items():
        res = run if hasattr(run, "by_group") else bias_diversity(
            **ensemble_arrays(run), **VARIANTS[variant], scale=scale, target=target)
        if res.by_group is None:
            raise ValueError(f"{model}/{task}: no member groups (pass Contributions or a "
                             "result computed with groups=...)")
        for term, total in (("bias", res.bias), ("diversity", res.diversity)):
            for group, g in res.by_group.items():
                part = getattr(g, f"{term}_part")
                share = part / total if total != 0 else float("nan")
                rows.append((model, task, term, group, share, part))
    for model in dict.fromkeys(r[0] for r in rows):
        for term in ("bias", "diversity"):
            groups = dict.fromkeys(r[3] for r in rows if r[0] == model and r[2] == term)
            for group in groups:
                sel = [r for r in rows if r[0] == model and r[2] == term and r[3] == group]
                rows.append((model, AVG, term, group, float(np.mean([r[4] for r in sel])),
                             float(np.mean([r[5] for r in sel]))))
    return Table(("model", "task", "term", "group", "share", "part"), tuple(rows),
                 f"Module shares of bias and diversity ({variant}, scale={scale})")


# ---------------------------------------------------------------------------- Table 1
def _summary(run, variant, scale, target) -> tuple[float, float, float, float]:
    acc = run.accuracy()
    if variant == "paper_eq14":
        arrays = ensemble_arrays(run)
        res = paper_eq14(arrays["u"], arrays["labels"], scale=scale, bias=arrays["bias"])
        return acc, res.mse, res.bias, res.diversity
    res = bias_diversity(**ensemble_arrays(run), **VARIANTS[variant], scale=scale, target=target)
    return acc, res.loss, res.bias, res.diversity


def _by_task(runs, what) -> dict:
    if isinstance(runs, Mapping):
        return {str(k): v for k, v in runs.items()}
    return {task: run for (_, task), run in _by_model_task(runs, what).items()}


def sharing_table(shared, unshared, *, variant: str = "paper_eq14", scale: str = "mean",
                  target=None, names=None) -> Table:
    """Accuracy, MSE, bias and diversity per task for two runs side by side (Table 1).

    Parameters
    ----------
    shared, unshared : mapping task -> Contributions, or iterable of Contributions
        The layer-sharing model and its unshared counterpart on the same tasks.
    variant : {"paper_eq14", "logit", "probability", "cross_entropy"}
        Which decomposition gives MSE / bias / diversity. ``"paper_eq14"`` (the default, the
        paper's Table 1 setting) reports the diversity Eq. 14 implies (bias − MSE).
    names : (str, str), optional
        Column labels for (unshared, shared); default their ``meta["model"]`` or
        "unshared"/"shared".

    Returns
    -------
    Table
        One row per task plus "Avg." (the mean over tasks); columns ``task`` then
        ``<measure> [<name>]`` for measure in accuracy, mse, bias, diversity, unshared first
        as in the paper.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    runs = {"unshared": _by_task(unshared, "unshared"), "shared": _by_task(shared, "shared")}
    tasks = list(runs["unshared"])
    if set(tasks) != set(runs["shared"]):
        raise ValueError(f"shared and unshared runs cover different tasks: "
                         f"{sorted(set(tasks) ^ set(runs['shared']))} appear in only one")
    if names is None:
        names = tuple(_model_task(next(iter(runs[w].values())))[0] or w
                      for w in ("unshared", "shared"))
    if len(names) != 2 or names[0] == names[1]:
        raise ValueError(f"names must be two different labels, got {names!r}")
    values = {w: np.array([_summary(runs[w][t], variant, scale, target) for t in tasks])
              for w in ("unshared", "shared")}
    measures = ("accuracy", "mse", "bias", "diversity")
    columns = ("task",) + tuple(f"{m} [{nm}]" for m in measures for nm in names)
    rows = []
    for i, task in enumerate([*tasks, AVG]):
        vals = []
        for j in range(len(measures)):
            for w in ("unshared", "shared"):
                col = values[w][:, j]
                vals.append(float(col.mean() if task == AVG else col[i]))
        rows.append((task, *vals))
    return Table(columns, tuple(rows), f"Layer sharing ({variant}, scale={scale})")
