"""Imports a Hugging Face Marian (OPUS-MT) directory as a run directory.

A Marian checkpoint (``MarianMTModel.save_pretrained``, the Helsinki-NLP
``opus-mt-*`` models) is the paper's Transformer with these differences,
each a general option of the package's model or tokenizer:

* positions: the same sinusoid, sines in the first half of the columns and
  cosines in the second (``Transformer(sinusoid_layout="split")``);
* the feed-forward activation: ``swish`` for OPUS-MT (``activation=``);
* LayerNorm epsilon 1e-5 (``layer_norm_epsilon=``);
* a bias on the logits, ``final_logits_bias`` (``output_bias=True``);
* two SentencePiece models, ``source.spm`` and ``target.spm``, over one id
  space (``vocab.json``): written as ``source_vocab.spm`` and ``vocab.spm``,
  two SentencePiece models over the package's ids (each keeps its own
  pieces and scores, so it segments text as the original; the other
  side's pieces are present as unused pieces);
* special ids: Marian has eos 0, unk 1 and pad = the last id, which is
  also the decoder's start token. The embedding rows are reordered to the
  package's ids (`keras_transformer.special_tokens`): PAD 0, UNK 1,
  BOS 2, EOS 3, then Marian's other ids in their order. Marian's pad row
  becomes both PAD and BOS (the start token); a Marian id given to ``n``
  package ids has its output bias lowered by ``log(n)`` on each, so that
  the softmax, and every log-probability, is Marian's.

Everything is read directly: ``config.json`` and ``vocab.json`` with
`json`, ``model.safetensors`` with NumPy (the format is a JSON header and
raw arrays), ``pytorch_model.bin`` with `torch` (only then), the ``.spm``
files with `sentencepiece`. Every weight of the checkpoint is mapped by
name and must be used; a checkpoint outside the paper's family (pre-norm,
an embedding LayerNorm, encoder and decoder of different sizes, ...) is
refused before any weight is read.

Longer than the package's usual module because it is one converter: the
directory's checks, the readers, the id map and the weight mapping share the
tables below (Marian's files, config keys and ids), and the check that every
weight was used needs the whole mapping in one place.
"""

import json
import math
import os
import re

import numpy as np
from sentencepiece import sentencepiece_model_pb2 as model_pb2

from keras_transformer.layers.positional_encoding import sinusoidal_encoding
from keras_transformer.models.transformer.transformer import Transformer
from keras_transformer.special_tokens import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    RESERVED_PIECES,
    UNK_ID,
)
from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.models.transformer.transformer_preset_converters import (
    register_preset_converter,
)
from keras_transformer.models.transformer.transformer_preset_writer import (
    write_preset_files,
)
from keras_transformer.training.config import TrainConfig
from keras_transformer.training.run_directory import RunDirectory
from keras_transformer.utils.file_io import (
    atomic_write_bytes,
    atomic_write_json,
)
from keras_transformer.utils.run_files import (
    SOURCE_VOCABULARY_FILENAME,
    VOCABULARY_FILENAME,
)

FORMATS = ("marian",)
REQUIRED_FILES = ("config.json", "source.spm", "target.spm", "vocab.json")
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
ACTIVATIONS = {"swish": "swish", "silu": "swish", "relu": "relu", "gelu": "gelu"}
# Marian config keys that must hold these values for the paper's
# architecture (missing keys take Marian's defaults, which are these).
REQUIRED_CONFIG = (
    ("normalize_before", False, "pre-norm layers"),
    ("normalize_embedding", False, "a LayerNorm on the embeddings"),
    ("layernorm_embedding", False, "a LayerNorm on the embeddings"),
    ("add_final_layer_norm", False, "a final LayerNorm"),
    ("scale_embedding", True, "unscaled embeddings"),
    ("static_position_embeddings", True, "learned positions"),
    ("share_encoder_decoder_embeddings", True, "separate source and target embeddings"),
    ("tie_word_embeddings", True, "an output projection apart from the embeddings"),
    ("add_bias_logits", False, "a second output bias"),
)
SAME_SIZES = (
    ("encoder_layers", "decoder_layers"),
    ("encoder_attention_heads", "decoder_attention_heads"),
    ("encoder_ffn_dim", "decoder_ffn_dim"),
)
_LANGUAGE_TOKEN = re.compile(r">>.+<<")
_SPM = model_pb2.ModelProto.SentencePiece
_SAFETENSORS_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "BF16": "<u2"}


