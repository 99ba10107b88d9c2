"""Hugging Face Transformers export: a trained model as a ``MarianMTModel``
directory.

`export_to_transformers` writes what ``MarianMTModel.from_pretrained`` and
``MarianTokenizer.from_pretrained`` read, and what the tools built on them
take unchanged (Optimum's ONNX export, ONNX Runtime, Transformers.js):
``config.json``, ``generation_config.json``, ``model.safetensors``,
``source.spm``, ``target.spm``, ``vocab.json`` and
``tokenizer_config.json``. It is the inverse of
`keras_transformer.convert.marian` (the Marian importer); its tables
(Marian's file names, config keys, activations) are imported from there.

Marian's architecture is the paper's post-norm Transformer with tied,
sqrt(d_model)-scaled embeddings and an output bias; the mapping:

* positions: Marian's sinusoid puts all sines before all cosines
  (``sinusoid_layout="split"``). A model with the paper's interleaved
  layout (even columns sin, odd cos) is exported with its model dimension
  permuted, ``[0, 2, 4, ..., 1, 3, 5, ...]``, in every weight that reads or
  writes the residual stream: the embeddings, the rows of the query, key,
  value and first feed-forward kernels, the columns and biases of the
  attention output and second feed-forward kernels, and the LayerNorms
  (LayerNorm is permutation-equivariant). The permuted network computes the
  same logits.
* ids: Marian's eos is 0 and unk 1, and generation starts from
  ``decoder_start_token_id``. The package's EOS becomes 0, UNK 1, its other
  ids keep their order, then PAD and BOS come last (BOS, the start token,
  is the last id, as Marian's pad). Ids that the model cannot tell apart
  (equal embedding rows and output biases, as the importer writes for
  Marian's shared pad/start row and for pieces Marian reads as unk)
  become one Marian id whose bias is ``log(n)`` higher, so that every
  other log-probability is unchanged and a converted OPUS-MT model exports
  to its original ids and weights.
* tokenizers: the run's SentencePiece models (``vocab.spm``, and
  ``source_vocab.spm`` where the source has its own) are ``target.spm``
  and ``source.spm``; ``vocab.json`` maps their pieces to Marian's ids.
  ``MarianTokenizer`` appends ``</s>`` to the source as the package does.
* decoding defaults (``generation_config.json``): ``num_beams`` is the
  beam size; PAD and BOS are ``bad_words_ids`` (the package never chooses
  them either); ``min_length``, ``no_repeat_ngram_size`` and
  ``repetition_penalty`` have the same meaning. Two differ:
  ``length_penalty`` is the package's ``alpha`` but Hugging Face divides
  scores by ``|Y| ** length_penalty`` where the package divides by
  ``((5 + |Y|) / 6) ** alpha`` (the same only at 0), and ``max_length`` is
  absolute (the package's limit is the source length plus
  ``max_extra_length``); it is set to ``max_positions``.
* LayerNorm epsilon: Marian's is 1e-5 and not configurable; a model
  trained with another epsilon (the package's default is 1e-6) is exported
  with Marian's, which moves logits by about 1e-5.

Refused, by name, before anything is read or written: an ensemble, an
existing output directory, pre-norm layers, learned or relative positions,
separate source and target embeddings, unscaled embeddings, an activation
Marian lacks, a language-tag (multilingual) model.

Longer than the package's usual module because it is one converter: the
checks, the id map, the weight mapping and the writer share the id groups
and the residual permutation, and the mapping of every weight is kept in
one place so that none is missed.
"""

import json
import math
import os
import shutil
import tempfile

import numpy as np
import sentencepiece as spm

from keras_transformer.convert.marian import ACTIVATIONS
from keras_transformer.decoding.ensemble import Ensemble
from keras_transformer.decoding.options import DecodeOptions
from keras_transformer.export.ctranslate2_converter import (
    DEFAULT_MAX_POSITIONS,
    _grouped_by_projection,
    _numpy,
    _sentencepiece_proto,
    vocabulary_pieces,
)
from keras_transformer.models.transformer.transformer_backbone import (
    TransformerBackbone,
)
from keras_transformer.models.transformer.transformer_loader import (
    find_trained_model,
    model_directories,
)
from keras_transformer.special_tokens import (
    BOS_ID,
    BOS_PIECE,
    EOS_ID,
    EOS_PIECE,
    PAD_ID,
    PAD_PIECE,
    UNK_ID,
    UNK_PIECE,
    language_tag_ids,
)
from keras_transformer.utils.file_io import read_json
from keras_transformer.utils.run_files import PRESET_CONFIG_FILENAME

