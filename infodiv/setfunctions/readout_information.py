"""``mi_readout``: usable information of the calibrated summed readout, a lower bound on
I(U_S; Y) that costs one batched calibration fit per member set.

For a member set S the readout family is V_S = {softmax(a·z_S + c)} with z_S = Σ_{m∈S} u_m + b
(the model's own readout of those members, recalibrated). Its predictive V-information
(Xu et al. 2020, "A theory of usable information under computational constraints", ICLR) is

    I_V(U_S → Y) = H(Y) − inf_{q ∈ V_S} E[−log q(Y | z_S)]  ≤  I(U_S; Y)  ≤  H(Y),

estimated by 2-fold cross-fitting: (a, c) fitted on one half, the cross-entropy scored on the
other half, both ways (:class:`~infodiv.setfunctions.readout.ReadoutSetFunction`, calibrated
cross-entropy). Per example the score is the held-out pointwise information
log q(y_i | z_S,i) − log p̂(y_i), with p̂ the label frequencies of the examples scored, so the
value is Ĥ(Y) − CE_held-out(S): never above Ĥ(Y) (a cross-entropy is ≥ 0), about 0 for the
empty set (the calibrated bias alone predicts the prior), and below the truth up to sampling
error because held-out cross-entropy cannot be optimistic. It is the readout family of
:func:`estimators.usable_information` (which also tries a regularised probe on the stacked
members, ``mi_usable``: tighter, and about a hundred times more expensive per set).
"""

from __future__ import annotations

import numpy as np

from estimators.validation import check_base, unit_name

from .readout import ReadoutSetFunction

__all__ = ["ReadoutInformationSetFunction"]


class ReadoutInformationSetFunction(ReadoutSetFunction):
    """Ĥ(Y) − held-out cross-entropy of the calibrated summed readout (module docstring).

    Parameters
    ----------
    u : array ``[N, M, C]``; bias : ``[C]`` or ``[N, C]``; labels : ``[N]``
    base : 2 (bits), ``"e"`` (nats) or another base > 1
    random_state : the cross-fitting split
    """

    def __init__(self, u, bias, labels, *, base=2, random_state=0):
        super().__init__(u, bias, labels, "cross_entropy", calibrated=True,
                         random_state=random_state)
        self.base = base
        self._per_bit = np.log(2.0) / np.log(check_base(base))  # bits -> units of base
        self.name, self.units, self.greater_is_better = "mi_readout", unit_name(base), True
        counts = np.bincount(self.y, minlength=self.ut.shape[1]).astype(np.float64)
        # −log2 p̂(y_i): its mean over the examples is the plug-in Ĥ(Y) in bits
        self._surprise = -np.log2(counts[self.y] / self.y.size)

    def _score_logits(self, z, init=None, return_params=False, parts=None):
        out = super()._score_logits(z, init=init, return_params=return_params, parts=parts)
        ce, params = out if return_params else (out, None)
        info = (self._surprise - ce) * self._per_bit      # log q(y|z_S) − log p̂(y)
        return (info, params) if return_params else info

    def restrict(self, examples):
        ex = np.asarray(examples)
        return ReadoutInformationSetFunction(np.transpose(self.ut[:, :, ex], (2, 0, 1)),
                                             self.bias[:, ex].T, self.y[ex], base=self.base,
                                             random_state=self.random_state)