class ConversionError(ValueError):
    """The directory cannot be imported; the message names the file and what
    is missing or unsupported."""


# --- reading the directory -------------------------------------------------


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise ConversionError(f"Cannot read {path!r}: {error}") from None


def check_marian_directory(directory):
    """The checked ``config.json`` of a Marian directory and the path of its
    weights file.

    Raises:
        ConversionError: naming the file: a missing directory or file,
            another format, or an architecture outside the paper's family.
    """
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise ConversionError(f"The checkpoint directory {directory!r} does not exist.")
    config_path = os.path.join(directory, "config.json")
    if not os.path.isfile(config_path):
        raise ConversionError(
            f"{directory!r} is not a Hugging Face model directory: {config_path!r} is missing."
        )
    config = _read_json(config_path)
    if not isinstance(config, dict):
        raise ConversionError(f"{config_path!r} is not a JSON object.")
    model_type = config.get("model_type")
    if model_type != "marian":
        raise ConversionError(
            f"{config_path!r} describes a {model_type!r} model, not a Marian one "
            "(model_type 'marian'); --from marian imports Marian/OPUS-MT checkpoints only."
        )
    missing = [name for name in REQUIRED_FILES if not os.path.isfile(os.path.join(directory, name))]
    weights = [name for name in WEIGHT_FILES if os.path.isfile(os.path.join(directory, name))]
    if not weights:
        missing.append(" or ".join(WEIGHT_FILES))
    if missing:
        raise ConversionError(
            f"The Marian directory {directory!r} lacks {', '.join(missing)}."
        )
    problems = []
    for key, value, what in REQUIRED_CONFIG:
        if key in config and bool(config[key]) != value:
            problems.append(f"{key}={config[key]!r} ({what})")
    for first, second in SAME_SIZES:
        if config.get(first) != config.get(second):
            problems.append(
                f"{first}={config.get(first)!r} and {second}={config.get(second)!r} differ"
            )
    activation = config.get("activation_function", "gelu")
    if activation not in ACTIVATIONS:
        problems.append(
            f"activation_function={activation!r} (supported: {', '.join(ACTIVATIONS)})"
        )
    if config.get("decoder_vocab_size") not in (None, config.get("vocab_size")):
        problems.append("decoder_vocab_size differs from vocab_size (separate vocabularies)")
    tokenizer_config = os.path.join(directory, "tokenizer_config.json")
    if os.path.isfile(tokenizer_config) and _read_json(tokenizer_config).get("separate_vocabs"):
        problems.append("tokenizer_config.json has separate_vocabs=true")
    for key in ("d_model", "encoder_layers", "encoder_attention_heads", "encoder_ffn_dim",
                "vocab_size", "pad_token_id", "eos_token_id"):  # fmt: skip
        if not isinstance(config.get(key), int) or isinstance(config.get(key), bool):
            problems.append(f"{key} is {config.get(key)!r}, not an int")
    if problems:
        raise ConversionError(
            f"{config_path!r} is outside the architecture this package implements "
            f"(post-norm Transformer, tied embeddings): {'; '.join(problems)}."
        )
    return config, os.path.join(directory, weights[0])


def read_safetensors(path):
    """``{name: float32 array}`` of a ``.safetensors`` file (read with NumPy)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        (header_size,) = np.frombuffer(data[:8], "<u8")
        header = json.loads(data[8 : 8 + int(header_size)])
    except ValueError as error:
        raise ConversionError(f"{path!r} is not a safetensors file: {error}") from None
    start = 8 + int(header_size)
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise ConversionError(f"{path!r}: {name} has the unsupported dtype {info['dtype']}.")
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[start + begin : start + end], dtype)
        if info["dtype"] == "BF16":
            array = (array.astype("<u4") << 16).view("<f4")
        tensors[name] = array.reshape(info["shape"]).astype("float32")
    return tensors


def read_pytorch_bin(path):
    """``{name: float32 array}`` of a ``pytorch_model.bin`` (needs torch)."""
    try:
        import torch
    except ImportError:
        raise ConversionError(
            f"Reading {path!r} needs PyTorch (pip install torch); a model.safetensors "
            "file needs nothing more."
        ) from None
    state = torch.load(path, map_location="cpu", weights_only=True)
    return {name: value.float().numpy() for name, value in state.items()}


def read_weights(path):
    """The checkpoint's weights, names without the leading ``model.``."""
    tensors = read_safetensors(path) if path.endswith(".safetensors") else read_pytorch_bin(path)
    return {name.removeprefix("model."): value for name, value in tensors.items()}