# Marian's LayerNorm epsilon (torch's default; MarianConfig has no key).
MARIAN_LAYER_NORM_EPSILON = 1e-5
MARIAN_ACTIVATIONS = sorted(set(ACTIVATIONS.values()))


class TransformersExportError(ValueError):
    """The model cannot be written as a Marian directory; the message names
    the setting or the path."""


# --- checks ---------------------------------------------------------------


def check_marian_expressible(config, where):
    """Raises `TransformersExportError` naming each setting of the model
    ``config`` (a `TransformerBackbone` config) that Marian cannot express."""
    problems = []
    if config.get("normalization_position", "post") != "post":
        problems.append(
            f"normalization_position={config['normalization_position']!r} "
            "(pre-norm layers; Marian has post-norm only)"
        )
    positions = config.get("positional_encoding", "sinusoidal")
    if positions != "sinusoidal":
        problems.append(
            f"positional_encoding={positions!r} (Marian has sinusoidal positions only)"
        )
    if not config.get("share_embeddings", True):
        problems.append("share_embeddings=False (Marian ties source and target embeddings)")
    activation = config.get("activation", "relu")
    if activation not in MARIAN_ACTIVATIONS:
        problems.append(
            f"activation={activation!r} (Marian has {', '.join(MARIAN_ACTIVATIONS)})"
        )
    if problems:
        raise TransformersExportError(
            f"{where} cannot be exported as a Marian model: {'; '.join(problems)}."
        )


def _check_model(model, where):
    if isinstance(model, Ensemble):
        raise TransformersExportError(
            f"{where} is an ensemble; a Marian directory holds one model (export "
            "each model, or average their checkpoints)."
        )
    if not isinstance(model, TransformerBackbone):
        raise TransformersExportError(
            f"{where} is a {type(model).__name__}, not a keras_transformer Transformer "
            "or a run directory."
        )
    check_marian_expressible(model.get_config(), where)
    if not model.token_embedding.scale:
        raise TransformersExportError(
            f"{where} has unscaled embeddings; Marian scales them by sqrt(d_model)."
        )


def _check_output(directory):
    directory = os.fspath(directory)
    if os.path.lexists(directory):
        raise TransformersExportError(
            f"The output directory {directory!r} exists; export into a new directory."
        )
    return directory


# --- ids ------------------------------------------------------------------


def marian_groups(embeddings, bias):
    """The package ids of each Marian id, in Marian's order.

    Ids with equal embedding rows and output biases are one group (the
    model cannot tell them apart). EOS's group is Marian id 0, UNK's 1,
    then the other groups by their first package id, then PAD's and BOS's
    (one group where they share a row: Marian's pad and start token).
    """
    groups, group_of = [], {}
    for package_id in range(embeddings.shape[0]):
        key = embeddings[package_id].tobytes() + bias[package_id].tobytes()
        if key not in group_of:
            group_of[key] = len(groups)
            groups.append([])
        groups[group_of[key]].append(package_id)

    def group(package_id):
        return next(g for g in groups if package_id in g)

    first = [group(EOS_ID), group(UNK_ID)]
    last = [group(PAD_ID)]
    if group(BOS_ID) is not last[0]:
        last.append(group(BOS_ID))
    if len({id(g) for g in first + last}) != len(first) + len(last):
        raise TransformersExportError(
            "EOS, UNK and PAD/BOS have equal embeddings and biases; Marian needs "
            "them apart."
        )
    special = {id(g) for g in first + last}
    return first + [g for g in groups if id(g) not in special] + last


def _group_piece(group, pieces):
    for package_id, piece in (
        (EOS_ID, EOS_PIECE), (UNK_ID, UNK_PIECE), (PAD_ID, PAD_PIECE), (BOS_ID, BOS_PIECE)
    ):  # fmt: skip
        if package_id in group:
            return piece
    return pieces[group[0]]


# --- weights --------------------------------------------------------------


