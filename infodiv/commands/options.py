"""The one place where command-line options become study settings.

Each ``add_*`` function adds one stage's options to a command's parser, with the defaults of
the settings dataclass it fills (:mod:`infodiv.study.settings`), and :func:`study_settings`
turns the parsed options back into a :class:`~infodiv.study.settings.StudySettings`. An option
has one name and one meaning from the command line to the record: ``--n-bootstrap`` is B of
every verdict, power check and selection claim; ``--n-permutations`` is K, the label
permutations of every null; ``--n-curve-orders`` the random member orders of the drawn curves.
No command builds or re-parses an argument list.

The prompt options (:func:`add_prompt_options`: ``--chat-template``, ``--shots``,
``--fixed-demos``, ``--demo-start``, ``--start``) are defined once here and attached to both
``infodiv extract`` and ``infodiv run``; ``infodiv run`` also takes the prompt choice
(:func:`add_prompt_choice_options`, :mod:`infodiv.study.prompt_choice`).
"""

from __future__ import annotations

from pathlib import Path

from infodiv.commands.preflight import (
    finite_float_at_least,
    int_at_least,
    n_jobs,
    nonneg_int,
    objective_sizes,
    zero_or_at_least,
)
from infodiv.study.prompt_setting import CRITERIA, DEFAULT_CANDIDATES, MIN_CHOICE_ROWS
from infodiv.study.settings import (
    CurvesSettings,
    DecomposeSettings,
    ExtractionSettings,
    InferenceSettings,
    PromptChoiceSettings,
    SelectionSettings,
    StudySettings,
)

__all__ = ["add_inference_options", "add_curves_options", "add_decompose_options",
           "add_selection_options", "add_seed_option", "add_prompt_options",
           "add_prompt_choice_options", "study_settings", "info_methods"]


def add_seed_option(parser) -> None:
    parser.add_argument("--seed", type=nonneg_int, default=StudySettings().seed,
                        help="the study's seed: every random stream (demonstrations, orders, "
                             "splits, resamples, surrogates) is spawned from it")


def add_prompt_options(parser, defaults: ExtractionSettings | None = None) -> None:
    """How every prompt is written and which rows are read (``infodiv extract`` and
    ``infodiv run``): the options are scored under the rule of
    :func:`extraction.prompts.option_tokens` (an option whose scored token is shared or an
    avoidable fragment of its word is refused, with every option's token listed)."""
    d = defaults or ExtractionSettings()
    parser.add_argument("--chat-template", action="store_true",
                        help="wrap every prompt in the tokenizer's chat template (one user turn "
                             "+ generation prompt, kept byte for byte)")
    parser.add_argument("--start", type=nonneg_int, default=d.start,
                        help="with --task: first example row of the split, so the examples are "
                             "rows START..START+N-1, e.g. held-out rows for choosing a prompt "
                             "setting")
    parser.add_argument("--shots", type=nonneg_int, default=d.shots,
                        help="in-context demonstrations")
    parser.add_argument("--fixed-demos", action="store_true",
                        help="with --shots: the same demonstrations in front of every prompt "
                             "(one seeded draw from records that are no example), so their "
                             "tokens are a shared prefix computed once (extraction.savings)")
    parser.add_argument("--demo-start", type=nonneg_int, default=d.demo_start,
                        help="with --fixed-demos on a split without a train split: draw the "
                             "demonstrations among rows DEMO_START.. (not below the end of "
                             "the examples; default: the rows after them), so that runs over "
                             "different rows share one draw")


