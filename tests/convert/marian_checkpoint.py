"""A small randomly initialized Hugging Face Marian (OPUS-MT format)
directory, built in the test: two SentencePiece models trained on a
generated corpus, a joint ``vocab.json`` over their pieces (Marian's ids:
eos 0, unk 1, pad last), a tiny ``MarianMTModel`` saved with
``save_pretrained``, and its ``generation_config.json``."""

import io
import json
import os
import random
import zlib

import numpy as np
import sentencepiece as spm

ENGLISH = (
    "a the two one man woman dog dogs cat child children girl boy people red blue "
    "green small big old young is are runs walks plays sits stands looks at on in "
    "with near under over street park water beach ball grass tree house car bike "
    "while and playing running jumping wearing shirt hat black white"
).split()
GERMAN = (
    "ein eine der die das zwei mann frau hund hunde katze kind kinder mädchen junge "
    "leute rot blau grün klein groß alt jung ist sind läuft geht spielt sitzt steht "
    "schaut auf an in mit bei unter über straße park wasser strand ball gras baum "
    "haus auto fahrrad während und spielen laufen springen trägt hemd hut schwarz weiß"
).split()

# The weights' draw: the tests' outputs end before their length limits
# (where Hugging Face's beam search and the package's legitimately differ).
WEIGHTS_SEED = 7


def corpus(words, count, seed):
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(words) for _ in range(rng.randint(3, 12))).capitalize() + "."
        for _ in range(count)
    ]


def train_spm(sentences, size):
    """A SentencePiece model with SentencePiece's default ids (unk 0, <s> 1,
    </s> 2), as Marian's ``source.spm``/``target.spm``."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=model, vocab_size=size,
        model_type="unigram", character_coverage=1.0, minloglevel=2,
    )  # fmt: skip
    return model.getvalue()


def make_marian_directory(
    directory, d_model=16, layers=2, heads=2, d_ff=32, seed=0, weights_seed=WEIGHTS_SEED
):
    """Writes the Marian directory; returns ``(model, vocabulary, source
    sentences)``. ``seed`` draws the corpora (so the SentencePiece models
    and ids), ``weights_seed`` the weights."""
    import torch
    from transformers import GenerationConfig, MarianConfig, MarianMTModel

    os.makedirs(directory, exist_ok=True)
    source_text = corpus(ENGLISH, 3000, seed)
    target_text = corpus(GERMAN, 3000, seed + 1)
    protos = {"source.spm": train_spm(source_text, 160), "target.spm": train_spm(target_text, 170)}
    pieces = []
    for name, proto in protos.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(proto)
        processor = spm.SentencePieceProcessor(model_proto=proto)
        pieces += [processor.id_to_piece(i) for i in range(processor.get_piece_size())
                   if not (processor.is_control(i) or processor.is_unknown(i))]  # fmt: skip
    # Marian's joint vocabulary: </s> 0, <unk> 1, the pieces, <pad> last.
    ordered = ["</s>", "<unk>"] + list(dict.fromkeys(pieces)) + ["<pad>"]
    vocabulary = {piece: i for i, piece in enumerate(ordered)}
    with open(os.path.join(directory, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocabulary, f, ensure_ascii=False)
    pad = len(ordered) - 1
    config = MarianConfig(
        vocab_size=len(ordered), decoder_vocab_size=len(ordered), d_model=d_model,
        encoder_layers=layers, decoder_layers=layers, encoder_attention_heads=heads,
        decoder_attention_heads=heads, encoder_ffn_dim=d_ff, decoder_ffn_dim=d_ff,
        activation_function="swish", max_position_embeddings=128, pad_token_id=pad,
        eos_token_id=0, decoder_start_token_id=pad, forced_eos_token_id=None,
        scale_embedding=True, share_encoder_decoder_embeddings=True,
    )  # fmt: skip
    model = MarianMTModel(config).eval()
    with torch.no_grad():
        # Random weights everywhere (LayerNorms and the pad row included),
        # each drawn from NumPy's generator seeded with its name, so the
        # checkpoint is the same under every transformers version (their
        # initializations differ). The positions are Marian's fixed sinusoids.
        for name, parameter in model.named_parameters():
            if "embed_positions" not in name:
                mean = 1.0 if name.endswith("layer_norm.weight") else 0.0
                parameter.copy_(_normal(weights_seed, name, parameter.shape, mean, 0.3))
        # The output bias favours EOS, so outputs end early, and keeps out
        # the words of the source side (pieces with "▁" that the target
        # SentencePiece model lacks): Marian's tokenizer writes such a
        # piece raw ("▁shirt"), the target model as text (" shirt"), so
        # every output's text compares.
        bias = _normal(weights_seed, "final_logits_bias", (1, len(ordered)), 0.0, 0.5)
        bias[0, 0] += 4.0
        bias[0, source_words(protos, vocabulary)] -= 30.0
        model.final_logits_bias.copy_(bias)
    model.generation_config = GenerationConfig(
        num_beams=3, max_length=40, length_penalty=0.0, bad_words_ids=[[pad]],
        decoder_start_token_id=pad, pad_token_id=pad, eos_token_id=0,
    )  # fmt: skip
    model.save_pretrained(directory, safe_serialization=True)
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "MarianTokenizer", "separate_vocabs": False,
                   "source_lang": "en", "target_lang": "de"}, f)  # fmt: skip
    return model, vocabulary, source_text


def source_words(protos, vocabulary):
    """The ids of the words of the source side: pieces that begin a word
    ("▁...") and that the target SentencePiece model lacks."""
    target = spm.SentencePieceProcessor(model_proto=protos["target.spm"])
    pieces = {target.id_to_piece(i) for i in range(target.get_piece_size())}
    return [i for piece, i in vocabulary.items()
            if piece.startswith("\u2581") and piece not in pieces]  # fmt: skip


def _normal(seed, name, shape, mean, scale):
    """Normal values for the weight ``name``, from NumPy's generator seeded
    with ``seed`` and the name (independent of the order of the weights)."""
    import torch

    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    return torch.from_numpy(mean + scale * rng.standard_normal(tuple(shape), dtype=np.float32))


def marian_source_ids(directory, vocabulary, sentences):
    """Marian's encoder ids of ``sentences``: the source pieces looked up in
    ``vocab.json`` (unknown: <unk>), then </s> (as ``MarianTokenizer``)."""
    processor = spm.SentencePieceProcessor(model_file=os.path.join(directory, "source.spm"))
    return [
        [vocabulary.get(p, vocabulary["<unk>"]) for p in processor.encode(s, out_type=str)] + [0]
        for s in sentences
    ]


def marian_text(directory, vocabulary, ids):
    """Text of Marian output ids: the target pieces up to </s>."""
    inverse = {i: p for p, i in vocabulary.items()}
    processor = spm.SentencePieceProcessor(model_file=os.path.join(directory, "target.spm"))
    pieces = []
    for i in ids:
        if i == 0:
            break
        if i != len(vocabulary) - 1:
            pieces.append(inverse[i])
    return processor.decode_pieces(pieces)


def pad_rows(rows, value):
    width = max(len(r) for r in rows)
    return np.array([r + [value] * (width - len(r)) for r in rows], "int64")
