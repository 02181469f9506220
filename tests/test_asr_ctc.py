"""CTC recognition: pyctcdecode beam search with hot words and a workspace KenLM on constructed
log-probabilities, and the model-loading path on a small randomly initialised wav2vec2 model."""
from __future__ import annotations

import difflib
import logging

import jiwer
import numpy as np
import pytest
import soundfile as sf
from scipy.signal import resample_poly

from speechkit.errors import ModelNotAvailableError
from speechkit.lm import build_arpa
from speechkit.stages import make_backend
from speechkit.stages.asr import Biasing
from speechkit.stages.asr.ctc import CTCRecognizer, build_decoder, decode_logprobs

LABELS = ["", " ", "'", *"abcdefghijklmnopqrstuvwxyz"]
FRAME_S = 0.02

# Text of the workspace (emails, slides): the LM is built from it. The spoken sentences below
# are different sentences of the same domain, and some of their words are not in this text.
WORKSPACE_TEXT = """The gateway validates every pacs message before settlement.
Is there a problem with the gateway? Their team owns the kubernetes cluster.
We run settlement on the kubernetes cluster every night. The pacs messages go through the gateway.
Is there a backlog of messages? We deploy the gateway on friday. The way we deploy is simple.
Settlement is late when the gateway has a backlog of pacs messages."""

# (spoken, what the acoustics favour): jargon heard as common words, a word split in two,
# and "there" heard as "their", which only the context "is there a" settles.
LM_PAIRS = [
    ("the pacs message reached the gateway", "the packs message reached the gate way"),
    ("settlement runs on the kubernetes cluster", "settle meant runs on the cuber netties cluster"),
    ("is there a backlog of pacs messages", "is their a backlog of packs messages"),
    ("we validate the pacs messages before settlement", "we validate the packs messages before settle meant"),
]


