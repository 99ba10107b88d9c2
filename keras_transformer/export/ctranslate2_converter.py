"""CTranslate2 export: the same weights as a CTranslate2 model directory.

CTranslate2 (https://github.com/OpenNMT/CTranslate2) is a C++ inference
engine for Transformer translation models (CPU and GPU, float32, int8,
float16). OpenNMT-tf and fairseq models are converted to it with a
`ctranslate2.converters.Converter`; `KerasTransformerConverter` is one more
such converter: it fills a `ctranslate2.specs.TransformerSpec` from a
`keras_transformer.Transformer` and lets CTranslate2 validate, quantize and
save it. The weights are read with `keras.ops.convert_to_numpy`, so the
export runs under every Keras backend.

What the mapping has to get right (each is checked by
``tests/export/test_ctranslate2.py``, which compares log-probabilities):

* Positions: this package's sinusoid interleaves sin and cos (even columns
  sin, odd columns cos); CTranslate2's built-in one concatenates them. The
  export writes an explicit table of ``max_positions`` rows computed with
  this package's `sinusoidal_encoding` (learned positions: the model's
  table), so CTranslate2 never uses its own. Relative positions
  (``positional_encoding="relative"``) are CTranslate2's
  ``relative_position``: no position table, and each self-attention's
  ``relative_position_keys`` and ``relative_position_values`` (``2m + 1``
  rows of ``head_dim``; CTranslate2 reads ``m`` from their shape), the
  layout OpenNMT-py's converter writes.
* Fused projections: CTranslate2 wants self-attention ``linear[0]`` =
  ``[Q; K; V]`` and encoder-decoder attention ``linear[0]`` = Q,
  ``linear[1]`` = ``[K; V]``, each block ``[head_1; ...; head_h]``, as
  ``(out, in)`` matrices. Keras kernels are ``(in, out)`` and, in the default
  ``projection_layout="head_major"``, grouped by head; they are regrouped.
* Residual wrapping: post-LN (the paper's, ``pre_norm=False``) or pre-LN
  with a final LayerNorm (``pre_norm=True``). LayerNorm epsilon is the
  model's (1e-6), written to the model's ``config.json``.
* Embeddings: scaled by sqrt(d_model) (``scale_embeddings``); one matrix
  for encoder input, decoder input and the output projection when shared
  (CTranslate2 stores it once).
* Vocabulary: the SentencePiece pieces in id order (``<pad>`` 0, ``<unk>`` 1,
  ``<s>`` 2, ``</s>`` 3); decoding starts with ``<s>`` and the source gets
  ``</s>`` appended (``add_source_eos``), as in training. Output ids beyond
  the tokenizer's pieces (a padded vocabulary) get placeholder names.

`CTranslate2Translator` decodes the exported directory the way
`keras_transformer.Translator` does (see its docstring for the settings).

Example:

```python
    export_run_directory_to_ctranslate2,
)
from keras_transformer.export.ctranslate2_translator import CTranslate2Translator

export_run_directory_to_ctranslate2("runs/numbers", "runs/numbers-ct2")
translator = CTranslate2Translator("runs/numbers-ct2")
translator.translate(["two thousand twenty-four"])  # beam 4, alpha 0.6
```

Longer than the package's usual module because it is one converter: the
mapping above (`build_transformer_spec`), its checks (`check_exportable`) and
the writer share the tables below (position rows, placeholder pieces,
activations) and the helpers that fill one spec from one layer.
"""

import json
import os
import shutil

import keras
import numpy as np
import sentencepiece as spm

from keras_transformer.decoding.sources import model_max_positions
from keras_transformer.layers.position_schemes import position_scheme
from keras_transformer.layers.positional_encoding import (
    LearnedPositionalEmbedding,
    sinusoidal_encoding,
)
from keras_transformer.models.transformer.transformer_backbone import (
    TransformerBackbone,
)
from keras_transformer.models.transformer.transformer_loader import (
    find_trained_model,
)
from keras_transformer.special_tokens import (
    BOS_PIECE,
    EOS_PIECE,
    RESERVED_PIECES,
    UNK_PIECE,
)
from keras_transformer.utils.run_files import (
    SOURCE_VOCABULARY_FILENAME,
    VOCABULARY_FILENAME,
)
from keras_transformer.utils.validation import check_choice, check_int

