"""The Transformer family, one role per module (keras-hub's layout).

`transformer` (the functional model, token ids in, logits out), its keras-hub
base `transformer_backbone`, `transformer_presets` (architectures and trained
presets), `transformer_loader` (the one loader of a trained model
directory), `transformer_tokenizer`, `transformer_seq_2_seq_lm_preprocessor`,
`transformer_seq_2_seq_lm` (the keras-hub task) and `translator` (decoding a
trained model from Python).
"""
