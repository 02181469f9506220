"""The metric families of the speaker-attributed transcripts: words, terms, speakers, diarization.

Each is a :class:`~speechkit.metrics.family.MeetingFamily` over the meetings' reference and
hypothesis transcripts and speaker turns (:class:`~speechkit.metrics.family.MeetingInputs`):

- :class:`TextFamily`: WER, number recall and term recall, on the normalised text of both sides
  (:mod:`speechkit.metrics.wer`, :mod:`speechkit.metrics.terms`);
- :class:`WordErrorKindsFamily`: no metric of its own; WER's errors by the kind of word they hit
  (:mod:`speechkit.metrics.word_kinds`), from the alignment :class:`TextFamily` made;
- :class:`SpeakersFamily`: named-speaker accuracy (each person's words routed to the
  hypothesis speakers, :mod:`speechkit.metrics.speakers`) and cross-meeting consistency;
- :class:`CpwerFamily`: cpWER and tcpWER (:mod:`speechkit.metrics.cpwer`) and the per-speaker errors;
- :class:`DiarizationFamily`: DER and JER (:mod:`speechkit.metrics.diarization`) beside the
  trivial baselines.

What each input a metric needs means, and why a meeting lacks it, is :func:`missing_inputs`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from speechkit.metrics.bootstrap import bootstrap
from speechkit.metrics.catalog import TRANSCRIPT_METRICS, Metric
from speechkit.metrics.cpwer import cpwer, tcpwer
from speechkit.metrics.diarization import BASELINES, baselines, diarization_errors
from speechkit.metrics.family import MeetingFamily, MeetingInputs, ScoringRun
from speechkit.metrics.normalize import normalized_text
from speechkit.metrics.per_speaker import per_speaker_errors
from speechkit.metrics.speakers import attribute_speakers, attribute_turns, speaker_consistency
from speechkit.metrics.terms import term_recalls
from speechkit.metrics.wer import align_words
from speechkit.metrics.word_kinds import Vocabulary, summed, word_error_kinds
from speechkit.workspace import TermSet

_BY_KEY = {m.key: m for m in TRANSCRIPT_METRICS}


def _metrics(*keys: str) -> tuple[Metric, ...]:
    return tuple(_BY_KEY[k] for k in keys)


def missing_inputs(pair: MeetingInputs, terms: TermSet | None) -> dict[str, str]:
    """For each input a transcript metric may need (``needs`` in its catalogue entry) that ``pair``
    lacks, why."""
    ref, hyp, turns = pair.reference, pair.hypothesis, pair.turns
    checks = {
        "reference": (ref is not None, "the meeting has no reference transcript"),
        "reference words": (ref is None or ref.has_words, "the reference format has no words (RTTM)"),
        "reference speakers": (ref is None or ref.has_speakers, "the reference format has no speakers (CTM)"),
        "turns": (turns is not None, "the meeting has no reference speaker turns"),
        "turn speakers": (turns is None or turns.has_speakers, "the reference format has no speakers (CTM)"),
        "speaker evidence": ((ref is not None and ref.has_words and ref.has_speakers)
                             or (turns is not None and turns.has_speakers),
                             "the meeting has neither reference words with speakers nor reference speaker turns"),
        "hypothesis words": (hyp.has_words, "the hypothesis format has no words (RTTM)"),
        "hypothesis speakers": (hyp.has_speakers, "the hypothesis format has no speakers (CTM)"),
        "hypothesis names": (pair.hypothesis_has_names,
                             "the hypothesis names no speaker (only SegLST has speaker_name, and no segment "
                             "of this hypothesis has one)"),
        "hypothesis turns": (pair.hypothesis_turns is not None,
                             "no hypothesis speaker turns (an RTTM: the run's <meeting>.rttm, or --hyp FILE.rttm); "
                             "transcript segments are scored as turns only with --der-from-segments"),
        "term set": (terms is not None, "no term set: a single pair is scored without a workspace"),
    }
    return {name: reason for name, (ok, reason) in checks.items() if not ok}


def _summed(run: ScoringRun, metric: str, detail: str, names: Sequence[str]) -> dict[str, Any]:
    """``names`` of ``details[detail]`` summed over the meetings where it was computed."""
    computed = [m.details[detail] for m in run.meetings if detail in m.details]
    return {metric: {"meetings": len(computed), **{name: sum(d[name] for d in computed) for name in names}}}


class TextFamily(MeetingFamily):
    """WER, number recall and term recall, both sides' text normalised once per meeting."""

    name = "text"
    metrics = _metrics("wer", "number_recall", "term_recall")

    def score(self, run: ScoringRun) -> None:
        wer, numbers, terms = self.metrics
        for m in run.meetings:
            m.mark_missing(self.metrics)
            if not (m.applies(wer) or m.applies(terms)):
                continue
            ref_text, hyp_text = normalized_text(m.inputs.reference), normalized_text(m.inputs.hypothesis)
            if m.applies(wer):
                aligned = align_words(ref_text, hyp_text)
                m.set(wer, aligned.ratio)
                m.details["wer"] = aligned.details()
            if m.applies(terms):
                found_numbers, found_terms = term_recalls(ref_text, hyp_text, run.terms, m.inputs.terms)
                m.set(numbers, found_numbers.ratio)
                m.set(terms, found_terms.ratio)
                m.details["number_recall"], m.details["term_recall"] = found_numbers.details(), found_terms.details()

    def components(self, run: ScoringRun) -> dict[str, Any]:
        return _summed(run, "wer", "wer", ("substitutions", "deletions", "insertions", "reference_words"))


