"""Option dataclasses: documented, built from recipe mappings, every value checked.

Every stage backend declares its options as a frozen dataclass deriving from
:class:`StageOptions`, each attribute documented in the class docstring (a recipe's ``context``
and ``resources`` blocks are such dataclasses too). A recipe's mapping becomes one through
:meth:`StageOptions.from_dict`, which refuses a key the dataclass does not have (with the nearest
known key as a hint); every value, whether given in a recipe or in Python, is then checked against
its field:

- its type (``int``, ``float``, ``str``, ``bool``, ``X | None``, ``tuple[float, ...]``, nested
  options);
- ``Literal[...]`` fields take one of their choices (``mode: Literal["rewrite", "choose"]``);
- numbers are finite, and a field declared with :func:`bounded` lies in its range
  (``chunk_s: float = bounded(30.0, gt=0, le=600)``; for a list, each item does).

A subclass's own ``__post_init__`` checks only what relates several fields, after calling
``super().__post_init__()``. Each problem is an :class:`OptionError` naming the option's dotted
path; the recipe loader adds the file.
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import math
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
class Bounds:
    """The range a number option must lie in: ``ge``/``gt`` below, ``le``/``lt`` above (None: no limit)."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    def __contains__(self, value: float) -> bool:
        return ((self.ge is None or value >= self.ge) and (self.gt is None or value > self.gt)
                and (self.le is None or value <= self.le) and (self.lt is None or value < self.lt))

    def __str__(self) -> str:
        below = ("[", self.ge) if self.ge is not None else ("(", self.gt) if self.gt is not None else None
        above = ("]", self.le) if self.le is not None else (")", self.lt) if self.lt is not None else None
        if below and above:
            return f"in {below[0]}{_number(below[1])}, {_number(above[1])}{above[0]}"
        if below:
            return f"{'>=' if below[0] == '[' else '>'} {_number(below[1])}"
        return f"{'<=' if above[0] == ']' else '<'} {_number(above[1])}" if above else "any"


def bounded(default: Any, *, ge: float | None = None, gt: float | None = None, le: float | None = None,
            lt: float | None = None) -> Any:
    """A dataclass field with ``default`` whose value (each item, for a list) must lie in the range given."""
    return dataclasses.field(default=default, metadata={"bounds": Bounds(ge=ge, gt=gt, le=le, lt=lt)})


def command_line(flag: str) -> Any:
    """A field that only the command line sets, by ``flag`` (the program a backend runs,
    ``--system-command``): never a recipe, ``--set`` or run.json (:meth:`StageOptions.from_dict`
    refuses its key), and left out of :meth:`StageOptions.as_dict` (a stage's key, run.json's
    recipe). Empty until :meth:`StageOptions.with_command_line` sets it."""
    return dataclasses.field(default=(), init=False, metadata={"command_line": flag})


@dataclasses.dataclass(frozen=True)
class StageOptions:
    """Base class of every option dataclass (a stage backend's, the recipe's context and resources)."""

    def __post_init__(self) -> None:
        """Check every field (type, choices, finite and bounded numbers); convert ints to floats etc."""
        hints = _hints(type(self))
        for f in dataclasses.fields(self):
            if f.init:
                value = getattr(self, f.name)
                checked = _check(value, hints[f.name], f.name, f.metadata.get("bounds"))
                if checked is not value:
                    object.__setattr__(self, f.name, checked)

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any] | None, where: str = "options") -> T:
        """The options given in ``data``; attributes it leaves out keep their defaults.

        ``where`` is the dotted path of ``data`` in the recipe (``stages.vad``), used in errors.
        """
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise OptionError(where, f"expected a mapping of option names to values, got {brief(data, 60)}")
        known = {f.name: f for f in dataclasses.fields(cls) if f.init}
        given_on_command_line = cls.command_line_flags()
        hints = _hints(cls)
        values = {}
        for key, value in data.items():
            if key in given_on_command_line.values():
                flag = next(f for f, name in given_on_command_line.items() if name == key)
                raise OptionError(f"{where}.{key}", f"given only on the command line ({flag}), never in a recipe "
                                                    "or with --set")
            if key not in known:
                raise OptionError(f"{where}.{key}", _unknown(str(key), known))
            values[key] = _check(value, hints[key], f"{where}.{key}", known[key].metadata.get("bounds"))
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
        """The options as plain data (nested options included), as a recipe would give them (the
        fields only the command line sets left out)."""
        data = dataclasses.asdict(self)
        return _plain({f.name: data[f.name] for f in dataclasses.fields(self) if f.init})

    @classmethod
    def command_line_flags(cls) -> dict[str, str]:
        """The fields only the command line sets (:func:`command_line`): flag -> field name."""
        return {f.metadata["command_line"]: f.name for f in dataclasses.fields(cls) if "command_line" in f.metadata}

    def with_command_line(self: T, flag: str, value: tuple[str, ...]) -> T:
        """These options with the field that ``flag`` sets (:func:`command_line`) given ``value``,
        a list of strings."""
        name = self.command_line_flags()[flag]
        checked = _check(value, tuple[str, ...], flag)
        copy = dataclasses.replace(self)
        object.__setattr__(copy, name, tuple(checked))
        return copy


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _unknown(key: str, known: Mapping[str, Any]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    if close:
        return f"unknown option (did you mean {close[0]}?)"
    return f"unknown option; known: {', '.join(sorted(known)) or 'none'}"


def _in_bounds(value: float, bounds: Bounds | None, kind: str, where: str) -> None:
    if bounds is not None and value not in bounds:
        raise OptionError(where, f"expected {kind} {bounds}, got {brief(value, 60)}")


def _choice(value: Any, choices: tuple[Any, ...], where: str) -> Any:
    """``value`` if it is one of ``choices`` (of the same type: ``true`` is not ``1``)."""
    if any(type(value) is type(choice) and value == choice for choice in choices):
        return value
    problem = f"expected one of {', '.join(map(str, choices))}, got {brief(value, 60)}"
    if isinstance(value, str):
        close = difflib.get_close_matches(value, [str(c) for c in choices], n=1, cutoff=0.6)
        problem += f" (did you mean {close[0]}?)" if close else ""
    raise OptionError(where, problem)


def _check(value: Any, hint: Any, where: str, bounds: Bounds | None = None) -> Any:
    """``value`` checked against a type hint and ``bounds``; nested option mappings become their dataclass."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        problems = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _check(value, arg, where, bounds)
            except OptionError as exc:
                problems.append(exc.problem)
        raise OptionError(where, problems[0] if problems else f"bad value {brief(value, 60)}")
    if origin is typing.Literal:
        return _choice(value, typing.get_args(hint), where)
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
        _in_bounds(value, bounds, "an integer", where)
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise OptionError(where, f"expected a number, got {brief(value, 60)}")
        try:
            number = float(value)
        except OverflowError:  # an integer beyond the largest float
            number = math.inf
        if not math.isfinite(number):
            raise OptionError(where, f"expected a finite number, got {brief(value, 60)}")
        _in_bounds(number, bounds, "a number", where)
        return number
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
        checked = [_check(v, item, f"{where}[{i}]", bounds) for i, v in enumerate(value)]
        return value if type(value) is origin and all(c is v for c, v in zip(checked, value)) else origin(checked)
    if origin is dict or hint is dict:
        if not isinstance(value, Mapping):
            raise OptionError(where, f"expected a mapping, got {brief(value, 60)}")
        return value if type(value) is dict else dict(value)
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
