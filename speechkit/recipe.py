"""Recipes: YAML files that name the stages of a cascade, their backends and options.

A recipe is data, not code: one file per backend family (``whisper``, ``ctc``, ...), the context
level given when it is run. Its keys:

```yaml
name: whisper
device: auto                  # auto | cpu | cuda, passed to every stage
level: 3                      # optional: a fixed context level (else given at run time)
stages:                       # each stage: a backend and its options (docs/architecture.md)
  vad: {backend: silero, threshold: 0.5}
  asr: {backend: whisper, model: tiny.en}
  diarize: {backend: embedding, embedder: resemblyzer}
  identify: {threshold: 0.65}                 # optional: defaults
  attribute: {}                               # optional: defaults
  correct: {backend: lexicon}                 # optional; runs when the context has a vocabulary
context: {prompt_tokens: 200, hotwords: 40, prior_terms: 20}   # budgets, see speechkit.context
resources:                    # optional; what the Ray executor requests per stage (docs/ray.md)
  asr: {num_gpus: 1, num_cpus: 1, batch_size: 4, concurrency: 2}
```

Every key of every stage is checked on load, before any audio is read: an unknown option, a
value of the wrong type or out of range is a :class:`RecipeError` naming the file and the
option's path. The recipes shipped with speechkit live in the package (``speechkit/recipes``,
also reachable as ``recipes/`` in a checkout); ``l1``..``l3`` and ``ctc-l1``..``ctc-l3`` name a
shipped recipe at a level.

``resources`` names ``vad``, ``diarize``, ``asr`` (the stages that need no context, run over
every meeting first) and ``workspace`` (the worker that runs a workspace's meetings in calendar
order with their context); see :class:`StageResources`. The local executor ignores it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from speechkit.errors import FormatError
from speechkit.io.names import id_problem
from speechkit.stages import OPTIONAL_STAGES, STAGES, StageSpec, parse_stage
from speechkit.stages.options import OptionError

RECIPE_KEYS = {"name", "level", "device", "stages", "context", "resources"}
RESOURCE_NAMES = ("vad", "diarize", "asr", "workspace")
LEVELS = (1, 2, 3)
_LEVEL_NAME = re.compile(r"^(?:(?P<family>[\w.-]+)-)?l(?P<level>[123])$")


class RecipeError(FormatError):
    """A recipe cannot be used: missing, malformed, or an option is unknown or invalid."""

    exit_code = 2


def recipes_dir() -> Path:
    """The folder of the recipes shipped in the package."""
    return Path(str(resources.files("speechkit") / "recipes"))


@dataclass(frozen=True)
class ContextBudget:
    """How much context each level may add (every addition is logged with its size).

    ``prompt_tokens``: approximate token budget of the ASR prompt (words x 1.3).
    ``hotwords``: most hot words given to the recognizer.
    ``prior_terms``: most frequent rare words taken from the system's own earlier transcripts (L2+).
    ``rare_zipf``: a word is rare when its wordfreq Zipf frequency is below this.
    ``prior_min_confidence``: least ASR word confidence for a word of an earlier transcript to be
    learnt from (rare words and LM text, L2+); words in windows the ASR loop control flagged never are.
    ``prior_min_segments``: least number of segments (of any earlier meetings) in which a rare word
    must have been recognised confidently to become a hot word and correction term.
    """

    prompt_tokens: int = 200
    hotwords: int = 40
    prior_terms: int = 20
    rare_zipf: float = 3.0
    prior_min_confidence: float = 0.8
    prior_min_segments: int = 2


@dataclass(frozen=True)
class StageResources:
    """What one Ray worker of a stage asks for, and how many of them may run.

    ``num_cpus``, ``num_gpus``: reserved per worker (fractions allowed; a worker without a GPU
    runs on the CPU under ``device: auto``). ``batch_size``: meetings (workspaces, for
    ``workspace``) handed to a worker per call. ``concurrency``: most workers at once (None: as
    many as the cluster fits and there is work for).
    """

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    batch_size: int = 1
    concurrency: int | None = None


@dataclass(frozen=True)
class Recipe:
    """A validated recipe: each stage's :class:`~speechkit.stages.StageSpec`, defaults filled in.

    ``level`` is None until a level is chosen (:meth:`at_level`); running needs one.
    """

    name: str
    level: int | None
    stages: dict[str, StageSpec]
    context: ContextBudget = field(default_factory=ContextBudget)
    device: str = "auto"
    path: Path | None = None
    resources: dict[str, StageResources] = field(default_factory=dict)

    def at_level(self, level: int) -> "Recipe":
        """The recipe run at context ``level``; its name gets ``-lN``."""
        if level not in LEVELS:
            raise ValueError(f"level must be 1, 2 or 3, got {level!r}")
        name = self.name if self.level == level else f"{self.name}-l{level}"
        return replace(self, level=level, name=name)

    def with_overrides(self, model: str | None = None, device: str | None = None) -> "Recipe":
        """The recipe with the ASR model and/or the device replaced."""
        stages = dict(self.stages)
        if model:
            stages["asr"] = parse_stage("asr", {**stages["asr"].as_dict(), "model": model})
        return replace(self, stages=stages, device=device or self.device)

    def as_dict(self) -> dict[str, Any]:
        """The fully resolved recipe (every option with its value), as run.json records it."""
        return {"name": self.name, "level": self.level, "device": self.device,
                "stages": {name: spec.as_dict() for name, spec in self.stages.items()},
                "context": self.context.__dict__,
                "resources": {name: r.__dict__ for name, r in self.resources.items()}}


def load_recipe(path: str | Path, level: int | None = None) -> Recipe:
    """Load a recipe from a YAML file, or a shipped one by name (``whisper``, ``ctc``, ``l3``,
    ``ctc-l1``); ``level`` sets the context level (else the file's, or the name's)."""
    path, named_level = _locate(Path(path))
    level = level if level is not None else named_level
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        known = ", ".join(sorted(p.stem for p in recipes_dir().glob("*.yaml")))
        raise RecipeError(path, f"recipe not found (recipes shipped: {known}; "
                                f"l1-l3 and ctc-l1..ctc-l3 name them at a level)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecipeError(path, f"cannot read: {exc}") from None
    except yaml.YAMLError as exc:
        raise RecipeError(path, f"invalid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise RecipeError(path, "expected a mapping")
    if "api_key" in data:
        raise RecipeError(path, "an API key never goes in a recipe: put it in the environment variable "
                                "SPEECHKIT_LLM_API_KEY (or one named by the corrector's api_key_env)", field="api_key")
    unknown = set(data) - RECIPE_KEYS
    if unknown:
        raise RecipeError(path, f"unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
                                f"allowed: {', '.join(sorted(RECIPE_KEYS))}")
    file_level = data.get("level")
    if file_level is not None and file_level not in LEVELS:
        raise RecipeError(path, f"expected 1, 2 or 3, got {file_level!r}", field="level")
    stages = data.get("stages")
    if not isinstance(stages, dict):
        raise RecipeError(path, "expected a mapping of stage name to options", field="stages")
    for name in stages:
        if name not in STAGES:
            raise RecipeError(path, f"unknown stage; expected one of {', '.join(STAGES)}", field=f"stages.{name}")
    for name in STAGES:
        if name not in stages and name not in OPTIONAL_STAGES:
            raise RecipeError(path, "missing", field=f"stages.{name}")
    specs = {}
    try:
        for name in STAGES:
            if name in stages or name in ("attribute", "identify"):
                specs[name] = parse_stage(name, stages.get(name))
    except OptionError as exc:
        raise RecipeError(path, exc.problem, field=exc.field) from None
    context = data.get("context") or {}
    try:
        budget = ContextBudget(**context)
    except TypeError as exc:
        raise RecipeError(path, str(exc), field="context") from None
    name = data.get("name") or path.stem
    if id_problem(name):
        raise RecipeError(path, f"{id_problem(name)} (it names the default run folder)", field="name")
    recipe = Recipe(name=name, level=file_level, stages=specs,
                    context=budget, device=str(data.get("device", "auto")), path=path.resolve(),
                    resources=_resources(path, data.get("resources") or {}))
    return recipe.at_level(level) if level is not None else recipe


def _locate(path: Path) -> tuple[Path, int | None]:
    """The file of a recipe given by path or shipped name, and the level a name like ``l3`` sets."""
    if path.suffix or path.exists():
        return path, None
    if id_problem(path.name) or str(path) != path.name:
        raise RecipeError(path, "no such recipe file, and not the name of a shipped recipe")
    match = _LEVEL_NAME.match(path.name)
    if match:
        return recipes_dir() / f"{match['family'] or 'whisper'}.yaml", int(match["level"])
    return recipes_dir() / f"{path.name}.yaml", None


def _resources(path: Path, data: Any) -> dict[str, StageResources]:
    """The validated ``resources`` mapping of a recipe."""
    if not isinstance(data, dict):
        raise RecipeError(path, "expected a mapping of stage name to resources", field="resources")
    out = {}
    for name, options in data.items():
        where = f"resources.{name}"
        if name not in RESOURCE_NAMES:
            raise RecipeError(path, f"unknown name; expected one of {', '.join(RESOURCE_NAMES)}", field=where)
        if not isinstance(options, dict):
            raise RecipeError(path, "expected a mapping of num_cpus, num_gpus, batch_size, concurrency",
                              field=where)
        try:
            resources = StageResources(**options)
        except TypeError as exc:
            raise RecipeError(path, str(exc), field=where) from None
        for key in ("num_cpus", "num_gpus"):
            value = getattr(resources, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise RecipeError(path, f"expected a number >= 0, got {value!r}", field=f"{where}.{key}")
        for key in ("batch_size", "concurrency"):
            value = getattr(resources, key)
            if (value is not None or key == "batch_size") and (
                    isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise RecipeError(path, f"expected an integer >= 1, got {value!r}", field=f"{where}.{key}")
        out[name] = resources
    return out
