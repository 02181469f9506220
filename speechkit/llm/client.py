"""A client of any OpenAI-compatible chat completions endpoint (vLLM, Ollama, llama.cpp, a hosted API).

>>> client = LLMClient(ClientOptions())              # the endpoint from the environment, else local
>>> notes = client.complete(messages, schema=NOTES_SCHEMA, name="notes")   # parsed JSON

``timeout_s`` bounds each request as a whole (:func:`~speechkit.llm.transport.exchange`).
Requests that time out, fail to connect or get HTTP 429/5xx are retried ``max_retries`` times
with exponential backoff (429: at least ``Retry-After``); then :class:`RequestFailed` says why.
A schema is sent as ``response_format`` (OpenAI structured outputs, which vLLM, Ollama and
llama.cpp's ``llama-server`` enforce, or ``json_object`` with the schema, as llama-cpp-python's
server wants). The API key goes only into the Authorization header; everything the server
returns is redacted before anyone sees it. Each request is counted in the current
:mod:`~speechkit.llm.session` and its answer stored in (and served from) the session's
response cache.

A local server (no endpoint given) is started on first use and shared by the process; if it
dies during a run it is restarted once, and if it dies again it is lost: with ``failures:
fail`` that is :class:`LLMUnavailable` (the run stops), with ``allow`` every later request fails
at once, counted.

What a server sends is bounded and redacted in one place (:meth:`LLMClient._exchange`): at most
:func:`reply_limit` bytes of an answer are read (from the request's ``max_tokens``, at most
:data:`MAX_REPLY_BYTES`); a longer one is a failed request (``too-large``), never cached. Every
string that came from the server (the reason phrase, the body as text, each key and value of a
JSON body) has the API key replaced before anything reads it.
"""
from __future__ import annotations

import http.client
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from speechkit.core.options import OptionError, StageOptions, bounded
from speechkit.errors import FormatError, SpeechkitError
from speechkit.io.jsonfile import parse_json
from speechkit.llm import session
from speechkit.llm.endpoint import Endpoint, resolve_endpoint
from speechkit.llm.server import LocalServer, ServerError, ServerOptions, shared_server
from speechkit.llm.transport import Reply, ReplyTooLarge, exchange

log = logging.getLogger(__name__)

_RETRYABLE_HTTP = (429, 500, 502, 503, 504)
#: HTTP statuses of a server that lists no models (``GET /models``): the model is checked by the
#: first request instead.
_NO_MODEL_LIST = (404, 405, 501)
#: The most bytes read of one answer (and of a request without ``max_tokens``, or the model list).
MAX_REPLY_BYTES = 16 << 20
#: Bytes read per token of a request's ``max_tokens`` (a token's text JSON-escaped: a few
#: characters, each up to 6 bytes as ``\\uXXXX``), and for the rest of the answer (ids, usage, timings).
REPLY_BYTES_PER_TOKEN = 64
REPLY_ENVELOPE_BYTES = 64 << 10
T = TypeVar("T")


def reply_limit(max_tokens: int | None) -> int:
    """The most bytes read of the answer to a request with ``max_tokens`` (None: the server's limit)."""
    if max_tokens is None:
        return MAX_REPLY_BYTES
    return min(MAX_REPLY_BYTES, REPLY_ENVELOPE_BYTES + REPLY_BYTES_PER_TOKEN * max_tokens)


@dataclass(frozen=True)
class Received:
    """What a server answered, redacted: status, reason ``phrase``, ``Retry-After`` ("" when
    absent), the body as ``text`` and, when the body is JSON, its value (``data``; None otherwise)."""

    status: int
    phrase: str
    retry_after: str
    text: str
    data: Any


