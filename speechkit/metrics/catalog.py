"""The metric catalogue: every metric ``speechkit score`` computes, declared once.

Scoring (``scores.json``), comparisons (``speechkit compare``) and reports read from here which
metrics there are, their labels, which direction is better, their unit, why one is not applicable
and how a value is shown. Adding a metric is one :class:`Metric` entry in :data:`METRICS` plus its
computation in :mod:`speechkit.scoring`; a new kind of metric (meeting notes, questions) also adds
its group to :data:`GROUPS`. Tables show the transcript metrics and the notes metrics
(:data:`TRANSCRIPT_METRICS`, :data:`NOTES_METRICS`) apart.

Two orders, both derived from the entries: ``scores.json`` holds the metrics in the order of
:data:`METRICS` (new entries go last, so existing files keep their layout); tables and plots show
them by group in the order of :data:`GROUPS` (:data:`TABLE_ORDER`). Reports split the aggregate tables
and plots by which direction is better (:func:`by_direction`), never one chart for both.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping

from speechkit.metrics.bootstrap import Ratio

#: The kinds of metric, in the order tables show them.
GROUPS = ("words", "terms", "speakers", "diarization", "notes", "questions")
#: The group of the metrics scored from a run's meeting notes (``RUN/notes``) rather than its transcripts.
NOTES = "notes"
#: The group of the metrics scored from a run's answers to the gold questions (``RUN/qa.json``).
QUESTIONS = "questions"
#: A value between 0 and 1 (a share of words, terms, seconds or meeting pairs).
FRACTION = "fraction"

Details = Mapping[str, Any]


@dataclass(frozen=True)
class Metric:
    """One metric and how it is shown.

    ``key``: its name in scores.json and on the command line. ``label``: its name in reports and
    comparisons; ``short``: the column header of the ``speechkit score`` table. ``group``: one of
    :data:`GROUPS`. ``better``: whether a lower or a higher value is better. ``unit``: what a value
    is (:data:`FRACTION`; plots draw fractions on one axis). ``needs``: the inputs it needs, in
    the order :mod:`speechkit.scoring` checks them (the first one missing is the meeting's n/a
    reason). ``empty``: the n/a reason when a meeting's denominator is 0. ``from_details``: the
    meeting's (numerator, denominator) read back from its scores.json ``details``, None where the
    metric was not computed. ``decimals``: digits shown.
    """

    key: str
    label: str
    short: str
    group: str
    better: Literal["lower", "higher"]
    unit: str
    needs: tuple[str, ...]
    empty: str
    from_details: Callable[[Details], Ratio | None]
    decimals: int = 3

    def format(self, value: float | None, signed: bool = False) -> str:
        """``value`` as tables show it, ``n/a`` for None; ``signed`` for differences (``+0.012``)."""
        if value is None:
            return "n/a"
        return f"{value:{'+' if signed else ''}.{self.decimals}f}"

    def format_estimate(self, entry: Mapping[str, Any] | None) -> str:
        """An aggregate entry of scores.json (``value``, ``ci_low``, ``ci_high``) as ``0.123 [0.100, 0.150]``."""
        if not entry or entry.get("value") is None:
            return "n/a"
        if entry.get("ci_low") is None:
            return self.format(entry["value"])
        return f"{self.format(entry['value'])} [{self.format(entry['ci_low'])}, {self.format(entry['ci_high'])}]"


def _fields(detail: str, numerator: str, denominator: str) -> Callable[[Details], Ratio | None]:
    """Read a ratio from two numeric fields of ``details[detail]``."""
    def read(details: Details) -> Ratio | None:
        d = details.get(detail)
        return Ratio(d[numerator], d[denominator]) if d else None
    return read


def _found(detail: str) -> Callable[[Details], Ratio | None]:
    """Read a recall from the ``found`` and ``spoken`` term lists of ``details[detail]``."""
    def read(details: Details) -> Ratio | None:
        d = details.get(detail)
        return Ratio(len(d["found"]), len(d["spoken"])) if d else None
    return read


def _consistency(details: Details) -> Ratio | None:
    c = (details.get("speakers") or {}).get("consistency")
    return Ratio(c["same_name_pairs"], c["pairs"]) if c else None


def _named_words(details: Details) -> Ratio | None:
    s = details.get("speakers")
    if not s or s.get("basis") == "seconds":  # named by speech time: no words to count
        return None
    persons = s["persons"].values()
    return Ratio(sum(p["correctly_named_words"] for p in persons), sum(p["words"] for p in persons))


def _der(details: Details) -> Ratio | None:
    d = details.get("diarization")
    return Ratio(d["confusion_s"] + d["missed_detection_s"] + d["false_alarm_s"], d["total_s"]) if d else None


def _jer(details: Details) -> Ratio | None:
    d = details.get("diarization")
    if not d:
        return None
    return Ratio(d["jer"], 1.0) if d["jer"] is not None else Ratio(0.0, 0.0)


_WORDS = ("reference", "reference words", "hypothesis words")
_SPEAKER_WORDS = ("reference", "reference words", "reference speakers", "hypothesis words", "hypothesis speakers")
_TURNS = ("turns", "turn speakers", "hypothesis speakers", "hypothesis turns")
_NO_WORDS = "the reference has no words after normalisation"
_NOTES = ("gold notes", "run notes", "usable run notes")
_NOTES_DETAIL = "meeting_notes"
_NO_MATCH = "no action item of the notes matched a gold one with an assignee"


def _questions(types: tuple[str, ...] = (), lenient: bool = False) -> Callable[[Details], Ratio | None]:
    """Read the share of questions answered right (of ``types``; all when empty) from the counts
    of ``details.questions``."""
    def read(details: Details) -> Ratio | None:
        d = details.get("questions")
        if not d:
            return None
        if not types:
            return Ratio(d["right_lenient" if lenient else "right"], d["questions"])
        counts = [d["by_type"][t] for t in types]
        return Ratio(sum(c["right"] for c in counts), sum(c["questions"] for c in counts))
    return read


_QA = ("gold questions", "run answers")


def _item_f1(details: Details) -> Ratio | None:
    """Action-item F1 as a ratio: 2 x matched / (predicted + gold), so that summed over meetings it is
    the harmonic mean of the pooled precision and recall."""
    d = details.get(_NOTES_DETAIL)
    return Ratio(2 * d["matched_items"], d["predicted_items"] + d["gold_items"]) if d else None

#: Every metric, by key, in the order of scores.json.
METRICS: dict[str, Metric] = {m.key: m for m in (
    Metric("wer", "WER", "WER", "words", "lower", FRACTION, _WORDS, _NO_WORDS,
           _fields("wer", "errors", "reference_words")),
    Metric("number_recall", "number recall", "NumRecall", "terms", "higher", FRACTION, (*_WORDS, "term set"),
           "no number or date of the term set is spoken in this meeting", _found("number_recall")),
    Metric("term_recall", "term recall", "TermRecall", "terms", "higher", FRACTION, (*_WORDS, "term set"),
           "no technical term of the term set is spoken in this meeting", _found("term_recall")),
    Metric("speaker_consistency", "speaker consistency", "SpkConsist", "speakers", "higher", FRACTION,
           ("speaker evidence", "hypothesis speakers", "hypothesis names"),
           "no person of this meeting speaks in another scored meeting", _consistency),
    Metric("named_speaker_accuracy", "named-speaker acc.", "NamedAcc", "speakers", "higher", FRACTION,
           ("reference", "reference words", "reference speakers", "hypothesis speakers", "hypothesis names"),
           "the reference has no words", _named_words),
    Metric("der", "DER", "DER", "diarization", "lower", FRACTION, _TURNS, "the reference has no speech", _der),
    Metric("jer", "JER", "JER", "diarization", "lower", FRACTION, _TURNS, "the reference has no speech", _jer),
    Metric("cpwer", "cpWER", "cpWER", "words", "lower", FRACTION, _SPEAKER_WORDS, _NO_WORDS,
           _fields("cpwer", "errors", "length")),
    Metric("tcpwer", "tcpWER", "tcpWER", "words", "lower", FRACTION, _SPEAKER_WORDS, _NO_WORDS,
           _fields("tcpwer", "errors", "length")),
    Metric("assignee_accuracy", "assignee accuracy", "AsgnAcc", NOTES, "higher", FRACTION, _NOTES,
           _NO_MATCH, _fields(_NOTES_DETAIL, "assignees_right", "assignees_scored")),
    Metric("assignee_accuracy_partial", "assignee acc. partial", "AsgnPart", NOTES, "higher", FRACTION, _NOTES,
           _NO_MATCH, _fields(_NOTES_DETAIL, "assignee_credit", "assignees_scored")),
    Metric("action_item_precision", "action-item precision", "ItemP", NOTES, "higher", FRACTION, _NOTES,
           "the notes have no action items", _fields(_NOTES_DETAIL, "matched_items", "predicted_items")),
    Metric("action_item_recall", "action-item recall", "ItemR", NOTES, "higher", FRACTION, _NOTES,
           "the gold notes have no action items", _fields(_NOTES_DETAIL, "matched_items", "gold_items")),
    Metric("action_item_f1", "action-item F1", "ItemF1", NOTES, "higher", FRACTION, _NOTES,
           "no action items, predicted or gold", _item_f1),
    Metric("decision_recall", "decision recall", "DecRecall", NOTES, "higher", FRACTION, _NOTES,
           "the gold notes have no decisions", _fields(_NOTES_DETAIL, "decisions_found", "gold_decisions")),
    Metric("summary_fact_recall", "summary fact recall", "FactRecall", NOTES, "higher", FRACTION, _NOTES,
           "the gold notes have no facts", _fields(_NOTES_DETAIL, "facts_stated", "gold_facts")),
    Metric("summary_entity_precision", "summary entity prec.", "EntityPrec", NOTES, "higher", FRACTION, _NOTES,
           "the summary names no people, projects or terms",
           _fields(_NOTES_DETAIL, "summary_names_known", "summary_names")),
    Metric("summary_number_recall", "summary number recall", "SumNumRecall", NOTES, "higher", FRACTION, _NOTES,
           "the gold notes state no numbers", _fields(_NOTES_DETAIL, "numbers_stated", "gold_numbers")),
    Metric("qa_accuracy", "QA accuracy", "QA", QUESTIONS, "higher", FRACTION, _QA,
           "the meeting has no gold questions", _questions()),
    Metric("qa_accuracy_lenient", "QA accuracy lenient", "QALenient", QUESTIONS, "higher", FRACTION, _QA,
           "the meeting has no gold questions", _questions(lenient=True)),
    Metric("qa_accuracy_who", "QA accuracy, who", "QAWho", QUESTIONS, "higher", FRACTION, _QA,
           "no who-owns or who-asked question", _questions(("who_owns", "who_asked"))),
    *(Metric(f"qa_accuracy_{kind}", f"QA accuracy, {kind.replace('_', ' ')}", short, QUESTIONS, "higher", FRACTION,
             _QA, f"no {kind.replace('_', ' ')} question", _questions((kind,)))
      for kind, short in (("who_owns", "QAOwner"), ("who_asked", "QAAsker"), ("due", "QADue"),
                          ("decision", "QADecision"), ("number", "QANumber"))),
)}

#: The metric keys in the order tables and plots show them: by group, then as declared.
TABLE_ORDER: tuple[str, ...] = tuple(sorted(METRICS, key=lambda key: GROUPS.index(METRICS[key].group)))
#: Which direction is better, as reports title the metrics of each (lower is better first).
DIRECTIONS = {"lower": "lower is better", "higher": "higher is better"}


def by_direction(keys: tuple[str, ...] | list[str]) -> dict[str, tuple[str, ...]]:
    """``keys`` split by which direction is better (:data:`DIRECTIONS` order), each in the order
    given; a direction none of them has is left out. Reports never show the two in one chart."""
    split = {direction: tuple(k for k in keys if METRICS[k].better == direction) for direction in DIRECTIONS}
    return {direction: group for direction, group in split.items() if group}


#: The metrics of a meeting's notes and of its transcripts, in table order: tables show them apart.
NOTES_METRICS: tuple[str, ...] = tuple(key for key in TABLE_ORDER if METRICS[key].group == NOTES)
TRANSCRIPT_METRICS: tuple[str, ...] = tuple(key for key in TABLE_ORDER if METRICS[key].group not in (NOTES, QUESTIONS))
#: The metrics of a run's answers to the gold questions, in table order.
QUESTION_METRICS: tuple[str, ...] = tuple(key for key in TABLE_ORDER if METRICS[key].group == QUESTIONS)