METADATA_FILENAME = "keras_transformer.json"


# Rows of the explicit sinusoid table: positions CTranslate2 can encode (a
# source of up to this many tokens, EOS included; as many output tokens).
DEFAULT_MAX_POSITIONS = 1024


PLACEHOLDER_PIECE = "<keras_transformer_unused_{}>"

# The feed-forward activations CTranslate2 has, by their names in
# `ctranslate2.specs.common_spec.Activation` (GELU is the exact one).
CTRANSLATE2_ACTIVATIONS = {"relu": "RELU", "swish": "SWISH", "gelu": "GELU"}




def _import_ctranslate2():
    try:
        import ctranslate2
        import ctranslate2.converters
        import ctranslate2.specs
    except ImportError as error:
        raise ImportError(
            "The CTranslate2 export needs the `ctranslate2` package: "
            "pip install 'keras-transformer-nmt[ctranslate2]' (or "
            f"pip install ctranslate2). ({error})"
        ) from error
    return ctranslate2


def _sentencepiece_proto(tokenizer_or_vocab_path):
    """The serialized SentencePiece model of a tokenizer or a vocab.spm path."""
    proto = getattr(tokenizer_or_vocab_path, "proto", None)
    if isinstance(proto, (bytes, bytearray)):
        return bytes(proto)
    path = os.fspath(tokenizer_or_vocab_path)
    if os.path.isdir(path):
        path = os.path.join(path, VOCABULARY_FILENAME)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"No SentencePiece model at {path!r}: pass a TransformerTokenizer, "
            f"a {VOCABULARY_FILENAME} file or the directory holding it."
        )
    with open(path, "rb") as f:
        return f.read()


def _processor(proto):
    """A `SentencePieceProcessor` of a serialized SentencePiece model."""
    processor = spm.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(proto)
    except (RuntimeError, OSError) as error:
        raise ValueError(f"Not a SentencePiece model ({len(proto)} bytes): {error}")
    return processor


def vocabulary_pieces(processor, size):
    """The ``size`` token strings CTranslate2 maps to ids 0 .. size - 1.

    The SentencePiece pieces in id order; ids the tokenizer does not have (a
    model vocabulary padded beyond it) get unique placeholder names.
    """
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    for token_id, piece in RESERVED_PIECES.items():
        if token_id >= len(pieces) or pieces[token_id] != piece:
            found = pieces[token_id] if token_id < len(pieces) else None
            raise ValueError(
                f"The tokenizer's id {token_id} must be {piece!r} (the ids "
                "keras_transformer.special_tokens reserves). Received: "
                f"{found!r}"
            )
    if len(pieces) > size:
        raise ValueError(
            f"The tokenizer has {len(pieces)} pieces but the model only "
            f"{size} ids; they were not trained together."
        )
    pieces += [PLACEHOLDER_PIECE.format(i) for i in range(len(pieces), size)]
    if len(set(pieces)) != len(pieces):
        raise ValueError("The tokenizer's pieces are not unique.")
    return pieces


def _numpy(variable):
    """A weight as a contiguous float32 NumPy array."""
    # No keras.ops.cast: one eager op per weight is slow on JAX. NumPy casts
    # half-precision values (ml_dtypes' bfloat16 included) to float32.
    value = np.asarray(keras.ops.convert_to_numpy(variable))
    return np.ascontiguousarray(value.astype(np.float32))


