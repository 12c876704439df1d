"""nkilint's built-in rule pack, installed as ``nkilint_rules``.

It is registered through the ``nkilint.rules`` entry point exactly like a
third-party pack. One module per rule family.
"""

from __future__ import annotations

from nkilint.rule import Rule

from . import cuda, memory, migration, numerics, partition, pipeline, semantics, tool

_MODULES = (tool, partition, memory, pipeline, cuda, numerics, migration, semantics)


def _collect() -> tuple[type[Rule], ...]:
    rules = []
    for module in _MODULES:
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value.id
                and value.__module__ == module.__name__
                and not value.__name__.startswith("_")  # helpers for examples, not rules
            ):
                rules.append(value)
    return tuple(sorted(rules, key=lambda r: r.id))


RULES = _collect()
