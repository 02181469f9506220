"""Installation checks for ``speechkit doctor``: packages, system tools, offline models, which
stage backends are usable here, devices."""
from __future__ import annotations

import importlib
import importlib.metadata
import os
import shutil
from dataclasses import dataclass

# (import name, distribution, extra that installs it, required for the default recipes)
PACKAGES = (
    ("numpy", "numpy", "core", True), ("yaml", "pyyaml", "core", True), ("jiwer", "jiwer", "core", True),
    ("whisper_normalizer", "whisper-normalizer", "core", True),
    ("pyannote.metrics", "pyannote.metrics", "core", True), ("meeteval", "meeteval", "core", True),
    ("soundfile", "soundfile", "stages", True), ("torch", "torch", "stages", True),
    ("torchaudio", "torchaudio", "stages", True), ("faster_whisper", "faster-whisper", "stages", True),
    ("silero_vad", "silero-vad", "stages", True), ("resemblyzer", "resemblyzer", "stages", True),
    ("speechbrain", "speechbrain", "stages", False), ("pyannote.audio", "pyannote.audio", "stages", False),
    ("pyctcdecode", "pyctcdecode", "stages", False), ("kenlm", "ufal-kenlm", "stages", False),
    ("transformers", "transformers", "stages", False), ("wordfreq", "wordfreq", "stages", True),
    ("jellyfish", "jellyfish", "correct", True), ("rapidfuzz", "rapidfuzz", "correct", True),
    ("num2words", "num2words", "correct", True), ("matplotlib", "matplotlib", "report", True),
    ("piper", "piper-tts", "synth", False), ("pyroomacoustics", "pyroomacoustics", "synth", False),
    ("ray", "ray", "ray", False), ("llama_cpp", "llama-cpp-python", "llm", False),
)
TOOLS = (("ffmpeg", "ffmpeg", True), ("ffprobe", "ffmpeg", True), ("espeak-ng", "espeak-ng", False),
         ("sox", "sox", False), ("chromium", "chromium", False))
REQUIRED_MODELS = ("whisper-tiny.en", "silero-vad", "resemblyzer")


@dataclass
class Check:
    """One line of the doctor's report."""

    group: str
    name: str
    ok: bool
    detail: str
    required: bool
    fix: str = ""


def check_packages() -> list[Check]:
    out = []
    for module, dist, extra, required in PACKAGES:
        try:
            importlib.import_module(module)
            out.append(Check("package", dist, True, importlib.metadata.version(dist), required))
        except Exception as exc:  # an import can fail in many ways (missing library, ABI clash)
            fix = "make setup" if extra == "core" else f"pip install 'speechkit[{extra}]' (or make setup)"
            out.append(Check("package", dist, False, f"{type(exc).__name__}: {exc}"[:120], required, fix))
    return out


def check_tools() -> list[Check]:
    return [Check("tool", tool, shutil.which(tool) is not None, shutil.which(tool) or "not on PATH", required,
                  f"apt-get install -y {package}") for tool, package, required in TOOLS]


def check_models() -> list[Check]:
    from speechkit import registry
    out = []
    for name, record in registry.load_registry().items():
        ok = registry.available(name)
        detail = registry.source_of(name) or "not on this machine"
        required = name in REQUIRED_MODELS
        fix = "" if ok else registry.how_to_get(record) if required else \
            f"speechkit models fetch {name} (on a machine with a network)"
        out.append(Check("model", name, ok, detail, required, fix))
    return out


#: What each stage backend (diarization embedders as ``embedding+NAME``) imports to run here.
BACKEND_PACKAGES: dict[tuple[str, str], tuple[str, ...]] = {
    ("vad", "silero"): ("silero_vad", "onnxruntime"), ("vad", "speechbrain"): ("speechbrain",),
    ("vad", "pyannote"): ("pyannote.audio",), ("asr", "whisper"): ("faster_whisper",),
    ("asr", "ctc"): ("transformers", "pyctcdecode", "kenlm"), ("asr", "api"): ("soundfile",),
    ("asr", "chat"): (),
    ("diarize", "embedding+resemblyzer"): ("resemblyzer", "onnxruntime", "sklearn"),
    ("diarize", "embedding+ecapa"): ("speechbrain", "sklearn"), ("diarize", "pyannote"): ("pyannote.audio",),
    ("diarize", "transcribed"): (),
    ("correct", "lexicon"): ("jellyfish", "rapidfuzz"), ("correct", "llm"): ("llama_cpp",),
}


def backend_models(stage: str, backend: str) -> list[str]:
    """The registry models a backend loads with its default options (``embedding+NAME``: the
    diarization embedding backend with embedder NAME)."""
    from speechkit.stages import backend_class

    if backend.startswith("embedding+"):
        from speechkit.stages.diarize.embedders import embedder_class
        options = embedder_class(backend.split("+", 1)[1]).Options()
        model = getattr(options, "model", None) or ("resemblyzer" if backend.endswith("resemblyzer") else None)
    else:
        model = getattr(backend_class(stage, backend).Options(), "model", None)
        if stage == "correct" and backend == "llm":
            from speechkit.llm.server import DEFAULT_MODEL
            model = DEFAULT_MODEL  # the local model; an endpoint of the user's needs none here
    return [model] if model else []


def check_backends() -> list[Check]:
    """Per stage backend: usable on this machine (its packages import and its default models are
    here offline), else what is missing and how to get it."""
    from speechkit import registry
    out = []
    for (stage, backend), modules in BACKEND_PACKAGES.items():
        missing = [m for m in modules if _spec(m) is None]
        needed = backend_models(stage, backend)
        needed += [r for m in needed for r in registry.get(m).requires]
        absent = [m for m in needed if not registry.available(m)]
        name = f"{stage} {backend}"
        if missing:
            out.append(Check("backend", name, False, f"needs {', '.join(missing)}", False,
                             "pip install 'speechkit[all]' (or make setup)"))
        elif absent:
            out.append(Check("backend", name, False, f"model {', '.join(absent)} not on this machine", False,
                             "; ".join(f"speechkit models fetch {m}" for m in absent)
                             + " (on a machine with a network)"))
        else:
            models = ", ".join(backend_models(stage, backend)) or "no model"
            out.append(Check("backend", name, True, f"usable ({models})", False))
    return out


def _spec(module: str) -> object | None:
    """``importlib.util.find_spec`` that treats a missing parent package as missing."""
    import importlib.util
    try:
        return importlib.util.find_spec(module)
    except ModuleNotFoundError:
        return None


def check_devices() -> list[Check]:
    out = []
    try:
        import torch
        n = torch.cuda.device_count()
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(n)) or "none"
        out.append(Check("device", "torch CUDA", True, f"{n} GPU(s): {names}; {os.cpu_count()} CPU cores",
                         False))
    except ImportError:
        out.append(Check("device", "torch CUDA", False, "torch not installed", False, "make setup"))
    try:
        import ctranslate2
        out.append(Check("device", "CTranslate2 CUDA", True,
                         f"{ctranslate2.get_cuda_device_count()} GPU(s); compute types on CPU: "
                         f"{', '.join(sorted(ctranslate2.get_supported_compute_types('cpu')))}", False))
    except ImportError:
        out.append(Check("device", "CTranslate2 CUDA", False, "ctranslate2 not installed", False, "make setup"))
    return out


def run_checks() -> list[Check]:
    """Every check, in report order."""
    return check_packages() + check_tools() + check_models() + check_backends() + check_devices()
