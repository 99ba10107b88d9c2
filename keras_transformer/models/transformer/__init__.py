"""The Transformer family, one role per module (keras-hub's layout).

`transformer_backbone` (the functional model, token ids in, hidden states
out, with keras-hub's `Backbone` methods), its mixins `transformer_decoding`
(the incremental-decoding interface) and `transformer_training` (trainer
hooks, with `torch_train_step`), `transformer` (the backbone with its tied
output projection, logits out), `transformer_presets` (architectures and
trained presets), `transformer_loader` (the one loader of a trained model
directory), `transformer_tokenizer`, `transformer_seq_2_seq_lm_preprocessor`,
`transformer_seq_2_seq_lm` (the keras-hub task) and `translator` (decoding
a trained model from Python).
"""
