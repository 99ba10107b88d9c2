#!/usr/bin/env bash
# The README's test command: the whole suite once per Keras backend.
# Usage: bash tests/run_all_backends.sh [extra pytest args]
#   BACKENDS="jax torch"  limits the backends.
#   JOBS=1                runs the backends one after another (default: all
#                         at once; each run is a separate process with its own
#                         Keras backend, so they share nothing but the CPUs).
#   TENSORFLOW_PART2="tests/convert tests/export/test_multilingual_export.py
#   tests/export/test_ensemble_export.py", JAX_PART2="tests/cli tests/convert",
#   TORCH_PART2="tests/decoding/test_torch_compiled_decode.py"
#                         (the defaults) when the backends run at once: a
#                         backend with a PART2 runs its suite in two pytest
#                         processes, these paths in the second, the rest of
#                         tests/ in the first. An empty one runs it in one.
# Running them at once: one backend's suite keeps ~1 core busy on average
# (JAX/XLA compilation and Python dispatch are single-threaded), so on 2
# cores the three together finish in about half the sequential time, if no
# process is left alone at the end with a core idle. Splitting the two
# longest suites (TensorFlow's, JAX's) in two processes each lets the
# shorter parts fill the cores while the long ones finish (PyTorch's
# compiled decode, mostly Inductor's compilation, in a process of its own).
# TensorFlow's second part also takes its two costliest SavedModel exports,
# so that its first part does not end alone (benchmarks/README.md).
# Each backend's output is printed whole when all of its processes have
# finished; the exit status is 0 when every backend's is.
# With the processes outnumbering the cores, each runs one compute thread
# (OMP_NUM_THREADS for PyTorch's operations, TF_NUM_INTRAOP_THREADS and
# TF_NUM_INTEROP_THREADS for TensorFlow's) and PyTorch's Inductor compiles
# its C++ in the test process (TORCHINDUCTOR_COMPILE_THREADS): the tests'
# models are too small to gain from more threads, and the idle threads of
# six processes spinning for work cost CPU time that the others need
# (benchmarks/README.md, "Test suite"). A value set in the environment is
# kept.
set -uo pipefail
cd "$(dirname "$0")/.."
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
backends=(${BACKENDS:-tensorflow jax torch})
jobs=${JOBS:-${#backends[@]}}
declare -A part2=(
  [tensorflow]="${TENSORFLOW_PART2-tests/convert tests/export/test_multilingual_export.py tests/export/test_ensemble_export.py}"
  [jax]="${JAX_PART2-tests/cli tests/convert}"
  [torch]="${TORCH_PART2-tests/decoding/test_torch_compiled_decode.py}"
)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
start_all=$SECONDS

run_one() {  # backend -> writes $logs/$backend.log and $logs/$backend.rc
  local backend=$1 start=$SECONDS
  KERAS_BACKEND=$backend python -m pytest -q -p no:cacheprovider tests "${@:2}" \
    >"$logs/$backend.log" 2>&1
  local rc=$?
  echo "=== KERAS_BACKEND=$backend took $((SECONDS - start)) s (exit $rc)" >>"$logs/$backend.log"
  echo $rc >"$logs/$backend.rc"
}

run_split() {  # backend -> two pytest processes, then $logs/$backend.log and .rc
  local backend=$1 start=$SECONDS ignore=() paths=(${part2[$1]}) rc1 rc2 rc
  for path in "${paths[@]}"; do ignore+=("--ignore=$path"); done
  KERAS_BACKEND=$backend python -m pytest -q -p no:cacheprovider tests "${ignore[@]}" "${@:2}" \
    >"$logs/$backend.1.log" 2>&1 &
  local first=$!
  KERAS_BACKEND=$backend python -m pytest -q -p no:cacheprovider "${paths[@]}" "${@:2}" \
    >"$logs/$backend.2.log" 2>&1
  rc2=$?
  wait $first
  rc1=$?
  # Exit status 5 is "no tests collected": fine for one part (extra
  # arguments such as -k may select tests of the other part only).
  if [ $rc1 = 5 ] && [ $rc2 = 5 ]; then rc=5
  elif [ $rc1 != 0 ] && [ $rc1 != 5 ]; then rc=$rc1
  elif [ $rc2 != 0 ] && [ $rc2 != 5 ]; then rc=$rc2
  else rc=0; fi
  {
    echo "--- part 1 of 2: tests ${ignore[*]} (exit $rc1)"
    cat "$logs/$backend.1.log"
    echo "--- part 2 of 2: ${paths[*]} (exit $rc2)"
    cat "$logs/$backend.2.log"
    echo "=== KERAS_BACKEND=$backend took $((SECONDS - start)) s in two processes (exit $rc)"
  } >"$logs/$backend.log"
  echo $rc >"$logs/$backend.rc"
}

status=0
if [ "$jobs" -le 1 ]; then
  for backend in "${backends[@]}"; do
    echo "=== KERAS_BACKEND=$backend"
    run_one "$backend" "$@"
    cat "$logs/$backend.log"
    [ "$(cat "$logs/$backend.rc")" = 0 ] || status=1
  done
else
  echo "=== running ${backends[*]} at once (JOBS=1 runs them one after another)"
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
  export TF_NUM_INTRAOP_THREADS=${TF_NUM_INTRAOP_THREADS:-1}
  export TF_NUM_INTEROP_THREADS=${TF_NUM_INTEROP_THREADS:-1}
  export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-1}
  declare -A pid
  for backend in "${backends[@]}"; do
    if [ -n "${part2[$backend]:-}" ]; then
      run_split "$backend" "$@" &
    else
      run_one "$backend" "$@" &
    fi
    pid[$backend]=$!
  done
  # Print each backend's log as soon as it finishes.
  remaining=("${backends[@]}")
  while [ ${#remaining[@]} -gt 0 ]; do
    running=()
    for backend in "${remaining[@]}"; do running+=("${pid[$backend]}"); done
    wait -n "${running[@]}" 2>/dev/null || true
    still=()
    for backend in "${remaining[@]}"; do
      if [ -f "$logs/$backend.rc" ]; then
        echo "=== KERAS_BACKEND=$backend"
        cat "$logs/$backend.log"
        [ "$(cat "$logs/$backend.rc")" = 0 ] || status=1
      else
        still+=("$backend")
      fi
    done
    remaining=("${still[@]+"${still[@]}"}")
  done
  wait
fi
echo "=== all backends took $((SECONDS - start_all)) s (exit $status)"
exit $status
