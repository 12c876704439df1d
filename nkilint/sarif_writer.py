"""Serialising sarif-om objects to SARIF 2.1.0 JSON that follows the final schema.

sarif-om's classes were generated from a pre-release 2.1.0 schema and its
stock serialiser drops any value equal to the attrs default (so a result's
``level: "warning"`` vanishes) while its PropertyBag only knows ``tags``.
This writer:

* uses each attribute's ``schema_property_name`` metadata for the JSON name;
* writes exactly the attributes that were set when the object was built with
  ``make()`` (defaults neither leak nor vanish), and for other objects every
  value that is not None and differs from the default;
* renames the pre-release ``Suppression.state`` to the final ``status``;
* writes extra property-bag entries (``precision``, ...) set with ``make``.
"""

from __future__ import annotations

from typing import Any

import attr
import sarif_om

_EXPLICIT = "_nkilint_explicit"
_EXTRA = "_nkilint_extra"

# Pre-release names that the final 2.1.0 schema renamed.
_RENAMED = {(sarif_om.Suppression, "state"): "status"}


def make(cls: type, _extra: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    """Build a sarif-om object and remember which attributes were set.

    ``_extra`` adds entries that the sarif-om class does not model (used for
    PropertyBag keys other than ``tags``).
    """
    obj = cls(**kwargs)
    object.__setattr__(obj, _EXPLICIT, frozenset(k for k, v in kwargs.items() if v is not None))
    if _extra:
        object.__setattr__(obj, _EXTRA, dict(_extra))
    return obj


def to_json(value: Any) -> Any:
    """The JSON-ready form of a sarif-om object graph."""
    if attr.has(type(value)):
        return _object(value)
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


def _object(obj: Any) -> dict[str, Any]:
    explicit = getattr(obj, _EXPLICIT, None)
    out: dict[str, Any] = {}
    for field in attr.fields(type(obj)):
        value = getattr(obj, field.name)
        if value is None:
            continue
        if explicit is not None:
            if field.name not in explicit:
                continue
        elif field.default is not attr.NOTHING and value == field.default:
            continue
        name = _RENAMED.get((type(obj), field.name), field.metadata.get("schema_property_name", field.name))
        out[name] = to_json(value)
    extra = getattr(obj, _EXTRA, None)
    if extra:
        for key, value in extra.items():
            out[key] = to_json(value)
    return out
