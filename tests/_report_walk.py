"""Walk a report's JSON document: every interval contains its point estimate, and information
carries its units.

:func:`walk_report` visits every dict of a JSON document (nested dicts and lists) and pairs
each interval with its point estimate by the naming patterns the reports use
(``infodiv/reports/*.py``, ``infodiv/inference/record.py``, the zoo and depth summaries):

==============================================  ==============================================
interval                                        point estimate
==============================================  ==============================================
``interval``, ``ci``, ``ci95``, ``ci_mc``,      the first of ``estimate``, ``value``, ``point``,
``ci_fixed_fit``, ``ci95_examples``             ``slope``, ``r``, ``mean``, ``rate``,
                                                ``observed``, ``difference``
``corrected_interval``, ``corrected_ci``        ``corrected``
``null_interval``                               ``null_mean``
``X_interval``, ``X_ci``, ``X_ci95``,           ``X`` (or ``X_mean``, ``X_value``,
``X_ci_mc``, ``X_ci_fixed_fit``                 ``X_estimate``, ``X_accuracy``, ``X_bits``;
                                                ``beta`` -> ``beta_diversity``)
``X_corrected_ci``                              ``X_corrected``
``X_null_interval``                             ``X_null_mean``
``ci_low``/``ci_high``, ``ci_mc_low``/...,      ``values`` element by element (or
``ci_low_fixed_fit``/``ci_high_fixed_fit``,     ``differences``, ``value``, ``mean``)
``low``/``high`` (summary rows)
==============================================  ==============================================

An interval is ``[low, high]`` (or a list of them beside a list of estimates). Bounds on a
population value (``bracket``, ``bound_lower``/``bound_upper``, ``error_*_bound``) are not
intervals of an estimate and are not paired, nor is ``band_low``/``band_high`` of random
orders: the 2.5–97.5% range of single orders' curves, a spread that the mean of a skewed
distribution may leave (a null's ``null_interval`` is paired: the reports print it as
"null mean [interval]"). The containment test is NaN-aware (a missing or
NaN end or estimate is not a violation) with a tolerance of 16 ulps of the largest magnitude
involved, for float rounding only. An interval-named key whose estimate is not found is listed
as *unpaired* (so a new naming pattern cannot slip past unchecked).

Units: information is stated in bits (or nats). A summary row (``quantity`` with ``units``)
that names an information quantity (I(...), H(Y), relevancy, redundancy, usable or Gaussian
information, cross-entropy) must say ``bits``/``nats``, and one that names an error
probability (Eq. 12 bounds, P(error)) must not; a dict that holds an information term
(``joint``, ``relevancy``, ``redundancy``, ``conditional_redundancy``, ``h_y``) or a result of
an information objective (``objective`` = ``mi_*``) with an estimate must state its units
itself or in an enclosing dict (``units``, ``unit``, ``ce_units``, ``base``, or a key ending in
``_bits``/``_nats``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

GENERIC_POINTS = ("estimate", "value", "point", "slope", "r", "mean", "rate", "observed",
                  "difference")
STEM_SUFFIXES = ("", "_mean", "_value", "_estimate", "_accuracy", "_bits")
ALIASES = {"beta": "beta_diversity"}
INTERVAL_KEY = re.compile(
    r"^(?:(?P<stem>.+?)_)?(?P<kind>corrected_interval|corrected_ci|null_interval|interval|ci95"
    r"|ci)(?P<tail>_mc|_fixed_fit|_mc_fixed_fit|_examples)?$")
NOT_ESTIMATE_INTERVALS = {"bracket", "bound_lower", "bound_upper"}
LOW_HIGH = (("ci_low", "ci_high"), ("ci_mc_low", "ci_mc_high"),
            ("ci_low_fixed_fit", "ci_high_fixed_fit"), ("low", "high"))
ARRAY_POINTS = ("values", "differences", "value", "mean")
INFO_TERMS = ("joint", "relevancy", "redundancy", "conditional_redundancy", "h_y")
UNIT_KEYS = ("units", "unit", "ce_units", "base")
# "redundancy cost" is in the units of the objective it is measured on (accuracy: a fraction)
INFO_WORDS = re.compile(r"\bI\(|H\(Y|^relevancy|^redundancy(?! cost)|^conditional redundancy"
                        r"|information|\((usable|gaussian|copula|knn)\)|cross.entropy|\bmi_",
                        re.IGNORECASE)
PROBABILITY_WORDS = re.compile(r"P\(error|error bound|bounds \(Eq\. 12\)|Eq\. 12 bound",
                               re.IGNORECASE)
INFO_UNITS = ("bits", "nats")


@dataclass
class WalkResult:
    """What :func:`walk_report` found: ``checked`` pairs (scalar comparisons), interval
    ``violations``, ``unpaired`` interval keys and ``units`` problems (dicts with ``path``)."""

    checked: int = 0
    violations: list = field(default_factory=list)
    unpaired: list = field(default_factory=list)
    units: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.violations or self.unpaired or self.units)

    def summary(self, limit: int = 20) -> str:
        lines = [f"{self.checked} interval/estimate pairs checked; {len(self.violations)} "
                 f"violations, {len(self.unpaired)} unpaired, {len(self.units)} unit problems"]
        for kind in ("violations", "unpaired", "units"):
            lines += [f"  {kind}: {item}" for item in getattr(self, kind)[:limit]]
        return "\n".join(lines)


def _number(x):
    """``x`` as a float, or None (None, bool, NaN, strings, containers)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _is_pair(v) -> bool:
    return (isinstance(v, list) and len(v) == 2
            and all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))
                    for x in v))


