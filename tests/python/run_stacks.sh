#!/usr/bin/env bash
# Runs the Python differential suite once per installed stack.
#
# One process holds one runtime, and a runtime runs one stack (chosen by HASSIUM_STACK when
# it starts), so each stack gets its own pytest process. The stacks come from
# `python -m hassium --list-stacks`; HASSIUM_TEST_STACKS=reference,cpu narrows them.
# Extra arguments go to pytest: tests/python/run_stacks.sh -x -k reductions
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-.venv/bin/python}
stacks=$("$PY" -m hassium --list-stacks)
if [ -n "${HASSIUM_TEST_STACKS:-}" ]; then
  wanted=",${HASSIUM_TEST_STACKS},"
  stacks=$(for s in $stacks; do case "$wanted" in *",$s,"*) echo "$s";; esac; done)
fi
status=0
for stack in $stacks; do
  echo "=== HASSIUM_STACK=$stack ==="
  HASSIUM_STACK=$stack "$PY" -m pytest tests/python -q -p no:cacheprovider "$@" || status=1
done
exit $status
