"""LLM vocabulary correction through an OpenAI-compatible chat endpoint (:mod:`speechkit.llm`).

The endpoint, the model, the request deadline, retries, redaction, the response cache and the
local server are the LLM client's (:class:`~speechkit.llm.client.LLMClient`; its options are the
first part of :class:`LLMOptions`). This module holds the prompts and the two correction modes.
See docs/llm.md.

``rewrite`` (the paper's): turns are sent in batches as a JSON array of strings with the
workspace's terms and names, in the shape of the OSynth paper's vocabulary post-correction
prompt (Figure 6: fix jargon spellings, "do not paraphrase, reorder, or summarize", answer with a
JSON array of the same length). A response that is not such an array is rejected whole and the
batch keeps its turns. ``choose`` (constrained, for small models that rewrite badly): the lexicon
corrector's matcher proposes candidate spans
(:meth:`~speechkit.stages.correct.lexicon.LexiconCorrector.proposals`) and the LLM only picks,
per span, the original words or one of the candidates (``ask`` says which spans it decides); a
JSON schema in the request makes any other answer impossible on servers that enforce it, and an
answer outside the options keeps the original. Either way each changed turn must pass
:func:`~speechkit.stages.correct.guards.check_rewrite`; a turn that drops words or changes
anything but vocabulary spans keeps its original words. Unchanged words keep their times; a
replaced span's new words share the span's times.

A request that fails for good keeps its batch's turns and is counted (``failures``); whether
the run may go on is the run's decision (:mod:`speechkit.llm.run`), not the corrector's.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from speechkit.core.options import bounded
from speechkit.llm.client import BadAnswer, ClientOptions, LLMClient, RequestFailed
from speechkit.stages.correct import (
    BatchIssue,
    CorrectionResult,
    CorrectionStats,
    Edit,
    Rejection,
    Vocabulary,
    rebuild,
    replace_span,
    segment_words,
)
from speechkit.stages.correct.guards import GuardOptions, check_rewrite, unguarded
from speechkit.stages.correct.lexicon import LexiconCorrector, LexiconOptions, Proposal
from speechkit.stages.correct.spoken import normalize_word, spoken_forms
from speechkit.transcript import Segment, Transcript, Word

log = logging.getLogger(__name__)

SYSTEM_PROMPT = ("You correct the vocabulary of automatic speech recognition (ASR) transcripts of "
                 "a workplace meeting. You fix misrecognised spellings of the workspace's jargon, "
                 "acronyms, product names, identifiers, numbers and person names, and nothing else.")

USER_PROMPT = """Workspace vocabulary (canonical spellings):
{vocabulary}

Below is a JSON array of {count} transcript turns. Correct only the spelling of the terms and names \
above where the ASR wrote them as they sound (for example "p ninety nine" for P99 or "packs dot \
zero zero eight" for pacs.008). Do not paraphrase, reorder, or summarize. Do not add, remove or \
change any other word, even if it looks wrong. If a turn has nothing to fix, return it unchanged.{strict}

Return only a JSON array of exactly {count} strings: the corrected turns, in the same order.

Turns:
{turns}"""

CHOOSE_SYSTEM_PROMPT = ("You check an automatic speech recognition (ASR) transcript of a workplace "
                        "meeting. The ASR often writes the workspace's jargon, identifiers, numbers "
                        "and names as they sound. For each numbered item you choose what the speaker "
                        "most likely said: the words as the ASR heard them, or a vocabulary term.")

CHOOSE_PROMPT = """Workspace vocabulary:
{vocabulary}

Each item shows a transcript turn with one span in [brackets] and the options for that span. The \
first option is the ASR's own words. Pick a vocabulary option only if the bracketed words are \
that term misheard; otherwise pick the first option.

{items}

