"""The languages ``speechkit synth --language`` takes, and the :class:`~speechkit.synth.language.Language`
of each (docs/synth.md, "Languages")."""
from __future__ import annotations

from speechkit.synth.ja import Japanese
from speechkit.synth.language import ENGLISH, Language
from speechkit.synth.zh import Chinese

#: The codes ``speechkit synth --language`` takes; ``mixed`` needs a CJK base (``--languages``).
CODES = ("en", "zh", "ja", "mixed")
#: ``--language mixed`` without ``--languages``: Chinese turns with English terms and numbers.
MIXED_DEFAULT = ("zh", "en")


def language(code: str = "en", languages: tuple[str, ...] = ()) -> Language:
    """The language of a workspace: ``en``, ``zh``, ``ja``, or ``mixed`` with ``languages`` naming
    the CJK base and English (default :data:`MIXED_DEFAULT`); ValueError for anything else."""
    if code not in CODES:
        raise ValueError(f"unknown language {code!r} (known: {', '.join(CODES)})")
    if code != "mixed":
        if languages and tuple(languages) != (code,):
            raise ValueError(f"languages {', '.join(languages)} given for language {code}; they go with 'mixed'")
        if code == "en":
            return ENGLISH
    else:
        languages = tuple(languages) or MIXED_DEFAULT
        bases = [c for c in languages if c != "en"]
        if sorted(languages) != sorted(set(languages)) or len(languages) != 2 or "en" not in languages \
                or len(bases) != 1 or bases[0] not in ("zh", "ja"):
            raise ValueError(f"mixed takes two languages, zh or ja and en (e.g. zh,en), got {','.join(languages)}")
    base = code if code != "mixed" else bases[0]
    return (Chinese if base == "zh" else Japanese)(mixed=code == "mixed")
