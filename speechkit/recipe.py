"""Recipes: YAML files that name the stages of a cascade, their backends and parameters.

A recipe is data, not code. Its keys:

```yaml
name: l3-whisper
level: 3                      # context level: 1 audio only, 2 + own prior outputs, 3 + workspace artifacts
device: auto                  # auto | cpu | cuda, passed to every stage
stages:
  vad: {backend: silero, ...}                 # speechkit.vad.make_vad options
  asr: {backend: whisper, model: tiny.en, ...} # speechkit.asr.make_recognizer options
  diarize: {embedder: resemblyzer, ...}       # speechkit.diarize.Diarizer options + embedder
  identify: {threshold: 0.75}                 # speechkit.identify options
  correct: {backend: lexicon, ...}            # optional; speechkit.correct.make_corrector options
context: {prompt_tokens: 200, hotwords: 40, prior_terms: 20}   # budgets, see speechkit.context
resources:                    # optional; what the Ray executor requests per stage (docs/ray.md)
  asr: {num_gpus: 1, num_cpus: 1, batch_size: 4, concurrency: 2}
```

``resources`` names ``vad``, ``diarize``, ``asr`` (the stages that need no context, run over
every meeting first) and ``workspace`` (the worker that runs a workspace's meetings in calendar
order with their context); see :class:`StageResources`. The local executor ignores it.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from speechkit.errors import FormatError

STAGES = ("vad", "asr", "diarize", "identify", "correct")
REQUIRED_STAGES = ("vad", "asr", "diarize", "identify")
RECIPE_KEYS = {"name", "level", "device", "stages", "context", "resources"}
RESOURCE_NAMES = ("vad", "diarize", "asr", "workspace")
RECIPES_DIR = Path(__file__).resolve().parents[1] / "recipes"


@dataclass(frozen=True)
class ContextBudget:
    """How much context each level may add (every addition is logged with its size).

    ``prompt_tokens``: approximate token budget of the ASR prompt (words x 1.3).
    ``hotwords``: most hot words given to the recognizer.
    ``prior_terms``: most frequent rare words taken from the system's own earlier transcripts (L2+).
    ``rare_zipf``: a word is rare when its wordfreq Zipf frequency is below this.
    """

    prompt_tokens: int = 200
    hotwords: int = 40
    prior_terms: int = 20
    rare_zipf: float = 3.0


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
    """A validated recipe."""

    name: str
    level: int
    stages: dict[str, dict[str, Any]]
    context: ContextBudget = field(default_factory=ContextBudget)
    device: str = "auto"
    path: Path | None = None
    resources: dict[str, StageResources] = field(default_factory=dict)

    def stage(self, name: str) -> dict[str, Any] | None:
        """A copy of one stage's options (None for an absent optional stage)."""
        options = self.stages.get(name)
        return copy.deepcopy(options) if options is not None else None

    def with_overrides(self, model: str | None = None, device: str | None = None) -> "Recipe":
        """The recipe with the ASR model and/or the device replaced."""
        stages = copy.deepcopy(self.stages)
        if model:
            stages["asr"]["model"] = model
        return replace(self, stages=stages, device=device or self.device)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "level": self.level, "device": self.device, "stages": self.stages,
                "context": self.context.__dict__,
                "resources": {name: r.__dict__ for name, r in self.resources.items()}}


def load_recipe(path: str | Path) -> Recipe:
    """Load a recipe from a YAML file, or by name from the recipes/ folder (``l3``, ``ctc-l1``)."""
    path = Path(path)
    if not path.suffix and not path.exists():
        path = RECIPES_DIR / f"{path}.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        known = ", ".join(sorted(p.stem for p in RECIPES_DIR.glob("*.yaml")))
        raise FormatError(path, f"recipe not found (recipes shipped: {known})") from None
    except yaml.YAMLError as exc:
        raise FormatError(path, f"invalid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise FormatError(path, "expected a mapping")
    unknown = set(data) - RECIPE_KEYS
    if unknown:
        raise FormatError(path, f"unknown key(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(RECIPE_KEYS))}")
    level = data.get("level")
    if level not in (1, 2, 3):
        raise FormatError(path, f"expected 1, 2 or 3, got {level!r}", field="level")
    stages = data.get("stages")
    if not isinstance(stages, dict):
        raise FormatError(path, "expected a mapping of stage name to options", field="stages")
    for name, options in stages.items():
        if name not in STAGES:
            raise FormatError(path, f"unknown stage; expected one of {', '.join(STAGES)}", field=f"stages.{name}")
        if not isinstance(options, dict):
            raise FormatError(path, "expected a mapping of options", field=f"stages.{name}")
    for name in REQUIRED_STAGES:
        if name not in stages:
            raise FormatError(path, "missing", field=f"stages.{name}")
    context = data.get("context") or {}
    try:
        budget = ContextBudget(**context)
    except TypeError as exc:
        raise FormatError(path, str(exc), field="context") from None
    return Recipe(name=str(data.get("name") or path.stem), level=level, stages=stages, context=budget,
                  device=str(data.get("device", "auto")), path=path.resolve(),
                  resources=_resources(path, data.get("resources") or {}))


def _resources(path: Path, data: Any) -> dict[str, StageResources]:
    """The validated ``resources`` mapping of a recipe."""
    if not isinstance(data, dict):
        raise FormatError(path, "expected a mapping of stage name to resources", field="resources")
    out = {}
    for name, options in data.items():
        where = f"resources.{name}"
        if name not in RESOURCE_NAMES:
            raise FormatError(path, f"unknown name; expected one of {', '.join(RESOURCE_NAMES)}", field=where)
        if not isinstance(options, dict):
            raise FormatError(path, "expected a mapping of num_cpus, num_gpus, batch_size, concurrency",
                              field=where)
        try:
            resources = StageResources(**options)
        except TypeError as exc:
            raise FormatError(path, str(exc), field=where) from None
        for key in ("num_cpus", "num_gpus"):
            value = getattr(resources, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise FormatError(path, f"expected a number >= 0, got {value!r}", field=f"{where}.{key}")
        for key in ("batch_size", "concurrency"):
            value = getattr(resources, key)
            if (value is not None or key == "batch_size") and (
                    isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise FormatError(path, f"expected an integer >= 1, got {value!r}", field=f"{where}.{key}")
        out[name] = resources
    return out
