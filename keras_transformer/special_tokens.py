"""Reserved token ids shared by the model, the tokenizer and the decoders.

The shared subword vocabulary reserves the first four ids; every other module
imports them from here so that padding, start and end of sequence mean the same
thing everywhere (masks are derived from ``PAD_ID``).
"""

import re

import sentencepiece as spm

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
            "keras_transformer.TransformerTokenizer.train."
        )


# --- Language tags: one model, several target languages ---------------------
#
# A multilingual vocabulary reserves one piece per target language, "<2de>"
# for German (the "to German" tag of Johnson et al., 2017), as a SentencePiece
# control symbol: its id follows the reserved ids 0-3, text never produces it
# (a user's "<2de>" is ordinary text) and decoding prints it as nothing. Where
# the tag goes is a property of the trained model (``language_tag``):
#
# - ``"source"``: the tag is the source's first token, as Marian and OPUS-MT
#   (``>>fr<<``) put it. The decoder starts from BOS as usual.
# - ``"target"``: the tag is the output's first token after BOS (the decoder
#   is trained on ``BOS tag y1 ... yn``), forced at decoding time as a target
#   prefix, as CTranslate2's target prefix tokens; fairseq's
#   ``--decoder-langtok`` puts it in BOS's place instead.

LANGUAGE_TAG_POSITIONS = ("source", "target")

_LANGUAGE = re.compile(r"[a-z]{2,3}([_-][A-Za-z0-9]{1,8})?")
_TAG_PIECE = re.compile(r"<2([a-z]{2,3}(?:[_-][A-Za-z0-9]{1,8})?)>")


def language_tag_piece(language):
    """The reserved piece of ``language``: ``"<2de>"`` for ``"de"``."""
    return f"<2{check_language(language)}>"


def check_language(language, name="language"):
    """``language`` when it is a language code (``de``, ``pt_BR``, ``zh-Hant``:
    2-3 lowercase letters, optionally ``_``/``-`` and a variant), else a
    ValueError naming ``name``."""
    if not isinstance(language, str) or not _LANGUAGE.fullmatch(language):
        raise ValueError(
            f"{name} must be a language code such as 'de' or 'pt_BR' (2-3 lowercase "
            f"letters, optionally '_' or '-' and a variant). Received: {name}={language!r}"
        )
    return language


def check_languages(languages, name="languages"):
    """A tuple of distinct language codes (`check_language`), or a
    ValueError naming ``name``."""
    if isinstance(languages, str) or not hasattr(languages, "__iter__"):
        raise ValueError(
            f"{name} must be a list of language codes. Received: {name}={languages!r}"
        )
    languages = tuple(check_language(lang, name) for lang in languages)
    repeated = sorted({lang for lang in languages if languages.count(lang) > 1})
    if repeated:
        raise ValueError(f"{name} names {', '.join(repeated)} more than once.")
    return languages


def check_language_tag_position(position, name="language_tag"):
    if position not in LANGUAGE_TAG_POSITIONS:
        raise ValueError(
            f"{name} must be one of {', '.join(map(repr, LANGUAGE_TAG_POSITIONS))}. "
            f"Received: {name}={position!r}"
        )
    return position


def language_tag_ids(proto):
    """``{language: id}`` of the language tags of a SentencePiece model
    (serialized ``proto`` bytes): its control pieces ``<2xx>``; empty for a
    vocabulary of one target language."""
    processor = spm.SentencePieceProcessor(model_proto=proto)
    tags = {}
    # Control symbols take the ids right after the reserved ones.
    for i in range(len(RESERVED_PIECES), processor.get_piece_size()):
        if not processor.is_control(i):
            break
        match = _TAG_PIECE.fullmatch(processor.id_to_piece(i))
        if match:
            tags[match.group(1)] = i
    return tags


def target_language_ids(target_language, tags, count, name="target_language"):
    """The tag id of each of ``count`` sentences.

    Args:
        target_language: a language code (every sentence), or a list of
            ``count`` of them (one per sentence).
        tags: ``{language: id}`` of the model (`language_tag_ids`).
        count: the number of sentences.

    Raises:
        ValueError: naming ``name``: the model has no language tags, a code
            it does not know (listing those it knows), or a list of another
            length than ``count``.
    """
    if not tags:
        raise ValueError(
            f"{name} was given, but the model translates into one language: its "
            "vocabulary has no language tags (train it with several target languages)."
        )
    if isinstance(target_language, str):
        languages = [target_language] * count
    elif isinstance(target_language, (list, tuple)):
        languages = list(target_language)
        if len(languages) != count:
            raise ValueError(
                f"{name} needs one language per sentence (or one str for all): "
                f"{len(languages)} for {count} sentences."
            )
    else:
        raise ValueError(
            f"{name} must be a language code or a list of them, one per sentence. "
            f"Received: {name}={target_language!r}"
        )
    unknown = sorted({str(lang) for lang in languages if lang not in tags})
    if unknown:
        raise ValueError(
            f"{name}: the model does not translate into {', '.join(map(repr, unknown))}; "
            f"it knows {', '.join(map(repr, sorted(tags)))}."
        )
    return [tags[lang] for lang in languages]
