"""The command-line options of an LLM client that the commands over a run share (``judge``, ``probe``)."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

#: Flags of :func:`add_endpoint_options` that are options of :class:`~speechkit.llm.client.ClientOptions`.
CLIENT_FLAGS = ("base_url", "model", "timeout_s", "max_retries", "response_format")


def add_endpoint_options(p: argparse.ArgumentParser, failures_help: str) -> None:
    """``--base-url``, ``--model``, ``--llm-failures`` (described by ``failures_help``), ``--timeout-s``,
    ``--max-retries``, ``--response-format`` and ``--cache-dir``."""
    p.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 "
                                      "(default: $SPEECHKIT_LLM_BASE_URL, else the local server)")
    p.add_argument("--model", help="the model the endpoint serves (default: $SPEECHKIT_LLM_MODEL, else the "
                                   "packaged smollm2-135m-instruct on the local server)")
    p.add_argument("--llm-failures", choices=("fail", "allow"), default="fail", help=failures_help)
    p.add_argument("--timeout-s", type=float, help="bound on each request as a whole, seconds (default 60)")
    p.add_argument("--max-retries", type=int, help="retries of a request that timed out or failed (default 3)")
    p.add_argument("--response-format", choices=("auto", "json_schema", "json_object", "none"),
                   help="how the schema is sent (default auto: json_object on the local server, else json_schema)")
    p.add_argument("--cache-dir", type=Path, help="response cache folder (default RUN/cache/llm)")


def endpoint_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The client options the command line gave (``failures`` always), as option data."""
    given = {key: getattr(args, key) for key in CLIENT_FLAGS if getattr(args, key) is not None}
    return {**given, "failures": args.llm_failures}


def options_from_args(options_type: type, settings: dict[str, Any], flags: dict[str, str] | None = None) -> Any:
    """``options_type`` (a :class:`~speechkit.core.options.StageOptions`) from the command line's
    ``settings``, checked as a recipe's are; a bad value is ``--FLAG: problem`` (``flags``: flag ->
    field where they differ)."""
    from speechkit.core.options import OptionError
    from speechkit.errors import SpeechkitError

    try:
        return options_type.from_dict(settings, where="")
    except OptionError as exc:
        field = exc.field.strip(".")
        flag = next((f for f, name in (flags or {}).items() if name == field), field)
        raise SpeechkitError(f"--{flag.replace('_', '-')}: {exc.problem}") from None
