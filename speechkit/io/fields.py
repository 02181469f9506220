"""Checking a JSON document's values field by field: an error names the field and what is wrong."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class FieldError(ValueError):
    """A value of a document is malformed: ``field`` (``action_items[2].due``) and what is wrong."""

    def __init__(self, field: str, problem: str) -> None:
        self.field, self.problem = field, problem
        super().__init__(f"{field}: {problem}" if field else problem)


def checked_mapping(value: Any, where: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    """``value`` if it is a JSON object whose keys are all ``allowed``; else :class:`FieldError` at ``where``."""
    if not isinstance(value, dict):
        raise FieldError(where, f"expected an object, got {type(value).__name__}")
    unknown = sorted(set(map(str, value)) - set(allowed))
    if unknown:
        raise FieldError(where, f"unknown key(s) {', '.join(unknown)[:200]}; allowed: {', '.join(allowed)}")
    return value
