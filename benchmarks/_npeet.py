"""NPEET for cross-checks, where it can be imported.

``import npeet`` (Ver Steeg's NPEET) is tried first; the PyPI package ``npeet-plus`` (a fork
that keeps NPEET's ``entropy_estimators`` code: KL entropy, KSG ``mi`` with the max-norm and
strict counts, ``tc`` / ``ctc`` as sums of separately estimated entropies) is the fallback, since
NPEET itself is not on the package registry reachable here. NPEET draws its tie-breaking noise
from the global numpy RNG.
"""

from __future__ import annotations


def load_npeet():
    """``(module, name)`` of the NPEET estimators, or ``(None, reason)``."""
    try:
        from npeet import entropy_estimators as ee

        return ee, "npeet"
    except ImportError:
        pass
    try:
        from npeet_plus import estimators as ee

        return ee, "npeet-plus (PyPI fork of NPEET)"
    except ImportError:
        return None, "neither `import npeet` nor `import npeet_plus` works"
