"""Strict reading of YAML inputs (the workspace manifest, recipes).

PyYAML's safe loader, with what a careless or hostile file could do refused before its data is
used: a key given twice in one mapping (an error, not a silent last-wins), aliases that expand the
document beyond :data:`MAX_NODES` values (an alias bomb is refused before it is built) or that
refer to the value containing them, and values nested too deeply for the parser (PyYAML's
composer recurses once per level). Each problem is a :class:`~speechkit.errors.FormatError` of
the class the caller names, with the file and, where known, the line.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from speechkit.errors import FormatError, brief

MAX_NODES = 1_000_000  # YAML nodes of a document with every alias expanded


class StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # merged keys may be overridden: that is what << is for
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:
                    continue  # an unhashable key: the base class reports it
                if first is not None:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {brief(key)} (first given on line {first + 1})",
                        key_node.start_mark)
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_expansion(node: yaml.Node, path: str | Path, error: type[FormatError]) -> None:
    """Refuse a document whose aliases expand it beyond MAX_NODES nodes, or refer to themselves."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    active: set[int] = set()
    while stack:
        current, done = stack.pop()
        key = id(current)
        if done:
            active.discard(key)
            sizes[key] = min(MAX_NODES + 1, 1 + sum(sizes[id(c)] for c in _children(current)))
            if sizes[key] > MAX_NODES:
                line = current.start_mark.line + 1
                raise error(path, f"aliases expand the document beyond {MAX_NODES:,} values "
                                  f"(an alias bomb?); write the values out", line=line)
            continue
        if key in sizes:
            continue
        if key in active:
            raise error(path, "an alias refers to the value that contains it (recursive alias)",
                        line=current.start_mark.line + 1)
        active.add(key)
        stack.append((current, True))
        stack.extend((c, False) for c in _children(current) if id(c) not in sizes)


def parse_yaml(text: str, path: str | Path, error: type[FormatError] = FormatError) -> tuple[Any, yaml.Node | None]:
    """The document in ``text`` (read from ``path``) and its node tree (None for an empty document),
    read strictly as the module docstring says; a problem is an ``error`` naming ``path``."""
    try:
        loader = StrictLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None, None
            _check_expansion(node, path, error)
            return loader.construct_document(node), node
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise error(path, f"invalid YAML: {getattr(exc, 'problem', None) or brief(str(exc))}",
                    line=mark.line + 1 if mark else None) from None
    except RecursionError:
        raise error(path, "invalid YAML: values nested too deeply") from None