def _set_linear(spec, dense, weight=None, bias=None):
    """A Keras Dense (kernel ``(in, out)``) as a CTranslate2 linear ``(out, in)``."""
    spec.weight = np.ascontiguousarray(
        _numpy(dense.kernel).T if weight is None else weight
    )
    if bias is None and dense.use_bias:
        bias = _numpy(dense.bias)
    if bias is not None:
        spec.bias = np.ascontiguousarray(bias)


def _grouped_by_projection(dense, n, num_heads, projection_layout):
    """A fused kernel regrouped as ``[P_1; ...; P_n]`` (CTranslate2's order).

    Returns ``(weight (n * d, in), bias (n * d,) or None)`` where each block
    ``P_j`` is ``[head_1; ...; head_h]``. ``projection_layout`` is the
    Keras column order: "head_major" ``[h_1: P_1..P_n | h_2: ...]`` or
    "qkv_major" ``[P_1: h_1..h_h | P_2: ...]``.
    """
    kernel = _numpy(dense.kernel)  # (in, n * d)
    d_in, width = kernel.shape
    head_dim = width // (n * num_heads)
    bias = _numpy(dense.bias) if dense.use_bias else None
    if projection_layout == "head_major":
        # (in, heads, n, head_dim) -> (n, heads, head_dim, in)
        kernel = kernel.reshape(d_in, num_heads, n, head_dim).transpose(2, 1, 3, 0)
        if bias is not None:
            bias = bias.reshape(num_heads, n, head_dim).transpose(1, 0, 2)
    elif projection_layout == "qkv_major":
        kernel = kernel.T
    else:
        raise ValueError(
            "Unknown projection_layout; expected 'head_major' or 'qkv_major'. "
            f"Received: projection_layout={projection_layout!r}"
        )
    weight = np.ascontiguousarray(kernel.reshape(width, d_in))
    if bias is not None:
        bias = np.ascontiguousarray(bias.reshape(width))
    return weight, bias


def _set_layer_norm(spec, layer_norm):
    spec.gamma = _numpy(layer_norm.gamma)
    spec.beta = _numpy(layer_norm.beta)


def _set_attention(spec, attention, layer_norm):
    layout = attention.projection_layout
    heads = attention.num_heads
    if attention.self_attention:
        weight, bias = _grouped_by_projection(attention.qkv_dense, 3, heads, layout)
        _set_linear(spec.linear[0], attention.qkv_dense, weight, bias)
    else:
        _set_linear(spec.linear[0], attention.query_dense)
        weight, bias = _grouped_by_projection(
            attention.key_value_dense, 2, heads, layout
        )
        _set_linear(spec.linear[1], attention.key_value_dense, weight, bias)
    _set_linear(spec.linear[-1], attention.output_dense)
    _set_layer_norm(spec.layer_norm, layer_norm)
    if attention.max_relative_position:
        spec.relative_position_keys = _numpy(attention.relative_position_keys)
        spec.relative_position_values = _numpy(attention.relative_position_values)


def _set_feed_forward(spec, feed_forward, layer_norm):
    _set_linear(spec.linear_0, feed_forward.inner_dense)
    _set_linear(spec.linear_1, feed_forward.output_dense)
    _set_layer_norm(spec.layer_norm, layer_norm)


def _position_table(position_layer, d_model, max_positions):
    """The position rows CTranslate2 adds: a learned table as it is, or
    ``max_positions`` rows of this package's sinusoid (in the layer's
    column layout)."""
    if isinstance(position_layer, LearnedPositionalEmbedding):
        return _numpy(position_layer.position_embeddings)
    positions = np.arange(max_positions, dtype="float32")
    layout = getattr(position_layer, "layout", "interleaved")
    return _numpy(sinusoidal_encoding(positions, d_model, "float32", layout))


def _layer_norms(model):
    norms = []
    for layer in model.encoder_layers:
        norms += [layer.self_attention_norm, layer.feed_forward_norm]
    for layer in model.decoder_layers:
        norms += [
            layer.self_attention_norm,
            layer.cross_attention_norm,
            layer.feed_forward_norm,
        ]
    final_norms = (model.encoder_final_norm, model.decoder_final_norm)
    norms += [n for n in final_norms if n is not None]
    return norms


