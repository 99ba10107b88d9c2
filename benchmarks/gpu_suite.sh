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
# SECTIONS picks the sections to run (default: all), among
#   throughput decode multi30k gpu
# "gpu" runs the product as a user runs it, with nothing but JAX, PyTorch
# and Keras (no TensorFlow): keras-transformer preprocess of Multi30k, train
# with the recipe benchmarks/multi30k.yaml for a fixed number of updates
# under JAX and under PyTorch, evaluate on test_2016_flickr, and
# train_throughput.py on the same preset and batch shape; the report
# (a JSON file named after TAG) puts the product's step time against the
# benchmark's and says how long fit waited for its batches.
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
    THROUGHPUT="--preset tiny --steps 2 --repeats 2 --warmup-steps 2 --torch-compile off"
    SCALE_PRESETS="tiny"; SCALE_BATCHES="8 16"; SCALE="--steps 2 --repeats 1 --warmup-steps 1"
    DECODE_COMPILE="--torch-compile --no-torch-eager --preset small --num-sentences 32 --repeats 1 --skip-speed"
    DECODE="--preset small --num-sentences 64 --speed-steps 16 --repeats 1"
    MULTI30K="--preset tiny --minutes 0.1 --steps-per-snapshot 10 --tokens-per-batch 2048 --test-sentences 30"
else
    THROUGHPUT="--preset base --steps 10 --repeats 3 --warmup-steps 3"
    SCALE_PRESETS="base big"; SCALE_BATCHES="196 392"; SCALE="--steps 10 --repeats 2 --warmup-steps 3"
    DECODE_COMPILE="--torch-compile --no-torch-eager --preset base --num-sentences 1000 --warm --skip-speed"
    DECODE="--preset base --num-sentences 1000 --warm"
    MULTI30K="--preset small --minutes 1.25"
fi

SECTIONS=${SECTIONS:-throughput decode multi30k gpu scale}
section() {
    case " $SECTIONS " in *" $1 "*) return 0 ;; esac
    return 1
}

pack() {
    tar -czf "$OUT/results.tgz" -C "$OUT/files" .
}

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || true
  KERAS_BACKEND=jax python -c "import jax, torch, keras; print('jax', jax.__version__, jax.devices()); print('torch', torch.__version__, torch.cuda.is_available()); print('keras', keras.__version__)" 2>&1
  lscpu | grep -E "Model name|^CPU\(s\)" ; } > "$OUT/files/device.txt"
cat "$OUT/files/device.txt"

if section throughput; then
# The package under JAX and under PyTorch (Keras' eager step and the
# compiled one) against torch.nn.Transformer eager and compiled, same batch.
# shellcheck disable=SC2086
timeout 300 python benchmarks/train_throughput.py --models ours,ours+compile,torch_nn \
    --backends jax,torch --dtype-policy mixed_bfloat16 --peak-tflops "$PEAK" \
    $THROUGHPUT --output-dir "$OUT/files" --tag "${TAG}_base_bf16" \
    2>&1 | tee "$OUT/files/train_throughput.log"
pack
fi

if section decode; then
# shellcheck disable=SC2086
timeout 120 python benchmarks/decode_speed.py --synthetic --backends jax,torch \
    $DECODE --output-dir "$OUT/files" --tag "${TAG}_base" \
    2>&1 | tee "$OUT/files/decode_speed.log"
# The compiled PyTorch decode (fixed-size cache, CUDA graphs where shapes are
# static) against JAX's, same synthetic sentences.
# shellcheck disable=SC2086
timeout 240 python benchmarks/decode_speed.py --synthetic --backends jax,torch \
    $DECODE_COMPILE --output-dir "$OUT/files" --tag "${TAG}_base_torch_compiled" \
    2>&1 | tee "$OUT/files/decode_speed_torch_compiled.log"
pack
fi

if section multi30k; then
# shellcheck disable=SC2086
KERAS_BACKEND=jax timeout 230 python benchmarks/multi30k_gpu.py --data "$DATA" \
    $MULTI30K --seed 0 1 --output "$OUT/files/multi30k_gpu_jax_$TAG.json" \
    --hypotheses "$OUT/files/multi30k_gpu_jax_${TAG}_test_2016_flickr.hyp.de" \
    2>&1 | tee "$OUT/files/multi30k_gpu.log"
pack
fi

