#!/usr/bin/env bash
# The README's test command: the whole suite once per Keras backend.
# Usage: bash tests/run_all_backends.sh [extra pytest args]
# BACKENDS="jax torch" limits the backends.
set -uo pipefail
cd "$(dirname "$0")/.."
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
status=0
for backend in ${BACKENDS:-tensorflow jax torch}; do
  echo "=== KERAS_BACKEND=$backend"
  start=$SECONDS
  KERAS_BACKEND=$backend python -m pytest -q -p no:cacheprovider tests "$@" || status=1
  echo "=== KERAS_BACKEND=$backend took $((SECONDS - start)) s"
done
exit $status
