"""The generator's knobs (:class:`SynthOptions`, docs/synth.md) and the meeting-length presets."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from speechkit.synth.acts import PHRASINGS
from speechkit.synth.language import Language
from speechkit.synth.languages import language
from speechkit.synth.mix import TimingOptions
from speechkit.synth.paraphrase import ParaphraseOptions

MAX_MINUTES = 30.0
#: Named meeting lengths in minutes per meeting kind. ``paper``: the OSynth paper's meetings
#: average 16.1 minutes of active speech (section 3.3; its example calendar has 15-minute
#: stand-ups and 30-minute 1:1s): stand-ups 12, reviews 20, 1:1s 16, a mean of 16.
LENGTH_PRESETS: dict[str, dict[str, float]] = {"paper": {"standup": 12.0, "review": 20.0, "1:1": 16.0}}


@dataclass(frozen=True)
class SynthOptions:
    """Generator knobs (docs/synth.md).

    ``minutes`` is the target length of each meeting (more than 0, at most 30), or the name of a
    preset of :data:`LENGTH_PRESETS` giving a length per meeting kind; ``difficulty`` is
    ``clean`` (dry close-talk mixes), ``hard`` (reverberant rooms, noise, remote participants) or
    ``mixed`` (every third meeting hard, from the second); ``phrasing`` which phrasing families
    the dialogue acts are realised with (``tuned``, ``held-out`` or ``all``,
    :mod:`speechkit.synth.acts`); ``check_voices`` measures voice similarity with Resemblyzer;
    ``paraphrase`` (None: off) rewrites each turn through an LLM (:mod:`speechkit.synth.paraphrase`),
    English only; ``language`` is ``en``, ``zh``, ``ja`` or ``mixed``, ``languages`` the two a
    mixed workspace speaks (a CJK base and ``en``; empty: ``zh, en``; :mod:`speechkit.synth.language`).
    """

    seed: int = 0
    meetings: int = 6
    people: int = 6
    minutes: float | str = 1.5
    difficulty: str = "mixed"
    projects: int = 3
    name: str | None = None
    check_voices: bool = True
    phrasing: str = "all"
    timing: TimingOptions = field(default_factory=TimingOptions)
    paraphrase: ParaphraseOptions | None = None
    language: str = "en"
    languages: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "languages", tuple(self.languages))
        spoken = self.spoken_language  # validates language and languages
        if self.paraphrase is not None and spoken.code != "en":
            raise ValueError(f"paraphrase rewrites English turns only, not {spoken.code}")
        if self.phrasing not in PHRASINGS:
            raise ValueError(f"phrasing must be one of {', '.join(PHRASINGS)}, got {self.phrasing!r}")
        if isinstance(self.minutes, str):
            if self.minutes not in LENGTH_PRESETS:
                raise ValueError(f"minutes: unknown preset {self.minutes!r} (known: {', '.join(LENGTH_PRESETS)})")
        elif not 0 < self.minutes <= MAX_MINUTES:
            raise ValueError(f"minutes must be more than 0 and at most {MAX_MINUTES:g}, got {self.minutes}")

    def minutes_of(self, kind: str) -> float:
        """The target length of a meeting of this kind."""
        return LENGTH_PRESETS[self.minutes][kind] if isinstance(self.minutes, str) else float(self.minutes)

    @property
    def spoken_language(self) -> Language:
        """The :class:`~speechkit.synth.language.Language` the meetings are written in."""
        return language(self.language, self.languages)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["timing"] = self.timing.to_dict()
        if self.language == "en":  # English options are written as they were before languages existed
            del d["language"], d["languages"]
        else:
            d["languages"] = list(self.spoken_language.languages)
        return d