if section gpu; then
# The product, from the command line. The recipe's settings, but the backend
# (the recipe names tensorflow), a fixed number of updates instead of its
# time budget, and no validation during training (so that the epochs time
# the training steps alone; the test set is scored after).
WORK="$OUT/work_gpu"
mkdir -p "$WORK"
if [ "${QUICK:-0}" = 1 ]; then
    GPU_VOCAB=1000; GPU_UPDATES=20; GPU_EPOCH=10; GPU_EVAL="--max-sentences 20 --beam-size 1"
    GPU_SETS="--set preset=tiny --set tokens_per_batch=1024"
    GPU_BENCH="--preset tiny --batch-size 16 --seq-len 64 --steps 3 --repeats 2 --warmup-steps 2 --torch-compile off --dropout-rate 0.2 --dtype-policy mixed_bfloat16"
    GPU_TIME=300
else
    GPU_VOCAB=8000; GPU_UPDATES=500; GPU_EPOCH=100; GPU_EVAL=""
    GPU_SETS=""
    GPU_BENCH="--preset small --batch-size 64 --seq-len 64 --steps 20 --repeats 3 --warmup-steps 5 --dropout-rate 0.2 --dtype-policy mixed_bfloat16 --peak-tflops $PEAK"
    GPU_TIME=400
fi
{ python -c "import importlib.util as u; print('tensorflow importable:', u.find_spec('tensorflow') is not None)"; } \
    2>&1 | tee "$OUT/files/gpu_environment.txt"
KERAS_BACKEND=jax timeout 300 python -m keras_transformer.cli preprocess \
    --train-src "$DATA/train.en.gz" --train-tgt "$DATA/train.de.gz" \
    --output "$WORK/corpus" --vocabulary-size "$GPU_VOCAB" \
    2>&1 | tee "$OUT/files/gpu_preprocess.log"
for BACKEND in jax torch; do
    # The recipe with this backend and one N for the average (its list of Ns
    # is chosen on validation BLEU, which needs validation files).
    sed -e "s/^backend:.*/backend: $BACKEND/" -e "s/^average_last_n:.*/average_last_n: 3/" \
        benchmarks/multi30k.yaml > "$WORK/multi30k_$BACKEND.yaml"
    # shellcheck disable=SC2086
    KERAS_BACKEND=$BACKEND timeout "$GPU_TIME" python -m keras_transformer.cli train \
        --config "$WORK/multi30k_$BACKEND.yaml" --backend "$BACKEND" \
        --train-corpus "$WORK/corpus" --output-dir "$WORK/run_$BACKEND" --overwrite \
        --set vocabulary_size="$GPU_VOCAB" --set max_steps="$GPU_UPDATES" \
        --set steps_per_epoch="$GPU_EPOCH" --set time_budget_minutes=null \
        --set valid_bleu_sentences=0 --set eval_sentences=0 \
        --set verbose=2 $GPU_SETS \
        2>&1 | tee "$OUT/files/gpu_train_$BACKEND.log"
    # shellcheck disable=SC2086
    KERAS_BACKEND=$BACKEND timeout "$GPU_TIME" python -m keras_transformer.cli evaluate \
        --model-dir "$WORK/run_$BACKEND" --src "$DATA/test_2016_flickr.en.gz" \
        --ref "$DATA/test_2016_flickr.de.gz" $GPU_EVAL \
        2>&1 | tee "$OUT/files/gpu_evaluate_$BACKEND.log"
    pack
done
# shellcheck disable=SC2086
timeout 300 python benchmarks/train_throughput.py --models ours --backends jax,torch \
    $GPU_BENCH --output-dir "$OUT/files" --tag "${TAG}_gpu_product_shape" \
    2>&1 | tee "$OUT/files/gpu_train_throughput.log"
python benchmarks/gpu_product_report.py --files "$OUT/files" --tag "$TAG" \
    2>&1 | tee "$OUT/files/gpu_product_report.log"
pack
fi
ls -la "$OUT/files"

if section scale; then
# JAX at ~25,000 and ~50,000 target tokens per step (196 and 392 rows of 128),
# base and big presets: MFU and GPU memory as the batch and the model grow.
for preset in $SCALE_PRESETS; do
  for rows in $SCALE_BATCHES; do
    # shellcheck disable=SC2086
    timeout 150 python benchmarks/train_throughput.py --models ours --backends jax \
        --preset "$preset" --batch-size "$rows" --dtype-policy mixed_bfloat16 \
        --peak-tflops "$PEAK" $SCALE --no-matmul-reference --output-dir "$OUT/files" \
        --tag "${TAG}_${preset}_bf16_rows${rows}" 2>&1 | tee -a "$OUT/files/train_scale.log"
  done
done
pack
fi