@dataclass(frozen=True)
class ClientOptions(StageOptions):
    """The options of every LLM stage (a stage's options derive from this class).

    ``base_url`` (e.g. ``http://127.0.0.1:8080/v1``) and ``model``: the endpoint and the model
    it serves; unset, they come from the environment, else the local server on the packaged
    model (:mod:`speechkit.llm.endpoint`). ``server``: how the local server runs
    (:class:`~speechkit.llm.server.ServerOptions`). ``api_key_env``: environment variables tried
    in order for the API key (the key itself is never an option, so it stays out of recipes).
    ``response_format``: how a schema is sent: ``json_schema`` (OpenAI structured outputs),
    ``json_object`` (``{"type": "json_object", "schema": ...}``), ``none``, or ``auto``
    (``json_object`` on the local server, else ``json_schema``). ``timeout_s``: bound on each
    request as a whole. ``max_retries``: retries after the first try on timeouts, connection
    errors and HTTP 429/5xx, waiting ``backoff_s`` * 2^n (at most ``max_backoff_s``).
    ``temperature``: sampling temperature. ``max_tokens``: most tokens of an answer (None: the
    server's limit; an answer cut there is usually no JSON, so a ``BadAnswer``).
    ``max_tokens_field``: the request field that carries it: ``max_tokens``, or
    ``max_completion_tokens`` (OpenAI's reasoning models, gpt-5 and o-series, refuse the other).
    ``failures``:
    ``fail`` (an unreachable endpoint, a
    model the server does not serve, a lost local server, or failed requests above
    ``max_failed_share`` of the run's requests stop the run) or ``allow`` (the run goes on and
    its report says what share failed; ``speechkit run/recipe --llm-failures allow``).
    """

    base_url: str | None = None
    model: str | None = None
    api_key_env: tuple[str, ...] = ("SPEECHKIT_LLM_API_KEY", "OPENAI_API_KEY")
    server: ServerOptions = field(default_factory=ServerOptions)
    response_format: Literal["auto", "json_schema", "json_object", "none"] = "auto"
    timeout_s: float = bounded(60.0, gt=0, le=3600)
    max_retries: int = bounded(3, ge=0, le=20)
    backoff_s: float = bounded(1.0, ge=0, le=600)
    max_backoff_s: float = bounded(30.0, ge=0, le=3600)
    temperature: float = bounded(0.0, ge=0, le=2)
    max_tokens: int | None = bounded(None, ge=1, le=1_000_000)
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    failures: Literal["fail", "allow"] = "fail"
    max_failed_share: float = bounded(0.0, ge=0, le=1)
    #: Whether the endpoint answers chat completions: the probe asks a model the server does not
    #: list for one token. Options of another endpoint (audio transcriptions) set it False: a
    #: model the server does not list is then unavailable.
    chat: ClassVar[bool] = True

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, where: str = "options") -> ClientOptions:
        """As :meth:`StageOptions.from_dict`; an API key in a recipe gets its own message."""
        if isinstance(data, Mapping) and "api_key" in data:
            raise OptionError(f"{where}.api_key", "an API key never goes in a recipe: put it in the "
                              "environment variable SPEECHKIT_LLM_API_KEY (or one named by api_key_env)")
        return super().from_dict(data, where)

    def identity(self) -> str:
        """The identity of the endpoint and model these options resolve to now (the environment
        decides what they leave unset): part of the stage's cache key."""
        return self.resolve_endpoint().identity()

    def resolve_endpoint(self, environ: Mapping[str, str] | None = None) -> Endpoint:
        """The endpoint these options name, what they leave unset taken from ``environ`` (None:
        the process's environment; :func:`~speechkit.llm.endpoint.resolve_endpoint`)."""
        return resolve_endpoint(self.base_url, self.model, self.api_key_env, environ)


class NoAnswer(Exception):
    """A request that gave no usable answer: ``reason`` (a short category) and ``detail`` (redacted)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class RequestFailed(NoAnswer):
    """A request that failed for good (after retries, or not retryable): ``reason`` ``timeout``,
    ``connection``, ``http-404``, ``bad-response``, ``server-lost``."""


class BadAnswer(NoAnswer):
    """The server answered, but not what was asked: no JSON of the kind asked for (``reason``
    ``invalid-json``), or, raised by a stage, JSON of the wrong shape (its own reasons)."""


class LLMUnavailable(SpeechkitError):
    """The endpoint cannot serve the run: ``ENDPOINT: model M: the server's message``."""


