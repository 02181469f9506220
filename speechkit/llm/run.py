"""The LLM side of a run: checked before any audio is read, counted, judged at the end.

- :func:`probe_endpoints` (before any audio is read, :mod:`speechkit.lifecycle`): starts the
  local server where a stage needs one, and probes every LLM stage's endpoint. An unreachable
  endpoint or a model the server does not serve stops the run at once
  (:class:`~speechkit.llm.client.LLMUnavailable`: ``ENDPOINT: model M: the server's message``)
  unless the stage's ``failures`` option is ``allow``.
- :func:`run_summary` (after the last meeting, before scoring): run.json's ``llm`` from the
  run's :mod:`~speechkit.llm.session`: per endpoint and model, where they came from, the model
  names the server reported, requests, cache hits and failures. Failed requests above the
  stage's ``max_failed_share`` stop the run unless failures are allowed.
- :func:`failure_notice`: the report's first line when requests failed or a probe did.
- :func:`with_failure_policy`: a recipe whose LLM stages take ``--llm-failures``.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from speechkit.llm import session
from speechkit.llm.client import ClientOptions, LLMClient, LLMUnavailable

log = logging.getLogger(__name__)


def llm_stages(recipe: Any) -> dict[str, ClientOptions]:
    """The recipe's stages that talk to a language model: name -> their options."""
    return {name: spec.options for name, spec in recipe.stages.items() if isinstance(spec.options, ClientOptions)}


def with_failure_policy(recipe: Any, policy: str | None) -> Any:
    """``recipe`` with every LLM stage's ``failures`` option set to ``policy`` (``fail`` or
    ``allow``; None: as the recipe says)."""
    stages = llm_stages(recipe)
    if policy is None or not stages:
        return recipe
    return replace(recipe, stages={name: replace(spec, options=spec.options.with_overrides(failures=policy))
                                   if name in stages else spec for name, spec in recipe.stages.items()})


def probe_endpoints(recipe: Any) -> dict[tuple[str, str], session.EndpointUsage]:
    """Probe every LLM stage's endpoint, in a session of its own: (base URL, model) -> the
    endpoint as found (where it came from, what the probe found); raises :class:`LLMUnavailable`
    unless the stage allows failures."""
    with session.opened(None) as probing:
        for name, options in llm_stages(recipe).items():
            client = LLMClient(options)
            found = checked_endpoint(client, options.failures, f"stages.{name}")
            probing.usage(client.base_url, client.model).probe = found
    return dict(probing.endpoints)


def checked_endpoint(client: LLMClient, failures: str, what: str) -> str:
    """What probing ``client``'s endpoint found; an unavailable one raises :class:`LLMUnavailable`
    under the ``fail`` policy, and is ``failed: ...`` (logged for ``what``) under ``allow``."""
    try:
        return client.probe()
    except LLMUnavailable as e:
        if failures == "fail":
            raise
        log.warning("%s: %s (going on: failures are allowed)", what, e)
        return f"failed: {e}"


def run_summary(recipe: Any, run_session: session.Session) -> dict[str, Any] | None:
    """run.json's ``llm`` from the run's session (None when the recipe uses no LLM); raises
    :class:`LLMUnavailable` when more than a stage's ``max_failed_share`` of its requests failed
    and failures are not allowed."""
    endpoints = list(run_session.endpoints.values())
    stages = llm_stages(recipe)
    if not stages:
        return None
    strict = [o for o in stages.values() if o.failures == "fail"]
    if strict:
        limit = min(o.max_failed_share for o in strict)
        for usage in endpoints:
            if usage.failed and usage.failed_share > limit:
                raise LLMUnavailable(
                    f"{usage.base_url}: model {usage.model}: {usage.failed} of {usage.requests} requests failed "
                    f"({usage.failed_share:.0%}; the recipe allows {limit:.0%}); last: {usage.last_failure}; "
                    "--llm-failures allow runs on and says so in the report")
    return {"policy": sorted({o.failures for o in stages.values()}),
            "endpoints": [u.as_dict() for u in endpoints]}


def failure_notice(summary: dict[str, Any] | None) -> str | None:
    """The report's first line when LLM requests failed or an endpoint failed its probe (None otherwise)."""
    if not summary:
        return None
    parts = []
    for u in summary["endpoints"]:
        if u["failed"] or u["probe"].startswith("failed"):
            part = (f"{u['failed']} of {u['requests']} LLM requests ({u['failed_share']:.0%}) to "
                    f"{u['base_url']} (model {u['model']}) failed")
            if u["probe"].startswith("failed"):
                part += f", and the check before the run {u['probe']}"
            parts.append(part)
    if not parts:
        return None
    return ("**LLM failures allowed: " + "; ".join(parts) + ". Those requests (answers that were not what was "
            "asked included) changed nothing: their turns kept the words the stages before gave them, and notes "
            "from no usable answer have their scores n/a.**")
