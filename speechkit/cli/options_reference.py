"""The option reference: every stage backend's and post-run step's options with type, default,
bounds and doc, generated from the option dataclasses (what ``speechkit recipe --show-options`` prints)."""
from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Iterator

from speechkit.core.options import StageOptions
from speechkit.core.stage import registered_class
from speechkit.stages import STAGES, backend_class, stage_module
from speechkit.steps import STEPS, step_module


def option_lines(options: type[StageOptions], prefix: str) -> Iterator[str]:
    """One line per option of ``options`` (``PREFIX.NAME  TYPE = DEFAULT  BOUNDS``), then its doc."""
    hints = typing.get_type_hints(options)
    for f in dataclasses.fields(options):
        kind = inspect.formatannotation(hints[f.name]).replace("typing.", "")
        if "command_line" in f.metadata:
            yield f"  {prefix}.{f.name}: {kind}  (given only on the command line: {f.metadata['command_line']})"
        if not f.init:
            continue
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else "(required)")
        bounds = f.metadata.get("bounds")
        yield f"  {prefix}.{f.name}: {kind} = {default!r}" + (f"  ({bounds})" if bounds else "")
    doc = inspect.getdoc(options) or ""
    yield from (f"    {line}".rstrip() for line in doc.splitlines())


def options_reference() -> str:
    """Every stage's backends and their options, in cascade order, as plain text."""
    from speechkit.recipe import ContextBudget

    out = ["Options of every stage backend (a recipe's stages.STAGE mapping, or --set STAGE.OPTION=VALUE);",
           "bounds in brackets, a default of None as the option's doc says.", ""]
    for stage in STAGES:
        module = stage_module(stage)
        for backend in module.BACKENDS:
            default = " (default backend)" if backend == module.DEFAULT_BACKEND else ""
            out.append(f"stages.{stage}  backend: {backend}{default}")
            out += option_lines(backend_class(stage, backend).Options, stage)
            out.append("")
    from speechkit.stages.diarize.embedders import EMBEDDERS, embedder_class
    for embedder in EMBEDDERS:
        out.append(f"stages.diarize.embedder_options  embedder: {embedder} (the embedding backend's embedder)")
        out += option_lines(embedder_class(embedder).Options, "diarize.embedder_options")
        out.append("")
    for step in STEPS:
        module = step_module(step)
        for backend in module.BACKENDS:
            default = " (default backend)" if backend == module.DEFAULT_BACKEND else ""
            out.append(f"steps.{step}  backend: {backend}{default} "
                       f"(a post-run step: the recipe's steps.{step} mapping)")
            out += option_lines(registered_class(module.BACKENDS, backend, f"steps.{step}.backend").Options, step)
            out.append("")
    out.append("context (the recipe's context block, --set context.OPTION=VALUE)")
    out += option_lines(ContextBudget, "context")
    return "\n".join(out) + "\n"
