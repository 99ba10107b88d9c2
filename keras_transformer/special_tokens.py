"""Reserved token ids shared by the model, the tokenizer and the decoders.

The shared subword vocabulary reserves the first four ids; every other module
imports them from here so that padding, start and end of sequence mean the same
thing everywhere (masks are derived from ``PAD_ID``).
"""

PAD_ID = 0
UNK_ID = 1
BOS_ID = 2
EOS_ID = 3

PAD_PIECE = "<pad>"
UNK_PIECE = "<unk>"
BOS_PIECE = "<s>"
EOS_PIECE = "</s>"

RESERVED_PIECES = {
    PAD_ID: PAD_PIECE,
    UNK_ID: UNK_PIECE,
    BOS_ID: BOS_PIECE,
    EOS_ID: EOS_PIECE,
}


def check_reserved_pieces(vocabulary, source="the SentencePiece model"):
    """Raises a ValueError unless ids 0-3 are ``<pad> <unk> <s> </s>``."""
    found = {i: vocabulary[i] for i in RESERVED_PIECES if i < len(vocabulary)}
    if found != RESERVED_PIECES:
        raise ValueError(
            f"{source} does not reserve the ids the Transformer uses: expected "
            f"{RESERVED_PIECES}, found {found}. Train the vocabulary with "
            "keras_transformer.SubwordTokenizer.train."
        )