def read_sentencepiece(path):
    proto = model_pb2.ModelProto()
    try:
        with open(path, "rb") as f:
            proto.ParseFromString(f.read())
    except Exception as error:  # noqa: BLE001 - protobuf's DecodeError and OSError
        raise ConversionError(f"{path!r} is not a SentencePiece model: {error}") from None
    if not proto.pieces:
        raise ConversionError(f"{path!r} is not a SentencePiece model: it has no pieces.")
    return proto


# --- ids ------------------------------------------------------------------


class IdMap:
    """The package's ids of a Marian vocabulary.

    Attributes:
        pieces: the piece of each package id.
        rows: the Marian id whose embedding row and output bias each package
            id takes.
        bias_offsets: ``-log(n)`` for a package id that shares its Marian id
            with ``n - 1`` others (0 otherwise): the shared ids together keep
            the Marian id's probability.
    """

    def __init__(self, vocabulary, config, source_pieces, target_pieces, unk_id):
        size = config["vocab_size"]
        pad, eos = config["pad_token_id"], config["eos_token_id"]
        start = config.get("decoder_start_token_id", pad)
        if start is None:
            start = pad
        for name, value in (("pad_token_id", pad), ("eos_token_id", eos),
                            ("decoder_start_token_id", start), ("<unk>", unk_id)):  # fmt: skip
            if not 0 <= value < size:
                raise ConversionError(
                    f"{name}={value} is outside the vocabulary of {size} ids."
                )
        piece_of = {}
        for piece, marian_id in vocabulary.items():
            if not isinstance(marian_id, int) or not 0 <= marian_id < size:
                raise ConversionError(
                    f"vocab.json maps {piece!r} to {marian_id!r}, outside the "
                    f"model's {size} ids."
                )
            piece_of[marian_id] = piece
        reserved = {PAD_ID: pad, UNK_ID: unk_id, BOS_ID: start, EOS_ID: eos}
        self.rows = [reserved[i] for i in range(len(RESERVED_PIECES))]
        self.pieces = [RESERVED_PIECES[i] for i in range(len(RESERVED_PIECES))]
        taken = set(self.pieces)
        for marian_id in range(size):
            if marian_id in reserved.values():
                continue
            piece = piece_of.get(marian_id)
            if piece is None or piece in taken:
                # An id without a piece of its own: a name text never produces.
                piece = f"<marian_{marian_id}>"
            self.rows.append(marian_id)
            self.pieces.append(piece)
            taken.add(piece)
        # Pieces of the SentencePiece models that vocab.json lacks: Marian
        # reads them as <unk>, so their rows are <unk>'s.
        for piece in list(source_pieces) + list(target_pieces):
            if piece not in taken:
                self.rows.append(unk_id)
                self.pieces.append(piece)
                taken.add(piece)
        counts = np.bincount(self.rows, minlength=size)
        self.bias_offsets = np.array([-math.log(counts[r]) for r in self.rows], "float32")

    @property
    def size(self):
        return len(self.rows)


def _normal_pieces(proto):
    """{piece: (score, type)} of the pieces a SentencePiece model emits."""
    return {
        p.piece: (p.score, p.type)
        for p in proto.pieces
        if p.type in (_SPM.NORMAL, _SPM.USER_DEFINED)
    }


def remapped_sentencepiece(proto, id_map, language_tokens=False):
    """A copy of SentencePiece ``proto`` whose piece ids are the package's.

    Its own pieces keep their scores and types (the same segmentation);
    pieces of the joint vocabulary it lacks are unused pieces (never
    produced by encoding, decoded as their text). With ``language_tokens``,
    vocabulary entries ``>>xx<<`` are user-defined pieces, so that text
    holding them encodes to them as Marian's tokenizer does.
    """
    own = _normal_pieces(proto)
    result = model_pb2.ModelProto()
    result.CopyFrom(proto)
    del result.pieces[:]
    types = {PAD_ID: _SPM.CONTROL, UNK_ID: _SPM.UNKNOWN, BOS_ID: _SPM.CONTROL, EOS_ID: _SPM.CONTROL}
    for package_id, piece in enumerate(id_map.pieces):
        entry = result.pieces.add()
        entry.piece = piece
        if package_id in types:
            entry.type, entry.score = types[package_id], 0.0
        elif piece in own:
            entry.score, entry.type = own[piece]
        elif language_tokens and _LANGUAGE_TOKEN.fullmatch(piece):
            entry.type, entry.score = _SPM.USER_DEFINED, 0.0
        else:
            entry.type, entry.score = _SPM.UNUSED, 0.0
    spec = result.trainer_spec
    spec.vocab_size = id_map.size
    spec.pad_id, spec.unk_id, spec.bos_id, spec.eos_id = PAD_ID, UNK_ID, BOS_ID, EOS_ID
    spec.pad_piece, spec.unk_piece, spec.bos_piece, spec.eos_piece = (
        RESERVED_PIECES[i] for i in (PAD_ID, UNK_ID, BOS_ID, EOS_ID)
    )
    return result.SerializeToString()