def add_prompt_choice_options(parser, defaults: PromptChoiceSettings | None = None) -> None:
    """The prompt setting chosen on held-out rows before extraction (``infodiv run``)."""
    d = defaults or PromptChoiceSettings()
    parser.add_argument("--choose-prompt", nargs="*", default=None, metavar="SETTING",
                        help="choose the prompt setting first, on held-out rows no analysis "
                             "reads: zero-shot, chat-template, K-shot, fixed-K-shot, or "
                             "chat-template+[fixed-]K-shot (no value: "
                             f"{' '.join(DEFAULT_CANDIDATES)}); the choice is recorded in "
                             "run.json")
    parser.add_argument("--choice-n", type=int_at_least(MIN_CHOICE_ROWS), default=d.choice_n,
                        help="held-out rows of the prompt choice")
    parser.add_argument("--choice-start", type=nonneg_int, default=d.choice_start,
                        help="first held-out row of the prompt choice (default: the row after "
                             "the last analysed one; an analysed row is refused)")
    parser.add_argument("--choice-criterion", default=d.choice_criterion, choices=CRITERIA,
                        help="what the prompt choice maximises: the cross-fitted calibrated "
                             "readout's accuracy, or the raw argmax's")


def add_inference_options(parser, defaults: InferenceSettings | None = None) -> None:
    """B, K, the power replicates and the workers of every verdict."""
    defaults = defaults or InferenceSettings()
    parser.add_argument("--n-bootstrap", type=int_at_least(20), default=defaults.n_bootstrap,
                        metavar="B", help="example resamples B of every verdict, power check "
                                          "and selection claim (everything refitted)")
    parser.add_argument("--n-permutations", type=int_at_least(20), default=None, metavar="K",
                        help="label permutations K of every verdict's null (default: B; at "
                             "least 20, so that p = 1/(1 + K) can fall below 0.05)")
    parser.add_argument("--power-replicates", type=nonneg_int,
                        default=defaults.power_replicates, metavar="N",
                        help="surrogates of each kind (conditionally independent members, "
                             "planted synergy or redundancy, shuffled labels) behind every "
                             "verdict's power and shuffled-label rate (0 skips them)")
    parser.add_argument("--n-orders", type=int_at_least(2),
                        default=defaults.n_orders,
                        help="random member orders inside each replicate of a verdict")
    parser.add_argument("--objective-sizes", type=objective_sizes, nargs="+", default=None,
                        metavar="OBJECTIVE=B,POWER",
                        help="smaller sizes for named objectives: their verdicts at B = K = B "
                             "and POWER surrogates of each kind (e.g. mi_readout=50,10)"
                             + (" (default: " + " ".join(f"{o}={b},{p}" for o, b, p in
                                                         defaults.sizes_by_objective) + ")"
                                if defaults.sizes_by_objective else ""))
    parser.add_argument("--n-jobs", type=n_jobs, default=defaults.n_jobs,
                        help="joblib workers of the verdicts' replicates (-1: every core; the "
                             "numbers do not depend on it)")


def add_curves_options(parser, defaults: CurvesSettings | None = None) -> None:
    """Objectives, claims and the curves' own sizes."""
    from infodiv.claims import claim_names
    from infodiv.setfunctions import OBJECTIVE_NAMES

    d = defaults or CurvesSettings()
    judged = claim_names(("curve", "control", "report"))
    parser.add_argument("--objective", nargs="+", default=list(d.objectives),
                        choices=OBJECTIVE_NAMES, metavar="OBJECTIVE",
                        help=f"set functions ({', '.join(OBJECTIVE_NAMES)})")
    parser.add_argument("--claims", nargs="+", default=list(d.claims), choices=judged,
                        metavar="CLAIM", help=f"claims judged on every objective "
                                              f"({', '.join(judged)})")
    parser.add_argument("--n-curve-orders", type=int_at_least(2), default=d.n_curve_orders,
                        help="random member orders of the drawn mean curve and the Shapley "
                             "values")
    parser.add_argument("--n-triples", type=int_at_least(1), default=d.n_triples,
                        help="nested chains of the diminishing-returns claims")
    parser.add_argument("--stability", type=nonneg_int, default=d.stability,
                        help="bootstrap replicates for greedy-order stability (0 skips)")
    parser.add_argument("--ridge", type=finite_float_at_least(0.0), default=d.ridge,
                        help="relative ridge for the Gaussian objectives (singular members)")
    parser.add_argument("--no-graph", action="store_true", help="skip the layer graph")
    parser.add_argument("--no-inference", action="store_true",
                        help="point estimates only: no verdict, interval, null or power")


