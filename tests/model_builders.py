"""Small randomly initialised models that tests save in the layouts of real ones.

No package ships ECAPA or pyannote pipeline weights (and the hub's are gated), so the tests of
those backends build their own: the same classes, file names and configuration keys as the hub
models, with few channels. Each builder writes a folder and returns it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

# The hub model's hyperparams.yaml (speechbrain/spkrec-ecapa-voxceleb), shrunk: same keys,
# modules and pretrainer layout.
ECAPA_YAML = """\
n_mels: 40
pretrained_path: speechbrain/spkrec-ecapa-voxceleb
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: !ref <n_mels>
mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
    std_norm: False
embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN
    input_size: !ref <n_mels>
    channels: [32, 32, 32, 32, 96]
    kernel_sizes: [5, 3, 3, 3, 1]
    dilations: [1, 2, 3, 4, 1]
    attention_channels: 16
    lin_neurons: 24
modules:
    compute_features: !ref <compute_features>
    mean_var_norm: !ref <mean_var_norm>
    embedding_model: !ref <embedding_model>
pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        embedding_model: !ref <embedding_model>
    paths:
        embedding_model: !ref <pretrained_path>/embedding_model.ckpt
"""


def build_ecapa(folder: Path, seed: int = 0) -> dict:
    """A 24-dim ECAPA-TDNN with random weights saved as ``hyperparams.yaml`` +
    ``embedding_model.ckpt`` in ``folder``; returns the modules it was built from."""
    import torch
    from hyperpyyaml import load_hyperpyyaml

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hyperparams.yaml").write_text(ECAPA_YAML)
    torch.manual_seed(seed)
    modules = load_hyperpyyaml(ECAPA_YAML)
    torch.save(modules["embedding_model"].state_dict(), folder / "embedding_model.ckpt")
    return modules


def _save_pyannote(model, path: Path) -> None:
    """A pyannote.audio checkpoint (``pytorch_model.bin``) of ``model``, as Lightning writes it."""
    import torch

    checkpoint = {"state_dict": model.state_dict(), "hyper_parameters": dict(model.hparams),
                  "pytorch-lightning_version": "2.0.0"}
    model.on_save_checkpoint(checkpoint)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(checkpoint, path)


def build_pyannote_segmentation(path: Path, favour_class: int = 1, bias: float = 4.0) -> None:
    """A tiny powerset PyanNet (3 speakers, at most 2 at once, 10 s chunks) saved at ``path``;
    ``bias`` is added to the output of powerset class ``favour_class`` (default 1: "the chunk's
    first speaker talks", as random weights alone give only fragments too short to embed;
    class 0 is "nobody speaks")."""
    import torch
    from pyannote.audio.core.task import Problem, Resolution, Specifications
    from pyannote.audio.models.segmentation import PyanNet

    model = PyanNet(lstm={"hidden_size": 16, "num_layers": 1}, linear={"hidden_size": 8, "num_layers": 1})
    model.specifications = Specifications(
        problem=Problem.MONO_LABEL_CLASSIFICATION, resolution=Resolution.FRAME, duration=10.0,
        classes=["speaker#1", "speaker#2", "speaker#3"], powerset_max_classes=2,
        permutation_invariant=True)
    model.build()
    with torch.no_grad():
        model.classifier.bias[favour_class] += bias
    _save_pyannote(model, path)


def build_pyannote_embedding(path: Path, dimension: int = 32) -> None:
    """A small x-vector (MFCC) speaker-embedding model saved at ``path``."""
    from pyannote.audio.core.task import Problem, Resolution, Specifications
    from pyannote.audio.models.embedding import XVectorMFCC

    model = XVectorMFCC(dimension=dimension)
    model.specifications = Specifications(problem=Problem.REPRESENTATION, resolution=Resolution.CHUNK,
                                          duration=3.0, classes=None)
    _save_pyannote(model, path)


def build_pyannote_community(folder: Path, seed: int = 0, dimension: int = 32) -> Path:
    """A pipeline in the layout of pyannote 4's ``speaker-diarization-community-1``: ``config.yaml``
    (VBx clustering) with ``$model/segmentation``, ``$model/embedding`` and ``$model/plda``."""
    import torch

    torch.manual_seed(seed)
    build_pyannote_segmentation(folder / "segmentation" / "pytorch_model.bin")
    build_pyannote_embedding(folder / "embedding" / "pytorch_model.bin", dimension)
    rng, lda = np.random.default_rng(seed), 16
    (folder / "plda").mkdir()
    np.savez(folder / "plda" / "xvec_transform.npz", mean1=rng.normal(size=dimension),
             mean2=rng.normal(size=lda), lda=rng.normal(size=(dimension, lda)))
    np.savez(folder / "plda" / "plda.npz", mu=rng.normal(size=lda),
             tr=np.linalg.qr(rng.normal(size=(lda, lda)))[0], psi=np.abs(rng.normal(size=lda)) + 0.5)
    config = {"pipeline": {"name": "pyannote.audio.pipelines.SpeakerDiarization", "params": {
                  "segmentation": "$model/segmentation", "embedding": "$model/embedding",
                  "plda": "$model/plda", "clustering": "VBxClustering",
                  "segmentation_batch_size": 8, "embedding_batch_size": 8}},
              "params": {"segmentation": {"min_duration_off": 0.0},
                         "clustering": {"threshold": 0.6, "Fa": 0.07, "Fb": 0.8}}}
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    return folder


def build_pyannote_31(models_dir: Path, seed: int = 0) -> Path:
    """pyannote 3.1's layout under the registry's local folders: the pipeline's ``config.yaml``
    names its models by hub id (``pyannote/segmentation-3.0``, ``pyannote/wespeaker-voxceleb-resnet34-LM``);
    the models are put where the registry finds those ids. Returns the pipeline's folder."""
    import torch

    torch.manual_seed(seed)
    build_pyannote_segmentation(models_dir / "pyannote-segmentation-3.0" / "pytorch_model.bin")
    build_pyannote_embedding(models_dir / "pyannote-wespeaker-resnet34" / "pytorch_model.bin")
    folder = models_dir / "pyannote-speaker-diarization-3.1"
    folder.mkdir(parents=True)
    config = {"version": "3.1.0",
              "pipeline": {"name": "pyannote.audio.pipelines.SpeakerDiarization", "params": {
                  "clustering": "AgglomerativeClustering",
                  "embedding": "pyannote/wespeaker-voxceleb-resnet34-LM", "embedding_batch_size": 8,
                  "embedding_exclude_overlap": True, "segmentation": "pyannote/segmentation-3.0",
                  "segmentation_batch_size": 8}},
              "params": {"clustering": {"method": "centroid", "min_cluster_size": 2, "threshold": 0.7},
                         "segmentation": {"min_duration_off": 0.0}}}
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    return folder