def contains(low, high, point) -> bool:
    """``low ≤ point ≤ high`` up to 16 ulps of the largest magnitude; True when any is missing."""
    low, high, point = _number(low), _number(high), _number(point)
    if low is None or high is None or point is None:
        return True
    tol = 16 * math.ulp(max(abs(low), abs(high), abs(point)))
    return low - tol <= point <= high + tol


def point_keys(key: str) -> tuple[str, ...] | None:
    """Candidate names of the estimate that interval ``key`` belongs to (None: not an
    interval name)."""
    if key in NOT_ESTIMATE_INTERVALS:
        return None
    m = INTERVAL_KEY.match(key)
    if m is None:
        return None
    stem, kind, tail = m.group("stem"), m.group("kind"), m.group("tail") or ""
    if kind in ("corrected_interval", "corrected_ci"):
        return (f"{stem}_corrected",) if stem else ("corrected",)
    if kind == "null_interval":
        return (f"{stem}_null_mean",) if stem else ("null_mean",)
    if not stem:
        return GENERIC_POINTS
    fixed = (f"{stem}{tail}",) if tail == "_fixed_fit" else ()
    return fixed + tuple(stem + s for s in STEM_SUFFIXES) + (
        (ALIASES[stem],) if stem in ALIASES else ())


def _compare(result, path, key, point_key, interval, point):
    """Scalar or element-wise comparison of ``interval`` with ``point``."""
    if _is_pair(interval):
        intervals, points, index = [interval], [point], [None]
    elif isinstance(interval, list) and isinstance(point, list) and len(interval) == len(point) \
            and all(x is None or _is_pair(x) for x in interval):
        intervals, points, index = interval, point, range(len(point))
    else:
        return False
    for iv, pt, i in zip(intervals, points, index):
        if iv is None:
            continue
        result.checked += 1
        if not contains(iv[0], iv[1], pt):
            result.violations.append({"path": path, "key": key, "estimate_key": point_key,
                                      "index": i, "estimate": pt, "interval": list(iv)})
    return True


def _low_high(result, doc, path):
    for lo_key, hi_key in LOW_HIGH:
        if lo_key not in doc or hi_key not in doc:
            continue
        point_key = next((k for k in ARRAY_POINTS if k in doc), None)
        lo, hi = doc[lo_key], doc[hi_key]
        if point_key is None:
            result.unpaired.append({"path": path, "key": f"{lo_key}/{hi_key}"})
            continue
        pt = doc[point_key]
        if isinstance(lo, list) and isinstance(hi, list) and isinstance(pt, list) \
                and len(lo) == len(hi) == len(pt):
            _compare(result, path, f"{lo_key}/{hi_key}", point_key,
                     [[a, b] for a, b in zip(lo, hi)], pt)
        elif not isinstance(lo, list) and not isinstance(pt, list):
            _compare(result, path, f"{lo_key}/{hi_key}", point_key, [lo, hi], pt)
        else:
            result.unpaired.append({"path": path, "key": f"{lo_key}/{hi_key}",
                                    "why": "shapes differ"})


def _intervals(result, doc, path):
    for key, value in doc.items():
        if not isinstance(key, str) or not (
                _is_pair(value) or (isinstance(value, list) and value and all(
                    x is None or _is_pair(x) for x in value))):
            continue
        candidates = point_keys(key)
        if candidates is None:
            continue
        point_key = next((k for k in candidates if k in doc), None)
        if point_key is None or not _compare(result, path, key, point_key, value,
                                              doc[point_key]):
            result.unpaired.append({"path": path, "key": key})


def _states_units(doc) -> bool:
    return any(k in doc for k in UNIT_KEYS) or any(
        isinstance(k, str) and k.endswith(("_bits", "_nats")) for k in doc)


def _units(result, doc, path, stated):
    if "quantity" in doc and "units" in doc and isinstance(doc["quantity"], str):
        q, units = doc["quantity"], doc["units"]
        if PROBABILITY_WORDS.search(q):
            if units in INFO_UNITS:
                result.units.append({"path": path, "quantity": q, "units": units,
                                     "why": "an error probability in information units"})
        elif INFO_WORDS.search(q) and units not in INFO_UNITS:
            result.units.append({"path": path, "quantity": q, "units": units,
                                 "why": "information without bits/nats"})
        return
    if stated:
        return
    info = [k for k in INFO_TERMS if k in doc and (
        _number(doc[k]) is not None or isinstance(doc[k], dict) and "value" in doc[k])]
    objective = doc.get("objective")
    if isinstance(objective, str) and objective.startswith("mi_") and any(
            k in doc for k in ("estimate", "value")):
        info.append(f"objective {objective}")
    if info:
        result.units.append({"path": path, "terms": info, "why": "information without units"})


def _walk(result, node, path, stated):
    if isinstance(node, dict):
        stated = stated or _states_units(node)
        _intervals(result, node, path)
        _low_high(result, node, path)
        _units(result, node, path, stated)
        for key, value in node.items():
            _walk(result, value, f"{path}/{key}", stated)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _walk(result, value, f"{path}[{i}]", stated)


def walk_report(doc) -> WalkResult:
    """Check a JSON document (module docstring); returns a :class:`WalkResult`."""
    result = WalkResult()
    _walk(result, doc, "", False)
    return result