def check_exportable(model):
    """Raises a ValueError naming what CTranslate2 cannot represent.

    Returns ``(pre_norm, layer_norm_epsilon)``.
    """
    if not isinstance(model, TransformerBackbone):
        raise ValueError(
            "export_ctranslate2 exports a keras_transformer.Transformer or "
            "TransformerBackbone (its output projection is the tied one). "
            f"Received: {type(model).__name__}"
        )
    if not model.built:
        raise ValueError("The model has no weights yet (it is not built).")
    if model.normalization_position not in ("post", "pre"):
        raise ValueError(
            "CTranslate2 has post-LN and pre-LN Transformers only. Received: "
            f"normalization_position={model.normalization_position!r}"
        )
    activations = {
        layer.feed_forward.activation
        for layer in list(model.encoder_layers) + list(model.decoder_layers)
    }
    if len(activations) != 1 or not activations <= set(CTRANSLATE2_ACTIVATIONS):
        raise ValueError(
            "The export maps feed-forward networks of one activation, "
            f"{', '.join(CTRANSLATE2_ACTIVATIONS)}. "
            f"Received activations: {sorted(map(str, activations))}"
        )
    norms = _layer_norms(model)
    epsilons = {float(n.epsilon) for n in norms}
    if len(epsilons) != 1:
        raise ValueError(
            "CTranslate2 uses one LayerNorm epsilon for the whole model. "
            f"Received: {sorted(epsilons)}"
        )
    if not all(n.center and n.scale for n in norms):
        raise ValueError("CTranslate2 LayerNorms need both gamma and beta.")
    for layer in list(model.encoder_layers) + list(model.decoder_layers):
        if layer.self_attention.num_heads != model.num_heads:
            raise ValueError("Every layer must have model.num_heads heads.")
    return model.normalization_position == "pre", epsilons.pop()


def build_transformer_spec(model, pieces, max_positions=DEFAULT_MAX_POSITIONS):
    """A filled `ctranslate2.specs.TransformerSpec` for a `Transformer`.

    Args:
        model: a built `keras_transformer.Transformer`.
        pieces: list of str, the target (and, with shared embeddings,
            source) vocabulary in id order; see `vocabulary_pieces`.
        max_positions: int. Rows of the sinusoid table. Ignored for learned
            positions (the model's table is used).
    """
    _import_ctranslate2()
    from ctranslate2.specs import common_spec, transformer_spec

    pre_norm, epsilon = check_exportable(model)
    max_positions = check_int("max_positions", max_positions, minimum=2)
    if len(pieces) != model.vocabulary_size:
        raise ValueError(
            f"The vocabulary has {len(pieces)} pieces; the model "
            f"{model.vocabulary_size} output ids."
        )
    activation = getattr(
        common_spec.Activation,
        CTRANSLATE2_ACTIVATIONS[model.encoder_layers[0].feed_forward.activation],
    )
    relative = position_scheme(model.positional_encoding).relative_attention
    encoder = transformer_spec.TransformerEncoderSpec(
        model.num_layers,
        model.num_heads,
        pre_norm=pre_norm,
        activation=activation,
        relative_position=relative,
    )
    decoder = transformer_spec.TransformerDecoderSpec(
        model.num_layers,
        model.num_heads,
        pre_norm=pre_norm,
        activation=activation,
        relative_position=relative,
    )
    spec = transformer_spec.TransformerSpec(encoder, decoder)
    _set_embeddings(encoder, decoder, model)
    if not relative:  # relative: CTranslate2 adds no position encodings
        _set_positions(encoder, decoder, model, max_positions)
    _set_layers(encoder, decoder, model, pre_norm)
    _set_vocabularies(spec, model, pieces)
    _set_config(spec.config, epsilon)
    return spec


