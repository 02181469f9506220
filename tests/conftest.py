"""Shared test fixtures: where the real recordings live; the check that decoding tests are marked."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import soundfile as sf
import yaml
from llm_helpers import Endpoint

from speechkit.io.stm import read_stm, write_stm
from speechkit.transcript import Transcript

REPO = Path(__file__).resolve().parents[1]
REALDATA = (REPO / ".." / "shared" / "realdata").resolve()
PROBE = Path(__file__).resolve().parent / "decoding_probe"
sys.path.insert(0, str(PROBE))
import sitecustomize as decoding_probe  # noqa: E402  (tests/decoding_probe: the probe, not a site's own)

#: Fixtures whose setup decoded audio with a real model: every test that uses one decodes too.
_DECODING_FIXTURES: set[str] = set()
#: The decode log's size when the running test started (its fixtures' setup included).
_decodes_at_start = 0


def _with_probe(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the decoding probe first on ``PYTHONPATH`` and its log named."""
    paths = [str(PROBE), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    return {**env, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)),
            decoding_probe.LOG_VARIABLE: os.environ[decoding_probe.LOG_VARIABLE]}


def _probe_children() -> None:
    """Every process the tests start gets the probe, also where a test passes its own ``env``."""
    popen_init = subprocess.Popen.__init__

    def init(self, *args, env=None, **kwargs):
        popen_init(self, *args, env=None if env is None else _with_probe(dict(env)), **kwargs)

    subprocess.Popen.__init__ = init


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "local_llm: end-to-end tests that generate with the packaged LLM on "
                                       "llama.cpp's local server (minutes on a CPU): make test-llm, which CI runs")
    handle, log = tempfile.mkstemp(prefix="speechkit-decodes-", suffix=".log")
    os.close(handle)
    os.environ[decoding_probe.LOG_VARIABLE] = log
    os.environ.update(_with_probe(dict(os.environ)))
    decoding_probe.install()
    _probe_children()


def pytest_unconfigure(config: pytest.Config) -> None:
    log = os.environ.pop(decoding_probe.LOG_VARIABLE, None)
    if log:
        Path(log).unlink(missing_ok=True)
        Path(log + ".entries").unlink(missing_ok=True)


def _decodes_so_far() -> int:
    path = Path(os.environ[decoding_probe.LOG_VARIABLE])
    return path.stat().st_size if path.exists() else 0


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest):
    before = _decodes_so_far()
    yield
    if _decodes_so_far() > before:
        _DECODING_FIXTURES.add(fixturedef.argname)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    global _decodes_at_start
    _decodes_at_start = _decodes_so_far()


@pytest.fixture(autouse=True)
def decoding_tests_are_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that decodes audio with a real ASR model (faster-whisper, in this process or in one it
    started), or uses a fixture that did, must be marked ``decodes``: ``make test-isa`` reruns those
    on another instruction set, where decoded words differ. Found by the probe, not by a list."""
    yield
    decoded = _decodes_so_far() > _decodes_at_start
    via = sorted(_DECODING_FIXTURES & set(request.fixturenames))
    if (decoded or via) and request.node.get_closest_marker("decodes") is None:
        pytest.fail("this test decodes audio with a real ASR model" + (f" (fixture {', '.join(via)})" if via else "")
                    + " but is not marked @pytest.mark.decodes: make test-isa must run it on another instruction set",
                    pytrace=False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The local_llm tests run only when selected (``-m local_llm``), as the Ray tests do, so that
    ``make test`` stays within its time on two cores."""
    if "local_llm" in (config.getoption("-m") or ""):
        return
    chosen = [item for item in items if item.get_closest_marker("local_llm") is None]
    if len(chosen) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in chosen])
        items[:] = chosen


@pytest.fixture(scope="session")
def realdata() -> Path:
    """The folder of real recordings (../shared/realdata); tests skip nothing: it must exist."""
    assert REALDATA.is_dir(), f"real recordings not found at {REALDATA}"
    return REALDATA


# A small workspace of real speech cut from pyannote's sample.wav (two real speakers, Diane and
# Sheila): two "meetings" of about 12 s each, STM references, and an enrollment clip per person
# taken from the other meeting's solo speech.
REAL_PEOPLE = {"Diane": "p_diane", "Sheila": "p_sheila"}
REAL_MEETINGS = {"m1": (6.5, 18.0), "m2": (17.7, 30.0)}
REAL_ENROLL = {"p_diane": (17.789, 21.475), "p_sheila": (9.838, 10.78)}


def build_real_workspace(root: Path, realdata: Path) -> Path:
    audio, sr = sf.read(realdata / "pyannote-sample" / "sample.wav", dtype="float32")
    ref = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    (root / "audio").mkdir(parents=True)
    meetings = []
    for mid, (t0, t1) in REAL_MEETINGS.items():
        sf.write(root / "audio" / f"{mid}.wav", audio[int(t0 * sr):int(t1 * sr)], sr)
        segs = [s.with_speaker(REAL_PEOPLE[s.speaker]) for s in ref.segments if t0 <= s.start and s.end <= t1]
        shifted = [type(s)(s.start - t0, s.end - t0, s.speaker, s.text, s.words) for s in segs]
        write_stm(root / f"{mid}.stm", [Transcript(mid, shifted)])
        meetings.append({"id": mid, "date": f"2026-03-0{len(meetings) + 2}", "audio": f"audio/{mid}.wav",
                         "reference": f"{mid}.stm", "attendees": list(REAL_PEOPLE.values())})
    people = []
    for name, pid in REAL_PEOPLE.items():
        t0, t1 = REAL_ENROLL[pid]
        sf.write(root / "audio" / f"enroll-{pid}.wav", audio[int(t0 * sr):int(t1 * sr)], sr)
        people.append({"id": pid, "name": f"{name} Doe", "enrollment": f"audio/enroll-{pid}.wav"})
    (root / "workspace.yaml").write_text(yaml.safe_dump(
        {"name": "pyannote-sample", "people": people, "meetings": meetings,
         "terms": {"numbers": [], "jargon": ["New Jersey", "Chicago"]}}))
    return root