class LLMClient:
    """Chat completions from the endpoint ``options`` resolve to (see :class:`ClientOptions`)."""

    def __init__(self, options: ClientOptions | None = None, environ: Mapping[str, str] | None = None,
                 server: LocalServer | None = None) -> None:
        self.options = options or ClientOptions()
        self.endpoint: Endpoint = self.options.resolve_endpoint(environ)
        #: The local server (started by :meth:`connect`); given, it stands in for the shared one.
        self.server = server
        self._lost = False

    def __repr__(self) -> str:
        return f"LLMClient(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def base_url(self) -> str:
        """The endpoint's URL (the local server's once it is started)."""
        if self.endpoint.local:
            return self.server.base_url if self.server is not None else "local server (not started)"
        return self.endpoint.base_url

    @property
    def model(self) -> str:
        """The model name requests give (the local server's alias for a ``.gguf`` file)."""
        return self.server.model_name if self.server is not None else self.endpoint.model

    def redact(self, text: str) -> str:
        """``text`` with the API key replaced by ``***``."""
        return self.endpoint.redact(text)

    def connect(self) -> None:
        """Start the local server if the endpoint is local (raises ServerError if it cannot start)."""
        if self.endpoint.local and self.server is None:
            self.server = shared_server(self.endpoint.model, self.options.server)
        usage = session.current().usage(self.base_url, self.model)
        usage.sources = dict(self.endpoint.sources)
        usage.local_model = self.endpoint.model if self.endpoint.local else None

    def probe(self) -> str:
        """Check, before a run, that the endpoint answers and serves the model; what was found.

        ``GET /models`` must answer (a server that lists no models passes: the first request
        checks the model); a model it does not list gets a 1-token request, whose error, if
        any, is the server's own. Raises :class:`LLMUnavailable`.
        """
        self.connect()
        try:
            reply = self._exchange("GET", "/models", None, retries=self.options.max_retries)
        except RequestFailed as e:
            raise self.unavailable(e.detail) from None
        if reply.status in _NO_MODEL_LIST:
            return f"ok: the server lists no models (HTTP {reply.status}); the first request checks {self.model}"
        if reply.status >= 400:
            raise self.unavailable(self._http_detail(reply))
        listed = _model_ids(reply.data)
        if listed is not None and self.model in listed:
            return "ok: the server lists the model"
        if not self.options.chat:
            raise self.unavailable(f"the server does not serve this model (it lists "
                                    f"{', '.join(listed or [])[:200] or 'no models'})")
        body = {"model": self.model, "messages": [{"role": "user", "content": "Say OK."}],
                self.options.max_tokens_field: 1, "temperature": self.options.temperature}
        try:
            answer = self._exchange("POST", "/chat/completions", json.dumps(body).encode(), retries=0,
                                    max_bytes=reply_limit(1))
        except RequestFailed as e:
            raise self.unavailable(e.detail) from None
        if answer.status >= 400:
            raise self.unavailable(self._http_detail(answer))
        return f"ok: the model answered (the server lists {', '.join(listed or [])[:200] or 'no models'})"

    def complete_text(self, messages: list[dict[str, str]], schema: dict | None = None,
                      name: str = "answer") -> str:
        """The assistant's reply to ``messages`` (redacted); ``schema``: a JSON schema the answer
        must follow, sent as ``response_format`` (unless that option is ``none``) under ``name``.
        Raises :class:`RequestFailed` (counted) or :class:`LLMUnavailable`."""
        return self._answer(messages, schema, name, lambda text: text, counted=False)

    def complete(self, messages: list[dict[str, str]], schema: dict | None = None, name: str = "answer",
                 kind: type = dict, read: Callable[[Any], T] | None = None) -> Any:
        """The reply to ``messages`` parsed as JSON of ``kind`` (``dict`` or ``list``); code fences
        and prose around it are tolerated. Raises :class:`BadAnswer` if there is none, and what
        :meth:`complete_text` raises.

        ``read``: what the caller makes of the JSON (raising :class:`BadAnswer` when it is not
        what was asked); given, its result is returned, and an answer that is not what was asked
        (no JSON, or refused by ``read``) counts as a failed request of the endpoint, against
        the failure policy, as a :class:`RequestFailed` does.
        """
        def parsed(text: str) -> Any:
            data = extract_json(text, kind)
            if not isinstance(data, kind):
                what = "object" if kind is dict else "array"
                raise BadAnswer("invalid-json", f"not a JSON {what}: {text[:80]!r}")
            return data if read is None else read(data)
        return self._answer(messages, schema, name, parsed, counted=read is not None)

    def _answer(self, messages: list[dict[str, str]], schema: dict | None, name: str,
                accept: Callable[[str], T], counted: bool) -> T:
        """``accept`` of the reply's text, from the response cache or the server. Every request is
        counted in the session; an answer ``accept`` refuses (:class:`BadAnswer`) is never cached,
        and counts as failed when ``counted``."""
        o = self.options
        self.connect()
        request: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": o.temperature}
        if o.max_tokens is not None:
            request[o.max_tokens_field] = o.max_tokens
        if schema is not None and o.response_format != "none":
            kind = o.response_format if o.response_format != "auto" else (
                "json_object" if self.endpoint.local else "json_schema")
            request["response_format"] = (
                {"type": "json_object", "schema": schema} if kind == "json_object" else
                {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}})
        runs = session.current()
        identity = self.endpoint.identity()
        stored = runs.cache.get(identity, request) if runs.cache else None
        if stored is not None:
            content, reported = stored["content"], stored.get("model")
        else:
            try:
                content, reported = self._chat(request)
            except RequestFailed as e:
                runs.count(self.base_url, self.model, failure=(e.reason, e.detail))
                raise
        try:
            value = accept(content)
        except BadAnswer as e:
            runs.count(self.base_url, self.model, cached=stored is not None, reported=reported,
                       failure=(e.reason, e.detail) if counted else None)
            raise
        runs.count(self.base_url, self.model, cached=stored is not None, reported=reported)
        if runs.cache and stored is None:
            runs.cache.put(identity, request, content, reported)
        return value

    def _chat(self, request: dict[str, Any]) -> tuple[str, str | None]:
        """The content of the answer to ``request`` and the model the server named."""
        reply = self._exchange("POST", "/chat/completions", json.dumps(request).encode(),
                               retries=self.options.max_retries, max_bytes=reply_limit(self.options.max_tokens))
        if reply.status >= 400:
            raise RequestFailed(f"http-{reply.status}", self._http_detail(reply))
        try:
            data = reply.data
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as e:
            raise RequestFailed("bad-response", f"not a chat completion: {type(e).__name__}") from None
        if not isinstance(content, str):
            raise RequestFailed("bad-response", "not a chat completion: no text content")
        model = data.get("model") if isinstance(data, dict) else None
        return content, model if isinstance(model, str) else None

    def post(self, path: str, body: bytes, content_type: str, max_bytes: int = MAX_REPLY_BYTES) -> Received:
        """The answer to ``body`` (of ``content_type``: a multipart form, say) posted to ``path``
        of the endpoint, with every request's deadline, retries, bound and redaction; counted
        in the session. An error status (after the retries) is :class:`RequestFailed`."""
        self.connect()
        runs = session.current()
        try:
            reply = self._exchange("POST", path, body, self.options.max_retries, max_bytes, content_type)
            if reply.status >= 400:
                raise RequestFailed(f"http-{reply.status}", self._http_detail(reply))
        except RequestFailed as e:
            runs.count(self.base_url, self.model, failure=(e.reason, e.detail))
            raise
        runs.count(self.base_url, self.model)
        return reply

    def _exchange(self, method: str, path: str, body: bytes | None, retries: int,
                  max_bytes: int = MAX_REPLY_BYTES, content_type: str = "application/json") -> Received:
        """The server's reply (at most ``max_bytes`` of it read, redacted: :meth:`_received`),
        retrying timeouts, connection errors and HTTP 429/5xx up to ``retries`` times; a final
        failure of those, or a longer answer (not retried), is :class:`RequestFailed`."""
        o = self.options
        headers = {"Content-Type": content_type} if body is not None else {}
        if self.endpoint.api_key:
            headers["Authorization"] = f"Bearer {self.endpoint.api_key}"
        for attempt in range(retries + 1):
            self._revive()
            wait = min(o.max_backoff_s, o.backoff_s * 2 ** attempt)
            try:
                reply = self._received(exchange(method, f"{self.base_url}{path}", body, headers, o.timeout_s,
                                                max_bytes))
            except TimeoutError:
                reason, detail = "timeout", f"no complete answer within {o.timeout_s:g} s"
            except ReplyTooLarge as e:
                raise RequestFailed("too-large", str(e)) from None
            except (OSError, http.client.HTTPException) as e:  # its text may quote what the server sent
                reason, detail = "connection", self.redact(f"{type(e).__name__}: {e}")
            else:
                if reply.status not in _RETRYABLE_HTTP:
                    return reply
                reason, detail = f"http-{reply.status}", self._http_detail(reply)
                if reply.retry_after.replace(".", "", 1).isdigit():
                    wait = min(o.max_backoff_s, max(wait, float(reply.retry_after)))
            if attempt < retries:
                log.info("llm request failed (%s), try %d of %d in %.2f s", detail, attempt + 2, retries + 1, wait)
                time.sleep(wait)
        raise RequestFailed(reason, f"{detail} (after {retries + 1} tries)")

    def _revive(self) -> None:
        """Restart a local server that died, once; after that it is lost."""
        server = self.server
        if server is None or server.running:
            return
        problem = None
        if self._lost or server.restarts >= 1:
            problem = f"the local LLM server died again after a restart; see {server.log_file}"
        else:
            log.warning("the local LLM server (%s) died; restarting it once", server.model)
            try:
                server.restart()
            except ServerError as e:
                problem = f"the local LLM server died and did not come back: {e}"
        if problem is None:
            return
        self._lost = True
        if self.options.failures == "fail":
            raise self.unavailable(problem)
        raise RequestFailed("server-lost", problem)

    def _received(self, reply: Reply) -> Received:
        """``reply`` with the API key replaced in every string the server sent (the one place
        that redacts them): the reason phrase, ``Retry-After``, the body as text and, parsed by
        the bounded JSON reader (no NaN, no lone surrogates, no key given twice), each key and
        value of a JSON body, so that a key the JSON escaped (``\\u0073k-...``) is found too."""
        text = reply.body.decode("utf-8", errors="replace")
        try:
            data = _redacted(parse_json(reply.body, f"{self.base_url} (answer)"), self.redact)
        except FormatError:
            data = None
        return Received(reply.status, self.redact(reply.phrase), self.redact(reply.retry_after),
                        self.redact(text), data)

    def unavailable(self, message: str) -> LLMUnavailable:
        """The error of an endpoint that cannot serve the run: ``ENDPOINT: model M: message``."""
        return LLMUnavailable(f"{self.base_url}: model {self.model}: {message}")

    def _http_detail(self, reply: Received) -> str:
        """``HTTP 404 Not Found: the server's message`` (cut to 300 characters)."""
        message = _server_message(reply)
        return f"HTTP {reply.status} {reply.phrase}{f': {message}' if message else ''}"[:300]


