"""Readable renderings of a transcript: SubRip (``.srt``), WebVTT (``.vtt``) and plain text
(``.txt``), one cue or line per segment, led by its speaker (the name identification gave, else
the diarization label). Written atomically; never read back (the scored formats are SegLST, STM
and RTTM)."""
from __future__ import annotations

from pathlib import Path

from speechkit.io.atomic import write_text
from speechkit.transcript import Segment, Transcript


def timestamp(seconds: float, separator: str) -> str:
    """``HH:MM:SS<separator>mmm`` (SubRip uses ``,``, WebVTT ``.``)."""
    ms = max(0, round(seconds * 1000))
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{ms:03d}"


def _speaker(seg: Segment) -> str:
    """The name identification gave, else the diarization label, on one line."""
    return " ".join((seg.speaker_name or seg.speaker or "?").split()).replace("-->", "->")


def _words(seg: Segment) -> str:
    """A segment's words on one line, without ``-->`` (a blank line or an arrow would break a cue)."""
    return " ".join(seg.text.split()).replace("-->", "->")


def render_srt(transcript: Transcript) -> str:
    """The transcript as SubRip: numbered cues ``start --> end`` with ``SPEAKER: words``."""
    cues = [f"{i}\n{timestamp(s.start, ',')} --> {timestamp(s.end, ',')}\n{_speaker(s)}: {_words(s)}\n"
            for i, s in enumerate((s for s in transcript.segments if s.text.strip()), 1)]
    return "\n".join(cues)


def render_vtt(transcript: Transcript) -> str:
    """The transcript as WebVTT: a ``WEBVTT`` header, then cues with the speaker as a voice span."""
    cues = [f"{timestamp(s.start, '.')} --> {timestamp(s.end, '.')}\n<v {_speaker(s).replace('>', '')}>{_words(s)}\n"
            for s in transcript.segments if s.text.strip()]
    return "\n".join(["WEBVTT\n", *cues])


def render_txt(transcript: Transcript) -> str:
    """The transcript as plain text: one ``SPEAKER: words`` line per segment."""
    return "".join(f"{_speaker(s)}: {_words(s)}\n" for s in transcript.segments if s.text.strip())


#: The formats this module writes: file extension -> renderer.
RENDERERS = {"srt": render_srt, "vtt": render_vtt, "txt": render_txt}


def write_subtitles(path: str | Path, transcript: Transcript) -> None:
    """Write ``transcript`` in the format of ``path``'s extension (``.srt``, ``.vtt``, ``.txt``)."""
    write_text(path, RENDERERS[Path(path).suffix.lstrip(".")](transcript))
