"""Audio in chat requests: a clip as an ``input_audio`` content part (base64 WAV).

OpenAI's chat completions take audio as a content part ``{"type": "input_audio", "input_audio":
{"data": BASE64, "format": "wav"}}`` beside ``{"type": "text", "text": ...}`` parts; Gemini's
OpenAI-compatible endpoint and vLLM's audio-in models (Qwen2-Audio, Voxtral) take the same.
A message whose ``content`` is a list of such parts goes through :class:`~speechkit.llm.client.LLMClient`
unchanged (deadline, retries, redaction, the response cache). A stage that sends audio takes
:class:`AudioChatOptions`: its endpoint must be a server of the user's, since the local server
speechkit starts serves a text model.
"""
from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from speechkit.core.audio import SAMPLE_RATE, encode_audio
from speechkit.llm.client import ClientOptions
from speechkit.llm.endpoint import Endpoint, resolve_endpoint


def audio_part(audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> dict[str, Any]:
    """The content part carrying ``audio`` as base64 WAV."""
    data = base64.b64encode(encode_audio(audio, "wav", sample_rate)).decode("ascii")
    return {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}


def text_part(text: str) -> dict[str, Any]:
    """A text content part."""
    return {"type": "text", "text": text}


@dataclass(frozen=True)
class AudioChatOptions(ClientOptions):
    """The client's options (:class:`~speechkit.llm.client.ClientOptions`) of a stage that sends
    audio: the endpoint from the options, else the environment; with neither, no endpoint is an
    error (``no endpoint given: set SPEECHKIT_LLM_BASE_URL or ...``), not the local server."""

    def resolve_endpoint(self, environ: Mapping[str, str] | None = None) -> Endpoint:
        """The endpoint these options name, what they leave unset taken from ``environ``; no local default."""
        return resolve_endpoint(self.base_url, self.model, self.api_key_env, environ, local=False)