def residual_permutation(model):
    """Column ``j`` of Marian's residual stream is the model's column
    ``permutation[j]``: identity for the split sinusoid, evens then odds
    for the paper's interleaved one."""
    d_model = model.d_model
    if getattr(model.encoder_position, "layout", "interleaved") == "split":
        return np.arange(d_model)
    return np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])


def _attention_tensors(attention, prefix, permutation):
    """HF ``q_proj``/``k_proj``/``v_proj``/``out_proj`` of one attention."""
    heads, layout = attention.num_heads, attention.projection_layout
    if attention.self_attention:
        weight, bias = _grouped_by_projection(attention.qkv_dense, 3, heads, layout)
        weights, biases = np.split(weight, 3), np.split(bias, 3)
    else:
        weight, bias = _grouped_by_projection(attention.key_value_dense, 2, heads, layout)
        weights = [_numpy(attention.query_dense.kernel).T, *np.split(weight, 2)]
        biases = [_numpy(attention.query_dense.bias), *np.split(bias, 2)]
    tensors = {}
    for name, w, b in zip(("q_proj", "k_proj", "v_proj"), weights, biases):
        tensors[f"{prefix}.{name}.weight"] = w[:, permutation]  # reads the stream
        tensors[f"{prefix}.{name}.bias"] = b
    output = attention.output_dense
    tensors[f"{prefix}.out_proj.weight"] = _numpy(output.kernel).T[permutation]
    tensors[f"{prefix}.out_proj.bias"] = _numpy(output.bias)[permutation]
    return tensors


def _norm_tensors(layer_norm, prefix, permutation):
    return {
        f"{prefix}.weight": _numpy(layer_norm.gamma)[permutation],
        f"{prefix}.bias": _numpy(layer_norm.beta)[permutation],
    }


def _feed_forward_tensors(feed_forward, prefix, permutation):
    inner, output = feed_forward.inner_dense, feed_forward.output_dense
    return {
        f"{prefix}.fc1.weight": _numpy(inner.kernel).T[:, permutation],
        f"{prefix}.fc1.bias": _numpy(inner.bias),
        f"{prefix}.fc2.weight": _numpy(output.kernel).T[permutation],
        f"{prefix}.fc2.bias": _numpy(output.bias)[permutation],
    }


def marian_tensors(model, groups):
    """``{name: float32 array}`` of ``MarianMTModel``'s state for ``model``
    with the Marian ids ``groups`` (`marian_groups`)."""
    permutation = residual_permutation(model)
    embeddings = _numpy(model.token_embedding.embeddings)
    bias = _model_bias(model, embeddings.shape[0])
    firsts = [g[0] for g in groups]
    # n ids of equal logits are one id with n times their probability.
    merged_bias = bias[firsts] + np.array([math.log(len(g)) for g in groups], "float32")
    tensors = {
        "model.shared.weight": embeddings[firsts][:, permutation],
        "final_logits_bias": merged_bias[None].astype("float32"),
    }
    for i, layer in enumerate(model.encoder_layers):
        prefix = f"model.encoder.layers.{i}"
        tensors.update(_attention_tensors(layer.self_attention, f"{prefix}.self_attn", permutation))
        tensors.update(_norm_tensors(layer.self_attention_norm, f"{prefix}.self_attn_layer_norm", permutation))
        tensors.update(_feed_forward_tensors(layer.feed_forward, prefix, permutation))
        tensors.update(_norm_tensors(layer.feed_forward_norm, f"{prefix}.final_layer_norm", permutation))
    for i, layer in enumerate(model.decoder_layers):
        prefix = f"model.decoder.layers.{i}"
        tensors.update(_attention_tensors(layer.self_attention, f"{prefix}.self_attn", permutation))
        tensors.update(_norm_tensors(layer.self_attention_norm, f"{prefix}.self_attn_layer_norm", permutation))
        tensors.update(_attention_tensors(layer.cross_attention, f"{prefix}.encoder_attn", permutation))
        tensors.update(_norm_tensors(layer.cross_attention_norm, f"{prefix}.encoder_attn_layer_norm", permutation))
        tensors.update(_feed_forward_tensors(layer.feed_forward, prefix, permutation))
        tensors.update(_norm_tensors(layer.feed_forward_norm, f"{prefix}.final_layer_norm", permutation))
    return {name: np.ascontiguousarray(value, "float32") for name, value in tensors.items()}