# A speechbrain EncoderASR in the layout of the hub's CTC models (hyperparams.yaml whose
# pretrainer loads the encoder and the tokenizer from pretrained_path), shrunk to filter banks and
# one linear layer over a character vocabulary.
SPEECHBRAIN_CTC_YAML = """\
pretrained_path: speechbrain/asr-wav2vec2-commonvoice-14-en
sample_rate: 16000
blank_index: 0
tokenizer: !new:speechbrain.dataio.encoder.CTCTextEncoder
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: 40
ctc_lin: !new:speechbrain.nnet.linear.Linear
    input_size: 40
    n_neurons: {size}
log_softmax: !new:speechbrain.nnet.activations.Softmax
    apply_log: True
encoder: !new:speechbrain.nnet.containers.LengthsCapableSequential
    compute_features: !ref <compute_features>
    ctc_lin: !ref <ctc_lin>
    log_softmax: !ref <log_softmax>
decoding_function: !name:speechbrain.decoders.ctc_greedy_decode
    blank_id: !ref <blank_index>
modules:
    encoder: !ref <encoder>
pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        asr: !ref <ctc_lin>
        tokenizer: !ref <tokenizer>
    paths:
        asr: !ref <pretrained_path>/asr.ckpt
        tokenizer: !ref <pretrained_path>/tokenizer.ckpt
"""
SPEECHBRAIN_CTC_LABELS = ["<blank>", " ", *"abcdefghijklmnopqrstuvwxyz'"]


def build_speechbrain_ctc(folder: Path, seed: int = 0) -> None:
    """A speechbrain CTC model with random weights (blank 0, word break 1, then characters),
    saved as ``hyperparams.yaml``, ``asr.ckpt`` and ``tokenizer.ckpt`` in ``folder``."""
    import torch
    from hyperpyyaml import load_hyperpyyaml
    from speechbrain.dataio.encoder import CTCTextEncoder

    folder.mkdir(parents=True, exist_ok=True)
    text = SPEECHBRAIN_CTC_YAML.replace("{size}", str(len(SPEECHBRAIN_CTC_LABELS)))
    (folder / "hyperparams.yaml").write_text(text)
    torch.manual_seed(seed)
    modules = load_hyperpyyaml(text)
    with torch.no_grad():  # spread the random output so it has word breaks and several words
        modules["ctc_lin"].w.weight.normal_(0.0, 0.5)
        modules["ctc_lin"].w.bias[1] = 2.0
    torch.save(modules["ctc_lin"].state_dict(), folder / "asr.ckpt")
    encoder = CTCTextEncoder()
    encoder.update_from_iterable(SPEECHBRAIN_CTC_LABELS[1:])
    encoder.insert_blank(index=0)
    encoder.save(folder / "tokenizer.ckpt")


# A CRDNN-shaped voice activity detector (speechbrain/vad-crdnn-libriparty's keys), tiny.
SPEECHBRAIN_VAD_YAML = """\
sample_rate: 16000
time_resolution: 0.01
device: cpu
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: 40
mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
cnn: !new:torch.nn.Unflatten
    dim: 2
    unflattened_size: [40, 1]
rnn: !new:torch.nn.GRU
    input_size: 40
    hidden_size: 8
    batch_first: True
dnn: !new:torch.nn.Linear
    in_features: 8
    out_features: 1
model: !new:torch.nn.ModuleList
    - [!ref <rnn>, !ref <dnn>]
modules:
    compute_features: !ref <compute_features>
    mean_var_norm: !ref <mean_var_norm>
    cnn: !ref <cnn>
    rnn: !ref <rnn>
    dnn: !ref <dnn>
    model: !ref <model>
pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        model: !ref <model>
"""


def build_speechbrain_vad(folder: Path) -> None:
    """A tiny CRDNN-shaped VAD (``hyperparams.yaml`` + ``model.ckpt`` in ``folder``) whose
    checkpoint says "always speech" (output bias +20)."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hyperparams.yaml").write_text(SPEECHBRAIN_VAD_YAML)
    model = torch.nn.ModuleList([torch.nn.GRU(40, 8, batch_first=True), torch.nn.Linear(8, 1)])
    with torch.no_grad():
        model[1].bias.fill_(20.0)
    torch.save(model.state_dict(), folder / "model.ckpt")
