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
