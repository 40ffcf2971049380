"""estimators: entropy, mutual information, total correlation, interaction information and
ensemble (bias-diversity) decompositions on numpy arrays.

Information about a discrete label (``mutual_information(x, labels)``,
``information_decomposition(u, labels)``) defaults to cross-fitted usable information with a
bracket (:mod:`estimators.usable`, :mod:`estimators.label_decomposition`), never above ``H(Y)``;
the entropy-based estimators stay available by ``method=`` name.

numpy / scipy / scikit-learn / joblib only: this package never imports torch or transformers.
Bits by default (``base=2``; every conversion from nats goes through
:func:`estimators.validation.to_base`); McGill sign convention for interaction information.

Randomness convention (the whole toolkit, ``infodiv`` included): every function that draws
random numbers (tie-breaking jitter, copula tie order, permutations, bootstrap resamples, random
orders, cross-fitting splits) takes ``random_state`` and defaults to ``random_state=0``, so a
result is reproducible unless the caller asks otherwise; ``None`` draws fresh OS entropy, an int
or ``SeedSequence`` seeds, a ``Generator`` is used as given. The global NumPy RNG is never used.
"""

from estimators.api import (
    conditional_mutual_information,
    entropy,
    mutual_information,
    total_correlation,
)
from estimators.bvc import BiasVarianceCovariance, bias_variance_covariance
from estimators.ensemble import BiasDiversity, PaperEq14, bias_diversity, paper_eq14
from estimators.interaction import InformationDecomposition, interaction_information
from estimators.label_decomposition import (
    LabelDecomposition,
    information_decomposition,
    label_decomposition,
)
from estimators.resampling import bootstrap_ci, permutation_test
from estimators.usable import UsableInformation, usable_information

__all__: list[str] = [
    "entropy",
    "mutual_information",
    "conditional_mutual_information",
    "total_correlation",
    "interaction_information",
    "information_decomposition",
    "InformationDecomposition",
    "label_decomposition",
    "LabelDecomposition",
    "usable_information",
    "UsableInformation",
    "permutation_test",
    "bootstrap_ci",
    "bias_diversity",
    "paper_eq14",
    "bias_variance_covariance",
    "BiasDiversity",
    "PaperEq14",
    "BiasVarianceCovariance",
]
