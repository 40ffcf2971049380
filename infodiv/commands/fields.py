"""Command-line options made from a settings dataclass: one option per field, with the field's
default and type (``infodiv zoo`` and its depth subcommands)."""

from __future__ import annotations

import dataclasses

__all__ = ["add_fields", "fields_of"]


def add_fields(p, record, options: dict, flags: dict | None = None) -> None:
    """One option per field of the settings dataclass ``record`` named in ``options`` (field
    -> help): ``--field-name`` (``flags`` may name it otherwise), with the field's default and
    its type, stored under the field's name (:func:`fields_of`)."""
    defaults = {f.name: f.default for f in dataclasses.fields(record)}
    for name, text in options.items():
        flag = (flags or {}).get(name, "--" + name.replace("_", "-"))
        p.add_argument(flag, dest=name, metavar=flag[2:].replace("-", "_").upper(),
                       type=type(defaults[name]), default=defaults[name], help=text)


def fields_of(args, record, options: dict):
    """The ``record`` of the options :func:`add_fields` added for ``options``."""
    return record(**{name: getattr(args, name) for name in options})
