"""Which endpoint and model an LLM stage talks to: explicit option > environment > default.

A stage's options may name ``base_url`` and ``model``; what they leave unset comes from the
environment (``SPEECHKIT_LLM_BASE_URL``, else ``OPENAI_BASE_URL``; ``SPEECHKIT_LLM_MODEL``), and
what that leaves unset from the default: llama.cpp's server on this machine (:mod:`speechkit.llm.server`)
on the packaged ``smollm2-135m-instruct``. With no endpoint, the model (whoever named it) is a
local GGUF model that speechkit serves itself. The shipped recipes set neither, so the
environment decides unless a user writes the option into a recipe.

The API key comes only from the environment (the variables ``api_key_env`` names).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from speechkit.errors import SpeechkitError
from speechkit.llm.server import DEFAULT_MODEL

BASE_URL_VARIABLES = ("SPEECHKIT_LLM_BASE_URL", "OPENAI_BASE_URL")
MODEL_VARIABLE = "SPEECHKIT_LLM_MODEL"


@dataclass(frozen=True)
class Endpoint:
    """A resolved endpoint: ``base_url`` (None: the local server, started on first use), the
    ``model`` name requests give, and where each came from (``sources``: ``recipe``,
    ``environment`` or ``default``). The API key is kept out of ``repr``."""

    base_url: str | None
    model: str
    sources: Mapping[str, str]
    api_key: str | None = field(default=None, repr=False)

    @property
    def local(self) -> bool:
        """True when speechkit serves ``model`` itself (no endpoint given anywhere)."""
        return self.base_url is None

    def redact(self, text: str) -> str:
        """``text`` with the API key replaced by ``***``."""
        return text.replace(self.api_key, "***") if self.api_key else text

    def identity(self) -> str:
        """What decides the answers besides the request: the URL and model name, or the local
        model's file identity (the local server's port changes from run to run)."""
        if self.local:
            from speechkit import registry
            return f"local:{registry.identity(self.model)}"
        return f"{self.base_url}|{self.model}"


def resolve_endpoint(base_url: str | None = None, model: str | None = None,
                     api_key_env: tuple[str, ...] = ("SPEECHKIT_LLM_API_KEY", "OPENAI_API_KEY"),
                     environ: Mapping[str, str] | None = None, *,
                     base_url_variables: tuple[str, ...] = BASE_URL_VARIABLES, model_variable: str = MODEL_VARIABLE,
                     local: bool = True) -> Endpoint:
    """The endpoint for a stage's explicit ``base_url`` and ``model`` options (None: not given).

    ``base_url_variables`` and ``model_variable``: the environment variables tried when an option
    is unset (a transcription endpoint tries its own first). ``local``: with no endpoint given
    anywhere, the local server on the packaged model; False: that is an error (a server of the
    user's is needed)."""
    env = os.environ if environ is None else environ
    sources = {}
    if base_url:
        sources["base_url"] = "recipe"
    else:
        base_url = next((env[v] for v in base_url_variables if env.get(v)), None)
        sources["base_url"] = "environment" if base_url else "default"
    if not base_url and not local:
        raise SpeechkitError(f"no endpoint given: set {' or '.join(base_url_variables)} or the stage's "
                             "base_url option")
    if model:
        sources["model"] = "recipe"
    elif env.get(model_variable):
        model, sources["model"] = env[model_variable], "environment"
    elif not base_url:
        model, sources["model"] = DEFAULT_MODEL, "default"
    else:
        raise SpeechkitError(f"{base_url}: no model named for this endpoint: set {model_variable} "
                             "or the stage's model option")
    key = next((env[k] for k in api_key_env if env.get(k)), None)
    return Endpoint(base_url.rstrip("/") if base_url else None, model, sources, key)
