"""Where the word errors are, per reference speaker: words, errors under the cpWER assignment, speech time.

cpWER (:mod:`speechkit.metrics.cpwer`) assigns each reference speaker at most one hypothesis speaker
and scores the concatenated words of each assigned pair. This module splits that figure by person:
a person's errors are the word alignment (jiwer) of their normalised words, segments in time order,
against those of the hypothesis speaker cpWER assigned them (all deletions when none); words of
hypothesis speakers assigned to nobody are insertions of no person. So the persons' errors plus
those insertions are cpWER's errors of the meeting.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import jiwer

from speechkit.metrics.diarization import speech_seconds
from speechkit.metrics.normalize import words_in_time_order
from speechkit.transcript import Transcript


def _speaker_words(transcript: Transcript) -> dict[str, list[str]]:
    """Each speaker's normalised words, segments in start-time order (as meeteval concatenates them)."""
    out: dict[str, list[str]] = defaultdict(list)
    for segment, words in zip(*words_in_time_order(transcript)):
        out[segment.speaker].extend(words)
    return out


def _errors(reference: list[str], hypothesis: list[str]) -> dict[str, int]:
    """Substitutions, deletions and insertions aligning ``hypothesis`` to ``reference`` (word lists)."""
    if not reference or not hypothesis:
        return {"substitutions": 0, "deletions": len(reference), "insertions": len(hypothesis)}
    out = jiwer.process_words(" ".join(reference), " ".join(hypothesis))
    return {"substitutions": out.substitutions, "deletions": out.deletions, "insertions": out.insertions}


def per_speaker_errors(reference: Transcript, hypothesis: Transcript,
                       assignment: Iterable[Sequence[str | None]], turns: Transcript | None) -> dict[str, Any]:
    """Per reference person (speaker id): ``words`` (normalised), the ``hypothesis_speaker`` cpWER
    assigned, ``substitutions``, ``deletions``, ``insertions``, ``errors``, ``wer`` (None without
    words) and ``speech_s`` (the person's speech in ``turns``, overlaps counted once; None without
    turns); ``unassigned_hypothesis_words``: the words of hypothesis speakers assigned to nobody."""
    pairs = [tuple(pair) for pair in assignment]
    assigned = {ref: hyp for ref, hyp in pairs if ref is not None}
    ref_words, hyp_words = _speaker_words(reference), _speaker_words(hypothesis)
    persons = {}
    for person in dict.fromkeys(s.speaker for s in reference.segments):
        words = ref_words[person]
        hyp = assigned.get(person)
        counts = _errors(words, hyp_words.get(hyp, []))
        errors = sum(counts.values())
        person_turns = None if turns is None else Transcript(
            turns.session_id, [s for s in turns.segments if s.speaker == person], has_words=False)
        persons[person] = {"words": len(words), "hypothesis_speaker": hyp, **counts, "errors": errors,
                           "wer": errors / len(words) if words else None,
                           "speech_s": None if person_turns is None else round(speech_seconds(person_turns), 3)}
    unassigned = sum(len(hyp_words.get(hyp, [])) for ref, hyp in pairs if ref is None and hyp is not None)
    return {"assignment": "cpWER", "persons": persons, "unassigned_hypothesis_words": unassigned}