def _set_embeddings(encoder, decoder, model):
    embeddings = _numpy(model.token_embedding.embeddings)  # (vocab, d_model)
    source_embeddings = embeddings
    if model.source_embedding is not model.token_embedding:
        source_embeddings = _numpy(model.source_embedding.embeddings)
    # Embeddings are multiplied by sqrt(d_model) before positions are added.
    for embedding_layer in (model.source_embedding, model.token_embedding):
        if not embedding_layer.scale:
            raise ValueError("The export expects embeddings scaled by sqrt(d_model).")
    encoder.scale_embeddings = True
    decoder.scale_embeddings = True
    encoder.embeddings[0].weight = source_embeddings
    decoder.embeddings.weight = embeddings
    # The output projection is the (tied) embedding matrix, with the
    # model's output bias where it has one (an imported Marian model).
    decoder.projection.weight = embeddings
    if getattr(model.token_embedding, "output_bias", False):
        decoder.projection.bias = _numpy(model.token_embedding.bias)


def _set_positions(encoder, decoder, model, max_positions):
    encoder_positions = _position_table(
        model.encoder_position, model.d_model, max_positions
    )
    decoder_positions = encoder_positions
    if model.positional_encoding == "learned":
        decoder_positions = _position_table(
            model.decoder_position, model.d_model, max_positions
        )
    encoder.position_encodings.encodings = encoder_positions
    decoder.position_encodings.encodings = decoder_positions


def _set_layers(encoder, decoder, model, pre_norm):
    for layer_spec, layer in zip(encoder.layer, model.encoder_layers):
        _set_attention(
            layer_spec.self_attention, layer.self_attention, layer.self_attention_norm
        )
        _set_feed_forward(layer_spec.ffn, layer.feed_forward, layer.feed_forward_norm)
    for layer_spec, layer in zip(decoder.layer, model.decoder_layers):
        _set_attention(
            layer_spec.self_attention, layer.self_attention, layer.self_attention_norm
        )
        _set_attention(
            layer_spec.attention, layer.cross_attention, layer.cross_attention_norm
        )
        _set_feed_forward(layer_spec.ffn, layer.feed_forward, layer.feed_forward_norm)
    if pre_norm:
        _set_layer_norm(encoder.layer_norm, model.encoder_final_norm)
        _set_layer_norm(decoder.layer_norm, model.decoder_final_norm)


def _set_vocabularies(spec, model, pieces):
    source_pieces = pieces
    if model.source_vocabulary_size != model.vocabulary_size:
        source_pieces = pieces[: model.source_vocabulary_size] + [
            PLACEHOLDER_PIECE.format(i)
            for i in range(len(pieces), model.source_vocabulary_size)
        ]
    spec.register_source_vocabulary(source_pieces)
    spec.register_target_vocabulary(pieces)


def _set_config(config, epsilon):
    config.layer_norm_epsilon = epsilon
    config.unk_token = UNK_PIECE
    config.bos_token = BOS_PIECE
    config.eos_token = EOS_PIECE
    # The decoder starts with <s> (BOS), and sources end with </s>, as in
    # training (keras_transformer.data.pipeline).
    config.decoder_start_token = BOS_PIECE
    config.add_source_bos = False
    config.add_source_eos = True


def _converter_class():
    ctranslate2 = _import_ctranslate2()

    class KerasTransformerConverter(ctranslate2.converters.Converter):
        """A `ctranslate2.converters.Converter` for a `Transformer` in memory.

        ``convert(output_dir, quantization=..., force=...)`` (inherited)
        validates the spec, quantizes it and writes the model directory.
        """

        def __init__(self, model, pieces, max_positions=DEFAULT_MAX_POSITIONS):
            self._model = model
            self._pieces = pieces
            self._max_positions = max_positions

        def _load(self):
            return build_transformer_spec(
                self._model, self._pieces, self._max_positions
            )

    return KerasTransformerConverter