def _redacted(data: Any, redact: Callable[[str], str]) -> Any:
    """``data`` (parsed JSON) with ``redact`` applied to every string, keys included, in place
    (no recursion: the reader allows nesting as deep as Python's stack)."""
    if isinstance(data, str):
        return redact(data)
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            pairs = list(item.items())
            item.clear()
            item.update((redact(k), redact(v) if isinstance(v, str) else v) for k, v in pairs)
            stack.extend(v for _, v in pairs if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            item[:] = [redact(v) if isinstance(v, str) else v for v in item]
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return data


def _server_message(reply: Received) -> str:
    """The error message of an error reply (``{"error": {"message": ...}}``, ``{"detail": ...}``)."""
    data = reply.data
    if data is None:
        return " ".join(reply.text.split())[:200]
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        return " ".join(str(error).split())[:200] if error is not None else ""
    return ""


def _model_ids(data: Any) -> list[str] | None:
    """The model ids of a ``GET /models`` reply (``{"data": [{"id": ...}]}``), None if it is none."""
    try:
        return [m["id"] for m in data["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]
    except (KeyError, TypeError):
        return None


def extract_json(text: str, kind: type = dict) -> Any:
    """The JSON value in ``text``: the whole text (code fences removed) if it parses, else the
    part from the first ``{`` (``[`` for ``kind`` list) to the last ``}`` (``]``); None if neither parses.
    It is read by the bounded JSON reader (:func:`~speechkit.io.jsonfile.parse_json`: no NaN, no
    lone surrogates, no key given twice), except that control characters inside strings (a raw
    newline) are accepted: llama.cpp's JSON grammar lets a model write them. Linear in the text
    (the fences are cut without a regular expression, which would backtrack on a run of spaces)."""
    text = (text or "").strip()
    text = text.removeprefix("```").removeprefix("json") if text.startswith("```") else text
    text = text.removesuffix("```").strip()
    opening, closing = ("[", "]") if kind is list else ("{", "}")
    start, end = text.find(opening), text.rfind(closing)
    for candidate in (text, text[start:end + 1] if 0 <= start < end else None):
        try:
            return parse_json(candidate, "the answer", strict=False) if candidate is not None else None
        except FormatError:
            pass
    return None
