"""The ``llm`` notes backend on the packaged local model (SmolLM2-135M-Instruct on llama.cpp's
server, offline): a demo meeting's words at L3 give schema-valid notes, no answer rejected.

Slow on a loaded CPU (minutes: the schema-constrained sampling of up to ``max_tokens`` tokens),
so marked ``slow``: ``make test-slow`` runs it, ``make test`` leaves it out.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from speechkit.context import build_context
from speechkit.io.manifest import load_workspace
from speechkit.io.seglst import read_seglst
from speechkit.llm.server import stop_shared_servers
from speechkit.notes import Notes
from speechkit.recipe import load_recipe
from speechkit.stages import make_backend

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"


@pytest.mark.local_llm
def test_the_packaged_model_gives_schema_valid_notes_for_a_demo_meeting(monkeypatch):
    for name in ("SPEECHKIT_LLM_BASE_URL", "OPENAI_BASE_URL", "SPEECHKIT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    ws = load_workspace(DEMO)
    meeting = ws.scored_meetings[-1]
    words = next(iter(read_seglst(meeting.reference).values()))
    context = build_context(ws, meeting, 3, [], load_recipe("whisper-llm", level=3).context)
    spec = load_recipe("whisper-llm", level=3).stages["summarize"].as_dict()
    backend = make_backend("summarize", spec.pop("backend"), **{**spec, "timeout_s": 1200.0, "max_retries": 0})
    try:
        notes, stats = backend.summarize(words, context.notes)
    finally:
        stop_shared_servers()
    assert stats == {"backend": "llm", "chunks": 1, "rejected_chunks": {}, "failures": {}}
    assert Notes.from_dict(notes.to_dict()) == notes  # what the notes file holds reads back
    assert all(item.description for item in notes.action_items)
    assert notes.summary or notes.action_items or notes.decisions or notes.outline
