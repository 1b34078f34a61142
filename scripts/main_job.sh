#!/usr/bin/env bash
# The main job: unmodified NumPy programs run under NumPy and under `python -m hassium`,
# side by side, with both times, the ratio, and whether the results agree.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
$py examples/python/compare.py examples/python/heat_equation.py 2000 50
$py examples/python/compare.py examples/python/black_scholes.py 1000000 10
