"""Binomial tolerances for rates judged over seeded replicates (tests only)."""

import numpy as np


def ceiling(p, n, k_sd=2.0):
    """Highest rate a true rate ``p`` explains over ``n`` replicates: p + k_sd·√(p(1−p)/n)."""
    return p + k_sd * np.sqrt(p * (1 - p) / n)


def binomial_floor(p, n, k_sd=2.0):
    """Lowest rate a true rate ``p`` explains over ``n`` replicates: p − k_sd·√(p(1−p)/n)."""
    return p - k_sd * np.sqrt(p * (1 - p) / n)
