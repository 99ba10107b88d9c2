"""The incremental-decoding interface of the Transformer, which the
model-agnostic searches of `keras_transformer.decoding` call.

`TransformerDecoding` is a mixin of `TransformerBackbone` (and so of
`Transformer`): ``encode`` runs the encoder once, ``build_cache`` /
``grow_cache`` hold the decoder's key/value cache, ``decode_step`` decodes
one position with it and ``decode`` the whole prefix without it, both
returning logits through the tied output projection (``logits``: the
shared token embedding's ``reverse=True`` call, paper §3.4, the head that
`TransformerSeq2SeqLM` and `Transformer` apply); ``attention_scores`` gives
every layer's attention weights for plotting. It reads the backbone's
layers and building blocks (``_encode``, ``_decode``, ``_embed_target``).
"""

from keras import ops

from keras_transformer.layers.buffer_writes import write_along
from keras_transformer.layers.masks import padding_mask_from_ids


class TransformerDecoding:
    """Encoder once, decoder step by step with a cache: logits out (see the
    module docstring)."""

    def logits(self, decoder_sequence_output):
        """The tied output projection (§3.4): float logits ``(batch, length,
        vocabulary_size)`` in ``logits_dtype`` (plus the learned output bias
        of a model built with ``output_bias=True``) from the decoder's hidden
        states."""
        return self.token_embedding(decoder_sequence_output, reverse=True)

    def encode(self, encoder_token_ids, training=False):
        """Runs the encoder once. Returns ``(encoder_output, encoder_padding_mask)``."""
        encoder_token_ids = ops.convert_to_tensor(encoder_token_ids, "int32")
        mask = padding_mask_from_ids(encoder_token_ids)
        return self._encode(encoder_token_ids, mask, training=training), mask

    def build_cache(self, encoder_output, encoder_padding_mask, max_length):
        """The decoding cache for a batch, with every leaf batch-major.

        Returns a dict:
        - ``"self_attention"``: a tuple (one per decoder layer) of zero tensors
          ``(batch, 2, num_heads, max_length, head_dim)`` that decoding fills
          one position per step;
        - ``"cross_attention"``: a tuple of the encoder-decoder keys/values
          ``(batch, 2, num_heads, source_length, head_dim)``, computed once;
        - ``"encoder_padding_mask"``: ``(batch, source_length)``;
        - ``"decoder_padding_mask"``: boolean ``(batch, max_length)``, False
          where a padding token was fed (`decode_step` writes it), so that
          padding inside a forced prefix is masked as in `decode`.
        Beam search reorders hypotheses by gathering every leaf on axis 0.
        """
        batch = ops.shape(encoder_output)[0]
        head_dim = self.d_model // self.num_heads
        shape = (batch, 2, self.num_heads, max_length, head_dim)
        dtype = self.decoder_layers[0].compute_dtype
        return {
            "self_attention": tuple(
                ops.zeros(shape, dtype=dtype) for _ in self.decoder_layers
            ),
            "cross_attention": tuple(
                layer.cross_attention.compute_key_value_cache(encoder_output)
                for layer in self.decoder_layers
            ),
            "encoder_padding_mask": encoder_padding_mask,
            "decoder_padding_mask": ops.ones((batch, max_length), dtype="bool"),
        }

    def grow_cache(self, cache, max_length):
        """``cache`` (from `build_cache`) with room for ``max_length`` positions.

        The self-attention buffers are padded with zeros and the decoder
        padding mask with True after the positions already there (a no-op
        when they already have ``max_length``); the searches grow the cache
        in stages (`keras_transformer.decoding.search.cache_lengths`).
        """
        current = ops.shape(cache["decoder_padding_mask"])[1]
        extra = max_length - current
        return dict(
            cache,
            self_attention=tuple(
                ops.pad(x, [[0, 0], [0, 0], [0, 0], [0, extra], [0, 0]])
                for x in cache["self_attention"]
            ),
            decoder_padding_mask=ops.pad(
                cache["decoder_padding_mask"], [[0, 0], [0, extra]],
                constant_values=True,
            ),
        )

    def decode_step(self, decoder_token_ids, cache, cache_index):
        """Decodes the tokens at positions ``cache_index ...`` using the cache.

        Args:
            decoder_token_ids: int ``(batch, steps)``, usually one step.
            cache: from `build_cache` (or a previous step).
            cache_index: int scalar, the position of the first token.

        Returns:
            ``(logits, cache)``: float32 logits ``(batch, steps,
            vocabulary_size)`` and the updated cache.
        """
        decoder_token_ids = ops.convert_to_tensor(decoder_token_ids, "int32")
        decoder_padding_mask = write_along(
            cache["decoder_padding_mask"],
            padding_mask_from_ids(decoder_token_ids),
            cache_index,
            axis=1,
        )
        x = self._embed_target(decoder_token_ids, start_index=cache_index)
        new_self_caches = []
        for layer, self_cache, cross_cache in zip(
            self.decoder_layers, cache["self_attention"], cache["cross_attention"]
        ):
            x, self_cache = layer(
                x,
                decoder_padding_mask=decoder_padding_mask,
                encoder_padding_mask=cache["encoder_padding_mask"],
                self_attention_cache=self_cache,
                cross_attention_cache=cross_cache,
                cache_index=cache_index,
            )
            new_self_caches.append(self_cache)
        if self.decoder_final_norm is not None:
            x = self.decoder_final_norm(x)
        logits = self.logits(x)
        cache = dict(
            cache,
            self_attention=tuple(new_self_caches),
            decoder_padding_mask=decoder_padding_mask,
        )
        return logits, cache

    def decode(self, decoder_token_ids, encoder_output, encoder_padding_mask):
        """Full (uncached) decoder pass: float32 logits for every position."""
        decoder_token_ids = ops.convert_to_tensor(decoder_token_ids, "int32")
        return self.logits(
            self._decode(
                decoder_token_ids,
                padding_mask_from_ids(decoder_token_ids),
                encoder_output,
                encoder_padding_mask,
            )
        )

    def attention_scores(self, encoder_token_ids, decoder_token_ids):
        """Attention weights of every layer and head, for plotting.

        Returns a dict of lists (one entry per layer) of float32 tensors
        ``(batch, heads, query_length, key_length)``: ``"encoder_self_attention"``,
        ``"decoder_self_attention"`` and ``"decoder_cross_attention"``.
        """
        encoder_token_ids = ops.convert_to_tensor(encoder_token_ids, "int32")
        decoder_token_ids = ops.convert_to_tensor(decoder_token_ids, "int32")
        encoder_mask = padding_mask_from_ids(encoder_token_ids)
        decoder_mask = padding_mask_from_ids(decoder_token_ids)
        scores = {
            "encoder_self_attention": [],
            "decoder_self_attention": [],
            "decoder_cross_attention": [],
        }
        x = self._embed_source(encoder_token_ids)
        for layer in self.encoder_layers:
            x, layer_scores = layer(
                x, encoder_padding_mask=encoder_mask, return_attention_scores=True
            )
            scores["encoder_self_attention"].append(layer_scores)
        if self.encoder_final_norm is not None:
            x = self.encoder_final_norm(x)
        y = self._embed_target(decoder_token_ids)
        for layer in self.decoder_layers:
            y, layer_scores = layer(
                y,
                x,
                decoder_padding_mask=decoder_mask,
                encoder_padding_mask=encoder_mask,
                return_attention_scores=True,
            )
            scores["decoder_self_attention"].append(layer_scores["self_attention"])
            scores["decoder_cross_attention"].append(layer_scores["cross_attention"])
        return scores