def _slots(spoken: str, heard: str) -> list[tuple[str, str]]:
    """Character slots (spoken char, heard char) aligning the two readings; "" is silence."""
    slots = []
    matcher = difflib.SequenceMatcher(None, spoken, heard, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        s, h = spoken[i1:i2], heard[j1:j2]
        if op == "equal":
            slots += [(c, c) for c in s]
        else:
            slots += [(s[k] if k < len(s) else "", h[k] if k < len(h) else "")
                      for k in range(max(len(s), len(h)))]
    return slots


def confusable_logprobs(spoken: str, heard: str, seed: int = 0) -> np.ndarray:
    """CTC log-probabilities of ``spoken`` as an acoustic model that mishears it as ``heard``.

    Each character slot is two frames and a blank frame. Where both readings agree the frames
    give it 0.9; where they differ the heard character (or silence) gets 0.55 and the spoken one
    0.35, so the acoustics alone prefer ``heard``. The remaining mass leaks at random over
    every label.
    """
    rng = np.random.default_rng(seed)
    index = {c: i for i, c in enumerate(LABELS)}
    rows = []

    def frame(dist: dict[str, float]) -> None:
        p = rng.dirichlet(np.ones(len(LABELS))) * (1.0 - sum(dist.values()))
        for c, q in dist.items():
            p[index[c]] += q
        rows.append(np.log(p))

    for s, h in _slots(spoken, heard):
        dist = {s: 0.9} if s == h else {h: 0.55, s: 0.35}
        frame(dist)
        frame(dist)
        frame({"": 0.9})
    return np.array(rows, dtype=np.float32)


def greedy(logprobs: np.ndarray) -> str:
    """Best path: the arg-max label per frame, repeats merged, blanks dropped."""
    best = logprobs.argmax(axis=1)
    chars = [LABELS[i] for k, i in enumerate(best) if k == 0 or i != best[k - 1]]
    return " ".join("".join(chars).split())


def text(words) -> str:
    return " ".join(w.text for w in words)


@pytest.fixture(autouse=True)
def _quiet_pyctcdecode():
    """pyctcdecode warns that a workspace vocabulary is small; it is meant to be."""
    logging.getLogger("pyctcdecode").setLevel(logging.ERROR)


def test_hotword_recovers_jargon_that_plain_beam_search_misses():
    spoken = "we deploy the gateway on kubernetes every friday"
    logprobs = confusable_logprobs(spoken, "we deploy the gateway on cuber netties every friday")
    assert greedy(logprobs) == "we deploy the gateway on cuber netties every friday"

    plain = decode_logprobs(logprobs, LABELS)
    assert "kubernetes" not in text(plain)
    assert text(plain) == "we deploy the gateway on cuber netties every friday"

    biased = decode_logprobs(logprobs, LABELS, hotwords=["kubernetes"], hotword_weight=10.0,
                             frame_s=FRAME_S, offset_s=3.0)
    assert text(biased) == spoken
    # times: each slot is 3 frames; "kubernetes" starts after 25 slots of "we ... on "
    term = biased[5]
    assert term.text == "kubernetes"
    assert term.start == pytest.approx(3.0 + 25 * 3 * FRAME_S)
    assert all(a.end <= b.start for a, b in zip(biased, biased[1:]))
    assert biased[-1].end <= 3.0 + len(logprobs) * FRAME_S
    # the word the hot word pulled against the acoustics is the least confident
    assert term.confidence == min(w.confidence for w in biased) < 0.85
    assert all(0.85 < w.confidence <= 1.0 for w in biased if w is not term)


def test_hotword_does_not_appear_where_it_is_not_spoken():
    spoken = "the cube renders nicely on friday"
    logprobs = confusable_logprobs(spoken, spoken, seed=1)
    assert text(decode_logprobs(logprobs, LABELS, hotwords=["kubernetes"])) == spoken


def test_workspace_kenlm_lowers_wer(tmp_path):
    arpa = build_arpa([WORKSPACE_TEXT], tmp_path / "workspace.arpa", order=3)
    decoder = build_decoder(LABELS, arpa, alpha=0.5, beta=1.0)
    refs, plain, fused = [], [], []
    for seed, (spoken, heard) in enumerate(LM_PAIRS):
        logprobs = confusable_logprobs(spoken, heard, seed=seed)
        assert greedy(logprobs) == heard
        refs.append(spoken)
        plain.append(text(decode_logprobs(logprobs, LABELS)))
        fused.append(text(decode_logprobs(logprobs, LABELS, decoder=decoder)))
    wer_plain, wer_lm = jiwer.wer(refs, plain), jiwer.wer(refs, fused)
    assert wer_lm < wer_plain
    assert wer_plain > 0.4 and wer_lm < 0.1, (plain, fused)
    for ref, hyp in zip(refs, fused):  # the jargon is recovered wherever it was spoken
        assert ("pacs" in hyp.split()) == ("pacs" in ref.split()) and "packs" not in hyp
        assert ("kubernetes" in hyp.split()) == ("kubernetes" in ref.split())
    assert "is there a backlog of pacs messages" in fused  # context, not vocabulary, chose "there"


def test_decode_logprobs_checks_its_input():
    with pytest.raises(ValueError, match="labels"):
        decode_logprobs(np.zeros((5, 3), np.float32), LABELS)
    with pytest.raises(ValueError, match="blank"):
        decode_logprobs(np.zeros((5, 3), np.float32), ["a", "b", "c"])
    assert decode_logprobs(np.zeros((0, len(LABELS)), np.float32), LABELS) == []


@pytest.fixture(scope="module")
def jfk(realdata) -> np.ndarray:
    """jfk.flac as 16 kHz mono float32."""
    audio, rate = sf.read(realdata / "faster-whisper" / "jfk.flac", dtype="float32", always_2d=True)
    audio = audio.mean(axis=1)
    if rate != 16000:
        g = np.gcd(rate, 16000)
        audio = resample_poly(audio, 16000 // g, rate // g)
    return audio.astype(np.float32)


def test_recognizer_loads_a_saved_model_and_transcribes_real_audio(tiny_model, jfk):
    recognizer = make_backend("asr", "ctc", model=tiny_model, device="cpu")
    assert isinstance(recognizer, CTCRecognizer)
    # the tokenizer's upper-case characters, with <pad> as blank and | as word break
    assert recognizer.labels == LABELS
    assert recognizer.frame_s == pytest.approx(0.02)
    duration = len(jfk) / 16000

    segments = recognizer.transcribe(jfk)
    assert len(segments) == 1
    words = segments[0].words
    assert len(words) > 3  # random weights: garbage words, but words
    assert segments[0].speaker == "" and segments[0].text == " ".join(w.text for w in words)
    for w in words:
        assert w.text and set(w.text) <= set("abcdefghijklmnopqrstuvwxyz'")
        assert 0.0 <= w.start < w.end <= duration
        assert 0.0 <= w.confidence <= 1.0
    assert all(a.end <= b.start for a, b in zip(words, words[1:]))

    regions = [(0.5, 5.0), (6.0, 10.5)]
    segments = recognizer.transcribe(jfk, speech=regions, biasing=Biasing(
        hotwords=["Americans"], lm_text="And so my fellow Americans, ask not."))
    assert 1 <= len(segments) <= 2
    for segment in segments:
        assert any(a <= segment.start and segment.end <= b for a, b in regions)
        assert all(segment.start <= w.start < w.end <= segment.end for w in segment.words)


def test_long_regions_go_through_the_model_in_chunks(tiny_model, jfk):
    whole = CTCRecognizer(model=tiny_model, device="cpu")
    chunked = CTCRecognizer(model=tiny_model, device="cpu", chunk_s=2.0, context_s=0.5)
    a, b = whole.logprobs(jfk), chunked.logprobs(jfk)
    assert a.shape == b.shape and a.shape[1] == len(LABELS)
    assert abs(len(a) - len(jfk) / 320) <= 1  # one frame per 20 ms
    assert np.allclose(np.exp(b).sum(axis=1), 1.0, atol=1e-4)
    words = chunked.transcribe(jfk)[0].words
    assert words[-1].end <= len(jfk) / 16000


def test_short_and_empty_input(tiny_model):
    recognizer = CTCRecognizer(model=tiny_model, device="cpu")
    assert recognizer.transcribe(np.zeros(0, np.float32)) == []
    assert recognizer.logprobs(np.zeros(100, np.float32)).shape == (1, len(LABELS))
    assert recognizer.transcribe(np.zeros(16000, np.float32), speech=[(2.0, 3.0)]) == []
    with pytest.raises(ValueError, match="mono"):
        recognizer.transcribe(np.zeros((2, 16000), np.float32))


def test_missing_model_says_how_to_get_it(tmp_path, offline_models):
    """Registry name and hub id alike resolve offline or name the command that gets the model."""
    for name in ("wav2vec2-base-960h", "facebook/wav2vec2-base-960h"):
        with pytest.raises(ModelNotAvailableError, match="speechkit models fetch wav2vec2-base-960h"):
            CTCRecognizer(model=name, device="cpu")
    with pytest.raises(ModelNotAvailableError, match="no such model file or folder"):
        CTCRecognizer(model=tmp_path / "nothing-here", device="cpu")
    with pytest.raises(ModelNotAvailableError, match="no config.json"):
        CTCRecognizer(model=tmp_path, device="cpu")


def test_registry_name_resolves_to_the_local_model_folder(tiny_model, offline_models):
    """A model put in the registry's local folder is found by its name, as the recipes give it."""
    import shutil

    shutil.copytree(tiny_model, offline_models / "wav2vec2-base-960h")
    recognizer = CTCRecognizer(model="wav2vec2-base-960h", device="cpu")
    reference = CTCRecognizer(model=tiny_model, device="cpu")
    audio = np.random.default_rng(0).normal(0, 0.1, 16000).astype(np.float32)
    np.testing.assert_allclose(recognizer.logprobs(audio), reference.logprobs(audio), atol=1e-5)


def test_a_speechbrain_ctc_model_resolves_through_the_registry(offline_models, jfk):
    """speechbrain's EncoderASR layout (the registry's speechbrain-wav2vec2-commonvoice-14-en),
    test-built: its encoder's log-probabilities over its character tokenizer, decoded as the
    transformers models are."""
    import torch
    from hyperpyyaml import load_hyperpyyaml
    from model_builders import SPEECHBRAIN_CTC_LABELS, build_speechbrain_ctc

    folder = offline_models / "speechbrain-wav2vec2-commonvoice-14-en"
    build_speechbrain_ctc(folder)
    recognizer = CTCRecognizer(model="speechbrain-wav2vec2-commonvoice-14-en", device="cpu", chunk_s=1.0)
    assert sorted(recognizer.labels) == sorted(["", *SPEECHBRAIN_CTC_LABELS[1:]])
    assert recognizer.frame_s == pytest.approx(0.01)  # filter-bank frames
    clip = jfk[:32000]
    modules = load_hyperpyyaml((folder / "hyperparams.yaml").read_text())
    modules["ctc_lin"].load_state_dict(torch.load(folder / "asr.ckpt"))
    with torch.no_grad():
        direct = modules["encoder"](torch.from_numpy(clip)[None], torch.ones(1))[0].numpy()
    columns = recognizer._speechbrain.columns  # the tokenizer's index of each label
    tokenizer = recognizer._speechbrain._asr.tokenizer
    assert [tokenizer.ind2lab[c] for c in columns] == [label or "<blank>" for label in recognizer.labels]
    assert sorted(columns) == list(range(len(SPEECHBRAIN_CTC_LABELS)))
    np.testing.assert_allclose(recognizer._speechbrain.logprobs(clip), direct[:, columns], atol=1e-4)
    words = recognizer.transcribe(jfk, speech=[(0.5, 4.0)])[0].words
    assert words and 0.5 <= words[0].start and words[-1].end <= 4.0
    assert all(0.0 <= w.confidence <= 1.0 for w in words)