Return only a JSON object mapping each item number to the chosen option, copied exactly."""

#: A worked example (terms of no workspace) sent before the items: one misheard term, one word
#: that merely resembles a term. Small models follow an example better than a rule.
CHOOSE_EXAMPLE = [
    {"role": "user", "content": CHOOSE_PROMPT.format(
        vocabulary="- kubectl (said: cube control)\n- MEET-42 (said: meet forty two)",
        items='1. "so the [cube control] config is broken again"\n   options: "cube control" | "kubectl"\n'
              '2. "can we [meet] on friday to go through it"\n   options: "meet" | "MEET-42"')},
    {"role": "assistant", "content": '{"1": "kubectl", "2": "meet"}'},
]

#: Lexicon gates that need no judgement: the entry split by the recognizer, or said exactly.
_CERTAIN_GATES = ("respelling", "spoken-form")
#: The stricter variant's guards (``strict_prompt``: the paper's Gemini stack, Figure 7), added to the
#: rewrite prompt: a vocabulary patch, not a paraphrase.
STRICT_RULES = (" Never insert a term, name or number that the turn does not already say in some form, and never "
                "expand an acronym, abbreviation or short form into a longer one: words that are already "
                "correct stay exactly as they are.")


@dataclass(frozen=True)
class LLMOptions(ClientOptions):
    """Options of the LLM corrector: the client's (:class:`~speechkit.llm.client.ClientOptions`:
    endpoint, model, local server, deadline, retries, failure policy) and these.

    ``mode``: ``rewrite`` (the LLM rewrites whole turns) or ``choose`` (it picks, per candidate
    span the lexicon matcher proposes, the original or a candidate; see the module docstring).
    ``batch_turns``: turns (``rewrite``) or spans (``choose``) per request. ``max_terms``:
    vocabulary entries listed in the prompt (``choose`` lists only the candidates' entries).
    ``max_choices``: candidates offered per span besides the original (``choose``).
    ``context_words``: words of the turn shown on each side of a span (``choose``).
    ``ask``: which spans the LLM decides in ``choose`` mode: ``judged`` (default) the lexicon's
    judgement calls, the replacements its confidence or LM gates accept (with the other entries
    proposed for the same words as alternatives), while its certain ones (the entry split by the
    recognizer, or said exactly: ``respelling``, ``spoken-form``) apply unasked and the candidates
    it rejects stay rejected; ``all``: every span the matcher proposes, the LLM the only gate.
    ``lexicon``: the matcher's and gates' options (``choose``). ``guards``: the turn guards (or a
    dict of their fields). ``strict_prompt``: the rewrite prompt with the stricter variant's
    anti-insertion and anti-expansion rules (:data:`STRICT_RULES`; the paper's Gemini stack,
    whose rewriter applied terms to spans that were already right).
    """

    mode: Literal["rewrite", "choose"] = "rewrite"
    ask: Literal["judged", "all"] = "judged"
    batch_turns: int = bounded(20, ge=1, le=10_000)
    max_terms: int = bounded(300, ge=0, le=100_000)
    max_choices: int = bounded(3, ge=1, le=100)
    context_words: int = bounded(10, ge=0, le=1000)
    strict_prompt: bool = False
    lexicon: LexiconOptions = field(default_factory=LexiconOptions)
    guards: GuardOptions = field(default_factory=GuardOptions)


class LLMCorrector:
    """The LLM corrector (backend ``llm``); options: :class:`LLMOptions` or keyword overrides."""

    Options = LLMOptions

    def __init__(self, options: LLMOptions | None = None, device: str = "auto", **overrides: Any) -> None:
        self.options = (options or LLMOptions()).with_overrides(**overrides)
        self.client = LLMClient(self.options)
        self._lexicon = LexiconCorrector(self.options.lexicon)

    def __repr__(self) -> str:
        return f"LLMCorrector({self.client!r})"

    def correct(self, transcript: Transcript, vocabulary: Vocabulary) -> CorrectionResult:
        """Correct ``transcript`` batch by batch; bad responses and failures keep the originals."""
        if self.options.mode == "choose":
            return self._choose(transcript, vocabulary)
        stats = CorrectionStats(backend="llm", turns=len(transcript.segments))
        segments = list(transcript.segments)
        todo = [i for i, s in enumerate(segments) if segment_words(s)] if vocabulary else []
        size = self.options.batch_turns
        for b in range(0, len(todo), size):
            batch = todo[b:b + size]
            turns = [" ".join(w.text for w in segment_words(segments[i])) for i in batch]
            try:
                rewritten = _turns_of(self.client.complete(self._messages(turns, vocabulary), kind=list), len(turns))
            except RequestFailed as e:
                log.warning("llm correction of turns %d-%d kept as they were: %s", batch[0], batch[-1], e.detail)
                stats.failures.append(BatchIssue(batch[0], len(batch), e.reason, e.detail))
                continue
            except BadAnswer as e:
                stats.rejected_batches.append(BatchIssue(batch[0], len(batch), e.reason, e.detail))
                continue
            for i, text in zip(batch, rewritten):
                segments[i] = self._apply(i, segments[i], text, vocabulary, stats)
        out = Transcript(transcript.session_id, segments, has_words=transcript.has_words,
                         has_speakers=transcript.has_speakers)
        return CorrectionResult(out, stats)

    def _messages(self, turns: list[str], vocabulary: Vocabulary) -> list[dict[str, str]]:
        listed = [e.canonical for e in vocabulary.entries][:self.options.max_terms]
        user = USER_PROMPT.format(vocabulary="\n".join(f"- {t}" for t in listed), count=len(turns),
                                  turns=json.dumps(turns, ensure_ascii=False),
                                  strict=STRICT_RULES if self.options.strict_prompt else "")
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def _apply(self, index: int, segment: Segment, text: str, vocabulary: Vocabulary,
               stats: CorrectionStats) -> Segment:
        """``segment`` with the LLM's rewrite ``text``, if the guards pass it."""
        words = segment_words(segment)
        old = [w.text for w in words]
        new = text.split()
        if [normalize_word(w) for w in old] == [normalize_word(w) for w in new]:
            return segment
        verdict = (check_rewrite(old, new, vocabulary.entries, self.options.guards) if vocabulary.turn_guards
                   else unguarded(old, new))
        if not verdict.ok:
            stats.rejected_turns.append(Rejection(index, " ".join(old), text, verdict.reason, verdict.detail))
            return segment
        out, at = [], 0
        for r in verdict.regions:
            out += words[at:r.i1]
            out += replace_span(words[r.i1:r.i2], new[r.j1:r.j2])
            stats.edits.append(Edit(index, r.i1, r.i2, " ".join(old[r.i1:r.i2]),
                                    " ".join(new[r.j1:r.j2]), "llm"))
            at = r.i2
        return rebuild(segment, out + list(words[at:]))

    def _choose(self, transcript: Transcript, vocabulary: Vocabulary) -> CorrectionResult:
        """The ``choose`` mode: the LLM picks between each proposed span's original words and its
        candidates; the picks of a turn are applied together if the guards pass them."""
        stats = CorrectionStats(backend="llm", turns=len(transcript.segments))
        segments = list(transcript.segments)
        entries = vocabulary.entries
        lm = self._lexicon.language_model(vocabulary) if entries else None
        items: list[_Choice] = []
        picked: dict[int, list[tuple[Proposal, str]]] = {}  # turn -> (proposal, gate) to apply
        for i, segment in enumerate(segments):
            words = segment_words(segment)
            if not (entries and words):
                continue
            proposals = self._lexicon.proposals(words, entries, lm, overlapping=True)
            if self.options.ask == "judged":
                winners = self._lexicon.proposals(words, entries, lm)
                certain = [w for w in winners if w.gate in _CERTAIN_GATES]
                judged = [w for w in winners if w.accepted and w.gate not in _CERTAIN_GATES]
                picked[i] = [(w, w.gate) for w in certain]
                stats.rejected_candidates.extend(  # what the lexicon's gates refuse stays refused
                    Rejection(i, " ".join(x.text for x in words[w.start:w.end]), w.entry, w.gate[7:],
                              f"score {w.score:.2f}, {w.note}") for w in winners if not w.accepted)
                proposals = [p for p in proposals if any(_overlap(p, j) for j in judged)
                             and not any(_overlap(p, c) for c in certain)]
            items += [_Choice(i, *span) for span in _spans(proposals, self.options.max_choices)]
        size = self.options.batch_turns
        for b in range(0, len(items), size):
            batch = items[b:b + size]
            first, count = batch[0].segment, batch[-1].segment - batch[0].segment + 1
            messages, schema = self._choice_request(batch, segments, vocabulary)
            try:
                answer = self.client.complete(messages, schema, name="choices")
            except RequestFailed as e:
                log.warning("llm choices for turns %d-%d kept as they were: %s", first, batch[-1].segment, e.detail)
                stats.failures.append(BatchIssue(first, count, e.reason, e.detail))
                continue
            except BadAnswer as e:
                stats.rejected_batches.append(BatchIssue(first, count, e.reason, e.detail))
                continue
            choices = _choices_of(answer, batch, segments)
            for item, choice in zip(batch, choices):
                words = segment_words(segments[item.segment])
                old = " ".join(w.text for w in words[item.start:item.end])
                if choice <= 0:  # the original kept, or an answer outside the options
                    reason = "llm-kept-original" if choice == 0 else "llm-invalid-choice"
                    stats.rejected_candidates.extend(
                        Rejection(item.segment, old, p.entry, reason, f"score {p.score:.2f}")
                        for p in item.proposals)
                else:
                    picked.setdefault(item.segment, []).append((item.proposals[choice - 1], "llm"))
        for i, chosen in picked.items():
            if chosen:
                segments[i] = self._apply_choices(i, segments[i], chosen, vocabulary, stats)
        out = Transcript(transcript.session_id, segments, has_words=transcript.has_words,
                         has_speakers=transcript.has_speakers)
        return CorrectionResult(out, stats)

    def _choice_request(self, batch: list[_Choice], segments: list[Segment],
                        vocabulary: Vocabulary) -> tuple[list[dict[str, str]], dict]:
        """The messages and the answer's JSON schema for a batch of spans."""
        # the terms at stake only: a long list costs a small model time and attention
        listed = list(dict.fromkeys(p.entry for item in batch for p in item.proposals))[:self.options.max_terms]
        blocks, properties = [], {}
        for n, item in enumerate(batch, 1):
            words = [w.text for w in segment_words(segments[item.segment])]
            options = item.options(words)
            k = self.options.context_words
            shown = " ".join(words[max(0, item.start - k):item.start] + ["[" + options[0] + "]"]
                             + words[item.end:item.end + k])
            blocks.append(f"{n}. {json.dumps(shown, ensure_ascii=False)}\n   options: "
                          + " | ".join(json.dumps(o, ensure_ascii=False) for o in options))
            properties[str(n)] = {"type": "string", "enum": options}
        user = CHOOSE_PROMPT.format(vocabulary="\n".join(f"- {_said(t)}" for t in listed), items="\n".join(blocks))
        schema = {"type": "object", "properties": properties, "required": list(properties),
                  "additionalProperties": False}
        return [{"role": "system", "content": CHOOSE_SYSTEM_PROMPT}, *CHOOSE_EXAMPLE,
                {"role": "user", "content": user}], schema

    def _apply_choices(self, index: int, segment: Segment, chosen: list[tuple[Proposal, str]],
                       vocabulary: Vocabulary, stats: CorrectionStats) -> Segment:
        """``segment`` with the chosen candidates (and the gate that let each through), if the
        guards pass the changed turn."""
        words = segment_words(segment)
        new_words: list[Word] = list(words)
        for p, _ in sorted(chosen, key=lambda c: -c[0].start):
            new_words[p.start:p.end] = replace_span(words[p.start:p.end], list(p.texts))
        old, new = [w.text for w in words], [w.text for w in new_words]
        verdict = check_rewrite(old, new, vocabulary.entries, self.options.guards)
        if not verdict.ok:
            stats.rejected_turns.append(Rejection(index, " ".join(old), " ".join(new), verdict.reason,
                                                  verdict.detail))
            return segment
        for p, gate in sorted(chosen, key=lambda c: c[0].start):
            stats.edits.append(Edit(index, p.start, p.end, " ".join(old[p.start:p.end]), " ".join(p.texts),
                                    gate, round(p.score, 3)))
        return rebuild(segment, new_words)


@dataclass(frozen=True)
class _Choice:
    """A span ``start:end`` of turn ``segment`` and the candidates proposed within it."""

    segment: int
    start: int
    end: int
    proposals: tuple[Proposal, ...]

    def options(self, words: list[str]) -> list[str]:
        """The span as the ASR wrote it, then the span with each candidate in place."""
        out = [" ".join(words[self.start:self.end])]
        for p in self.proposals:
            out.append(" ".join(words[self.start:p.start] + list(p.texts) + words[p.end:self.end]))
        return out


def _said(term: str) -> str:
    """``term`` with how it is said when that differs from how it is written ("pacs.002 (said:
    pacs dot zero zero two)"), so that a model can match the sound."""
    said = next((f for f in spoken_forms(term) if f.lower() != term.lower()), None)
    return f"{term} (said: {said})" if said else term


def _overlap(a: Proposal, b: Proposal) -> bool:
    return a.start < b.end and b.start < a.end


def _spans(proposals: list[Proposal], most: int) -> list[tuple[int, int, tuple[Proposal, ...]]]:
    """Proposals (best first) grouped into disjoint spans: each span starts with its best
    candidate and takes up to ``most`` candidates of other entries that overlap it."""
    spans: list[list] = []
    for p in proposals:
        overlapping = [s for s in spans if p.start < s[1] and s[0] < p.end]
        if not overlapping:
            spans.append([p.start, p.end, [p]])
        elif len(overlapping) == 1:
            span = overlapping[0]
            if len(span[2]) < most and p.entry not in {q.entry for q in span[2]}:
                merged = [min(span[0], p.start), max(span[1], p.end)]
                if not any(s is not span and merged[0] < s[1] and s[0] < merged[1] for s in spans):
                    span[0], span[1] = merged
                    span[2].append(p)
    return sorted((a, b, tuple(ps)) for a, b, ps in spans)


def _choices_of(answer: dict, batch: list[_Choice], segments: list[Segment]) -> list[int]:
    """Per item of ``batch``, the index of the option ``answer`` chose (0: the original; -1:
    missing from the answer or not among its options, which keeps the original too)."""
    out = []
    for n, item in enumerate(batch, 1):
        options = item.options([w.text for w in segment_words(segments[item.segment])])
        value = answer.get(str(n))
        out.append(options.index(value) if isinstance(value, str) and value in options else -1)
    return out


def _turns_of(answer: list, count: int) -> list[str]:
    """``answer`` as ``count`` turns; :class:`BadAnswer` if it is not an array of that many strings."""
    if not all(isinstance(t, str) for t in answer):
        raise BadAnswer("invalid-json", "not a JSON array of strings")
    if len(answer) != count:
        raise BadAnswer("length-mismatch", f"{len(answer)} turns returned for {count}")
    return answer
