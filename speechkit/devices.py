"""Device selection shared by every stage: ``auto`` picks CUDA when there is a GPU; and the
one-thread CPU onnxruntime session that the small ONNX models (Silero, Resemblyzer, Piper) run in."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from speechkit.errors import DeviceError

DEVICES = ("auto", "cpu", "cuda")


def cuda_available() -> bool:
    """True if a CUDA device is visible: asked of CTranslate2 (the Whisper backend's runtime), and of
    torch only where CTranslate2 is not installed, as importing torch costs about 600 MB of memory
    that a cascade without torch backends never needs."""
    try:
        import ctranslate2
    except ImportError:
        try:
            import torch
        except ImportError:
            return False
        return bool(torch.cuda.is_available())
    return ctranslate2.get_cuda_device_count() > 0


def resolve_device(device: str = "auto") -> str:
    """``cpu`` or ``cuda`` for a requested device (``auto``, ``cpu``, ``cuda`` or ``cuda:N``).

    Raises :class:`~speechkit.errors.DeviceError` (a ``ValueError``) for an unknown device or a
    CUDA device on a machine where torch sees none.
    """
    if device == "auto":
        return "cuda" if cuda_available() else "cpu"
    if device == "cpu" or device.startswith("cuda"):
        if device.startswith("cuda") and not cuda_available():
            raise DeviceError(f"device {device!r} requested but torch sees no CUDA GPU on this machine; "
                              f"use --device cpu (or auto, which takes a GPU when there is one)")
        return device
    raise DeviceError(f"unknown device {device!r}; expected one of {', '.join(DEVICES)} or cuda:N")


def default_compute_type(device: str) -> str:
    """The CTranslate2 compute type that suits a resolved device: float16 on GPU, int8 on CPU."""
    return "float16" if device.startswith("cuda") else "int8"


def onnx_cpu_session(model: str | Path | bytes) -> Any:
    """An onnxruntime ``InferenceSession`` of ``model`` (a file, or the model's bytes) on the CPU
    with one intra-op and one inter-op thread: the models run this way step through small
    matrices, for which more threads cost more than they bring."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    source = model if isinstance(model, bytes) else str(model)
    return onnxruntime.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])
