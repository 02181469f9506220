"""The committed demo workspace (workspaces/demo): structure and references, no ASR.

The ASR figures (Whisper tiny.en WER, term and number recall) are measured in docs/synth.md.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import soundfile as sf
from whisper_normalizer.english import EnglishTextNormalizer

from speechkit.io.manifest import load_workspace
from speechkit.io.rttm import read_rttm
from speechkit.io.seglst import read_seglst

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"


@pytest.fixture(scope="module")
def demo():
    return load_workspace(DEMO)


@pytest.fixture(scope="module")
def truth() -> dict:
    return json.loads((DEMO / "truth" / "state.json").read_text(encoding="utf-8"))


def _ref(m):
    return next(iter(read_seglst(m.reference).values()))


def _words(text: str) -> str:
    return " " + " ".join(re.sub(r"[^a-z0-9' ]", " ", text.lower()).split()) + " "


def test_demo_size_and_audio():
    total = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file())
    assert total <= 40 * 1024 * 1024
    assert all(p.suffix in {".flac", ".json", ".rttm", ".md", ".txt", ".yaml"} for p in DEMO.rglob("*") if p.is_file())


def test_demo_counts(demo):
    assert len(demo.people) >= 5
    assert len(demo.meetings) >= 5
    minutes = 0.0
    for m in demo.meetings:
        info = sf.info(str(m.audio))
        assert (info.samplerate, info.channels) == (16000, 1)
        assert 60 <= info.duration <= 180, m.id
        minutes += info.duration / 60
    assert 8 <= minutes <= 12
    for p in demo.people:  # every person speaks in at least two meetings
        assert sum(any(s.speaker == p.id for s in _ref(m).segments) for m in demo.meetings) >= 2, p.id
        assert p.enrollments


def test_demo_terms_spoken_in_spoken_forms(demo, truth):
    """Every term of a meeting's set is in its (semantic-verbatim) reference; most are said unlike they are written."""
    spoken = truth["spoken_forms"]
    jargon, numbers = set(), set()
    for m in demo.meetings:
        verbatim = f" {_ref(m).text} "
        for term in (*m.terms.jargon, *m.terms.numbers):
            assert f" {term} " in verbatim, (m.id, term)
        jargon |= set(m.terms.jargon)
        numbers |= set(m.terms.numbers)
    assert len(jargon) >= 20
    assert len(numbers) >= 10
    differ = [t for t in jargon | numbers if _words(spoken[t]) != _words(t)]
    assert len(differ) >= 15  # identifiers and numbers are said differently from how they are written


def test_demo_word_times_inside_rttm_turns(demo):
    for m in demo.meetings:
        turns = next(iter(read_rttm(m.rttm).values())).segments
        for seg in _ref(m).segments:
            own = [t for t in turns if t.speaker == seg.speaker]
            for w in seg.words:
                assert w.start < w.end
                assert any(t.start - 1e-3 <= w.start and w.end <= t.end + 1e-3 for t in own), (m.id, w)


def test_demo_mixes_clean_and_hard_meetings_with_overlap(demo):
    stats = demo.metadata["meetings"]
    kinds = {s["condition"]["kind"] for s in stats.values()}
    assert "clean" in kinds and kinds & {"room", "hybrid"}
    assert "hybrid" in kinds
    assert sum(s["backchannels"] for s in stats.values()) > 0
    assert sum(s["overlapping_turns"] for s in stats.values()) > 0


def test_demo_voices_are_distinguishable(demo):
    sim = demo.metadata["voice_similarity"]
    assert sim["separable"] and sim["within_min"] > sim["cross_max"]
    assert set(sim["within"]) == {p.id for p in demo.people}


def test_demo_enrollment_text_not_in_meetings(demo, truth):
    norm = EnglishTextNormalizer()
    meetings = [norm(_ref(m).text) for m in demo.meetings]
    for text in truth["enrollment_texts"].values():
        for sentence in re.split(r"(?<=\.)\s+", text):
            assert all(norm(sentence) not in meeting for meeting in meetings)


def test_demo_artifacts_registered(demo):
    kinds = {a.kind for a in demo.artifacts}
    assert {"agenda", "email", "slides"} <= kinds
    for m in demo.meetings:
        assert any(a.kind == "agenda" for a in demo.artifacts_for(m.id))
