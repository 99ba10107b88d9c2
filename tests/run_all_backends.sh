#!/usr/bin/env bash
# The README's test command: the whole suite once per Keras backend.
# Usage: bash tests/run_all_backends.sh [extra pytest args]
#   BACKENDS="jax torch"  limits the backends.
#   JOBS=1                runs the backends one after another (default: all
#                         at once; each run is a separate process with its own
#                         Keras backend, so they share nothing but the CPUs).
# Running them at once: one backend's suite keeps ~1 core busy on average
# (JAX/XLA compilation and Python dispatch are single-threaded), so on 2
# cores the three together finish in about half the sequential time. Each
# backend's output is printed whole when it finishes.
set -uo pipefail
cd "$(dirname "$0")/.."
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
backends=(${BACKENDS:-tensorflow jax torch})
jobs=${JOBS:-${#backends[@]}}
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
  declare -A pid
  for backend in "${backends[@]}"; do
    run_one "$backend" "$@" &
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
