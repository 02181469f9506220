"""Stage options: documented dataclasses built from recipe mappings that reject unknown keys.

Every stage backend declares its options as a frozen dataclass deriving from
:class:`StageOptions`, each attribute documented in the class docstring. A recipe's mapping for
a stage becomes such a dataclass through :meth:`StageOptions.from_dict`, which refuses a key the
dataclass does not have (with the nearest known key as a hint), a value of the wrong type, and a
value the dataclass's own ``__post_init__`` checks refuse. Each problem is an
:class:`OptionError` naming the option's dotted path; the recipe loader adds the file.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from speechkit.errors import brief

T = TypeVar("T", bound="StageOptions")


class OptionError(ValueError):
    """An option of a recipe is unknown or has a bad value; ``field`` is its dotted path."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


@dataclasses.dataclass(frozen=True)
class StageOptions:
    """Base class of every stage backend's options (no options of its own)."""

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any] | None, where: str = "options") -> T:
        """The options given in ``data``; attributes it leaves out keep their defaults.

        ``where`` is the dotted path of ``data`` in the recipe (``stages.vad``), used in errors.
        """
        data = dict(data or {})
        if not isinstance(data, dict):
            raise OptionError(where, "expected a mapping of option names to values")
        known = {f.name: f for f in dataclasses.fields(cls) if f.init}
        hints = typing.get_type_hints(cls)
        values = {}
        for key, value in data.items():
            if key not in known:
                raise OptionError(f"{where}.{key}", _unknown(str(key), known))
            values[key] = _check(value, hints[key], f"{where}.{key}")
        try:
            return cls(**values)
        except OptionError:
            raise
        except (TypeError, ValueError) as exc:
            raise OptionError(where, str(exc)) from None

    def with_overrides(self: T, **overrides: Any) -> T:
        """These options with some replaced, checked as :meth:`from_dict` checks a recipe's."""
        if not overrides:
            return self
        current = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        return type(self).from_dict({**current, **overrides}, "options")

    def as_dict(self) -> dict[str, Any]:
        """The options as plain data (nested options included), as a recipe would give them."""
        return _plain(dataclasses.asdict(self))


def _unknown(key: str, known: Mapping[str, Any]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    if close:
        return f"unknown option (did you mean {close[0]}?)"
    return f"unknown option; known: {', '.join(sorted(known)) or 'none'}"


def _check(value: Any, hint: Any, where: str) -> Any:
    """``value`` checked against a type hint; nested option mappings become their dataclass."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        problems = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _check(value, arg, where)
            except OptionError as exc:
                problems.append(exc.problem)
        raise OptionError(where, problems[0] if problems else f"bad value {value!r}")
    if isinstance(hint, type) and issubclass(hint, StageOptions):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise OptionError(where, f"expected a mapping, got {brief(value, 60)}")
        return hint.from_dict(value, where)
    if hint is typing.Any:
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise OptionError(where, f"expected true or false, got {brief(value, 60)}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionError(where, f"expected an integer, got {brief(value, 60)}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise OptionError(where, f"expected a number, got {brief(value, 60)}")
        return float(value)
    if hint is str:
        if isinstance(value, os.PathLike):  # a folder or file given from Python
            return os.fspath(value)
        if not isinstance(value, str):
            raise OptionError(where, f"expected a string, got {brief(value, 60)}")
        return value
    if origin in (tuple, list):
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise OptionError(where, f"expected a list, got {brief(value, 60)}")
        (item,) = typing.get_args(hint)[:1] or (typing.Any,)
        checked = [_check(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(checked) if origin is tuple else checked
    if origin is dict or hint is dict:
        if not isinstance(value, Mapping):
            raise OptionError(where, f"expected a mapping, got {brief(value, 60)}")
        return dict(value)
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
