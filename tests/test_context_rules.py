"""``context.rules: paper``: each of the OSynth paper's level rules in the context built, and the
option on every shipped recipe (docs/systems.md, "Level rules")."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from speechkit.cli import main
from speechkit.context import build_context
from speechkit.core.options import OptionError
from speechkit.lm import general_lm_text
from speechkit.recipe import ContextBudget, load_recipe, recipes_dir
from speechkit.stages.correct import Vocabulary
from speechkit.stages.correct.llm import LLMCorrector
from speechkit.stages.identify_chat import ChatIdentifier, open_name
from speechkit.transcript import Segment, Transcript, Word
from tests.test_context import _prior, ws  # noqa: F401  (the fixture)

PAPER, OURS = ContextBudget(rules="paper"), ContextBudget()


def test_no_invite_speaker_count_under_the_papers_rules(ws):  # noqa: F811
    invited = ws.meetings[1]  # m2 invites p1 and p2
    assert build_context(ws, invited, 3, _prior(), OURS).expected_speakers == 2
    assert build_context(ws, invited, 3, _prior(), PAPER).expected_speakers is None


def test_every_enrolled_persons_enrollment_not_only_the_invitees(ws):  # noqa: F811
    invited = ws.meetings[1]  # p3 (Noor) is enrolled but not invited
    assert set(build_context(ws, invited, 3, _prior(), OURS).enrollments) == {"Priya Raman"}
    paper = build_context(ws, invited, 3, _prior(), PAPER)
    assert set(paper.enrollments) == {"Priya Raman", "Noor Haddad"}
    assert any(e["source"] == "voice enrollments of the enrolled" for e in paper.log)


@pytest.mark.parametrize("level", [2, 3])
def test_no_voice_memory_l2_is_the_earlier_outputs_as_text(ws, level):  # noqa: F811
    ours = build_context(ws, ws.meetings[1], level, _prior(), OURS)
    assert ours.prior_speakers and ours.stable_labels
    paper = build_context(ws, ws.meetings[1], level, _prior(), PAPER)
    assert paper.prior_speakers == {} and not paper.stable_labels
    assert [e.meeting for e in paper.earlier] == ["m1"] and paper.earlier[0].transcript.segments
    assert paper.terms == ours.terms  # the earlier outputs' text stays


def test_identification_is_asked_at_every_level_without_enrollments(ws):  # noqa: F811
    for level in (1, 2):
        assert build_context(ws, ws.meetings[1], level, _prior(), PAPER).identify_unenrolled
        assert not build_context(ws, ws.meetings[1], level, _prior(), OURS).identify_unenrolled
    assert not build_context(ws, ws.meetings[1], 3, _prior(), PAPER).identify_unenrolled  # enrollments at L3


def test_the_chat_identifier_asks_an_open_question_without_enrollments():
    identifier = ChatIdentifier(ChatIdentifier.Options(base_url="http://127.0.0.1:9/v1", model="x"))
    messages = identifier.messages({}, np.zeros(1600, dtype=np.float32))
    texts = [part["text"] for part in messages[-1]["content"] if part["type"] == "text"]
    assert "What is the name of the person speaking" in texts[-1] and not any("Enrollment" in t for t in texts)
    assert open_name('{"name": "dana   smith"}') == "Dana Smith"
    assert open_name("unknown") is None and open_name("") is None
    assert open_name("Sam from the platform team, I think") == "Sam From The"  # cut to three words


def test_the_general_ngram_at_every_level_and_never_the_workspace_text(ws):  # noqa: F811
    general = general_lm_text()
    for level in (1, 2, 3):
        paper = build_context(ws, ws.meetings[1], level, _prior(), PAPER)
        assert paper.biasing.lm_text == general
    assert build_context(ws, ws.meetings[1], 1, [], OURS).biasing.lm_text is None
    assert "camt" not in general.split() and "grafana" not in general.split()
    assert {"the", "meeting", "tomorrow"} <= set(general.split())
    # the workspace text at L3 stays the correction's vocabulary text, not the recognizer's n-gram
    assert "camt.054" in build_context(ws, ws.meetings[1], 3, _prior(), PAPER).lm_text


def test_the_correction_keeps_only_the_papers_length_guard(ws, monkeypatch):  # noqa: F811
    assert build_context(ws, ws.meetings[1], 3, _prior(), PAPER).turn_guards is False
    assert build_context(ws, ws.meetings[1], 3, _prior(), OURS).turn_guards is True
    words = [Word(w, i * 0.5, i * 0.5 + 0.4, 0.9) for i, w in enumerate("so we will move the pax dot oh oh eight "
                                                                         "migration to next week i think".split())]
    transcript = Transcript("m2", [Segment.from_words(words, "SPEAKER_00")])
    corrector = LLMCorrector(mode="rewrite", base_url="http://127.0.0.1:9/v1", model="x")
    shortened = "we move the pacs.008 migration"  # drops most of the turn's words
    monkeypatch.setattr(corrector, "client", _Stub([shortened]))
    guarded = corrector.correct(transcript, Vocabulary(terms=("pacs.008",)))
    assert guarded.transcript.segments[0].text == transcript.segments[0].text  # drops-words: rejected
    assert guarded.stats.rejected_turns[0].reason == "drops-words"
    paper = corrector.correct(transcript, Vocabulary(terms=("pacs.008",), turn_guards=False))
    assert paper.transcript.segments[0].text == shortened and not paper.stats.rejected_turns
    assert all(w.start is not None for w in paper.transcript.segments[0].words)
    monkeypatch.setattr(corrector, "client", _Stub([shortened, "one turn too many"]))
    wrong_length = corrector.correct(transcript, Vocabulary(terms=("pacs.008",), turn_guards=False))
    assert wrong_length.transcript.segments[0].text == transcript.segments[0].text
    assert wrong_length.stats.rejected_batches[0].reason == "length-mismatch"


class _Stub:
    """A client whose every batch answer is ``answer``."""

    def __init__(self, answer):
        self.answer = answer

    def complete(self, messages, kind=list):
        return list(self.answer)


@pytest.mark.parametrize("path", sorted(recipes_dir().glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_recipe_takes_the_papers_rules(path):
    recipe = load_recipe(path, level=3).with_settings({"context.rules": "paper"})
    assert recipe.context.rules == "paper" and recipe.to_dict()["context"]["rules"] == "paper"


def test_an_unknown_rule_set_is_one_line(capsys, tmp_path):
    with pytest.raises(OptionError):
        ContextBudget(rules="osynth")
    demo = Path(__file__).resolve().parents[1] / "workspaces" / "demo"
    code = main(["recipe", "-L", "1", "--workspace", str(demo), "--out", str(tmp_path / "run"),
                 "--set", "context.rules=osynth"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "context.rules" in err[0] and "osynth" in err[0], err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow  # a whole run of the ctc recipe (a tiny CTC model, no Whisper) on real speech
def test_a_run_under_the_papers_rules_records_them_and_decodes_with_the_general_ngram(make_real_workspace,
                                                                                      tiny_model, tmp_path):
    workspace = make_real_workspace(tmp_path / "ws")
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "speechkit", "recipe", "-L", "1", "--asr", "ctc", "--workspace",
                           str(workspace), "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
                           "--set", f"stages.asr.model={tiny_model}", "--set", "context.rules=paper"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    info = json.loads((out / "run.json").read_text())
    assert info["recipe"]["context"]["rules"] == "paper"
    context = json.loads(next((out / "context").glob("*.json")).read_text())
    sources = [entry["source"] for entry in context["additions"]]
    assert "general English n-gram text (words, the same at every level)" in sources
    assert "Level rules: `paper`" in (out / "report.md").read_text()
