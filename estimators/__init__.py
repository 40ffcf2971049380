"""estimators: entropy, mutual information, total correlation, interaction information and
ensemble (bias-diversity) decompositions on numpy arrays.

numpy / scipy / scikit-learn / joblib only: this package never imports torch or transformers.
Bits by default (``base=2``); McGill sign convention for interaction information.
"""

__all__: list[str] = []
