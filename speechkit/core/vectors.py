"""Vectors of voices: unit length, as every embedder, centroid and voice print is compared."""
from __future__ import annotations

import numpy as np


def l2_normalize(x: np.ndarray, dtype: type = np.float32) -> np.ndarray:
    """``x`` scaled to unit length along its last axis (zero vectors stay zero), as ``dtype``."""
    x = np.asarray(x, dtype=dtype)
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)
