"""Synthetic workspaces: spoken forms, timeline invariants, and a small generated workspace checked
against its own audio (word times, RTTM turns, terms, enrollments, determinism)."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from whisper_normalizer.english import EnglishTextNormalizer

from speechkit.io.manifest import load_workspace
from speechkit.io.rttm import read_rttm
from speechkit.io.seglst import read_seglst
from speechkit.synth import synthesize_workspace
from speechkit.synth.acoustics import Codec, _codec
from speechkit.synth.dialogue import Turn
from speechkit.synth.mix import place
from speechkit.synth.spoken import Piece, date_spoken, number_words, ordinal_words, paired_words, plain
from speechkit.synth.voices import SAMPLE_RATE, Synthesizer, Utterance, voice


def test_number_words():
    assert number_words(0) == "zero"
    assert number_words(120) == "one hundred twenty"
    assert number_words(45000) == "forty five thousand"
    assert ordinal_words(31) == "thirty first"
    assert ordinal_words(20) == "twentieth"
    assert paired_words(4127) == "forty one twenty seven"
    assert paired_words(1200) == "twelve hundred"
    assert paired_words(4105) == "forty one oh five"
    import datetime as dt
    assert date_spoken(dt.date(2026, 7, 31)) == "July thirty first"
    with pytest.raises(ValueError):
        number_words(-1)


def test_piece_needs_one_tts_word_per_verbatim_word():
    with pytest.raises(ValueError):
        Piece(canonical="pacs.008", words=("pacs", "dot"), say=("packs",))
    pieces = plain("Okay, let's start.")
    assert [p.words for p in pieces] == [("Okay",), ("let's",), ("start",)]
    assert [p.say for p in pieces] == [("Okay,",), ("let's",), ("start.",)]


def _utt(n_words: int, word: float = 0.3) -> Utterance:
    spans = tuple((round(i * word, 3), round(i * word + word * 0.8, 3)) for i in range(n_words))
    return Utterance(np.full(int(n_words * word * SAMPLE_RATE), 0.1, np.float32), spans)


def test_placement_has_no_self_overlap_and_backchannels_overlay():
    rng = np.random.default_rng(0)
    turns, utts = [], []
    for i in range(60):
        if i % 3 == 2:
            turns.append(Turn("B" if turns[-1].speaker == "A" else "A", plain("yeah"), backchannel=True))
            utts.append(_utt(1))
        else:
            turns.append(Turn("AB"[i % 2], plain(" ".join(["word"] * 12)), interruptible=True))
            utts.append(_utt(12))
    placed = place(turns, utts, rng)
    by_speaker: dict[str, list] = {}
    for p in placed:
        by_speaker.setdefault(p.speaker, []).append((p.spans[0][0], p.end))
        assert len(p.words) == len(p.spans)
    for spans in by_speaker.values():
        spans.sort()
        assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:])), "a person overlaps themselves"
    backchannels = [p for p in placed if p.turn.backchannel]
    assert backchannels
    for bc in backchannels:  # placed inside someone else's speech, not on the clock
        assert any(q.speaker != bc.speaker and q.spans[0][0] < bc.spans[0][0] < q.end for q in placed)
    assert any(p.truncated for p in placed)


def test_codec_removes_high_frequencies():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(SAMPLE_RATE * 2) * 0.1
    y = _codec(x, Codec())
    spectrum = np.abs(np.fft.rfft(y)) ** 2
    freqs = np.fft.rfftfreq(len(y), 1 / SAMPLE_RATE)
    assert spectrum[freqs > 4500].sum() < 0.01 * spectrum[(freqs > 500) & (freqs < 3000)].sum()
    assert spectrum[freqs < 150].sum() < 0.05 * spectrum[(freqs > 500) & (freqs < 3000)].sum()


@pytest.mark.parametrize("voice_id", ["piper", "espeak-us-m3"])
def test_tts_word_spans_are_ordered_and_deterministic(voice_id):
    tts = Synthesizer()
    say = ["The", "packs", "dot", "zero", "zero", "eight", "mapping", "is", "done."]
    tts.reset(11)
    first = tts.speak(say, voice(voice_id))
    tts.reset(11)
    again = tts.speak(say, voice(voice_id))
    assert np.array_equal(first.audio, again.audio) and first.spans == again.spans
    assert len(first.spans) == len(say)
    assert all(s < e for s, e in first.spans)
    assert all(a[1] <= b[0] + 1e-3 for a, b in zip(first.spans, first.spans[1:]))
    assert first.spans[-1][1] <= first.duration + 1e-3
    # the words are where the sound is: the span of the audio is mostly covered by words
    voiced = sum(e - s for s, e in first.spans)
    assert voiced > 0.5 * first.duration


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes(small_synth_workspace, small_synth_options, tmp_path):
    again = tmp_path / "again"
    synthesize_workspace(again, small_synth_options)
    assert _files(small_synth_workspace) == _files(again)
    assert any(name.endswith(".flac") for name in _files(small_synth_workspace))


def test_small_workspace_loads_with_references(small_synth_workspace):
    ws = load_workspace(small_synth_workspace)
    assert len(ws.people) == 3 and len(ws.meetings) == 2
    for person in ws.people:
        assert person.enrollments and sf.info(str(person.enrollments[0])).samplerate == SAMPLE_RATE
    for m in ws.meetings:
        info = sf.info(str(m.audio))
        assert (info.samplerate, info.channels, info.format) == (SAMPLE_RATE, 1, "FLAC")
        assert 10 < info.duration < 60
        assert m.reference and m.rttm and m.canonical and m.terms is not None
    assert {a.kind for a in ws.artifacts} >= {"agenda", "email"}


def _meeting_refs(m):
    ref = next(iter(read_seglst(m.reference).values()))
    rttm = next(iter(read_rttm(m.rttm).values()))
    return ref, rttm


def test_word_times_fall_inside_the_persons_rttm_turns(small_synth_workspace):
    ws = load_workspace(small_synth_workspace)
    for m in ws.meetings:
        ref, rttm = _meeting_refs(m)
        duration = sf.info(str(m.audio)).duration
        for seg in ref.segments:
            assert seg.speaker in m.attendees
            assert seg.speaker_name == ws.person(seg.speaker).name
            turns = [t for t in rttm.segments if t.speaker == seg.speaker]
            for w in seg.words:
                assert 0 <= w.start < w.end <= duration
                assert any(t.start - 1e-3 <= w.start and w.end <= t.end + 1e-3 for t in turns), (m.id, w)
        for person in {t.speaker for t in rttm.segments}:
            own = sorted((t.start, t.end) for t in rttm.segments if t.speaker == person)
            assert all(b[0] >= a[1] for a, b in zip(own, own[1:])), f"{person} overlaps themselves in {m.id}"


def test_words_are_where_the_clean_audio_is_loud(small_synth_workspace):
    """In a clean meeting the words carry the sound; between turns there is only faint noise."""
    ws = load_workspace(small_synth_workspace)
    clean = [m for m in ws.meetings if ws.metadata["meetings"][m.id]["condition"]["kind"] == "clean"]
    assert clean
    for m in clean:
        audio, rate = sf.read(str(m.audio), dtype="float32")
        ref, _ = _meeting_refs(m)
        words = np.zeros(len(audio), bool)
        turns = np.zeros(len(audio), bool)
        for seg in ref.segments:
            turns[max(0, int((seg.start - 0.1) * rate)):int((seg.end + 0.1) * rate)] = True
            for w in seg.words:
                words[int(w.start * rate):int(w.end * rate)] = True
        assert (~turns).sum() > rate // 2  # there are pauses to compare with
        inside = np.sqrt(np.mean(audio[words] ** 2))
        between = np.sqrt(np.mean(audio[~turns] ** 2))
        assert inside > 10 * between


def test_terms_spoken_in_a_meeting_are_in_its_reference(small_synth_workspace):
    """The semantic-verbatim reference writes each spoken term canonically (the audio says its spoken form)."""
    ws = load_workspace(small_synth_workspace)
    for m in ws.meetings:
        ref, _ = _meeting_refs(m)
        verbatim = f" {ref.text} "
        canonical = next(iter(read_seglst(m.canonical).values())).text
        terms = (*m.terms.jargon, *m.terms.numbers)
        assert terms
        for term in terms:
            assert f" {term} " in verbatim, (m.id, term)
            assert term in canonical, (m.id, term)
        for term in set(ws.terms.jargon) - set(terms):  # terms not in the set were not spoken
            assert f" {term} " not in verbatim, (m.id, term)


def test_enrollment_text_never_occurs_in_a_meeting(small_synth_workspace):
    ws = load_workspace(small_synth_workspace)
    norm = EnglishTextNormalizer()
    meetings = [norm(_meeting_refs(m)[0].text) for m in ws.meetings]
    for person in ws.people:
        text = person.enrollments[0].with_suffix(".txt").read_text()
        for sentence in re.split(r"(?<=\.)\s+", text.strip()):
            assert all(norm(sentence) not in meeting for meeting in meetings), sentence


def test_artifacts_mention_people_and_canonical_jargon(small_synth_workspace):
    ws = load_workspace(small_synth_workspace)
    text = "\n".join(a.read_text() for a in ws.artifacts)
    assert all(p.name in text for p in ws.people if any(p.id in m.attendees for m in ws.meetings))
    truth = json.loads((small_synth_workspace / "truth" / "state.json").read_text())
    focus = {pid for m in truth["meetings"] for pid in m["projects"]}
    discussed = [t["canonical"] for p in truth["projects"] if p["id"] in focus for t in (p["name"], *p["jargon"])]
    spoken = [t for m in ws.meetings for t in m.terms.jargon]
    assert spoken and all(term in text for term in [*spoken, *discussed])
    assert all(item["description"] in text for item in truth["action_items"])


def test_ten_people_get_ten_distinct_voices():
    from speechkit.synth.language import ENGLISH
    from speechkit.synth.state import build_state
    from speechkit.synth.voices import VOICES
    state = build_state(3, 10, 6, [v.id for v in VOICES], language=ENGLISH)
    assert len(state.people) == 10 and len({p.voice for p in state.people}) == 10
