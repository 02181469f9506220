"""Write a synthetic workspace: latent state -> meetings -> audio, references, artifacts, manifest.

Layout of the workspace folder::

    workspace.yaml                 manifest (people, terms, meetings, artifacts, metadata)
    meetings/<id>/audio.flac       16 kHz mono mix
    meetings/<id>/reference.json   verbatim SegLST with word times (speaker = person id)
    meetings/<id>/canonical.json   canonical written form, same segments, no word times
    meetings/<id>/reference.rttm   speaker turns (speaker = person id)
    meetings/<id>/notes.json       gold notes derived from the latent state (synth/notes.py)
    meetings/<id>/questions.json   gold questions derived from the latent state (synth/questions.py)
    enrollments/<person>.flac      a short clip per person, text used in no meeting
    artifacts/*.md                 agendas, emails, slides
    truth/state.json               the latent state (not an artifact: systems must not read it)
"""
from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from speechkit import cjk
from speechkit.io.atomic import write_bytes, write_json, write_text
from speechkit.io.manifest import load_workspace, write_manifest
from speechkit.io.rttm import write_rttm
from speechkit.io.seglst import write_seglst
from speechkit.language import parse_language
from speechkit.synth import acoustics, artifacts, dialogue, mix
from speechkit.synth.notes import write_gold_notes
from speechkit.synth.options import SynthOptions
from speechkit.synth.paraphrase import Paraphraser
from speechkit.synth.questions import write_gold_questions
from speechkit.synth.script import Script, write_script
from speechkit.synth.spoken import canonical_text, tts_words
from speechkit.synth.state import LatentState, MeetingPlan
from speechkit.synth.voices import SAMPLE_RATE, Synthesizer, voice
from speechkit.transcript import Segment, Transcript, Word
from speechkit.workspace import Artifact, Meeting, Person, TermSet, Workspace

GENERATOR = "speechkit-synth/3"
CHANNEL_STREAM = 0xAC


