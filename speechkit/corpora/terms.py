"""Term lists for real corpora: the user's own list, or one derived from the series' references.

A real corpus has no latent state, so there is no exact list of the jargon and numbers spoken.
Two honest sources:

- ``--terms FILE``: the user's list (YAML with ``numbers:`` and ``jargon:``, or plain text with one
  term per line, ``#`` comments; a line that is a number, amount, percentage or date goes to
  ``numbers``, every other line to ``jargon``);
- derived: the rare words and the numbers that the references of *at least two meetings* of the
  series contain. A term in the list for one meeting is therefore always known from another
  meeting, the way an organisation's recurring jargon is; the manifest's ``metadata.terms`` says
  so, so that nobody mistakes it for an oracle list of the terms spoken in each meeting.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from speechkit.errors import FormatError
from speechkit.io._lines import read_lines, read_text
from speechkit.io.yamlfile import parse_yaml
from speechkit.workspace import TermSet

#: A word is rare when its wordfreq Zipf frequency (English) is below this.
RARE_ZIPF = 4.0
#: A derived term must occur in the references of at least this many meetings.
MIN_MEETINGS = 2
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_NUMBER = re.compile(rf"^(?:[$€£]?\d[\d,.]*(?:%|k|m|bn)?|(?:{_MONTHS}) \d{{1,2}}(?:st|nd|rd|th)?)$", re.IGNORECASE)


def is_number(term: str) -> bool:
    """True for numbers, amounts, percentages and dates (``42``, ``3.5%``, ``$4.2m``, ``March 14``)."""
    return bool(_NUMBER.match(term.strip()))


def read_terms(path: str | Path) -> TermSet:
    """The user's term list (see the module docstring for the two formats)."""
    path = Path(path)
    if path.suffix.lower() in (".yaml", ".yml"):
        data, _ = parse_yaml(read_text(path), path)  # strict, as workspace.yaml: duplicate keys, bombs, nesting
        if not isinstance(data, dict) or set(map(str, data)) - {"numbers", "jargon"}:
            raise FormatError(path, "expected a mapping with the keys numbers and jargon (lists of strings)")
        lists = {}
        for key in ("numbers", "jargon"):
            value = data.get(key) or []
            if not isinstance(value, list) or not all(isinstance(t, (str, int, float)) for t in value):
                raise FormatError(path, "expected a list of strings", field=key)
            lists[key] = tuple(dict.fromkeys(str(t).strip() for t in value if str(t).strip()))
        return TermSet(**lists)
    numbers, jargon = [], []
    for _, fields in read_lines(path, comment="#"):
        term = " ".join(fields)
        (numbers if is_number(term) else jargon).append(term)
    return TermSet(numbers=tuple(dict.fromkeys(numbers)), jargon=tuple(dict.fromkeys(jargon)))


def _meeting_terms(text: str, rare_zipf: float) -> tuple[set[str], set[str]]:
    """The numbers and the rare words of one meeting's reference text, normalised."""
    from wordfreq import zipf_frequency

    from speechkit.metrics.normalize import normalize

    numbers, words = set(), set()
    for token in normalize(text).split():
        if any(c.isdigit() for c in token):
            # single digits are counting words ("one", "two", and the normaliser's "oh" -> 0)
            if sum(c.isdigit() for c in token) >= 2 or not token.isdigit():
                numbers.add(token)
        elif token.isalpha() and len(token) >= 3 and zipf_frequency(token, "en") < rare_zipf:
            words.add(token)
    return numbers, words


def derive_terms(texts: Mapping[str, str], rare_zipf: float = RARE_ZIPF,
                 min_meetings: int = MIN_MEETINGS) -> TermSet:
    """The numbers and rare words found in the references of at least ``min_meetings`` meetings.

    ``texts`` maps each meeting id to its reference text. Terms are in normalised form (what the
    scorer compares), sorted by the number of meetings they occur in, then alphabetically.
    """
    counts: dict[str, dict[str, int]] = {"numbers": {}, "jargon": {}}
    for text in texts.values():
        numbers, words = _meeting_terms(text, rare_zipf)
        for kind, found in (("numbers", numbers), ("jargon", words)):
            for term in found:
                counts[kind][term] = counts[kind].get(term, 0) + 1
    kept = {kind: tuple(t for t, n in sorted(c.items(), key=lambda tn: (-tn[1], tn[0])) if n >= min_meetings)
            for kind, c in counts.items()}
    return TermSet(numbers=kept["numbers"], jargon=kept["jargon"])


def derived_note(rare_zipf: float = RARE_ZIPF, min_meetings: int = MIN_MEETINGS) -> dict[str, Any]:
    """The ``metadata.terms`` record of a derived term list."""
    return {"source": "derived from the references", "rule": (
        f"numbers (two or more digits, or with a symbol) and rare words (wordfreq Zipf < {rare_zipf:g}, "
        f"3+ letters) of the normalised reference text that occur in at least {min_meetings} meetings "
        "of the series (enrollment-only meetings included)"),
        "note": "not an oracle list: a term is listed because other meetings of the series contain it, "
                "not because it is spoken in a given meeting; the scorer scans each meeting's reference"}


def term_list(texts: Mapping[str, str], user: TermSet | None, derive: bool) -> tuple[TermSet, dict[str, Any]]:
    """The workspace term list and its ``metadata.terms`` record.

    ``user`` (the ``--terms`` list) wins; otherwise, with ``derive``, the terms derived from the
    reference ``texts`` of the meetings; otherwise none.
    """
    if user is not None:
        return user, {"source": "the user's term list (--terms)"}
    if not derive:
        return TermSet(), {"source": "none (--no-terms)"}
    if not texts:
        return TermSet(), {"source": "none: the references have no text"}
    return derive_terms(texts), derived_note()
