"""Score hypotheses against references: a workspace with a run folder, or one reference/hypothesis pair.

The result is the ``scores.json`` dict documented in docs/scores-schema.md: settings, an
aggregate over meetings (micro ratios with bootstrap CIs), and per-meeting figures with details.
A metric that a format cannot support, or whose denominator is 0, is not applicable: its value
is null and the reason is recorded, never a zero. The notes metrics score a run's meeting notes
(``notes/<meeting>.json``) against the workspace's gold notes; without either they are not
applicable, with the reason.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Collection, Iterable, Literal, Mapping, Sequence

from speechkit.errors import FormatError, SpeechkitError, brief
from speechkit.io import format_of, read_transcripts
from speechkit.io.atomic import check_output_file, write_json
from speechkit.io.manifest import load_workspace
from speechkit.io.names import child_path, id_problem
from speechkit.io.notes import read_gold_notes, run_notes
from speechkit.io.uem import Uem
from speechkit.metrics.bootstrap import (PERCENTILES, RESAMPLES, SEED, Estimate, Ratio, bootstrap,
                                         check_bootstrap_settings, micro)
from speechkit.metrics.catalog import METRICS, NOTES_METRICS, TRANSCRIPT_METRICS
from speechkit.metrics.cpwer import TCP_COLLAR, cpwer, tcpwer
from speechkit.metrics.diarization import BASELINES, COLLAR, baselines, diarization_errors
from speechkit.metrics.normalize import NORMALIZER_NAME, normalized_text
from speechkit.metrics.notes import score_notes, vocabulary
from speechkit.metrics.per_speaker import per_speaker_errors
from speechkit.metrics.qa import add_question_scores
from speechkit.metrics.speakers import SpeakerAttribution, attribute_speakers, attribute_turns, speaker_consistency
from speechkit.metrics.terms import term_recalls
from speechkit.metrics.wer import align_words
from speechkit.notes import GoldNotes, Notes
from speechkit.text_similarity import TextSimilarity, text_similarity
from speechkit.transcript import Transcript
from speechkit.workspace import Meeting, Person, TermSet, Workspace

log = logging.getLogger(__name__)

SCHEMA = "speechkit.scores/1"
HYPOTHESIS_SUFFIXES = (".json", ".seglst.json")
# What each format carries: words, speakers, speaker names.
CAPABILITIES = {"seglst": (True, True, True), "stm": (True, True, False),
                "rttm": (False, True, False), "ctm": (True, False, False)}


@dataclass(frozen=True)
class ScoreOptions:
    """Scoring settings.

    ``collar``: DER/JER collar in seconds on each side of a reference boundary.
    ``uem``: the scored regions of DER/JER per meeting (a UEM file; None: each meeting's extent).
    ``tcp_collar``: tcpWER collar in seconds. ``resamples``/``seed``: the bootstrap over meetings
    (0 resamples: no CI). ``similarity``: how action items are matched by description
    (:func:`speechkit.text_similarity.text_similarity`: ``auto`` takes the sentence embedder when
    it is installed, else the lexical measure). ``der_from_segments``: where the hypothesis has no
    speaker turns (an RTTM), score DER/JER on its transcript segments (else they are n/a).
    """

    collar: float = COLLAR
    tcp_collar: float = TCP_COLLAR
    resamples: int = RESAMPLES
    seed: int = SEED
    similarity: Literal["auto", "embedding", "lexical"] = "auto"
    uem: Uem | None = None
    der_from_segments: bool = False

    def __post_init__(self) -> None:
        if self.similarity not in ("auto", "embedding", "lexical"):
            raise SpeechkitError(f"similarity: expected auto, embedding or lexical, got {brief(self.similarity)}")
        try:
            check_bootstrap_settings(self.resamples, self.seed)
        except ValueError as exc:
            raise SpeechkitError(str(exc)) from None
        for name in ("collar", "tcp_collar"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise SpeechkitError(f"{name}: expected a finite number of seconds >= 0, got {brief(value)}")

    def settings(self) -> dict[str, Any]:
        return {
            "normalizer": NORMALIZER_NAME,
            "der_collar_s": self.collar,
            "der_collar_note": f"{self.collar} s on each side of every reference boundary "
                               f"(pyannote.metrics collar={2 * self.collar}, total width); skip_overlap false",
            "der_uem": self.uem.path if self.uem else None,
            "der_from_segments": self.der_from_segments,
            "tcpwer_collar_s": self.tcp_collar,
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "unit": "meeting",
                          "rng": "numpy.random.default_rng", "percentiles": list(PERCENTILES)},
            "aggregation": "micro over meetings: sum of per-meeting numerators / sum of denominators "
                           "(jer: mean of per-meeting JER)",
        }


@dataclass(frozen=True)
class MeetingPair:
    """One meeting to score.

    ``reference`` holds the words with person ids as speakers (None if the meeting has no
    reference transcript); ``turns`` the reference speaker turns for DER/JER; ``terms`` the
    terms the manifest says were spoken (None: scan the reference); ``hypothesis_has_names``
    is False for a hypothesis that names no speaker. ``hypothesis_turns`` are the
    system's speaker turns for DER/JER: its RTTM, or its transcript segments when the user asked
    for that (``ScoreOptions.der_from_segments``); None: DER/JER are not applicable.
    ``notes`` say what was left out of the input files (segments of other sessions); they go to
    ``details.notes``. ``predicted_notes`` are the run's meeting notes and ``gold_notes`` the
    workspace's (None where there are none: the notes metrics are then not applicable).
    """

    id: str
    hypothesis: Transcript
    reference: Transcript | None
    turns: Transcript | None
    terms: TermSet | None = None
    hypothesis_has_names: bool = True
    notes: tuple[str, ...] = ()
    hypothesis_turns: Transcript | None = None
    predicted_notes: Notes | None = None
    gold_notes: GoldNotes | None = None


class _Meeting:
    """Per-meeting ratios, n/a reasons and details while scoring."""

    def __init__(self, pair: MeetingPair, missing: Mapping[str, str]) -> None:
        self.pair = pair
        self.missing = missing
        self.ratios: dict[str, Ratio] = {}
        self.reasons: dict[str, str] = {}
        self.details: dict[str, Any] = {}
        self.attribution: SpeakerAttribution | None = None

    def set(self, metric: str, ratio: Ratio) -> None:
        self.ratios[metric] = ratio
        if ratio.den == 0:
            self.reasons[metric] = METRICS[metric].empty

    def mark_missing(self, metrics: Collection[str]) -> None:
        """Record for each of ``metrics`` the first input it needs that the meeting lacks (in the
        order of scores.json)."""
        for key in (k for k in METRICS if k in metrics):
            reason = next((self.missing[i] for i in METRICS[key].needs if i in self.missing), None)
            if reason:
                self.reasons[key] = reason


def _missing_inputs(pair: MeetingPair, terms: TermSet | None) -> dict[str, str]:
    """For each input a metric may need (``needs`` in the metric catalogue) that ``pair`` lacks, why."""
    ref, hyp, turns = pair.reference, pair.hypothesis, pair.turns
    failed = pair.predicted_notes.failed if pair.predicted_notes is not None else None
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
        "gold notes": (pair.gold_notes is not None,
                       "no gold notes for this meeting (a workspace's meetings/<id>/notes.json)"),
        "run notes": (pair.predicted_notes is not None,
                      "the run has no notes for this meeting (notes/<id>.json, written by the summarize stage)"),
        "usable run notes": (failed is None, f"the run's notes of this meeting came from no usable answer: {failed}"),
    }
    return {name: reason for name, (ok, reason) in checks.items() if not ok}


def _score_one(pair: MeetingPair, people: Mapping[str, Person], terms: TermSet | None,
               options: ScoreOptions) -> _Meeting:
    m = _Meeting(pair, _missing_inputs(pair, terms))
    ref, hyp = pair.reference, pair.hypothesis
    m.mark_missing(TRANSCRIPT_METRICS)
    if "wer" not in m.reasons or "term_recall" not in m.reasons:  # both have both transcripts' words
        ref_text, hyp_text = normalized_text(ref), normalized_text(hyp)  # each segment normalised once
    if "wer" not in m.reasons:
        wer = align_words(ref_text, hyp_text)
        m.set("wer", wer.ratio)
        m.details["wer"] = wer.details()
    if "term_recall" not in m.reasons:
        numbers, jargon = term_recalls(ref_text, hyp_text, terms, pair.terms)
        m.set("number_recall", numbers.ratio)
        m.set("term_recall", jargon.ratio)
        m.details["number_recall"], m.details["term_recall"] = numbers.details(), jargon.details()
    if "named_speaker_accuracy" not in m.reasons:
        m.attribution = attribute_speakers(pair.id, ref, hyp, people)
        m.set("named_speaker_accuracy", m.attribution.accuracy)
        m.details["speakers"] = m.attribution.details()
    elif "speaker_consistency" not in m.reasons:  # no reference words: name people by speech time
        m.attribution = attribute_turns(pair.id, pair.turns, hyp)
        m.details["speakers"] = m.attribution.details()
    if "cpwer" not in m.reasons:
        for metric, result in (("cpwer", cpwer(ref, hyp)), ("tcpwer", tcpwer(ref, hyp, options.tcp_collar))):
            m.set(metric, result.ratio)
            m.details[metric] = result.details()
        m.details["per_speaker"] = per_speaker_errors(ref, hyp, m.details["cpwer"]["assignment"], pair.turns)
    if "der" not in m.reasons:
        turns = pair.hypothesis_turns
        d = diarization_errors(pair.turns, turns, options.collar,
                               options.uem.regions_of(pair.id) if options.uem else None)
        m.set("der", d.der)
        m.set("jer", d.jer_ratio)
        m.details["diarization"] = {**d.details(), "hypothesis": "transcript segments" if turns.has_words
                                    else "speaker turns (RTTM)"}
        m.details["diarization"]["baselines"] = _diarization_baselines(pair, turns, options)
    return m


def _diarization_baselines(pair: MeetingPair, hypothesis: Transcript, options: ScoreOptions) -> dict[str, Any]:
    """The DER components and JER of the trivial diarizations (one label over the reference speech,
    one label over ``hypothesis``'s speech) of one meeting, scored as its DER is."""
    uem = options.uem.regions_of(pair.id) if options.uem else None
    return {key: result.details() for key, result in baselines(pair.turns, hypothesis, options.collar, uem).items()}


def _baseline_aggregates(scored: Sequence[_Meeting], options: ScoreOptions) -> dict[str, Any]:
    """scores.json ``baselines``: per trivial diarization, its DER and JER over the meetings where DER was
    computed, aggregated and bootstrapped as DER and JER are."""
    out = {}
    for key in BASELINES:
        details = [{"diarization": m.details["diarization"]["baselines"][key]} for m in scored
                   if "baselines" in m.details.get("diarization", {})]
        out[key] = {metric: bootstrap([METRICS[metric].from_details(d) for d in details], options.resamples,
                                      options.seed).as_dict() for metric in ("der", "jer")}
    return out


def _components(scored: Sequence[_Meeting]) -> dict[str, Any]:
    """scores.json ``components``: the WER and DER error counts summed over the meetings where the
    metric was computed (shares of ``reference_words`` / ``total_s`` that add up to WER / DER)."""
    fields = {"wer": ("wer", ("substitutions", "deletions", "insertions", "reference_words")),
              "der": ("diarization", ("missed_detection_s", "false_alarm_s", "confusion_s", "total_s"))}
    out = {}
    for metric, (detail, names) in fields.items():
        computed = [m.details[detail] for m in scored if detail in m.details]
        out[metric] = {"meetings": len(computed), **{name: sum(d[name] for d in computed) for name in names}}
    return out


def _score_notes(scored: Sequence[_Meeting], names: Iterable[str], options: ScoreOptions) -> dict[str, Any]:
    """Score each meeting's notes against its gold notes; the similarity settings for scores.json."""
    known = frozenset(names)
    similarity: TextSimilarity | None = None
    for m in scored:
        m.mark_missing(NOTES_METRICS)
        if any(key in m.reasons for key in NOTES_METRICS):
            continue
        similarity = similarity or text_similarity(options.similarity)
        result = score_notes(m.pair.predicted_notes, m.pair.gold_notes, known, similarity)
        for key in NOTES_METRICS:
            m.set(key, result.ratios[key])
        m.details["meeting_notes"] = result.details
    return {"similarity": similarity.name if similarity else None,
            "model": getattr(similarity, "model_name", None),
            "threshold": similarity.threshold if similarity else None,
            "requested": options.similarity,
            "matching": "action items one-to-one (Hungarian) on description similarity >= threshold; "
                        "decisions one-to-one where the prediction holds every content word of the gold choice",
            "f1": "pooled: 2 x matched items / (predicted + gold items), summed over meetings "
                  "(the harmonic mean of the pooled precision and recall)"}


def score_meetings(pairs: Sequence[MeetingPair], people: Mapping[str, Person], terms: TermSet | None,
                   options: ScoreOptions = ScoreOptions(), source: dict[str, Any] | None = None,
                   names: Iterable[str] = ()) -> dict[str, Any]:
    """Score ``pairs`` and build the scores.json dict.

    ``people`` maps each reference speaker id to its person (named-speaker accuracy);
    ``terms`` is the workspace term set (None: number/term recall not applicable); ``names`` the
    workspace's folded name words (:func:`speechkit.metrics.notes.vocabulary`, summary entity precision).
    """
    from tqdm import tqdm

    scored = [_score_one(p, people, terms, options)
              for p in tqdm(pairs, desc="scoring", unit="meeting", disable=None)]
    named = [m for m in scored if m.attribution is not None]
    consistency = speaker_consistency({m.pair.id: m.attribution.names for m in named})
    for m in named:
        m.set("speaker_consistency", consistency[m.pair.id])
        m.details["speakers"]["consistency"] = {"same_name_pairs": consistency[m.pair.id].num,
                                                "pairs": consistency[m.pair.id].den}
    settings = {**options.settings(), "notes": _score_notes(scored, names, options)}

    aggregate, totals, not_applicable = {}, {}, {}
    for metric in METRICS:
        ratios = [m.ratios[metric] for m in scored if metric in m.ratios]
        total = micro(ratios)
        totals[metric] = {"numerator": total.num, "denominator": total.den, "meetings": len(ratios)}
        if total.value is None:
            reasons = sorted({m.reasons[metric] for m in scored if metric in m.reasons})
            not_applicable[metric] = "; ".join(reasons) or "no meetings"
        aggregate[metric] = bootstrap(ratios, options.resamples, options.seed).as_dict()

    meetings = {}
    for m in scored:
        entry: dict[str, Any] = {metric: Estimate(m.ratios[metric].value if metric in m.ratios else None).as_dict()
                                 for metric in METRICS}
        entry["details"] = {**m.details, "not_applicable": dict(m.reasons)}
        if m.pair.notes:
            entry["details"]["notes"] = list(m.pair.notes)
        meetings[m.pair.id] = entry
    return {"schema": SCHEMA, "source": source or {}, "settings": settings, "aggregate": aggregate,
            "totals": totals, "not_applicable": not_applicable, "components": _components(scored),
            "baselines": _baseline_aggregates(scored, options), "meetings": meetings}


def _written(scores: dict[str, Any], out: str | Path | None) -> dict[str, Any]:
    if out is not None:
        write_json(out, scores)
    return scores


def _empty(session: str, fmt: str) -> Transcript:
    has_words, has_speakers, _ = CAPABILITIES[fmt]
    return Transcript(session, [], has_words=has_words, has_speakers=has_speakers)


def _sessions(transcripts: Mapping[str, Transcript]) -> str:
    return brief(", ".join(sorted(transcripts)), 200).strip("'\"") or "none"


def _pick(path: Path, session: str, strict: bool = False, notes: list[str] | None = None) -> Transcript:
    """The transcript of ``session`` in ``path``, carrying ``session`` as its id.

    Unless ``strict``, a file holding one session (or none) fits any id: it is the file of that
    meeting, whatever its ``session_id`` (``speechkit transcribe`` names it after the audio file).
    Segments of other sessions are left out, and ``notes`` (when given) says so.
    """
    fmt = format_of(path)
    transcripts = read_transcripts(path, fmt)
    if session in transcripts:
        others = {sid: t for sid, t in transcripts.items() if sid != session}
        if others and not strict:  # strict: the caller picked the session (--session)
            note = (f"{path}: scored session {session!r}; left out {sum(len(t.segments) for t in others.values())} "
                    f"segment(s) of other session(s): {_sessions(others)}")
            log.warning(note)
            if notes is not None:
                notes.append(note)
        chosen = transcripts[session]
    elif not strict and len(transcripts) == 1:
        chosen = next(iter(transcripts.values()))
    elif not strict and not transcripts:
        return _empty(session, fmt)
    else:
        raise FormatError(path, f"no session {session!r} in the file (sessions found: {_sessions(transcripts)})")
    return chosen if chosen.session_id == session else replace(chosen, session_id=session)


def _has_word_times(transcript: Transcript) -> bool:
    words = [w for s in transcript.segments for w in s.words]
    return bool(words) and all(w.start is not None and w.end is not None for w in words)


def meeting_reference(meeting: Meeting, notes: list[str] | None = None) -> Transcript | None:
    """The reference transcript of a workspace meeting (speakers are person ids), None without one;
    ``notes`` (when given) says what of the file was left out."""
    return _pick(meeting.reference, meeting.id, notes=notes) if meeting.reference else None


def reference_turns(meeting: Meeting, reference: Transcript | None, notes: list[str] | None = None,
                    ) -> Transcript | None:
    """The reference speaker turns DER/JER score for ``meeting`` (``reference`` is its
    :func:`meeting_reference`): the reference's segments when its words carry times, else the
    meeting's RTTM when given, else the reference's segments (None: no turns)."""
    if meeting.rttm is not None and (reference is None or not _has_word_times(reference)):
        return _pick(meeting.rttm, meeting.id, notes=notes)
    return reference


def hypothesis_path(run_dir: Path, meeting_id: str) -> Path:
    """The hypothesis file of a meeting in a run folder (``<id>.json`` or ``<id>.seglst.json``)."""
    if id_problem(meeting_id):  # a workspace built in Python, not loaded from a checked manifest
        raise FormatError(run_dir, f"meeting id {id_problem(meeting_id)}")
    candidates = [child_path(run_dir, meeting_id, suffix) for suffix in HYPOTHESIS_SUFFIXES]
    for path in candidates:
        if path.is_file():
            return path
    raise FormatError(candidates[0], f"no hypothesis for meeting {meeting_id!r}: expected the SegLST file "
                                     f"{candidates[0]} (or {candidates[1].name})")


def notes_folder(run_dir: str | Path) -> Path:
    """Where the meeting notes of the run whose hypotheses are in ``run_dir`` lie: ``notes/``
    beside it when it is a run's ``transcripts/`` folder (a run writes ``RUN/transcripts`` and
    ``RUN/notes``), else ``notes/`` inside it."""
    run = Path(run_dir)
    return run.parent / "notes" if run.name == "transcripts" else run / "notes"


def score_workspace(workspace: Workspace | str | Path, run_dir: str | Path, options: ScoreOptions = ScoreOptions(),
                    out: str | Path | None = None, notes_dir: str | Path | None = None) -> dict[str, Any]:
    """Score a run folder (one SegLST hypothesis per meeting) against a workspace's references.

    DER and JER score the meeting's speaker turns, ``<id>.rttm`` beside the SegLST file (a run
    writes the diarization there); where there is none they are not applicable, unless
    ``options.der_from_segments`` scores the SegLST segments instead. The notes
    metrics score ``<id>.json`` of ``notes_dir`` (default :func:`notes_folder`) against the
    meeting's gold notes; a meeting without either has them not applicable.

    ``workspace`` is a loaded workspace or its folder / manifest; with ``out`` the scores are
    also written there (atomically). Each meeting's hypothesis file is matched to the meeting by
    its name: a file holding one session is that meeting's whatever its ``session_id``; in a file
    holding several, the meeting's session is scored and the others are left out with a note.
    """
    ws = workspace if isinstance(workspace, Workspace) else load_workspace(workspace)
    run = Path(run_dir)
    if not run.is_dir():
        raise FormatError(run, "run folder not found")
    people = {p.id: p for p in ws.people}
    hyp_paths = {meeting.id: hypothesis_path(run, meeting.id) for meeting in ws.scored_meetings}
    turn_paths = {mid: child_path(run, mid, ".rttm") for mid in hyp_paths}  # a run's speaker turns
    notes_root = Path(notes_dir) if notes_dir is not None else notes_folder(run)
    notes_paths = {mid: child_path(notes_root, mid, ".json") for mid in hyp_paths}
    if out is not None:  # before any work; never over an input
        inputs = {"the workspace manifest": ws.manifest_path, **{
            f"the hypothesis of meeting {mid}": path for mid, path in hyp_paths.items()}, **{
            f"the speaker turns of meeting {mid}": path for mid, path in turn_paths.items()}, **{
            f"the notes of meeting {mid}": path for mid, path in notes_paths.items()}}
        for m in ws.meetings:
            inputs.update({f"the {key} of meeting {m.id}": getattr(m, key)
                           for key in ("reference", "rttm", "audio", "notes")})
        check_output_file(out, inputs)
    pairs = []
    for meeting in ws.scored_meetings:  # an enrollment-only meeting has no hypothesis and is not scored
        notes: list[str] = []
        hyp = _pick(hyp_paths[meeting.id], meeting.id, notes=notes)
        ref = meeting_reference(meeting, notes)
        if ref is not None:
            for speaker in ref.speakers:
                if speaker not in people:
                    raise FormatError(meeting.reference, f"speaker {speaker!r} is not a person id of the workspace "
                                                         f"(known: {', '.join(people)})")
        turns = reference_turns(meeting, ref, notes)
        rttm = turn_paths[meeting.id]
        hyp_turns = (_pick(rttm, meeting.id, notes=notes) if rttm.is_file()
                     else hyp if options.der_from_segments else None)
        pairs.append(MeetingPair(meeting.id, hyp, ref, turns, meeting.terms, notes=tuple(notes),
                                 hypothesis_turns=hyp_turns, predicted_notes=run_notes(notes_root, meeting.id),
                                 gold_notes=read_gold_notes(meeting.notes, meeting.id) if meeting.notes else None))
    # The run folder is not recorded: scores.json lies in it, and two runs of one recipe into two
    # folders must give the same bytes.
    source = {"workspace": str(ws.root)}
    return _written(add_question_scores(score_meetings(pairs, people, ws.terms, options, source, vocabulary(ws)),
                                        ws, run), out)


def score_files(reference: str | Path, hypothesis: str | Path, session: str | None = None,
                options: ScoreOptions = ScoreOptions(), out: str | Path | None = None) -> dict[str, Any]:
    """Score a hypothesis file against a reference file, in any supported formats.

    With ``session``, only that session is scored. Otherwise a file pair holding one session
    each is paired whatever the ids (the hypothesis is scored under the reference's id); files
    with several sessions are paired by session id, and a session on one side only is an error.
    The reference speaker labels stand for the people (a label ``Diane_Smith`` is the person
    "Diane Smith"); there is no term set, so number and term recall are not applicable. DER/JER
    score an RTTM hypothesis (other formats' segments only with ``options.der_from_segments``);
    named-speaker accuracy and consistency need a hypothesis that names someone. With
    ``out`` the scores are also written there (atomically).
    """
    ref_path, hyp_path = Path(reference), Path(hypothesis)
    if out is not None:  # before any work; never over an input
        check_output_file(out, {"the reference": ref_path, "the hypothesis": hyp_path})
    refs = read_transcripts(ref_path)
    hyp_fmt = format_of(hyp_path)
    if session is not None:
        ids = [session]
        refs = {session: _pick(ref_path, session, strict=True)}
    else:
        ids = list(refs)
        if not ids:
            raise FormatError(ref_path, "the reference holds no segments")
    hyps = read_transcripts(hyp_path, hyp_fmt)
    single = len(ids) == 1 and len(hyps) <= 1
    if not single:
        extra = {sid: t for sid, t in hyps.items() if sid not in ids}
        if extra and session is None:
            raise FormatError(hyp_path, f"sessions not in the reference {ref_path}: {_sessions(extra)} "
                                        f"(reference sessions: {_sessions(refs)})")
    notes: list[str] = []
    if session is not None and not single and len(hyps) > 1:
        others = {sid: t for sid, t in hyps.items() if sid != session}
        notes.append(f"{hyp_path}: scored session {session!r} (--session); left out "
                     f"{sum(len(t.segments) for t in others.values())} segment(s) of: {_sessions(others)}")
    # a file naming nobody gives only per-meeting labels: named accuracy and consistency would be a foregone 0
    named = CAPABILITIES[hyp_fmt][2] and any(seg.speaker_name for t in hyps.values() for seg in t.segments)
    pairs = []
    for sid in ids:
        if single:
            hyp = next(iter(hyps.values())) if hyps else _empty(sid, hyp_fmt)
        elif sid in hyps:
            hyp = hyps[sid]
        else:
            raise FormatError(hyp_path, f"no hypothesis for session {sid!r} of the reference {ref_path} "
                                        f"(hypothesis sessions: {_sessions(hyps)})")
        ref = refs[sid]
        hyp = hyp if hyp.session_id == sid else replace(hyp, session_id=sid)
        pairs.append(MeetingPair(sid, hyp, ref, ref, None, hypothesis_has_names=named,
                                 hypothesis_turns=hyp if hyp_fmt == "rttm" or options.der_from_segments else None,
                                 notes=tuple(notes)))
    people = {label: Person(id=label, name=label.replace("_", " "))
              for ref in refs.values() for label in ref.speakers}
    source = {"reference": str(ref_path.resolve()), "hypothesis": str(hyp_path.resolve())}
    return _written(score_meetings(pairs, people, None, options, source), out)


def _table(scores: Mapping[str, Any], keys: Sequence[str]) -> list[str]:
    """The lines of a table of the metrics ``keys``: one row per meeting, the aggregate and its 95% CI."""
    agg = scores["aggregate"]
    shown = [METRICS[k] for k in keys]
    rows = [[mid] + [m.format(entry[m.key]["value"]) for m in shown] for mid, entry in scores["meetings"].items()]
    footer = [["aggregate"] + [m.format(agg[m.key]["value"]) for m in shown],
              ["95% CI"] + ["n/a" if agg[m.key]["ci_low"] is None
                            else f"{m.format(agg[m.key]['ci_low'])}-{m.format(agg[m.key]['ci_high'])}" for m in shown]]
    header = ["meeting"] + [m.short for m in shown]
    widths = [max(len(r[i]) for r in [header, *rows, *footer]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    rule = "-" * len(line(header))
    return [line(header), rule, *map(line, rows), rule, *map(line, footer)]


def _baseline_lines(scores: Mapping[str, Any]) -> list[str]:
    """DER and JER beside their trivial baselines (one line each), where DER was computed."""
    if scores["aggregate"]["der"]["value"] is None:
        return []
    return [f"{METRICS[k].short} {METRICS[k].format(scores['aggregate'][k]['value'])} against doing nothing: "
            + "; ".join(f"{label} {METRICS[k].format(scores['baselines'][b][k]['value'])}" for b, label in BASELINES.items())
            for k in ("der", "jer")]


def format_table(scores: Mapping[str, Any]) -> str:
    """A readable table of ``scores``: one row per meeting, the aggregate and its 95% CI; the notes
    metrics in a second table when any applies; the reasons of the metrics not applicable."""
    s = scores["settings"]
    out = [*_table(scores, TRANSCRIPT_METRICS), "",
           f"DER/JER collar {s['der_collar_s']:g} s on each side of reference boundaries, overlap scored"
           + (f", inside the regions of {s['der_uem']}" if s.get("der_uem") else "")
           + f"; tcpWER collar {s['tcpwer_collar_s']:g} s.",
           f"Aggregate: micro over the meetings where a metric applies (JER: mean); 95% CI from "
           f"{s['bootstrap']['resamples']} bootstrap resamples of meetings (seed {s['bootstrap']['seed']})."]
    out += _baseline_lines(scores)
    out += [f"n/a {METRICS[k].short}: {reason}" for k, reason in scores["not_applicable"].items() if k in TRANSCRIPT_METRICS]
    shorts: dict[str, list[str]] = {}  # notes metrics n/a, grouped by reason
    for key, reason in scores["not_applicable"].items():
        if key in NOTES_METRICS:
            shorts.setdefault(reason, []).append(METRICS[key].short)
    if sum(map(len, shorts.values())) < len(NOTES_METRICS):
        notes = s.get("notes") or {}
        out += ["", "Meeting notes", *_table(scores, NOTES_METRICS), "",
                f"Action items matched by {notes.get('similarity')} similarity >= {notes.get('threshold')}; "
                f"F1 {notes.get('f1')}."]
    out += [f"n/a {', '.join(keys)}: {reason}" for reason, keys in shorts.items()]
    return "\n".join(out)