@pytest.fixture(scope="session")
def make_real_workspace(realdata):
    """A function that writes the real-speech workspace (:func:`build_real_workspace`) into a folder."""
    return lambda root: build_real_workspace(Path(root), realdata)


@pytest.fixture(scope="session")
def real_meetings() -> dict[str, tuple[float, float]]:
    """The meetings of the real-speech workspace: id -> (start, end) in sample.wav."""
    return dict(REAL_MEETINGS)


@pytest.fixture(scope="session")
def small_synth_options():
    """Options of the small synthetic workspace the tests generate: seed 3, two meetings of 15 s,
    three people."""
    from speechkit.synth import SynthOptions
    return SynthOptions(seed=3, meetings=2, people=3, minutes=0.25, difficulty="mixed", check_voices=False)


@pytest.fixture(scope="session")
def small_synth_workspace(tmp_path_factory, small_synth_options) -> Path:
    """That workspace, generated once per test session; tests read it and leave it as it is."""
    from speechkit.synth import synthesize_workspace
    out = tmp_path_factory.mktemp("synth") / "ws"
    synthesize_workspace(out, small_synth_options)
    return out


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A randomly initialised wav2vec2 CTC model with a character vocabulary, saved to a folder."""
    import torch
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2Processor,
    )

    folder = tmp_path_factory.mktemp("tiny-wav2vec2")
    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3, "|": 4, "'": 5}
    vocab.update({c: i + 6 for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZ")})
    (folder / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = Wav2Vec2CTCTokenizer(str(folder / "vocab.json"), unk_token="<unk>",
                                     pad_token="<pad>", word_delimiter_token="|")
    features = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0,
                                        do_normalize=True, return_attention_mask=False)
    config = Wav2Vec2Config(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                            num_attention_heads=2, intermediate_size=64, conv_dim=(32,) * 7,
                            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
                            pad_token_id=0)
    torch.manual_seed(0)
    model = Wav2Vec2ForCTC(config)
    with torch.no_grad():  # spread the random output so it has word breaks and several words
        model.lm_head.weight.normal_(0.0, 2.0)
        model.lm_head.bias[vocab["|"]] = 8.0
    model.save_pretrained(folder)
    Wav2Vec2Processor(feature_extractor=features, tokenizer=tokenizer).save_pretrained(folder)
    return folder


@pytest.fixture
def offline_models(tmp_path, monkeypatch):
    """An empty local model folder (``$SPEECHKIT_MODELS_DIR``, returned) and an empty Hugging Face
    cache, with the hub switched off: the registry finds only packaged models and what a test puts
    in the folder."""
    import huggingface_hub.constants

    from speechkit import registry

    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.setenv("SPEECHKIT_MODELS_DIR", str(folder))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    registry.identity.cache_clear()
    yield folder
    registry.identity.cache_clear()


@pytest.fixture
def served() -> Iterator[list[Endpoint]]:
    """A list to append the stand-in LLM endpoints of a test to (tests/llm_helpers.py); each is
    closed when the test ends."""
    started: list[Endpoint] = []
    yield started
    for server in started:
        server.close()


@pytest.fixture
def importable_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide, for one test, the loaded modules whose ``__file__`` cannot be read: hypothesis reads it
    on every loaded module, and once a test has imported speechbrain, its lazy modules for optional
    packages that are not installed (k2) raise ImportError there."""
    for name, module in list(sys.modules.items()):
        try:
            getattr(module, "__file__", None)
        except ImportError:
            monkeypatch.delitem(sys.modules, name)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """speechbrain puts lazy modules into ``sys.modules`` whose attributes import an optional package
    (``speechbrain.integrations.k2_fsa`` needs ``k2``) and raise ImportError when it is absent.
    hypothesis scans ``sys.modules`` for each module's ``__file__`` (its local constants) and fails the
    test it is generating for. Once speechbrain is loaded, such a failed lazy import of a dunder
    attribute is an AttributeError (what ``getattr(module, name, None)`` expects)."""
    lazy = getattr(sys.modules.get("speechbrain.utils.importutils"), "LazyModule", None)
    if lazy is None or getattr(lazy, "_dunders_tolerated", False):
        return
    original = lazy.__getattr__

    def tolerant(self: object, attr: str) -> object:
        try:
            return original(self, attr)
        except ImportError as e:
            if attr.startswith("__") and attr.endswith("__"):
                raise AttributeError(attr) from e
            raise

    lazy.__getattr__ = tolerant
    lazy._dunders_tolerated = True
