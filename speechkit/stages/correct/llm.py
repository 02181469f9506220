"""LLM vocabulary correction through any OpenAI-compatible chat completions endpoint.

Turns are sent in batches as a JSON array of strings with the workspace's terms and names, in
the shape of the OSynth paper's vocabulary post-correction prompt (Figure 6: fix jargon
spellings, "do not paraphrase, reorder, or summarize", answer with a JSON array of the same
length). A response that is not such an array is rejected whole and the batch keeps its turns.
Each rewritten turn must then pass :func:`~speechkit.stages.correct.guards.check_rewrite`; a turn that
drops words or changes anything but vocabulary spans keeps its original words. Unchanged words
keep their times; a replaced span's new words share the span's times.

Requests that time out, fail to connect or get HTTP 429/5xx are retried with exponential
backoff; after the last try the batch keeps its turns and a failure is counted. Nothing here
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
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from speechkit.errors import SpeechkitError
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
from speechkit.stages.correct.guards import GuardOptions, check_rewrite
from speechkit.stages.correct.spoken import normalize_word
from speechkit.stages.options import OptionError, StageOptions
from speechkit.transcript import Segment, Transcript

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

_RETRYABLE_HTTP = (429, 500, 502, 503, 504)


@dataclass(frozen=True)
class LLMOptions(StageOptions):
    """Options of the LLM corrector.

    ``base_url`` (e.g. ``http://127.0.0.1:8080/v1``) and ``model``: the endpoint; default from
    the environment (see the module docstring). ``api_key_env``: environment variables tried in
    order for the API key (the key itself is never an option, so it stays out of recipes).
    ``batch_turns``: turns per request. ``max_terms``: vocabulary entries listed in the prompt.
    ``timeout_s``: per request. ``max_retries``: retries after the first try on timeouts,
    connection errors and HTTP 429/5xx, waiting ``backoff_s`` * 2^n (at most ``max_backoff_s``).
    ``temperature``: sampling temperature. ``guards``: the turn guards (or a dict of their fields).
    """

    base_url: str | None = None
    model: str | None = None
    api_key_env: tuple[str, ...] = ("SPEECHKIT_LLM_API_KEY", "OPENAI_API_KEY")
    batch_turns: int = 20
    max_terms: int = 300
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
        if not self.base_url or not self.model:
            raise SpeechkitError("the llm corrector needs an endpoint and a model: set "
                                 "SPEECHKIT_LLM_BASE_URL (or OPENAI_BASE_URL) and SPEECHKIT_LLM_MODEL, "
                                 "or give base_url and model in the recipe")
        self._key = next((env[k] for k in self.options.api_key_env if env.get(k)), None)

    def __repr__(self) -> str:
        return f"LLMCorrector(base_url={self.base_url!r}, model={self.model!r})"

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def correct(self, transcript: Transcript, vocabulary: Vocabulary) -> CorrectionResult:
        """Correct ``transcript`` batch by batch; bad responses and failures keep the originals."""
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

    def _complete(self, messages: list[dict[str, str]]) -> str:
        """The assistant's reply to ``messages``, retrying transient failures."""
        o = self.options
        body = json.dumps({"model": self.model, "messages": messages,
                           "temperature": o.temperature}).encode()
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        url = f"{self.base_url}/chat/completions"
        for attempt in range(o.max_retries + 1):
            wait = min(o.max_backoff_s, o.backoff_s * 2 ** attempt)
            try:
                request = urllib.request.Request(url, data=body, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=o.timeout_s) as response:
                    payload = json.loads(response.read().decode("utf-8"))
                return payload["choices"][0]["message"]["content"]
            except urllib.error.HTTPError as e:
                reason, detail = f"http-{e.code}", f"HTTP {e.code} {e.reason}"
                if e.code not in _RETRYABLE_HTTP:
                    raise _RequestFailed(reason, detail) from None
                after = e.headers.get("Retry-After", "") if e.headers else ""
                if after.replace(".", "", 1).isdigit():
                    wait = min(o.max_backoff_s, max(wait, float(after)))
            except TimeoutError:
                reason, detail = "timeout", f"no answer within {o.timeout_s:g} s"
            except (urllib.error.URLError, ConnectionError, http.client.HTTPException) as e:
                if isinstance(getattr(e, "reason", None), TimeoutError):
                    reason, detail = "timeout", f"no answer within {o.timeout_s:g} s"
                else:
                    reason, detail = "connection", f"{type(e).__name__}: {getattr(e, 'reason', e)}"
            except (ValueError, KeyError, IndexError, TypeError) as e:
                raise _RequestFailed("bad-response", f"not a chat completion: {type(e).__name__}") from None
            if attempt < o.max_retries:
                log.info("llm request failed (%s), try %d of %d in %.2f s", self._redact(detail),
                         attempt + 2, o.max_retries + 1, wait)
                time.sleep(wait)
        raise _RequestFailed(reason, f"{detail} (after {o.max_retries + 1} tries)")


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
