"""Peer models for the benchmarks: the same Transformer built two other ways.

* ``build_keras_hub_model``: keras-hub's ``TokenAndPositionEmbedding``,
  ``TransformerEncoder`` and ``TransformerDecoder`` in a functional model, the
  way the keras.io translation example assembles it.
* ``TorchTransformer``: ``torch.nn.Transformer`` with embeddings, sinusoidal
  positions and an output projection, trained by a plain PyTorch loop.

Both take the same hyper-parameters as ``keras_transformer.Transformer`` so the
benchmarks compare equal-sized models. Where they do more work than ours:

* keras-hub's ``dropout`` argument is used twice by its ``TransformerEncoder``
  and ``TransformerDecoder``: as the residual dropout (like ours) and as the
  ``dropout`` of every ``MultiHeadAttention``, which drops attention weights.
  With attention dropout > 0, ``MultiHeadAttention._compute_attention`` cannot
  use ``ops.dot_product_attention`` (the fused kernel) and runs
  einsum -> masked softmax -> dropout -> einsum instead. The layers have no
  separate argument for it, so ``attention_dropout=0`` sets the built
  ``MultiHeadAttention`` layers' dropout to 0 after building them
  (`_set_keras_attention_dropout`), keeping the residual dropout.
* ``torch.nn.Transformer`` adds a final LayerNorm after the encoder stack and
  after the decoder stack (2 x d_model parameters each), and its
  ``nn.MultiheadAttention`` layers also drop attention weights (inside
  ``scaled_dot_product_attention``); ``attention_dropout=0`` sets their
  ``dropout`` attribute to 0. ``tie_embeddings=True`` (the paper's
setup: one embedding matrix shared by the encoder input, the decoder input and
the pre-softmax projection) keeps the total parameter count equal to a model
that ties them too; ``False`` is the keras.io style (separate encoder and
decoder embeddings plus a ``Dense`` output layer).

Keras and torch are imported inside the functions so that a worker only loads
the framework it benchmarks.
"""

import math

PAD_ID = 0


def noam_learning_rate(step, d_model, warmup_steps=4000):
    """``d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)`` (paper eq. 3)."""
    step = max(float(step), 1.0)
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def make_keras_noam_schedule(d_model, warmup_steps=4000):
    import keras
    from keras import ops

    class NoamSchedule(keras.optimizers.schedules.LearningRateSchedule):
        def __init__(self, d_model, warmup_steps):
            self.d_model = float(d_model)
            self.warmup_steps = float(warmup_steps)

        def __call__(self, step):
            step = ops.maximum(ops.cast(step, "float32") + 1.0, 1.0)
            return self.d_model**-0.5 * ops.minimum(
                ops.rsqrt(step), step * self.warmup_steps**-1.5
            )

        def get_config(self):
            return {"d_model": self.d_model, "warmup_steps": self.warmup_steps}

    return NoamSchedule(d_model, warmup_steps)


def build_keras_hub_model(
    vocabulary_size,
    num_layers,
    d_model,
    num_heads,
    d_ff,
    dropout_rate,
    max_length,
    tie_embeddings=True,
    attention_dropout=None,
):
    """Functional encoder-decoder from keras-hub layers.

    ``attention_dropout``: dropout on the attention weights; None keeps
    keras-hub's behaviour (``dropout_rate``, as for the residual dropout).

    Inputs ``{"encoder_token_ids", "decoder_token_ids"}`` (int32, pad id 0);
    output float32 logits ``(batch, target_length, vocabulary_size)``.
    Padding masks are passed explicitly (``ids != 0``); the decoder applies its
    causal mask itself (``use_causal_mask=True``). keras-hub layers are
    post-norm by default (``normalize_first=False``), like the paper.
    """
    import keras
    import keras_hub
    from keras import ops

    enc_ids = keras.Input(shape=(None,), dtype="int32", name="encoder_token_ids")
    dec_ids = keras.Input(shape=(None,), dtype="int32", name="decoder_token_ids")
    enc_pad = ops.not_equal(enc_ids, PAD_ID)
    dec_pad = ops.not_equal(dec_ids, PAD_ID)

    def embedding(name):
        return keras_hub.layers.TokenAndPositionEmbedding(
            vocabulary_size=vocabulary_size,
            sequence_length=max_length,
            embedding_dim=d_model,
            tie_weights=tie_embeddings,
            name=name,
        )

    if tie_embeddings:
        enc_embedding = dec_embedding = embedding("shared_embedding")
    else:
        enc_embedding = embedding("encoder_embedding")
        dec_embedding = embedding("decoder_embedding")

    x = enc_embedding(enc_ids)
    x = keras.layers.Dropout(dropout_rate)(x)
    layers = []
    for i in range(num_layers):
        layer = keras_hub.layers.TransformerEncoder(
            intermediate_dim=d_ff,
            num_heads=num_heads,
            dropout=dropout_rate,
            name=f"encoder_layer_{i}",
        )
        x = layer(x, padding_mask=enc_pad)
        layers.append(layer)
    memory = x

    y = dec_embedding(dec_ids)
    y = keras.layers.Dropout(dropout_rate)(y)
    for i in range(num_layers):
        layer = keras_hub.layers.TransformerDecoder(
            intermediate_dim=d_ff,
            num_heads=num_heads,
            dropout=dropout_rate,
            name=f"decoder_layer_{i}",
        )
        y = layer(
            y,
            memory,
            decoder_padding_mask=dec_pad,
            encoder_padding_mask=enc_pad,
        )
        layers.append(layer)
    if attention_dropout is not None:
        # The layers are built now (the functional calls built them); the
        # functional model re-runs their call() at train time, which reads
        # the attention layers' dropout then.
        _set_keras_attention_dropout(layers, attention_dropout)
    if tie_embeddings:
        logits = dec_embedding.token_embedding(y, reverse=True)
    else:
        logits = keras.layers.Dense(vocabulary_size, name="output_projection")(y)
    # float32 logits under mixed precision, like keras_transformer's model.
    logits = keras.layers.Activation("linear", dtype="float32", name="logits")(
        logits
    )
    return keras.Model(
        {"encoder_token_ids": enc_ids, "decoder_token_ids": dec_ids},
        logits,
        name="keras_hub_transformer",
    )