# --- weights --------------------------------------------------------------


class _Weights:
    """The checkpoint's tensors, handed out by name; `unused` lists the rest."""

    def __init__(self, tensors, path):
        self.tensors = tensors
        self.path = path
        self.used = set()

    def take(self, name, shape=None):
        if name not in self.tensors:
            raise ConversionError(f"{self.path!r} has no weight {name!r}.")
        self.used.add(name)
        value = self.tensors[name]
        if shape is not None and tuple(value.shape) != tuple(shape):
            raise ConversionError(
                f"{self.path!r}: {name} has shape {tuple(value.shape)}, expected {tuple(shape)}."
            )
        return value

    def take_tied(self, names, shape):
        """The one matrix behind ``names`` (tied copies must be equal)."""
        present = [name for name in names if name in self.tensors]
        if not present:
            raise ConversionError(f"{self.path!r} has none of {', '.join(names)}.")
        values = [self.take(name, shape) for name in present]
        for name, value in zip(present[1:], values[1:]):
            if not np.array_equal(value, values[0]):
                raise ConversionError(
                    f"{self.path!r}: {name} differs from {present[0]}; this package "
                    "needs them tied (one matrix)."
                )
        return values[0]

    def unused(self):
        return sorted(set(self.tensors) - self.used)


def _linear(weights, prefix, d_in, d_out):
    """Keras kernel ``(in, out)`` and bias of a torch Linear ``prefix``."""
    kernel = weights.take(f"{prefix}.weight", (d_out, d_in)).T
    return kernel, weights.take(f"{prefix}.bias", (d_out,))


def _fused(parts, num_heads):
    """Kernels ``(d, d)`` (or biases ``(d,)``) of Q/K/V as one head-major
    fused kernel: columns ``[q_1 k_1 v_1 | q_2 k_2 v_2 | ...]``."""
    split = [p.reshape(p.shape[:-1] + (num_heads, -1)) for p in parts]
    fused = np.stack(split, axis=-2)  # (..., heads, n, head_dim)
    return fused.reshape(parts[0].shape[:-1] + (-1,))


def _set_attention(weights, attention, prefix, d_model, num_heads, self_attention):
    q, q_bias = _linear(weights, f"{prefix}.q_proj", d_model, d_model)
    k, k_bias = _linear(weights, f"{prefix}.k_proj", d_model, d_model)
    v, v_bias = _linear(weights, f"{prefix}.v_proj", d_model, d_model)
    if self_attention:
        attention.qkv_dense.set_weights(
            [_fused([q, k, v], num_heads), _fused([q_bias, k_bias, v_bias], num_heads)]
        )
    else:
        attention.query_dense.set_weights([q, q_bias])
        attention.key_value_dense.set_weights(
            [_fused([k, v], num_heads), _fused([k_bias, v_bias], num_heads)]
        )
    attention.output_dense.set_weights(
        list(_linear(weights, f"{prefix}.out_proj", d_model, d_model))
    )


def _set_norm(weights, layer_norm, prefix, d_model):
    layer_norm.set_weights(
        [weights.take(f"{prefix}.weight", (d_model,)), weights.take(f"{prefix}.bias", (d_model,))]
    )


def _set_feed_forward(weights, feed_forward, prefix, d_model, d_ff):
    feed_forward.inner_dense.set_weights(list(_linear(weights, f"{prefix}.fc1", d_model, d_ff)))
    feed_forward.output_dense.set_weights(list(_linear(weights, f"{prefix}.fc2", d_ff, d_model)))


