"""Talking to language models: one OpenAI-compatible client for every LLM stage.

- :mod:`~speechkit.llm.endpoint`: which endpoint and model (explicit option > environment >
  the local server on the packaged model).
- :mod:`~speechkit.llm.client`: :class:`LLMClient` (``complete(messages, schema=...)`` -> parsed
  JSON), its options (:class:`ClientOptions`, which a stage's options derive from), the request
  deadline, retries with backoff, API-key redaction, structured output.
- :mod:`~speechkit.llm.cache`: the content-hash response cache.
- :mod:`~speechkit.llm.session`: what the current run asked (requests, failures, cache hits).
- :mod:`~speechkit.llm.run`: the run's probe before any audio, run.json's ``llm``, the failure policy.
- :mod:`~speechkit.llm.server`: llama.cpp's server on a local GGUF model (``speechkit llm serve``).
- :mod:`~speechkit.llm.transport`: one HTTP exchange with a deadline on the whole of it.

See docs/llm.md.
"""
from __future__ import annotations

from speechkit.llm.client import BadAnswer, ClientOptions, LLMClient, LLMUnavailable, RequestFailed
from speechkit.llm.endpoint import Endpoint, resolve_endpoint

__all__ = ["BadAnswer", "ClientOptions", "Endpoint", "LLMClient", "LLMUnavailable", "RequestFailed",
           "resolve_endpoint"]
