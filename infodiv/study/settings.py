"""What a study computes: one frozen dataclass per stage, and the study's one seed.

A study (:func:`infodiv.study.run_study`) is the prompt choice (when asked for) → extraction
→ decompositions → curves with the verdicts of the paper's claims → selection → the report.
Each stage reads only its own settings; every size has one name, used unchanged from the
command line (``--n-bootstrap`` is :attr:`InferenceSettings.n_bootstrap`, B) through the engine
to every verdict record (``n_bootstrap``), so a record states the sizes it was computed with.
The defaults below are the defaults of ``infodiv run`` (:func:`defaults_table` prints them for
``docs/design.md``).

Sizes and where they go:

- B = :attr:`InferenceSettings.n_bootstrap`: the example resamples of every verdict (curve,
  control and selection claims alike) and of each power surrogate's bootstrap;
- K = :attr:`InferenceSettings.n_permutations`: the label permutations of every verdict's
  null (``None``: K = B);
- :attr:`InferenceSettings.power_replicates`: surrogates of each kind behind every verdict's
  power and shuffled-label rate (0 skips them);
- :attr:`InferenceSettings.n_orders` / :attr:`InferenceSettings.n_mc`: random member
  orders inside each replicate, and the reruns on the unchanged rows;
- :attr:`CurvesSettings.n_curve_orders`: random member orders of the drawn mean curve and the
  Shapley values (``--n-curve-orders``);
- :attr:`SelectionSettings.n_random`: random orders of the best-of-random comparison;
- :attr:`InferenceSettings.sizes_by_objective`: smaller B (= K) and power replicates for named
  objectives (``--objective-sizes mi_readout=50,10``): an objective that refits a readout per
  member set costs far more per replicate than a sum's accuracy, and every record states the
  sizes it was judged with.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields, replace

__all__ = ["ExtractionSettings", "DecomposeSettings", "InferenceSettings", "CurvesSettings",
           "SelectionSettings", "PromptChoiceSettings", "StudySettings", "DEFAULT_OBJECTIVES",
           "defaults_table"]

#: the model's own readout, and information about the label as usable information of the
#: calibrated summed readout (``mi_readout``: H(Y) − held-out cross-entropy, a valid lower
#: bound on I(U_S;Y), never above H(Y), one batched calibration fit per set)
DEFAULT_OBJECTIVES = ("accuracy", "mi_readout")


def _default_claims() -> tuple:
    from ..claims import claim_names

    return claim_names(("curve", "control"), default=True)


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@dataclass(frozen=True)
class ExtractionSettings:
    """Which model runs on which task, and how (``infodiv run``'s extraction options).

    ``models``/``tasks``: names (hub ids, folders, ``.gguf`` files or aliases; bundled or
    ``data_dir`` task names); a ``task_file`` (with ``template``, ``options``,
    ``label_field``) replaces ``tasks``. ``n`` examples per task (rows ``start ..`` of the
    split, or ``stratify``: in the class proportions of the split); the prompt setting:
    ``chat_template`` (every prompt one user turn of the tokenizer's chat template),
    ``shots`` demonstrations drawn with the study's seed, ``fixed_demos`` (one draw in front
    of every prompt, among rows ``demo_start ..`` of a split without a train split); the
    options are scored under the rule of :func:`extraction.prompts.option_tokens`;
    ``granularity`` ``block`` or ``head``."""

    models: tuple = ("smollm2-135m",)
    tasks: tuple = ("sst2",)
    task_file: str | None = None
    template: str | None = None
    options: str | None = None
    label_field: str | None = None
    unlabelled: bool = False
    truncatable: str = ""
    data_dir: str | None = None
    n: int = 2000
    start: int = 0
    shots: int = 0
    chat_template: bool = False
    fixed_demos: bool = False
    demo_start: int | None = None
    stratify: bool = False
    granularity: str = "block"
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int | str = "auto"
    max_length: int | None = None
    workers: int = 1
    threads: int | None = None

    def __post_init__(self):
        _check(self.n >= 4, f"n must be at least 4 (the k = 3 neighbour estimators of the "
                            f"decompositions need more than 3 examples), got {self.n}")
        _check(self.shots >= 0, f"shots must be >= 0, got {self.shots}")
        _check(self.start >= 0, f"start must be >= 0, got {self.start}")
        _check(not self.fixed_demos or self.shots >= 1,
               "fixed_demos (--fixed-demos) needs shots >= 1 (--shots N demonstrations to fix)")
        _check(self.demo_start is None or self.fixed_demos,
               f"demo_start {self.demo_start} (--demo-start) needs fixed_demos (--fixed-demos)")
        _check(not (self.stratify and self.start),
               f"start {self.start} (--start) takes rows start.. of the split; stratify takes "
               "them in the class proportions of the whole split: give one of them")
        _check(self.granularity in ("block", "head"),
               f"granularity must be 'block' or 'head', got {self.granularity!r}")
        _check(self.workers >= 1, f"workers must be >= 1, got {self.workers}")


@dataclass(frozen=True)
class DecomposeSettings:
    """The decompositions (Theorems 1–4): ``info_methods`` the estimators of the information
    terms (``()`` skips them), ``n_resamples`` their example resamples and the depth
    estimand's (0 skips), ``info_null`` their label permutations (None: max(19, B // 5) with
    ``n_resamples`` B), ``every_variant`` Figures 3/5/7 in every variant."""

    info_methods: tuple = ("usable",)
    n_resamples: int = 100
    info_null: int | None = None
    every_variant: bool = True

    def __post_init__(self):
        _check(self.n_resamples == 0 or self.n_resamples >= 20,
               f"n_resamples must be 0 or at least 20, got {self.n_resamples}")
        _check(self.info_null is None or self.info_null >= 0,
               f"info_null must be >= 0, got {self.info_null}")


@dataclass(frozen=True)
class InferenceSettings:
    """The sizes of every verdict (module docstring), its level and its workers."""

    n_bootstrap: int = 200
    n_permutations: int | None = None
    power_replicates: int = 20
    n_orders: int = 20
    n_mc: int = 10
    alpha: float = 0.05
    n_jobs: int = 1
    #: ``((objective, B, power_replicates), ...)``: these objectives' verdicts at B = K and
    #: that many surrogates of each kind (:meth:`for_objective`)
    sizes_by_objective: tuple = ()

    def __post_init__(self):
        _check(self.n_bootstrap >= 20, f"n_bootstrap must be >= 20, got {self.n_bootstrap}")
        for entry in self.sizes_by_objective:
            _check(len(entry) == 3 and isinstance(entry[0], str) and int(entry[1]) >= 20
                   and int(entry[2]) >= 0,
                   f"sizes_by_objective entries must be (objective, B >= 20, power >= 0), "
                   f"got {entry!r}")
        names = [e[0] for e in self.sizes_by_objective]
        _check(len(set(names)) == len(names),
               f"sizes_by_objective names an objective twice: {sorted(names)}")
        least = int(1 / self.alpha)
        _check(self.k >= least, f"n_permutations must be >= {least} so that a label-null p "
                                f"can fall below alpha = {self.alpha}, got {self.k}")
        _check(self.power_replicates >= 0,
               f"power_replicates must be >= 0, got {self.power_replicates}")
        _check(self.n_orders >= 2,
               f"n_orders must be >= 2, got {self.n_orders}")
        _check(self.n_mc >= 2, f"n_mc must be >= 2, got {self.n_mc}")

    @property
    def k(self) -> int:
        """K: the label permutations (B unless given)."""
        return int(self.n_bootstrap if self.n_permutations is None else self.n_permutations)

    def for_objective(self, objective: str) -> InferenceSettings:
        """The sizes ``objective``'s verdicts use: its :attr:`sizes_by_objective` entry (B = K
        = that B, that many power replicates; never more than the study's own, so a smaller
        ``--n-bootstrap`` shrinks every objective) or these."""
        for name, b, power in self.sizes_by_objective:
            if name == objective:
                b = min(int(b), self.n_bootstrap)
                return replace(self, n_bootstrap=b, n_permutations=min(b, self.k),
                               power_replicates=min(int(power), self.power_replicates),
                               sizes_by_objective=())
        return replace(self, sizes_by_objective=())

    def sizes(self) -> dict:
        """The sizes as every verdict record and report states them."""
        out = {"n_bootstrap": self.n_bootstrap, "n_permutations": self.k,
               "power_replicates": self.power_replicates,
               "n_orders": self.n_orders, "n_mc": self.n_mc,
               "alpha": self.alpha}
        if self.sizes_by_objective:
            out["sizes_by_objective"] = {name: {"n_bootstrap": int(b), "n_permutations": int(b),
                                                "power_replicates": int(p)}
                                         for name, b, p in self.sizes_by_objective}
        return out


@dataclass(frozen=True)
class CurvesSettings:
    """The layer-addition curves: ``objectives`` (set functions), ``claims`` judged on every
    objective (default: the registered curve and control claims marked ``default``),
    ``n_curve_orders`` random member orders of the mean curve and Shapley values, ``n_triples``
    nested chains of the DR claims, ``stability`` bootstrap replicates of the greedy order
    (0 skips), ``ridge`` for the Gaussian objectives, ``graph`` the layer graph,
    ``verdicts`` False: point estimates only (no verdict, interval, null or power)."""

    objectives: tuple = DEFAULT_OBJECTIVES
    claims: tuple = field(default_factory=_default_claims)
    n_curve_orders: int = 200
    n_triples: int = 200
    stability: int = 10
    ridge: float = 0.0
    graph: bool = True
    verdicts: bool = True

    def __post_init__(self):
        from ..claims import get_claims

        _check(len(self.objectives) >= 1, "objectives is empty")
        chosen = get_claims(self.claims)   # an unknown claim: ValueError naming the choices
        sel = [c.name for c in chosen if c.group == "selection"]
        _check(not sel, f"claims: {len(sel)} selection claim(s) {sel} are judged by the "
                        "selection stage (selection_verdicts), not on the curves")
        _check(self.n_curve_orders >= 2, f"n_curve_orders must be >= 2, got {self.n_curve_orders}")
        _check(self.n_triples >= 1, f"n_triples must be >= 1, got {self.n_triples}")
        _check(self.stability >= 0, f"stability must be >= 0, got {self.stability}")


@dataclass(frozen=True)
class SelectionSettings:
    """Greedy selection on the study's first objective: ``selection_verdicts`` judges the
    registered selection claims (held-out greedy against the best of ``n_random`` random
    orders and against the depth prefix) with the study's inference sizes."""

    selection_verdicts: bool = True
    n_random: int = 50

    def __post_init__(self):
        _check(self.n_random >= 1, f"n_random must be >= 1, got {self.n_random}")


