#!/usr/bin/env bash
# A shell pipeline: generate points, evaluate the slope of f(x) = x**3 - 2*x at each of
# them through `batch -` (JSONL on stdin and stdout), keep what is needed with jq.
#
# requires: jq
set -euo pipefail

if ! command -v jq >/dev/null 2>&1; then
    echo "pipeline.sh needs jq (https://jqlang.github.io/jq/)" >&2
    exit 3
fi

seq -2 0.5 2 \
    | jq -c '{x: .}' \
    | autograd-cli batch - --expr 'x**3 - 2*x' \
    | jq -r '[.line, .value, .grad.x] | @tsv' \
    | awk 'BEGIN { print "line\tf(x)\tslope" } { print }'
