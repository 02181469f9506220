"""The ASR error taxonomy (paper Appendix E): each word error of the WER alignment by the kind of
word it hits, so a comparison of levels shows which errors context removed.

Each error of the alignment :func:`speechkit.metrics.wer.align_words` gives (its ``pairs``) is
counted once, by its operation (substitution, deletion, insertion) and the kind of one word: the
reference word for a substitution or a deletion, the hypothesis word for an insertion. So the
counts of every kind add up to the WER's substitutions, deletions and insertions exactly. The kind
of a word (normalised, as WER sees it) is the first that fits of:

1. ``name``: a word of a person's name or nickname (the workspace roster; in a pair of files, the
   reference speakers' labels), not a function word, not a name that is only the person's id;
2. ``workspace_term``: a word inside an occurrence of a jargon term of the workspace or the
   meeting (the term normalised, matched as a word sequence on the word's side);
3. ``number_date``: a word with a digit (the normaliser writes numbers as digits: ``12%``,
   ``$4200000``, ``3rd``), a month (not ``may``, mostly the verb) or a weekday;
4. ``function_word``: one of :data:`FUNCTION_WORDS` (closed-class words: articles, pronouns,
   prepositions, conjunctions, auxiliaries and modals; and discourse words such as ``yeah``, ``okay``);
5. ``content_word``: any other word.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from speechkit.metrics.normalize import normalize, normalize_term
from speechkit.workspace import Person

#: The kinds, in the order they are tried, and how tables name them.
KINDS = {"name": "names and nicknames", "workspace_term": "workspace terms", "number_date": "numbers and dates",
         "function_word": "function words", "content_word": "other content words"}
#: The alignment's operations (jiwer's) and how scores.json names their counts.
OPERATIONS = {"substitute": "substitutions", "delete": "deletions", "insert": "insertions"}

FUNCTION_WORDS = frozenset("""
a an the this that these those some any each every no all both either neither such another other
i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its itself
we us our ours ourselves they them their theirs themselves one ones someone something anyone anything
everyone everything nobody nothing what which who whom whose whatever whichever whoever
am is are was were be been being have has had having do does did doing done
will would shall should can could may might must ought gonna wanna gotta
not nor and or but if then than because so as while though although unless until since whether
of to in on at by for with about from into onto over under up down out off through during before after
above below between among against without within along across around behind beyond upon via per toward towards
there here where when why how now just also too very only even still yet again ever already
yeah yes yep no nope okay ok oh ah hmm mhm huh well right like alright
""".split())

_MONTHS = frozenset("january february march april june july august september october november december".split())
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())


@dataclass(frozen=True)
class Vocabulary:
    """What tells the kinds apart: ``names``, the normalised words of the people's names and
    nicknames; ``terms``, the jargon terms as normalised word sequences."""

    names: frozenset[str]
    terms: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, people: Iterable[Person], jargon: Iterable[str]) -> Vocabulary:
        """The vocabulary of ``people`` (a name that is only the person's id is no word anyone says)
        and the ``jargon`` terms."""
        names = {word for person in people for name in person.spoken_names for word in normalize(name).split()}
        terms = {tuple(normalize_term(term).split()) for term in jargon}
        return cls(frozenset(names - FUNCTION_WORDS), tuple(sorted(t for t in terms if t)))


def term_positions(words: Sequence[str], terms: Iterable[tuple[str, ...]]) -> set[int]:
    """The indices of ``words`` that lie inside an occurrence of one of ``terms``."""
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for term in terms:
        by_first.setdefault(term[0], []).append(term)
    inside: set[int] = set()
    for i, word in enumerate(words):
        for term in by_first.get(word, ()):
            if tuple(words[i:i + len(term)]) == term:
                inside.update(range(i, i + len(term)))
    return inside


def word_kind(word: str, in_term: bool, vocabulary: Vocabulary) -> str:
    """The kind of one normalised word (the module docstring's order); ``in_term``: whether it lies
    inside a jargon term's occurrence."""
    if word in vocabulary.names:
        return "name"
    if in_term:
        return "workspace_term"
    if any(c.isdigit() for c in word) or word in _MONTHS or word in _WEEKDAYS:
        return "number_date"
    return "function_word" if word in FUNCTION_WORDS else "content_word"


def _zeros() -> dict[str, dict[str, int]]:
    return {kind: dict.fromkeys((*OPERATIONS.values(), "errors", "reference_words"), 0) for kind in KINDS}


def word_error_kinds(pairs: Sequence[Sequence[Any]], vocabulary: Vocabulary) -> dict[str, dict[str, int]]:
    """Kind -> its ``substitutions``, ``deletions``, ``insertions``, ``errors`` and
    ``reference_words`` (the reference words of the kind, hits included), from the aligned
    ``(reference word, hypothesis word, op)`` pairs of one meeting's WER."""
    counts = _zeros()
    sides = ([p[0] for p in pairs if p[0] is not None], [p[1] for p in pairs if p[1] is not None])
    inside = [term_positions(words, vocabulary.terms) for words in sides]
    at = [0, 0]  # the next word's index on each side
    for ref, hyp, op in pairs:
        side = 1 if op == "insert" else 0
        word = hyp if side else ref
        entry = counts[word_kind(word, at[side] in inside[side], vocabulary)]
        if ref is not None:
            entry["reference_words"] += 1
        if op in OPERATIONS:
            entry[OPERATIONS[op]] += 1
            entry["errors"] += 1
        at[0] += ref is not None
        at[1] += hyp is not None
    return counts


def summed(tables: Iterable[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """Several meetings' :func:`word_error_kinds` added up, kind by kind."""
    total = _zeros()
    for table in tables:
        for kind, entry in table.items():
            for key, n in entry.items():
                total[kind][key] += n
    return total