def _model_bias(model, size):
    if getattr(model.token_embedding, "output_bias", False):
        return _numpy(model.token_embedding.bias)
    return np.zeros((size,), "float32")


def write_safetensors(path, tensors):
    """Writes float32 ``tensors`` as a ``.safetensors`` file with NumPy (the
    format is an 8-byte header size, a JSON header and the raw arrays; the
    importer reads it the same way)."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, value in tensors.items():
        data = np.ascontiguousarray(value, "<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(data)]}  # fmt: skip
        blobs.append(data)
        offset += len(data)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as f:
        f.write(np.uint64(len(encoded)).tobytes() + encoded + b"".join(blobs))


# --- configs --------------------------------------------------------------


def marian_config(model, size, ids, max_positions):
    """``config.json`` of the Marian model (``ids``: its special ids)."""
    return {
        "architectures": ["MarianMTModel"],
        "model_type": "marian",
        "vocab_size": size,
        "decoder_vocab_size": size,
        "d_model": model.d_model,
        "encoder_layers": model.num_layers,
        "decoder_layers": model.num_layers,
        "encoder_attention_heads": model.num_heads,
        "decoder_attention_heads": model.num_heads,
        "encoder_ffn_dim": model.d_ff,
        "decoder_ffn_dim": model.d_ff,
        "activation_function": model.activation,
        "dropout": model.dropout_rate,
        "attention_dropout": 0.0,
        "activation_dropout": 0.0,
        "max_position_embeddings": max_positions,
        "scale_embedding": True,
        "static_position_embeddings": True,
        "normalize_before": False,
        "share_encoder_decoder_embeddings": True,
        "tie_word_embeddings": True,
        "is_encoder_decoder": True,
        "eos_token_id": ids["eos"],
        "pad_token_id": ids["pad"],
        "decoder_start_token_id": ids["start"],
        "forced_eos_token_id": None,
        "bos_token_id": None,
        "use_cache": True,
        "dtype": "float32",
    }


def generation_config(options, ids, max_positions):
    """``generation_config.json`` from the decoding defaults ``options``."""
    bad = sorted({ids["pad"], ids["start"]})
    config = {
        "decoder_start_token_id": ids["start"],
        "eos_token_id": ids["eos"],
        "pad_token_id": ids["pad"],
        "bad_words_ids": [[i] for i in bad],
        "num_beams": options.beam_size,
        "length_penalty": options.alpha,
        "max_length": max_positions,
    }
    if options.min_length:
        config["min_length"] = options.min_length
    if options.no_repeat_ngram_size:
        config["no_repeat_ngram_size"] = options.no_repeat_ngram_size
    if options.repetition_penalty != 1.0:
        config["repetition_penalty"] = options.repetition_penalty
    return config


def _decode_options(settings):
    fields = DecodeOptions.__dataclass_fields__
    return DecodeOptions().replace(**{k: v for k, v in settings.items() if k in fields})


# --- the directory --------------------------------------------------------


def _read_bytes(path, what):
    if path is None or not os.path.isfile(path):
        raise TransformersExportError(f"No {what} at {path!r}.")
    with open(path, "rb") as f:
        return f.read()


def _load_run(run, output):
    """``(model, target spm bytes, source spm bytes, decoding settings)`` of
    a run or preset directory, refused by its config before weights load."""
    directories = model_directories(run)
    if len(directories) > 1:
        raise TransformersExportError(
            f"{directories} is an ensemble of {len(directories)} models; a Marian "
            "directory holds one model."
        )
    _check_output(output)
    files = find_trained_model(directories[0])
    where = repr(files.directory)
    if files.kind == "preset":
        path = os.path.join(files.directory, PRESET_CONFIG_FILENAME)
        config = read_json(path, "preset file").get("config", {})
        check_marian_expressible(config, where)
    if files.language_tag() == "target":
        raise TransformersExportError(
            f"{where} forces a language tag as the output's first token "
            "(language_tag='target'), which Marian cannot express."
        )
    target = _read_bytes(files.vocabulary_path, "SentencePiece model")
    source = target
    if files.source_vocabulary_path is not None:
        source = _read_bytes(files.source_vocabulary_path, "source SentencePiece model")
    model = files.load_model(compile=False)
    return model, target, source, files.decoding_defaults(), where


def export_to_transformers(
    model_or_run,
    directory,
    vocabulary=None,
    source_vocabulary=None,
    decode_options=None,
    max_positions=DEFAULT_MAX_POSITIONS,
):
    """Writes ``directory`` as a Hugging Face ``MarianMTModel`` directory.

    Args:
        model_or_run: a run directory or keras-hub preset (a path), or a
            built `keras_transformer.Transformer`.
        directory: the directory to write; must not exist.
        vocabulary: with a model: its tokenizer (a `TransformerTokenizer`)
            or SentencePiece model (a ``vocab.spm`` path). Ignored for a
            run directory.
        source_vocabulary: with a model whose source has its own
            SentencePiece model: the same. Defaults to ``vocabulary``.
        decode_options: a `DecodeOptions` or a dict of its fields for
            ``generation_config.json``, over a run's own decoding defaults.
        max_positions: int. Longest source and output the exported model
            encodes (``max_position_embeddings``). Defaults to 1024.

    Returns:
        ``directory``.

    Raises:
        TransformersExportError: naming the setting or path, before any
            file is written: an ensemble, an existing ``directory``, or a
            model Marian cannot express (see the module docstring).

    Example:

    ```python
    export_to_transformers("runs/multi30k", "exported/multi30k-marian")
    from transformers import MarianMTModel, MarianTokenizer
    tokenizer = MarianTokenizer.from_pretrained("exported/multi30k-marian")
    model = MarianMTModel.from_pretrained("exported/multi30k-marian")
    ```
    """
    if isinstance(model_or_run, (str, bytes, os.PathLike, list, tuple)):
        model, target, source, settings, where = _load_run(model_or_run, directory)
    else:
        model, where = model_or_run, "The model"
        _check_output(directory)
        _check_model(model, where)
        if vocabulary is None:
            raise TransformersExportError(
                "export_to_transformers(model, ...) needs vocabulary= (the model's "
                "vocab.spm)."
            )
        target = _sentencepiece_proto(vocabulary)
        source = target
        if source_vocabulary is not None:
            source = _sentencepiece_proto(source_vocabulary)
        settings = {}
    if isinstance(decode_options, DecodeOptions):
        decode_options = {k: getattr(decode_options, k) for k in DecodeOptions.__dataclass_fields__}
    settings = {**settings, **(decode_options or {})}
    _check_model(model, where)
    if language_tag_ids(target) or language_tag_ids(source):
        raise TransformersExportError(
            f"{where} has language tags (a multilingual model); the export "
            "handles models of one target language."
        )
    directory = _check_output(directory)
    pieces = vocabulary_pieces(spm.SentencePieceProcessor(model_proto=target), model.vocabulary_size)
    embeddings = _numpy(model.token_embedding.embeddings)
    groups = marian_groups(embeddings, _model_bias(model, embeddings.shape[0]))
    size = len(groups)
    ids = {"eos": 0, "unk": 1, "pad": size - 1 if BOS_ID in groups[-1] and PAD_ID in groups[-1]
           else size - 2, "start": size - 1}  # fmt: skip
    tensors = marian_tensors(model, groups)
    vocab = {_group_piece(g, pieces): marian_id for marian_id, g in enumerate(groups)}
    tokenizer_config = {
        "tokenizer_class": "MarianTokenizer",
        "separate_vocabs": False,
        "eos_token": EOS_PIECE,
        "unk_token": UNK_PIECE,
        "pad_token": PAD_PIECE,
        "model_max_length": max_positions,
    }
    parent = os.path.dirname(os.path.abspath(directory))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".transformers-export-", dir=parent)
    try:
        write_safetensors(os.path.join(staging, "model.safetensors"), tensors)
        for name, content in (
            ("config.json", marian_config(model, size, ids, max_positions)),
            ("generation_config.json",
             generation_config(_decode_options(settings), ids, max_positions)),
            ("vocab.json", vocab),
            ("tokenizer_config.json", tokenizer_config),
        ):  # fmt: skip
            with open(os.path.join(staging, name), "w", encoding="utf-8") as f:
                json.dump(content, f, indent=2, ensure_ascii=False)
        for name, content in (("source.spm", source), ("target.spm", target)):
            with open(os.path.join(staging, name), "wb") as f:
                f.write(content)
        os.rename(staging, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return directory