def add_selection_options(parser, defaults: SelectionSettings | None = None) -> None:
    defaults = defaults or SelectionSettings()
    parser.add_argument("--n-random", type=int_at_least(1), default=defaults.n_random,
                        help="random orders of the best-of-random selection comparison")
    parser.add_argument("--no-selection-verdicts", action="store_true",
                        help="no verdicts for the selection claims (greedy against random "
                             "and against the depth prefix)")


def add_decompose_options(parser, defaults: DecomposeSettings | None = None, *,
                          flag: str = "--decompose-inference") -> None:
    """The information terms' estimators and inference sizes."""
    defaults = defaults or DecomposeSettings()
    from infodiv.commands.choices import info_method_names

    parser.add_argument("--info-method", nargs="*", default=list(defaults.info_methods),
                        choices=("usable", *info_method_names(), "none"), metavar="METHOD",
                        help="estimators of the information decomposition: 'usable' (valid "
                             "for a discrete label), 'gaussian' / 'copula' (model-based, "
                             "labelled so); 'none' or no value: skip it")
    parser.add_argument(flag, dest="decompose_inference", type=zero_or_at_least(20),
                        default=defaults.n_resamples, metavar="B",
                        help="example resamples and label permutations of the information "
                             "terms and the depth estimand (0 skips them; else at least 20)")
    parser.add_argument("--info-null", type=nonneg_int, default=defaults.info_null,
                        metavar="K", help="label permutations of the information terms, each "
                        "rerunning the whole cross-fitted procedure (default: max(19, B // 5) "
                        "with B resamples, none without; 0: none)")
    parser.add_argument("--no-every-variant", action="store_true",
                        help="skip Figures 3/5/7 in every variant (logit, probability, paper "
                             "Eq. 14; scale mean and sum)")


def info_methods(values) -> tuple[str, ...]:
    """The estimators to run: ``none`` (alone or among others) or an empty list skips all."""
    values = tuple(values or ())
    return () if "none" in values else values


#: option dest -> setting name where they differ
_RENAMED = {"objective": "objectives", "info_method": "info_methods",
            "objective_sizes": "sizes_by_objective",
            "decompose_inference": "n_resamples", "model": "models", "task": "tasks"}
#: ``--no-*`` switch -> the setting it turns off
_FLAGS = {"no_graph": "graph", "no_inference": "verdicts", "no_every_variant": "every_variant",
          "no_selection_verdicts": "selection_verdicts"}
#: options that are no setting (where to write, how to report)
_NOT_SETTINGS = ("run_dir", "out", "overwrite", "quiet", "command")


def _convert(name: str, value):
    if name == "info_methods":
        return info_methods(value)
    if name == "choose_prompt":   # --choose-prompt without values: the default candidates
        return tuple(value) or DEFAULT_CANDIDATES
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, Path):
        return str(value)
    return value


def study_settings(args, base: StudySettings | None = None) -> StudySettings:
    """``base`` (default :class:`StudySettings`) with every setting that ``args`` (a parsed
    namespace) carries replaced (:meth:`StudySettings.with_settings`): an option's dest is
    the setting's name except for :data:`_RENAMED` and the ``--no-*`` switches of
    :data:`_FLAGS`; an option left at None keeps the base value."""
    base = base or StudySettings()
    changes = {}
    for dest, value in vars(args).items():
        if dest.startswith("_") or dest in _NOT_SETTINGS:
            continue
        if dest in _FLAGS:
            changes[_FLAGS[dest]] = not value
        elif value is not None:
            name = _RENAMED.get(dest, dest)
            changes[name] = _convert(name, value)
    if changes.get("task_file") is not None:
        changes["tasks"] = ()
    return base.with_settings(**changes)