def _check_positions(weights, d_model):
    """Position tables saved in the checkpoint must be the split sinusoid."""
    for name in ("encoder.embed_positions.weight", "decoder.embed_positions.weight"):
        if name not in weights.tensors:
            continue
        table = weights.take(name)
        expected = np.asarray(
            sinusoidal_encoding(np.arange(table.shape[0]), d_model, "float32", "split")
        )
        if table.shape[1] != d_model or not np.allclose(table, expected, atol=1e-4):
            raise ConversionError(
                f"{weights.path!r}: {name} is not Marian's sinusoid (sines, then "
                "cosines); learned positions are not supported."
            )


def build_model(config, tensors, id_map, path):
    """The `Transformer` of a checked Marian ``config`` with the checkpoint's
    ``tensors`` (names without ``model.``) mapped to the package's ids."""
    d_model, num_heads = config["d_model"], config["encoder_attention_heads"]
    num_layers, d_ff = config["encoder_layers"], config["encoder_ffn_dim"]
    size = config["vocab_size"]
    model = Transformer(
        vocabulary_size=id_map.size,
        num_layers=num_layers,
        d_model=d_model,
        num_heads=num_heads,
        d_ff=d_ff,
        dropout_rate=float(config.get("dropout", 0.1)),
        activation=ACTIVATIONS[config.get("activation_function", "gelu")],
        layer_norm_epsilon=1e-5,
        sinusoid_layout="split",
        output_bias=True,
    )
    weights = _Weights(tensors, path)
    embeddings = weights.take_tied(
        ["shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight",
         "lm_head.weight"], (size, d_model),
    )  # fmt: skip
    bias = (
        weights.take("final_logits_bias", (1, size))[0]
        if "final_logits_bias" in tensors
        else np.zeros((size,), "float32")
    )
    rows = np.asarray(id_map.rows)
    model.token_embedding.embeddings.assign(embeddings[rows])
    model.token_embedding.bias.assign(bias[rows] + id_map.bias_offsets)
    _check_positions(weights, d_model)
    for i, layer in enumerate(model.encoder_layers):
        prefix = f"encoder.layers.{i}"
        _set_attention(weights, layer.self_attention, f"{prefix}.self_attn", d_model, num_heads, True)
        _set_norm(weights, layer.self_attention_norm, f"{prefix}.self_attn_layer_norm", d_model)
        _set_feed_forward(weights, layer.feed_forward, prefix, d_model, d_ff)
        _set_norm(weights, layer.feed_forward_norm, f"{prefix}.final_layer_norm", d_model)
    for i, layer in enumerate(model.decoder_layers):
        prefix = f"decoder.layers.{i}"
        _set_attention(weights, layer.self_attention, f"{prefix}.self_attn", d_model, num_heads, True)
        _set_norm(weights, layer.self_attention_norm, f"{prefix}.self_attn_layer_norm", d_model)
        _set_attention(weights, layer.cross_attention, f"{prefix}.encoder_attn", d_model, num_heads, False)
        _set_norm(weights, layer.cross_attention_norm, f"{prefix}.encoder_attn_layer_norm", d_model)
        _set_feed_forward(weights, layer.feed_forward, prefix, d_model, d_ff)
        _set_norm(weights, layer.feed_forward_norm, f"{prefix}.final_layer_norm", d_model)
    unused = weights.unused()
    if unused:
        shown = ", ".join(unused[:5]) + (f" and {len(unused) - 5} more" if len(unused) > 5 else "")
        raise ConversionError(
            f"{path!r} holds weights this architecture has no place for: {shown}."
        )
    return model


# --- decoding defaults ----------------------------------------------------


def decoding_defaults(directory, config):
    """``beam_size``, ``alpha`` and ``max_extra_length`` of the checkpoint's
    ``generation_config.json`` (else its ``config.json``).

    ``alpha`` is Hugging Face's ``length_penalty`` (default 1.0), used as
    the exponent of this package's GNMT penalty ``((5 + |Y|) / 6) ** alpha``
    (Hugging Face divides by ``|Y| ** length_penalty``; both are plain
    log-probabilities at 0). ``max_extra_length`` is ``max_length - 1``
    (Hugging Face counts the start token).
    """
    path = os.path.join(directory, "generation_config.json")
    settings = dict(config)
    if os.path.isfile(path):
        settings.update(_read_json(path))
    defaults = {
        "beam_size": int(settings.get("num_beams") or 1),
        "alpha": float(settings.get("length_penalty", 1.0)),
    }
    max_length = settings.get("max_length")
    if isinstance(max_length, int) and max_length > 1:
        defaults["max_extra_length"] = max_length - 1
    return defaults


