"""Training: `TrainConfig`, `train`, callbacks, checkpoints and their
average, the choice of the final model, evaluation and BLEU, precision,
multi-device distribution, and the run directory."""
