"""How long an answer a JSON schema allows, so a request's ``max_tokens`` never cuts a valid one.

A server that enforces the schema (llama.cpp's grammar, vLLM's guided decoding) ends the answer
when its JSON is complete; the schema's ``maxLength`` and ``maxItems`` bound how long that can be.
An answer cut by ``max_tokens`` before then does not parse: a stage that asks for structured output
sets ``max_tokens`` to :func:`answer_token_limit` of its schema (every token is at least one
character, so the schema's longest answer in characters bounds it in tokens).
"""
from __future__ import annotations

import json
import math
from typing import Any

#: Most characters a value of an unbounded schema may take (numbers, booleans, null, an unbounded string).
_UNBOUNDED = 64
#: Share added for escapes (``\\n``, ``\\"``: two characters for one) and whitespace between tokens.
_ESCAPE_MARGIN = 0.25


def longest_answer(schema: dict[str, Any]) -> int:
    """The most characters a compact JSON value valid under ``schema`` takes (strings without
    escapes, one space after every ``,`` and ``:``). Unbounded arrays and objects without
    ``properties`` are refused: their answers have no bound."""
    kind = schema.get("type")
    if kind == "string":
        return 2 + int(schema.get("maxLength", _UNBOUNDED))
    if kind == "array":
        if "maxItems" not in schema:
            raise ValueError("an array without maxItems has no longest answer")
        most = int(schema["maxItems"])
        return 2 + most * longest_answer(schema.get("items", {"type": "string"})) + 2 * max(most - 1, 0)
    if kind == "object":
        properties = schema.get("properties")
        if not properties:
            raise ValueError("an object without properties has no longest answer")
        return (2 + sum(len(json.dumps(name)) + 2 + longest_answer(value) for name, value in properties.items())
                + 2 * (len(properties) - 1))
    return _UNBOUNDED


def answer_token_limit(schema: dict[str, Any]) -> int:
    """A ``max_tokens`` above the longest answer ``schema`` allows, escapes and spaces included."""
    return math.ceil(longest_answer(schema) * (1 + _ESCAPE_MARGIN))
