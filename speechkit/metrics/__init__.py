"""Scoring metrics, one module per concept; docs/scores-schema.md defines each one.

- :mod:`~speechkit.metrics.catalog`: the metric catalogue (labels, direction, n/a reasons, formats)
  that scoring, comparisons and reports read.
- :mod:`~speechkit.metrics.normalize`: the shared Whisper English text normaliser.
- :mod:`~speechkit.metrics.wer`: WER with substitutions, deletions, insertions and aligned pairs.
- :mod:`~speechkit.metrics.terms`: number recall and technical-term recall.
- :mod:`~speechkit.metrics.speakers`: speaker-identity consistency and named-speaker accuracy.
- :mod:`~speechkit.metrics.diarization`: DER and JER (pyannote.metrics).
- :mod:`~speechkit.metrics.cpwer`: cpWER and tcpWER (meeteval).
- :mod:`~speechkit.metrics.bootstrap`: micro aggregation over meetings and bootstrap CIs.

Every metric yields a per-meeting :class:`Ratio` (numerator, denominator).
"""
from __future__ import annotations

from speechkit.metrics.bootstrap import Estimate, Ratio, bootstrap, micro
from speechkit.metrics.cpwer import CpWerResult, cpwer, tcpwer
from speechkit.metrics.diarization import DiarizationResult, diarization_errors
from speechkit.metrics.normalize import normalize
from speechkit.metrics.speakers import SpeakerAttribution, attribute_speakers, route_words, speaker_consistency
from speechkit.metrics.terms import TermRecall, term_recall, term_recalls
from speechkit.metrics.wer import WerResult, word_error_rate

__all__ = ["Estimate", "Ratio", "bootstrap", "micro", "CpWerResult", "cpwer", "tcpwer", "DiarizationResult",
           "diarization_errors", "normalize", "SpeakerAttribution", "attribute_speakers", "route_words",
           "speaker_consistency", "TermRecall", "term_recall", "term_recalls", "WerResult", "word_error_rate"]
