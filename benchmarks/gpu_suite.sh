#!/usr/bin/env bash
# The GPU benchmarks in one run, without TensorFlow (the TensorFlow-free paths
# of the scripts): training throughput of the base preset in mixed_bfloat16
# under JAX and PyTorch (tokens/s, MFU against --peak-tflops, GPU memory),
# the synthetic decode benchmark of the base preset, and a short Multi30k
# EN->DE training of two seeds, each alone and as an ensemble.
#
#   bash benchmarks/gpu_suite.sh DATA_DIR OUTPUT_DIR TAG [PEAK_TFLOPS]
#
# DATA_DIR holds Multi30k's train.{en,de}.gz and test_2016_flickr.{en,de}.gz.
# TAG names the device in the result files (e.g. h200). PEAK_TFLOPS is the
# datasheet's dense bf16 peak (989 for the H100 SXM and the H200).
# QUICK=1 shrinks every step to a smoke run (a CPU checks the script with it).
# Each step has its own time limit, so that one that hangs leaves the others'
# results; every file is also packed into OUTPUT_DIR/results.tgz.
set -u
DATA=$1
OUT=$2
TAG=$3
PEAK=${4:-989}
mkdir -p "$OUT/files"
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

if [ "${QUICK:-0}" = 1 ]; then
    THROUGHPUT="--preset default --steps 2 --repeats 2 --warmup-steps 2 --torch-compile off"
    DECODE="--preset small --num-sentences 64 --speed-steps 16 --repeats 1"
    MULTI30K="--preset tiny --minutes 0.1 --steps-per-snapshot 10 --tokens-per-batch 2048 --test-sentences 30"
else
    THROUGHPUT="--preset base --steps 10 --repeats 3 --warmup-steps 3"
    DECODE="--preset base --num-sentences 1000 --warm"
    MULTI30K="--preset small --minutes 1.25"
fi

pack() {
    tar -czf "$OUT/results.tgz" -C "$OUT/files" .
}

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || true
  KERAS_BACKEND=jax python -c "import jax, torch, keras; print('jax', jax.__version__, jax.devices()); print('torch', torch.__version__, torch.cuda.is_available()); print('keras', keras.__version__)" 2>&1
  lscpu | grep -E "Model name|^CPU\(s\)" ; } > "$OUT/files/device.txt"
cat "$OUT/files/device.txt"

# shellcheck disable=SC2086
timeout 200 python benchmarks/train_throughput.py --models ours,torch_nn \
    --backends jax,torch --dtype-policy mixed_bfloat16 --peak-tflops "$PEAK" \
    $THROUGHPUT --output-dir "$OUT/files" --tag "${TAG}_base_bf16" \
    2>&1 | tee "$OUT/files/train_throughput.log"
pack

# shellcheck disable=SC2086
timeout 120 python benchmarks/decode_speed.py --synthetic --backends jax,torch \
    $DECODE --output-dir "$OUT/files" --tag "${TAG}_base" \
    2>&1 | tee "$OUT/files/decode_speed.log"
pack

# shellcheck disable=SC2086
KERAS_BACKEND=jax timeout 230 python benchmarks/multi30k_gpu.py --data "$DATA" \
    $MULTI30K --seed 0 1 --output "$OUT/files/multi30k_gpu_jax_$TAG.json" \
    --hypotheses "$OUT/files/multi30k_gpu_jax_${TAG}_test_2016_flickr.hyp.de" \
    2>&1 | tee "$OUT/files/multi30k_gpu.log"
pack
ls -la "$OUT/files"