def _plain(obj):
    """YAML-safe copy: tuples to lists, numpy scalars to Python."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def write_flac(path: Path, audio: np.ndarray) -> None:
    """16-bit FLAC, atomically (libsndfile's encoder is deterministic)."""
    import soundfile as sf

    pcm = np.clip(np.round(audio * 32767.0), -32768, 32767).astype(np.int16)
    buf = io.BytesIO()
    sf.write(buf, pcm, SAMPLE_RATE, format="FLAC", subtype="PCM_16")
    write_bytes(path, buf.getvalue())


@dataclass
class _Rendered:
    """One meeting after synthesis: the placed turns, the mix, its condition and its spoken terms."""

    plan: MeetingPlan
    placed: list[mix.Placed]
    audio: np.ndarray
    condition: acoustics.Condition
    terms: list[str]


def _render_meeting(script: Script, plan: MeetingPlan, options: SynthOptions, tts: Synthesizer) -> _Rendered:
    state, turns, rng = script.state, script.turns[plan.id], script.rngs[plan.id]
    tts.reset(plan.seed)
    utterances = [tts.speak(tts_words(t.pieces), voice(state.person(t.speaker).voice)) for t in turns]
    placed = mix.place(turns, utterances, rng, options.timing)
    # the channel draws from its own stream: a meeting's room does not depend on what is said in it,
    # so workspaces of one seed in different phrasings share their acoustics
    channel = np.random.default_rng(np.random.SeedSequence([plan.seed, CHANNEL_STREAM]))
    condition = acoustics.sample_condition(channel, plan.attendees, plan.hard)
    audio = acoustics.render(mix.tracks(placed, options.timing.tail), condition, channel)
    terms = list(dict.fromkeys(piece.term for p in placed for piece in p.pieces if piece.term))
    return _Rendered(plan, placed, audio, condition, terms)


def _split(tokens: list[str], start: float, end: float) -> list[Word]:
    """``tokens`` sharing the span ``start``-``end`` evenly."""
    step = (end - start) / len(tokens)
    return [Word(t, start + k * step, start + (k + 1) * step) for k, t in enumerate(tokens)]


def _reference_words(pieces: list, spans: list[tuple[float, float]]) -> list[Word]:
    """The semantic-verbatim words of a turn, timed: disfluencies kept, workspace terms canonical.

    A term is said in its spoken form ("pacs dot zero zero eight") but written in the reference in
    its canonical form ("pacs.008"), as in the paper's semantic-verbatim transcript; its tokens share
    the time span of the spoken words. Tokens are :func:`speechkit.cjk.tokens`: a CJK character is
    a token of its own, so a Japanese word said as one TTS word shares its span evenly over its
    characters (a Chinese character is a TTS word of its own and keeps its exact span).
    """
    out, i = [], 0
    for piece in pieces:
        n = len(piece.words)
        start, end = spans[i][0], spans[i + n - 1][1]
        if piece.term:
            out += _split(cjk.tokens(piece.canonical), start, end)
        else:
            for w, (s, e) in zip(piece.words, spans[i:i + n]):
                tokens = cjk.split_token(w)
                out += [Word(w, s, e)] if len(tokens) == 1 else _split(tokens, s, e)
        i += n
    return out


def _transcripts(state: LatentState, r: _Rendered) -> tuple[Transcript, Transcript]:
    """The verbatim reference (word times) and the canonical transcript of a rendered meeting."""
    verbatim, canonical = [], []
    for p in r.placed:
        person = state.person(p.speaker)
        words = _reference_words(p.pieces, p.spans)
        seg = Segment.from_words(words, speaker=p.speaker, speaker_name=person.name,
                                 backchannel=p.turn.backchannel)
        verbatim.append(seg)
        text = canonical_text(p.pieces) + ("—" if p.truncated else "")
        canonical.append(Segment(start=seg.start, end=seg.end, speaker=p.speaker, text=text,
                                 speaker_name=person.name, backchannel=p.turn.backchannel))
    return Transcript(r.plan.id, verbatim), Transcript(r.plan.id, canonical)


def _stats(r: _Rendered) -> dict:
    main = [p for p in r.placed if not p.turn.backchannel]
    overlaps = sum(1 for a, b in zip(main, main[1:]) if b.start < a.end)
    return {"kind": r.plan.kind, "hard": r.plan.hard, "duration_s": round(len(r.audio) / SAMPLE_RATE, 2),
            "turns": len(main), "backchannels": len(r.placed) - len(main), "overlapping_turns": overlaps,
            "interruptions": sum(p.truncated or p.turn.overlaps for p in r.placed),
            "overlap_share": mix.overlap_share(r.placed), "condition": r.condition.to_dict()}


def synthesize_workspace(out: str | Path, options: SynthOptions | None = None,
                         progress: Callable[[str], None] | None = None) -> Workspace:
    """Generate a workspace into ``out`` and return it as loaded (validated) by the manifest loader.

    ``progress`` is called once per step (each meeting, the enrollments, the voice check).
    """
    options = options or SynthOptions()
    root = Path(out).resolve()
    root.mkdir(parents=True, exist_ok=True)
    tick = progress or (lambda step: None)
    lang = options.spoken_language
    script = write_script(options, [v.id for v in lang.voices])
    state = script.state
    paraphraser = Paraphraser(options.paraphrase, state) if options.paraphrase is not None else None
    if paraphraser is not None:
        paraphraser.rewrite(script.turns)
    spoken = parse_language(lang.code, lang.languages if lang.code == "mixed" else ())
    tts = Synthesizer()
    meetings, docs, stats = [], [], {}
    speech: dict[str, list[np.ndarray]] = {}
    kinds = {t.canonical: t.kind for t in state.terms()}
    for plan in state.meetings:
        r = _render_meeting(script, plan, options, tts)
        folder = root / "meetings" / plan.id
        write_flac(folder / "audio.flac", r.audio)
        verbatim, canonical = _transcripts(state, r)
        write_seglst(folder / "reference.json", [verbatim])
        write_seglst(folder / "canonical.json", [canonical])
        write_rttm(folder / "reference.rttm",
                   [Transcript(plan.id, [replace(s, speaker_name=None) for s in verbatim.segments])])
        meetings.append(Meeting(
            id=plan.id, date=plan.date, audio=folder / "audio.flac", title=plan.title, kind=plan.kind,
            reference=folder / "reference.json", rttm=folder / "reference.rttm", canonical=folder / "canonical.json",
            attendees=plan.attendees, language=spoken,
            terms=TermSet(numbers=tuple(t for t in r.terms if kinds[t] == "number"),
                          jargon=tuple(t for t in r.terms if kinds[t] == "jargon"))))
        docs += artifacts.meeting_documents(state, plan)
        stats[plan.id] = _stats(r)
        for pid in plan.attendees:
            own = [p.audio for p in r.placed if p.speaker == pid and not p.turn.backchannel]
            if own:
                speech.setdefault(pid, []).append(np.concatenate(own)[: 20 * SAMPLE_RATE])
        tick(f"meeting {plan.id}")

    people, enrolled = [], {}
    tts.reset(options.seed)
    for i, persona in enumerate(state.people):
        text = dialogue.enrollment_text(i, language=lang)
        utt = tts.speak(tts_words(lang.plain(text)), voice(persona.voice))
        enrolled[persona.id] = utt.audio
        path = root / "enrollments" / f"{persona.id}.flac"
        write_flac(path, np.concatenate([np.zeros(SAMPLE_RATE // 4, np.float32), utt.audio]))
        write_text(path.with_suffix(".txt"), text + "\n")
        people.append(Person(id=persona.id, name=persona.name,
                             nicknames=(persona.nickname,) if persona.nickname else (), role=persona.role,
                             enrollments=(path,)))
    tick("enrollments")

    registered = []
    for doc in docs:
        path = root / "artifacts" / f"{doc.id}.md"
        write_text(path, doc.text)
        registered.append(Artifact(id=doc.id, kind=doc.kind, path=path, date=doc.date, meeting=doc.meeting,
                                   title=doc.title))
    registered.sort(key=lambda a: (a.date, a.id))

    metadata = {
        "generator": GENERATOR, "options": options.to_dict(), "org": state.org,
        "voices": {p.id: asdict(voice(p.voice)) for p in state.people},
        "meetings": stats, "truth": "truth/state.json",
        "regenerate": f"speechkit synth --out DIR --seed {options.seed} --meetings {options.meetings} "
                      f"--people {options.people} --minutes {options.minutes} --difficulty {options.difficulty} "
                      f"--phrasing {options.phrasing}" + (" --paraphrase" if paraphraser is not None else "")
                      + (f" --language {lang.code}" if lang.code != "en" else "")
                      + (f" --languages {','.join(lang.languages)}" if lang.code == "mixed" else ""),
    }
    if options.check_voices:
        from speechkit.synth.similarity import voice_similarity

        metadata["voice_similarity"] = voice_similarity(enrolled, speech)
        tick("voice check")
    truth = state.to_dict()
    truth["spoken_forms"] = {t.canonical: t.spoken for t in state.terms()}
    truth["enrollment_texts"] = {p.id: dialogue.enrollment_text(i, language=lang) for i, p in enumerate(state.people)}
    if paraphraser is not None:
        truth["paraphrase"] = paraphraser.summary()
    write_json(root / "truth" / "state.json", _plain(truth))
    all_terms = list(dict.fromkeys(t for m in meetings for t in (*m.terms.jargon, *m.terms.numbers)))
    unspoken = [t.canonical for t in state.terms() if t.canonical not in all_terms]
    ws = Workspace(name=options.name or f"synth-{options.seed}", root=root, people=tuple(people),
                   meetings=tuple(meetings),
                   terms=TermSet(numbers=tuple(t for t in [*all_terms, *unspoken] if kinds[t] == "number"),
                                 jargon=tuple(t for t in [*all_terms, *unspoken] if kinds[t] == "jargon")),
                   artifacts=tuple(registered), metadata=_plain(metadata), language=spoken)
    write_manifest(ws)
    write_gold_notes(root, truth, meetings)
    write_gold_questions(root, truth, meetings)
    return load_workspace(root)
