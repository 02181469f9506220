"""Metric catalogue entries: what a metric is called, which direction is better, its unit, why one
is not applicable and how a value is shown; and the entries of the transcript metrics.

A :class:`Metric` is declared once, by the family that computes it (:mod:`speechkit.metrics.family`):
the transcript metrics here (:data:`TRANSCRIPT_METRICS`, computed by
:mod:`speechkit.metrics.transcripts`), a stage's or a step's metrics in its own module (the notes
metrics in :mod:`speechkit.stages.summarize.metrics`, the question metrics in
:mod:`speechkit.steps.qa.metrics`). :mod:`speechkit.scoring.catalogue` assembles every entry in
scores.json order and the groups in the order tables show them.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from speechkit.metrics.bootstrap import Ratio

#: The groups of the transcript metrics, in the order tables show them (a plug-in's groups follow).
TRANSCRIPT_GROUPS = ("words", "terms", "speakers", "diarization")
#: A value between 0 and 1 (a share of words, terms, seconds or meeting pairs).
FRACTION = "fraction"
#: A judge's score from 1 (worst) to 5 (best), or a mean of such scores.
SCORE_1_TO_5 = "score 1-5"

Details = Mapping[str, Any]


@dataclass(frozen=True)
class Metric:
    """One metric and how it is shown.

    ``key``: its name in scores.json and on the command line. ``label``: its name in reports and
    comparisons; ``short``: the column header of the ``speechkit score`` table. ``group``: the kind of
    metric tables show it with (:data:`TRANSCRIPT_GROUPS`, or a plug-in family's). ``better``:
    whether a lower or a higher value is better. ``unit``: what a value
    is (:data:`FRACTION`; plots draw fractions on one axis). ``needs``: the inputs it needs, in
    the order :mod:`speechkit.scoring` checks them (the first one missing is the meeting's n/a
    reason). ``empty``: the n/a reason when a meeting's denominator is 0. ``from_details``: the
    meeting's (numerator, denominator) read back from its scores.json ``details``, None where the
    metric was not computed. ``decimals``: digits shown. ``judged``: scored by an LLM judge rather
    than exactly; the judge model is then part of the label a run's scores show (:meth:`label_in`).
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
    judged: bool = False

    def label_in(self, settings: Mapping[str, Any]) -> str:
        """The label as a run's scores show it: a judged metric's names the judge model that its
        family's scores.json ``settings.<group>.judge_model`` records (the label alone without one)."""
        model = (settings.get(self.group) or {}).get("judge_model") if self.judged else None
        return f"{self.label} [judge {model}]" if model else self.label

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


def ratio_fields(detail: str, numerator: str, denominator: str) -> Callable[[Details], Ratio | None]:
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


#: The transcript metrics, in the order of scores.json (new entries go last, so existing files keep their layout).
TRANSCRIPT_METRICS: tuple[Metric, ...] = (
    Metric("wer", "WER", "WER", "words", "lower", FRACTION, _WORDS, _NO_WORDS,
           ratio_fields("wer", "errors", "reference_words")),
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
           ratio_fields("cpwer", "errors", "length")),
    Metric("tcpwer", "tcpWER", "tcpWER", "words", "lower", FRACTION, _SPEAKER_WORDS, _NO_WORDS,
           ratio_fields("tcpwer", "errors", "length")),
)