@dataclass(frozen=True)
class PromptChoiceSettings:
    """The prompt setting chosen before extraction (:mod:`infodiv.study.prompt_choice`):
    ``choose_prompt`` the candidate settings (``()``: no choice, the extraction settings are
    used as given), compared on ``choice_n`` held-out rows from ``choice_start`` (default: the
    rows after the analysed ones; never an analysed row) by ``choice_criterion``
    (``accuracy_calibrated``, the toolkit's cross-fitted calibrated readout, or ``accuracy``,
    the model's raw argmax)."""

    choose_prompt: tuple = ()
    choice_n: int = 400
    choice_start: int | None = None
    choice_criterion: str = "accuracy_calibrated"

    def __post_init__(self):
        from .prompt_setting import CRITERIA, MIN_CHOICE_ROWS, PromptSetting

        names = [PromptSetting.parse(c).name for c in self.choose_prompt]  # ValueError
        _check(len(set(names)) == len(names),
               f"choose_prompt names a setting twice: {list(self.choose_prompt)}")
        _check(self.choice_n >= MIN_CHOICE_ROWS,
               f"choice_n must be >= {MIN_CHOICE_ROWS}, got {self.choice_n}")
        _check(self.choice_start is None or self.choice_start >= 0,
               f"choice_start must be >= 0, got {self.choice_start}")
        _check(self.choice_criterion in CRITERIA,
               f"choice_criterion must be one of {CRITERIA}, got {self.choice_criterion!r}")


