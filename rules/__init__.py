"""nkilint's built-in rule pack, installed as ``nkilint_rules``.

It is registered through the ``nkilint.rules`` entry point exactly like a
third-party pack. Each family is a package whose ``__init__`` holds the
family's code table (``RULES``, in id order), with one module per rule
named after it; ``RULES`` here is the pack's table, family by family.
(Families not yet split into packages are single modules whose rule
classes are collected.)
"""

from __future__ import annotations

from types import ModuleType

from nkilint.rule import Rule

from . import cuda, memory, migration, numerics, partition, pipeline, semantics, tool

_FAMILIES = (tool, partition, memory, pipeline, cuda, numerics, migration, semantics)


def _family_rules(module: ModuleType) -> tuple[type[Rule], ...]:
    table = getattr(module, "RULES", None)
    if table is not None:
        return tuple(table)
    rules = [
        value for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Rule) and value.id and value.__module__ == module.__name__
        and not value.__name__.startswith("_")  # helpers for examples, not rules
    ]
    return tuple(sorted(rules, key=lambda r: r.id))


RULES: tuple[type[Rule], ...] = tuple(rule for family in _FAMILIES for rule in _family_rules(family))