def export_ctranslate2(
    model,
    tokenizer_or_vocab_path,
    output_dir,
    quantization=None,
    max_positions=DEFAULT_MAX_POSITIONS,
    force=False,
):
    """Writes a CTranslate2 model directory from a `Transformer`.

    The directory holds CTranslate2's ``model.bin``, ``config.json`` and
    ``shared_vocabulary.json`` (or source/target vocabularies), plus
    ``vocab.spm`` (the SentencePiece model, to tokenize inputs) and
    ``keras_transformer.json`` (what `CTranslate2Translator` needs).

    Args:
        model: a built `keras_transformer.Transformer` (any backend).
        tokenizer_or_vocab_path: a `TransformerTokenizer`, a ``vocab.spm`` path
            or a directory holding ``vocab.spm``.
        output_dir: str. Created; must not exist unless ``force``.
        quantization: None (float32 weights) or a CTranslate2 weight type:
            "int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16",
            "float16", "bfloat16", "float32". Any model can also be loaded
            with another ``compute_type``.
        max_positions: int. Longest source (EOS included) and output the
            exported model can encode with sinusoidal positions. Defaults to
            1024. Learned positions keep the model's ``max_length``.
        force: bool. Replace an existing ``output_dir``.

    Returns:
        ``output_dir``.

    Raises:
        ImportError: ctranslate2 is not installed.
        ValueError: the model or tokenizer cannot be represented (the message
            says what), or an unknown quantization.
        RuntimeError: ``output_dir`` exists and ``force`` is False.
    """
    ctranslate2 = _import_ctranslate2()
    from ctranslate2.specs.model_spec import ACCEPTED_MODEL_TYPES

    check_choice("quantization", quantization, (None, *sorted(ACCEPTED_MODEL_TYPES)))
    check_exportable(model)
    output_dir = os.fspath(output_dir)
    proto = _sentencepiece_proto(tokenizer_or_vocab_path)
    pieces = vocabulary_pieces(_processor(proto), model.vocabulary_size)
    converter = _converter_class()(model, pieces, max_positions)
    converter.convert(output_dir, quantization=quantization, force=force)
    with open(os.path.join(output_dir, VOCABULARY_FILENAME), "wb") as f:
        f.write(proto)
    # A learned-position model's own limit (`model_max_positions`).
    positions = model_max_positions(model) or max_positions
    metadata = {
        "format": "keras_transformer ctranslate2 export",
        "ctranslate2_version": ctranslate2.__version__,
        "max_positions": int(positions),
        "quantization": quantization,
        "model_config": model.get_config(),
    }
    with open(os.path.join(output_dir, METADATA_FILENAME), "w") as f:
        json.dump(metadata, f, indent=2, default=str)
    return output_dir


def export_run_directory_to_ctranslate2(
    run_directory,
    output_dir,
    quantization=None,
    max_positions=DEFAULT_MAX_POSITIONS,
    force=False,
):
    """`export_ctranslate2` of a trained model directory: a run directory
    of ``keras-transformer train`` (its keras-hub preset files, or the
    ``model.keras`` + ``vocab.spm`` of earlier versions) or a keras-hub
    preset."""
    files = find_trained_model(run_directory)
    vocab_path = files.vocabulary_path
    if not os.path.isfile(vocab_path):
        raise FileNotFoundError(
            f"No vocabulary at {vocab_path!r} (the model's SentencePiece model)."
        )
    model = files.load_model(compile=False)
    result = export_ctranslate2(
        model,
        vocab_path,
        output_dir,
        quantization=quantization,
        max_positions=max_positions,
        force=force,
    )
    source_vocab_path = files.source_vocabulary_path
    if source_vocab_path is not None:
        # The sources' own SentencePiece model (an imported Marian model's,
        # from its run or preset), which `CTranslate2Translator` tokenizes
        # sources with.
        shutil.copyfile(source_vocab_path, os.path.join(output_dir, SOURCE_VOCABULARY_FILENAME))
    return result
