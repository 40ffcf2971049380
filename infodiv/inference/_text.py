"""Number, interval and flag snippets shared by the inference markdown writers."""

from __future__ import annotations

__all__ = ["num", "interval", "flag_marks"]


def num(x, spec: str = ".4g") -> str:
    """A number for reading; None (non-finite in JSON) prints as nan."""
    return "nan" if x is None else format(x, spec)


def interval(ci, spec: str = ".3g") -> str:
    return "[" + ", ".join(num(x, spec) for x in ci) + "]" if ci else "[nan, nan]"


def flag_marks(flags, *codes) -> str:
    """`` [FLAG code]`` for every flag record whose code is among ``codes``."""
    return "".join(f" [FLAG {f['code']}]" for f in flags or [] if f["code"] in codes)
