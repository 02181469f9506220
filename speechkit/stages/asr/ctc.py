"""CTC speech recognition: a wav2vec2-style acoustic model decoded by pyctcdecode beam search.

The acoustic model (transformers ``AutoModelForCTC``, or a speechbrain ``EncoderASR``, with a
character vocabulary, named by its registry name or a folder and resolved by
:mod:`speechkit.registry`) gives per-frame log-probabilities over characters. pyctcdecode searches them
with an optional KenLM n-gram built from ``Biasing.lm_text`` (speechkit.lm) and score-level
hot-word boosts. A word's times are the frames its characters span; its confidence is the
acoustic support for the decoded spelling over those frames (so a word that the LM or a hot
word pulled away from what the acoustics say gets a low confidence).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from speechkit import registry
from speechkit.core.options import bounded
from speechkit.devices import resolve_device
from speechkit.errors import ModelNotAvailableError
from speechkit.lm import arpa_unigrams, cached_arpa, load_lm, normalize_text
from speechkit.stages.asr import Recognition
from speechkit.stages.asr.biasing import AsrOptions, Biasing
from speechkit.transcript import Segment, Word

if TYPE_CHECKING:
    from pyctcdecode import BeamSearchDecoderCTC

from speechkit.core.audio import SAMPLE_RATE

#: A CTC model that speechkit knows works with this backend (English, characters, 16 kHz).
DEFAULT_MODEL = "wav2vec2-base-960h"


def build_decoder(labels: Sequence[str], lm_path: str | Path | None = None, *, alpha: float = 0.5,
                  beta: float = 1.0, unk_score_offset: float = -4.0) -> BeamSearchDecoderCTC:
    """A pyctcdecode beam-search decoder over ``labels``, fused with the ARPA LM at ``lm_path``.

    ``labels`` has one character per log-probability column: ``""`` is the CTC blank, ``" "``
    the word break. ``alpha`` weighs the LM, ``beta`` rewards each word, ``unk_score_offset`` (log10)
    penalises words outside the LM's vocabulary. pyctcdecode's default (-10) suits a large general
    LM; an LM of workspace text misses many common words, and at -10 the search bends them into
    workspace words (on the tests' constructed log-probabilities -4 makes fewer such errors).
    """
    from pyctcdecode import Alphabet, BeamSearchDecoderCTC, LanguageModel

    _check_labels(labels)
    model = None
    if lm_path is not None:
        model = LanguageModel(load_lm(lm_path), arpa_unigrams(lm_path), alpha=alpha, beta=beta,
                              unk_score_offset=unk_score_offset)
    return BeamSearchDecoderCTC(Alphabet.build_alphabet(list(labels)), model)


def _check_labels(labels: Sequence[str]) -> None:
    if "" not in labels or " " not in labels:
        raise ValueError("CTC labels need the blank '' and the word break ' '")
    if len(set(labels)) != len(labels):
        raise ValueError("CTC labels must be distinct")
    if any(len(label) > 1 for label in labels):
        raise ValueError("CTC labels must be single characters (a character vocabulary)")


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def _word_confidences(logprobs: np.ndarray, labels: Sequence[str],
                      spans: list[tuple[str, int, int]]) -> list[float]:
    """Per word, the CTC probability of its spelling over its frames, per frame (geometric mean)."""
    import torch

    index = {label: i for i, label in enumerate(labels)}
    longest = max(end - start for _, start, end in spans)
    frames = np.zeros((longest, len(spans), len(labels)), dtype=np.float32)  # (T, N, C), padded
    for k, (_, start, end) in enumerate(spans):
        frames[: end - start, k] = logprobs[start:end]
    targets = torch.tensor([index[c] for text, _, _ in spans for c in text], dtype=torch.long)
    nll = torch.nn.functional.ctc_loss(
        torch.from_numpy(frames), targets,
        input_lengths=torch.tensor([end - start for _, start, end in spans]),
        target_lengths=torch.tensor([len(text) for text, _, _ in spans]),
        blank=index[""], reduction="none", zero_infinity=False)
    return [float(math.exp(-n / (end - start))) if math.isfinite(n) else 0.0
            for n, (_, start, end) in zip(nll.tolist(), spans)]


def decode_logprobs(logprobs: np.ndarray, labels: Sequence[str], *,
                    decoder: BeamSearchDecoderCTC | None = None,
                    hotwords: Sequence[str] = (), hotword_weight: float = 10.0,
                    beam_width: int = 64, frame_s: float = 0.02,
                    offset_s: float = 0.0) -> list[Word]:
    """Beam-search CTC log-probabilities ``(frames, labels)`` into timed words.

    ``decoder`` comes from :func:`build_decoder` (with an LM) or is built plain from ``labels``.
    ``hotwords`` (already in the labels' alphabet) each add ``hotword_weight`` to a hypothesis
    that contains them. Word times are ``offset_s`` plus frame index times ``frame_s``.
    """
    logprobs = np.asarray(logprobs, dtype=np.float32)
    if logprobs.ndim != 2 or logprobs.shape[1] != len(labels):
        raise ValueError(f"log-probabilities of shape {logprobs.shape} do not match "
                         f"{len(labels)} labels (expected frames x labels)")
    if decoder is None:
        decoder = build_decoder(labels)
    if len(logprobs) == 0:
        return []
    logprobs = _log_softmax(logprobs)
    beams = decoder.decode_beams(logprobs, beam_width=beam_width, hotwords=list(hotwords),
                                 hotword_weight=hotword_weight)
    spans = [(text, start, end) for text, (start, end) in beams[0][2]]
    if not spans:
        return []
    confidences = _word_confidences(logprobs, labels, spans)
    return [Word(text, round(offset_s + start * frame_s, 3), round(offset_s + end * frame_s, 3),
                 round(conf, 4))
            for (text, start, end), conf in zip(spans, confidences)]


@dataclass(frozen=True)
class CTCOptions(AsrOptions):
    """Options of the CTC backend.

    ``model``: a registry name (``speechkit models list --stage asr``; resolved offline, see
    :mod:`speechkit.registry`), or a folder holding a transformers CTC model with its tokenizer
    and feature extractor (``save_pretrained`` layout) or a speechbrain ``EncoderASR`` CTC model
    (``hyperparams.yaml`` and its checkpoints); either with a character vocabulary.
    ``compute_type`` (transformers models; speechbrain ones run in float32): ``default`` (float16
    on a GPU, float32 on a CPU), ``float32``, ``float16`` or ``bfloat16``.
    ``beam_width``, ``alpha`` (LM weight), ``beta`` (word bonus), ``unk_score_offset``: beam search.
    ``hotword_weight``: hot-word boost, unless ``Biasing.hotword_weight`` sets one.
    ``lm_order``: order of the n-gram built from ``Biasing.lm_text`` (cached in ``lm_cache_dir``,
    default ``speechkit.lm.default_cache_dir()``).
    ``chunk_s``, ``context_s``: long regions go through the model in chunks of ``chunk_s``, each
    seeing ``context_s`` of audio on both sides; the frames are joined and decoded as one.
    ``block_s``: see :class:`~speechkit.stages.asr.AsrOptions`.
    """

    model: str = DEFAULT_MODEL
    compute_type: Literal["default", "float32", "float16", "bfloat16"] = "default"
    beam_width: int = bounded(64, ge=1, le=4096)
    alpha: float = bounded(0.5, ge=0.0, le=100.0)
    beta: float = bounded(1.0, ge=-100.0, le=100.0)
    hotword_weight: float = bounded(10.0, ge=0.0, le=1000.0)
    unk_score_offset: float = bounded(-4.0, ge=-1000.0, le=0.0)
    lm_order: int = bounded(3, ge=2, le=5)
    lm_cache_dir: str | None = None
    chunk_s: float = bounded(30.0, gt=0.0, le=600.0)
    context_s: float = bounded(1.0, ge=0.0, le=60.0)


class CTCRecognizer:
    """Speech recognition with a character CTC model and pyctcdecode beam search.

    Built from :class:`CTCOptions` (or keyword overrides of its defaults) and a ``device``
    (``auto``, ``cpu``, ``cuda``). ``Biasing.prompt`` is not used (a CTC model takes no prompt).
    """

    Options = CTCOptions

    def __init__(self, options: CTCOptions | None = None, device: str = "auto", **overrides: Any) -> None:
        import torch

        self.options = (options or CTCOptions()).with_overrides(**overrides)
        self.device = resolve_device(device)
        self.compute_type = self.options.compute_type
        if self.compute_type == "default":
            self.compute_type = "float16" if self.device.startswith("cuda") else "float32"
        self._dtype = getattr(torch, self.compute_type)
        folder = registry.resolve(self.options.model)
        self._speechbrain: _SpeechBrainCTC | None = None
        if (folder / "hyperparams.yaml").is_file() and not (folder / "config.json").is_file():
            self._speechbrain = _SpeechBrainCTC(folder, self.device)
            self._hop, self._receptive = self._speechbrain.hop, self._speechbrain.receptive
            self._columns, self.labels = self._speechbrain.columns, self._speechbrain.labels
            self.frame_s = self._hop / SAMPLE_RATE
            self._finish()
            return
        self._model, self._features, tokenizer = self._load(folder)
        if self._features.sampling_rate != SAMPLE_RATE:
            raise ModelNotAvailableError(
                f"{self.options.model}: the model takes {self._features.sampling_rate} Hz audio; "
                f"speechkit's stages pass {SAMPLE_RATE} Hz")
        self._model.to(self.device, dtype=self._dtype).eval()
        config = self._model.config
        self._hop = math.prod(config.conv_stride)
        self._receptive = config.conv_kernel[0] + sum(
            (k - 1) * math.prod(config.conv_stride[:i]) for i, k in enumerate(config.conv_kernel) if i)
        self.frame_s = self._hop / SAMPLE_RATE
        self._columns, self.labels = self._vocabulary(tokenizer, config.vocab_size)
        self._finish()

    def _finish(self) -> None:
        self._alphabet = "".join(c for c in self.labels if c.strip())
        self._plain = build_decoder(self.labels)
        self._lm_decoder: tuple[Path, Any] | None = None

    def _load(self, folder: Path) -> tuple[Any, Any, Any]:
        """The model, feature extractor and tokenizer of a transformers model folder."""
        try:
            from transformers import AutoFeatureExtractor, AutoModelForCTC, AutoTokenizer
        except ImportError as e:
            raise ModelNotAvailableError(
                f"the ctc backend needs transformers (pip install 'speechkit[stages]'): {e}") from e
        expected = ("a transformers CTC model folder (config.json, weights, vocab.json, preprocessor_config.json) "
                    "or a speechbrain EncoderASR folder (hyperparams.yaml and its checkpoints)")
        if not (folder / "config.json").is_file():
            raise ModelNotAvailableError(f"{folder}: no config.json; expected {expected}")
        try:
            return (AutoModelForCTC.from_pretrained(folder, local_files_only=True),
                    AutoFeatureExtractor.from_pretrained(folder, local_files_only=True),
                    AutoTokenizer.from_pretrained(folder, local_files_only=True))
        except (OSError, ValueError, KeyError) as e:
            problem = " ".join(str(e).split())[:300]
            raise ModelNotAvailableError(f"{folder}: cannot load a CTC model ({problem}); expected "
                                         f"{expected}") from None

    def _vocabulary(self, tokenizer: Any, size: int) -> tuple[list[int], list[str]]:
        """Logit columns to keep and their decoder labels (blank ``""``, word break ``" "``)."""
        id_to_token = {i: t for t, i in tokenizer.get_vocab().items()}
        blank = tokenizer.pad_token_id
        delimiter = getattr(tokenizer, "word_delimiter_token", None) or "|"
        special = set(tokenizer.all_special_tokens)
        columns, labels = [], []
        for i in range(size):
            token = id_to_token.get(i)
            if i == blank:
                label = ""
            elif token == delimiter:
                label = " "
            elif token is None or token in special:
                continue
            elif len(token) != 1:
                raise ModelNotAvailableError(
                    f"{self.options.model}: token {token!r} is not a single character; the ctc backend "
                    f"needs a character vocabulary")
            else:
                label = token
            columns.append(i)
            labels.append(label)
        if "" not in labels or " " not in labels:
            raise ModelNotAvailableError(
                f"{self.options.model}: the vocabulary needs a pad token (CTC blank) and a word "
                f"delimiter {delimiter!r}")
        lowered = [label.lower() for label in labels]
        return columns, lowered if len(set(lowered)) == len(lowered) else labels

    def _forward(self, wav: np.ndarray) -> np.ndarray:
        import torch

        if len(wav) < self._receptive:
            wav = np.pad(wav, (0, self._receptive - len(wav)))
        if self._speechbrain is not None:
            return self._speechbrain.logprobs(wav)
        values = self._features(wav, sampling_rate=SAMPLE_RATE, return_tensors="np").input_values
        with torch.inference_mode():
            x = torch.from_numpy(np.asarray(values)).to(self.device, dtype=self._dtype)
            logits = self._model(x).logits[0, :, self._columns].float()
            return torch.log_softmax(logits, dim=-1).cpu().numpy()

    def logprobs(self, audio: np.ndarray) -> np.ndarray:
        """Per-frame log-probabilities ``(frames, len(labels))`` of 16 kHz mono ``audio``."""
        chunk = max(1, round(self.options.chunk_s * SAMPLE_RATE / self._hop)) * self._hop
        context = round(self.options.context_s * SAMPLE_RATE / self._hop) * self._hop
        parts = []
        for start in range(0, len(audio), chunk):
            end = min(start + chunk, len(audio))
            lo, hi = max(0, start - context), min(len(audio), end + context)
            first = (start - lo) // self._hop
            parts.append(self._forward(audio[lo:hi])[first:first + math.ceil((end - start) / self._hop)])
        return np.concatenate(parts) if parts else np.zeros((0, len(self.labels)), np.float32)

    def _decoder(self, lm_text: str | None) -> Any:
        if not lm_text or not normalize_text(lm_text, self._alphabet):
            return self._plain
        path = cached_arpa([lm_text], self.options.lm_order, alphabet=self._alphabet,
                           cache_dir=self.options.lm_cache_dir)
        if self._lm_decoder is None or self._lm_decoder[0] != path:
            if self._lm_decoder is not None:
                self._lm_decoder[1].cleanup()
            self._lm_decoder = (path, build_decoder(
                self.labels, path, alpha=self.options.alpha, beta=self.options.beta,
                unk_score_offset=self.options.unk_score_offset))
        return self._lm_decoder[1]

    def transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                   biasing: Biasing | None = None) -> Recognition:
        """One segment per speech region (the whole audio if ``speech`` is None) with words (no
        loop control: its :class:`~speechkit.stages.asr.DecodeStats` are empty)."""
        audio = np.asarray(audio, dtype=np.float32)
        if audio.ndim != 1:
            raise ValueError(f"audio must be mono (one dimension), got shape {audio.shape}")
        biasing = biasing or Biasing()
        decoder = self._decoder(biasing.lm_text)
        hotwords = [w for w in (normalize_text(h, self._alphabet) for h in biasing.hotwords) if w]
        weight = biasing.hotword_weight if biasing.hotword_weight is not None else self.options.hotword_weight
        duration = len(audio) / SAMPLE_RATE
        segments = []
        for start, end in [(0.0, duration)] if speech is None else speech:
            if end < start:
                raise ValueError(f"speech region ({start}, {end}) ends before it starts")
            a, b = round(max(0.0, start) * SAMPLE_RATE), round(min(end, duration) * SAMPLE_RATE)
            if b <= a:
                continue
            words = decode_logprobs(self.logprobs(audio[a:b]), self.labels, decoder=decoder,
                                    hotwords=hotwords, hotword_weight=weight,
                                    beam_width=self.options.beam_width, frame_s=self.frame_s,
                                    offset_s=a / SAMPLE_RATE)
            limit = b / SAMPLE_RATE
            words = [Word(w.text, min(w.start, limit), min(w.end, limit), w.confidence) for w in words]
            if words:
                segments.append(Segment.from_words(words, speaker=""))
        return Recognition(segments)


class _SpeechBrainCTC:
    """A speechbrain ``EncoderASR`` CTC model (e.g. ``speechbrain/asr-wav2vec2-commonvoice-14-en``)
    loaded in place from its folder: its encoder gives per-frame log-probabilities over the
    tokenizer's labels (a ``CTCTextEncoder``, or a SentencePiece model whose pieces are single
    characters, ``▁`` the word break); the label at ``blank_index`` is the CTC blank."""

    def __init__(self, folder: Path, device: str) -> None:
        try:
            from speechbrain.inference.ASR import EncoderASR
        except ImportError as e:
            raise ModelNotAvailableError(
                f"a speechbrain CTC model needs speechbrain (pip install 'speechkit[stages]'): {e}") from e
        try:
            self._asr = EncoderASR.from_hparams(source=str(folder.resolve()), run_opts={"device": device},
                                                overrides={"pretrained_path": str(folder.resolve())},
                                                overrides_must_match=False)
        except (OSError, ValueError, KeyError, RuntimeError, AttributeError) as e:
            problem = " ".join(str(e).split())[:300]
            raise ModelNotAvailableError(f"{folder}: cannot load a speechbrain CTC model ({problem})") from None
        self._asr.eval()
        self._device = device
        blank = int(getattr(self._asr.hparams, "blank_index", 0))
        tokens = self._tokens()
        self.columns, self.labels = [], []
        for i, token in enumerate(tokens):
            if i == blank:
                label = ""
            elif len(token) > 2 and token.startswith("<") and token.endswith(">"):
                continue  # <unk>, <s>, </s>: never decoded
            else:
                label = " " if token in ("▁", " ", "|") else token
                if len(label) != 1:
                    raise ModelNotAvailableError(f"{folder}: token {token!r} is not a single character; the "
                                                 f"ctc backend needs a character vocabulary")
            self.columns.append(i)
            self.labels.append(label.lower() if label.strip() else label)
        if "" not in self.labels or " " not in self.labels or len(set(self.labels)) != len(self.labels):
            raise ModelNotAvailableError(f"{folder}: the vocabulary needs a blank, a word break and distinct "
                                         f"characters")
        # samples per frame: the frames one more second of audio adds
        frames = [self.logprobs(np.zeros(n * SAMPLE_RATE, np.float32)).shape[0] for n in (1, 2)]
        self.hop = max(1, round(SAMPLE_RATE / max(1, frames[1] - frames[0])))
        self.receptive = max(self.hop, 400)

    def _tokens(self) -> list[str]:
        tokenizer = self._asr.tokenizer
        if hasattr(tokenizer, "ind2lab"):  # speechbrain's CTCTextEncoder
            return [str(tokenizer.ind2lab[i]) for i in range(len(tokenizer.ind2lab))]
        return [tokenizer.id_to_piece(i) for i in range(tokenizer.vocab_size())]  # SentencePiece

    def logprobs(self, wav: np.ndarray) -> np.ndarray:
        """Per-frame log-probabilities ``(frames, len(labels))`` of 16 kHz mono ``wav``."""
        import torch

        with torch.inference_mode():
            x = torch.from_numpy(np.asarray(wav, dtype=np.float32))[None].to(self._device)
            out = self._asr.encode_batch(x, torch.ones(1, device=self._device))[0][:, self.columns].float()
            return torch.log_softmax(out, dim=-1).cpu().numpy()
