"""The longest answer a JSON schema allows bounds the answer's tokens; raw newlines in strings parse."""
from __future__ import annotations

import json

import pytest

from speechkit.llm.client import extract_json
from speechkit.llm.schema import answer_token_limit, longest_answer
from speechkit.stages.summarize.llm import notes_schema


def _longest_instance(schema: dict):
    """The valid value of ``schema`` with every string and list at its bound."""
    if schema["type"] == "string":
        return "x" * schema["maxLength"]
    if schema["type"] == "array":
        return [_longest_instance(schema["items"]) for _ in range(schema["maxItems"])]
    return {name: _longest_instance(value) for name, value in schema["properties"].items()}


@pytest.mark.parametrize("max_items, max_summary_chars", [(1, 50), (5, 600), (12, 3000)])
def test_the_longest_valid_notes_fit_the_bound_exactly(max_items, max_summary_chars):
    schema = notes_schema(max_items, max_summary_chars)
    longest = json.dumps(_longest_instance(schema), separators=(", ", ": "), ensure_ascii=False)
    assert len(longest) == longest_answer(schema)
    assert answer_token_limit(schema) >= 1.25 * len(longest)


def test_a_schema_without_bounds_has_no_longest_answer():
    with pytest.raises(ValueError, match="maxItems"):
        longest_answer({"type": "array", "items": {"type": "string", "maxLength": 3}})
    with pytest.raises(ValueError, match="properties"):
        longest_answer({"type": "object"})


def test_a_raw_newline_inside_a_string_parses():
    # what SmolLM2 wrote under llama.cpp's JSON grammar, whose string rule admits control characters
    text = '{ "summary": "Morning everyone.\n[01:32] SPEAKER_00: so we", "action_items": []}'
    assert extract_json(text) == {"summary": "Morning everyone.\n[01:32] SPEAKER_00: so we", "action_items": []}