def _set_keras_attention_dropout(layers, rate):
    """Sets the attention-weight dropout of built keras-hub layers to ``rate``.

    ``keras.layers.MultiHeadAttention`` keeps its rate in ``_dropout`` (read
    in ``_compute_attention`` on every call to choose the fused
    ``ops.dot_product_attention`` path when it is 0) and in the rate of its
    ``_dropout_layer``. Returns the number of attention layers changed.
    """
    import keras

    changed = 0
    for layer in layers:
        for sub in layer._flatten_layers(include_self=False, recursive=True):
            if isinstance(sub, keras.layers.MultiHeadAttention):
                if not hasattr(sub, "_dropout"):
                    raise RuntimeError(
                        "keras.layers.MultiHeadAttention has no _dropout "
                        "attribute in this Keras version; cannot set the "
                        "attention dropout separately"
                    )
                sub._dropout = float(rate)
                if getattr(sub, "_dropout_layer", None) is not None:
                    sub._dropout_layer.rate = float(rate)
                changed += 1
    if not changed:
        raise RuntimeError("no MultiHeadAttention layer found to change")
    return changed


def build_torch_model(
    vocabulary_size,
    num_layers,
    d_model,
    num_heads,
    d_ff,
    dropout_rate,
    max_length,
    tie_embeddings=True,
    attention_dropout=None,
):
    """``torch.nn.Transformer`` plus embeddings and output projection.

    ``attention_dropout``: dropout on the attention weights of every
    ``nn.MultiheadAttention``; None keeps ``dropout_rate`` (torch's default).
    """
    import torch
    from torch import nn

    class TorchTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.d_model = d_model
            self.src_embedding = nn.Embedding(
                vocabulary_size, d_model, padding_idx=PAD_ID
            )
            if tie_embeddings:
                self.tgt_embedding = self.src_embedding
            else:
                self.tgt_embedding = nn.Embedding(
                    vocabulary_size, d_model, padding_idx=PAD_ID
                )
            position = torch.arange(max_length, dtype=torch.float32)[:, None]
            div = torch.exp(
                torch.arange(0, d_model, 2, dtype=torch.float32)
                * (-math.log(10000.0) / d_model)
            )
            pe = torch.zeros(max_length, d_model)
            pe[:, 0::2] = torch.sin(position * div)
            pe[:, 1::2] = torch.cos(position * div)
            self.register_buffer("positional_encoding", pe, persistent=False)
            self.dropout = nn.Dropout(dropout_rate)
            self.transformer = nn.Transformer(
                d_model=d_model,
                nhead=num_heads,
                num_encoder_layers=num_layers,
                num_decoder_layers=num_layers,
                dim_feedforward=d_ff,
                dropout=dropout_rate,
                batch_first=True,
            )
            self.output_projection = nn.Linear(
                d_model, vocabulary_size, bias=not tie_embeddings
            )
            if tie_embeddings:
                self.output_projection.weight = self.tgt_embedding.weight
            if attention_dropout is not None:
                attention = [
                    m for m in self.transformer.modules()
                    if isinstance(m, nn.MultiheadAttention)
                ]
                assert len(attention) == 3 * num_layers, len(attention)
                for m in attention:
                    # Read as dropout_p by F.multi_head_attention_forward.
                    m.dropout = float(attention_dropout)

        def embed(self, embedding, ids):
            x = embedding(ids) * math.sqrt(self.d_model)
            return self.dropout(x + self.positional_encoding[: ids.shape[1]])

        def forward(self, src_ids, tgt_ids):
            src_pad = src_ids == PAD_ID  # True = ignore (PyTorch convention)
            tgt_pad = tgt_ids == PAD_ID
            t = tgt_ids.shape[1]
            causal = torch.triu(
                torch.ones(t, t, dtype=torch.bool, device=tgt_ids.device),
                diagonal=1,
            )
            h = self.transformer(
                self.embed(self.src_embedding, src_ids),
                self.embed(self.tgt_embedding, tgt_ids),
                tgt_mask=causal,
                src_key_padding_mask=src_pad,
                tgt_key_padding_mask=tgt_pad,
                memory_key_padding_mask=src_pad,
                tgt_is_causal=True,
            )
            return self.output_projection(h)

    return TorchTransformer()


def analytic_parameter_counts(vocabulary_size, num_layers, d_model, d_ff):
    """Parameter counts of the paper's architecture, by component.

    ``non_embedding``: all encoder and decoder layers (attention projections
    with biases, feed-forward, layer norms). ``embedding``: one shared
    ``V x d_model`` matrix (also the tied output projection).
    """
    d = d_model
    attention = 4 * (d * d + d)
    ffn = d * d_ff + d_ff + d_ff * d + d
    layer_norm = 2 * d
    encoder_layer = attention + ffn + 2 * layer_norm
    decoder_layer = 2 * attention + ffn + 3 * layer_norm
    return {
        "encoder": num_layers * encoder_layer,
        "decoder": num_layers * decoder_layer,
        "non_embedding": num_layers * (encoder_layer + decoder_layer),
        "embedding": vocabulary_size * d,
    }