class WordErrorKindsFamily(MeetingFamily):
    """Each meeting's WER errors by kind of word (``details.word_error_kinds``) and their sum
    (``components.word_error_kinds``), read from the alignment in ``details.wer.pairs``: the
    kinds add up to the WER's substitutions, deletions and insertions exactly."""

    name = "word_error_kinds"

    def score(self, run: ScoringRun) -> None:
        workspace_jargon = list(run.terms.jargon) if run.terms is not None else []
        for m in run.meetings:
            if "wer" in m.details:
                jargon = workspace_jargon + (list(m.inputs.terms.jargon) if m.inputs.terms is not None else [])
                vocabulary = Vocabulary.of(run.people.values(), jargon)
                m.details[self.name] = {"kinds": word_error_kinds(m.details["wer"]["pairs"], vocabulary)}

    def components(self, run: ScoringRun) -> dict[str, Any]:
        computed = [m.details[self.name]["kinds"] for m in run.meetings if self.name in m.details]
        return {self.name: {"meetings": len(computed), "kinds": summed(computed)}}


class SpeakersFamily(MeetingFamily):
    """Named-speaker accuracy per meeting, then speaker consistency across the meetings."""

    name = "speakers"
    metrics = _metrics("speaker_consistency", "named_speaker_accuracy")

    def score(self, run: ScoringRun) -> None:
        consistency, named = self.metrics
        attributions = {}
        for m in run.meetings:
            m.mark_missing(self.metrics)
            if m.applies(named):
                attribution = attribute_speakers(m.id, m.inputs.reference, m.inputs.hypothesis, run.people)
                m.set(named, attribution.accuracy)
            elif m.applies(consistency):  # no reference words: name people by speech time
                attribution = attribute_turns(m.id, m.inputs.turns, m.inputs.hypothesis)
            else:
                continue
            m.details["speakers"] = attribution.details()
            attributions[m.id] = attribution
        rows = speaker_consistency({mid: a.names for mid, a in attributions.items()})
        for m in run.meetings:
            if m.id in rows:
                m.set(consistency, rows[m.id])
                m.details["speakers"]["consistency"] = {"same_name_pairs": rows[m.id].num, "pairs": rows[m.id].den}


class CpwerFamily(MeetingFamily):
    """cpWER and tcpWER, and each reference speaker's errors under cpWER's assignment."""

    name = "cpwer"
    metrics = _metrics("cpwer", "tcpwer")

    def score(self, run: ScoringRun) -> None:
        for m in run.meetings:
            m.mark_missing(self.metrics)
            if not m.applies(self.metrics[0]):
                continue
            ref, hyp = m.inputs.reference, m.inputs.hypothesis
            for metric, result in zip(self.metrics, (cpwer(ref, hyp), tcpwer(ref, hyp, run.options.tcp_collar))):
                m.set(metric, result.ratio)
                m.details[metric.key] = result.details()
            m.details["per_speaker"] = per_speaker_errors(ref, hyp, m.details["cpwer"]["assignment"], m.inputs.turns)


class DiarizationFamily(MeetingFamily):
    """DER and JER of the hypothesis speaker turns, beside the trivial diarizations' (one label
    over the reference speech, one label over the hypothesis speech), scored alike."""

    name = "diarization"
    metrics = _metrics("der", "jer")

    def score(self, run: ScoringRun) -> None:
        der, jer = self.metrics
        options = run.options
        for m in run.meetings:
            m.mark_missing(self.metrics)
            if not m.applies(der):
                continue
            turns = m.inputs.hypothesis_turns
            uem = options.uem.regions_of(m.id) if options.uem else None
            d = diarization_errors(m.inputs.turns, turns, options.collar, uem)
            m.set(der, d.der)
            m.set(jer, d.jer_ratio)
            m.details["diarization"] = {**d.details(), "hypothesis": "transcript segments" if turns.has_words
                                        else "speaker turns (RTTM)"}
            m.details["diarization"]["baselines"] = {
                key: result.details() for key, result in baselines(m.inputs.turns, turns, options.collar, uem).items()}

    def components(self, run: ScoringRun) -> dict[str, Any]:
        return _summed(run, "der", "diarization", ("missed_detection_s", "false_alarm_s", "confusion_s", "total_s"))

    def baselines(self, run: ScoringRun) -> dict[str, Any]:
        """Per trivial diarization, its DER and JER over the meetings where DER was computed,
        aggregated and bootstrapped as DER and JER are."""
        out = {}
        for key in BASELINES:
            details = [{"diarization": m.details["diarization"]["baselines"][key]} for m in run.meetings
                       if "baselines" in m.details.get("diarization", {})]
            out[key] = {metric.key: bootstrap([metric.from_details(d) for d in details], run.options.resamples,
                                              run.options.seed).as_dict() for metric in self.metrics}
        return out


#: The transcript families, in the order they are computed.
TRANSCRIPT_FAMILIES: tuple[MeetingFamily, ...] = (TextFamily(), WordErrorKindsFamily(), SpeakersFamily(), CpwerFamily(),
                                                   DiarizationFamily())