# --- the run directory ----------------------------------------------------


def convert_marian(source_dir, output_dir, overwrite=False):
    """Imports the Marian/OPUS-MT directory ``source_dir`` (``config.json``,
    ``model.safetensors`` or ``pytorch_model.bin``, ``source.spm``,
    ``target.spm``, ``vocab.json``; optionally ``generation_config.json``)
    as the run directory ``output_dir``: ``vocab.spm`` (target),
    ``source_vocab.spm`` (source) and ``train_config.json`` with the
    checkpoint's decoding defaults, and the model, kept once, as a keras-hub
    preset (`write_preset_files`: ``config.json``, ``model.weights.h5``,
    the tokenizers, ``task.json``, ...), as ``train`` writes a run. ``translate``, ``evaluate``, ``score``,
    ``export`` and `Translator.from_directory` take it.

    Args:
        source_dir: the checkpoint directory.
        output_dir: the run directory to write (new, or empty).
        overwrite: move an existing run directory aside first.

    Returns:
        ``output_dir``.

    Raises:
        ConversionError: naming the file, before any weight is read, for a
            missing file, another format or an unsupported architecture;
            later for weights that do not fit.
        RunDirectoryError: ``output_dir`` holds another run.

    Example:

    ```python
    convert_marian("opus-mt-en-de", "runs/opus-mt-en-de")
    Translator.from_directory("runs/opus-mt-en-de").translate(["Hello."])
    ```
    """
    source_dir = os.fspath(source_dir)
    config, weights_path = check_marian_directory(source_dir)
    vocabulary = _read_json(os.path.join(source_dir, "vocab.json"))
    if not isinstance(vocabulary, dict):
        raise ConversionError(f"{os.path.join(source_dir, 'vocab.json')!r} is not a JSON object.")
    source_proto = read_sentencepiece(os.path.join(source_dir, "source.spm"))
    target_proto = read_sentencepiece(os.path.join(source_dir, "target.spm"))
    unk_id = vocabulary.get("<unk>")
    if unk_id is None:
        raise ConversionError(f"{os.path.join(source_dir, 'vocab.json')!r} has no '<unk>'.")
    id_map = IdMap(
        vocabulary, config, _normal_pieces(source_proto), _normal_pieces(target_proto), unk_id
    )
    defaults = decoding_defaults(source_dir, config)
    run = RunDirectory(output_dir)
    train_config = TrainConfig(output_dir=run.path, **defaults).to_dict()
    run.claim(train_config, overwrite=overwrite)
    model = build_model(config, read_weights(weights_path), id_map, weights_path)
    os.makedirs(run.path, exist_ok=True)
    atomic_write_bytes(run.join(VOCABULARY_FILENAME), remapped_sentencepiece(target_proto, id_map))
    atomic_write_bytes(
        run.join(SOURCE_VOCABULARY_FILENAME),
        remapped_sentencepiece(source_proto, id_map, language_tokens=True),
    )
    atomic_write_json(run.config_path, train_config)
    # The model, kept once, as a keras-hub preset, as `train` writes a run.
    write_preset_files(
        run.path,
        model,
        run.join(VOCABULARY_FILENAME),
        source_vocabulary_path=run.join(SOURCE_VOCABULARY_FILENAME),
        decode_options=DecodeOptions().replace(**defaults),
        language_tag=train_config.get("language_tag") or "source",
        sequence_length=int(train_config.get("max_length") or 128),
    )
    return output_dir


CONVERTERS = {"marian": convert_marian}
# TransformerSeq2SeqLM.from_preset and keras-hub's from_preset convert a
# Marian directory on load.
register_preset_converter("marian", convert_marian)


def convert(source_format, source_dir, output_dir, overwrite=False):
    """Imports ``source_dir`` of ``source_format`` (one of `FORMATS`) as the
    run directory ``output_dir``; see `convert_marian`."""
    if source_format not in CONVERTERS:
        raise ConversionError(
            f"Unknown format {source_format!r}; this package imports: {', '.join(FORMATS)}."
        )
    return CONVERTERS[source_format](source_dir, output_dir, overwrite=overwrite)