@dataclass(frozen=True)
class StudySettings:
    """A whole study: one settings object per stage and the one ``seed`` from which every
    random stream of the study is spawned (:class:`infodiv.study.seeds.SeedPlan`)."""

    extraction: ExtractionSettings = field(default_factory=ExtractionSettings)
    decompose: DecomposeSettings = field(default_factory=DecomposeSettings)
    curves: CurvesSettings = field(default_factory=CurvesSettings)
    inference: InferenceSettings = field(default_factory=InferenceSettings)
    selection: SelectionSettings = field(default_factory=SelectionSettings)
    prompt_choice: PromptChoiceSettings = field(default_factory=PromptChoiceSettings)
    seed: int = 0

    def __post_init__(self):
        _check(self.seed >= 0, f"seed must be >= 0, got {self.seed}")

    def to_dict(self) -> dict:
        return asdict(self)

    def with_settings(self, **changes) -> StudySettings:
        """A copy with the named settings replaced. Every setting's name is unique across
        the stages (``n_bootstrap`` is the inference's, ``objectives`` the curves', ...), so
        a flat ``name=value`` finds its stage; ``seed`` is the study's. An unknown name is a
        ``ValueError`` naming it."""
        stages = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "seed"}
        owner = {g.name: stage for stage, obj in stages.items() for g in fields(obj)}
        bad = sorted(set(changes) - set(owner) - {"seed"})
        if bad:
            raise ValueError(f"{len(bad)} unknown setting(s) {bad}; the settings are "
                             f"{sorted(owner)} and seed")
        per_stage: dict = {}
        for name, value in changes.items():
            if name != "seed":
                per_stage.setdefault(owner[name], {})[name] = value
        new = {stage: replace(stages[stage], **kw) for stage, kw in per_stage.items()}
        return replace(self, **new, seed=changes.get("seed", self.seed))


def defaults_table() -> str:
    """Markdown: every stage's settings with their defaults (``docs/design.md``)."""
    rows = ["| stage | setting | default |", "|---|---|---|"]
    for cls in (ExtractionSettings, PromptChoiceSettings, DecomposeSettings, InferenceSettings,
                CurvesSettings, SelectionSettings):
        obj = cls()
        for f in fields(cls):
            value = getattr(obj, f.name)
            if isinstance(value, tuple):   # as the command line writes it
                shown = " ".join("=".join((str(v[0]), ",".join(map(str, v[1:]))))
                                 if isinstance(v, tuple) else str(v) for v in value) or "none"
            else:
                shown = repr(value) if value == "" else value
            stage = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__.removesuffix("Settings"))
            rows.append(f"| {stage.lower()} | `{f.name}` | "
                        f"`{shown}` |")
    return "\n".join(rows)
