#!/usr/bin/env bash
# Batch evaluation: one expression at every point of a CSV file (a header of variable
# names, one point per row), and a JSONL file where each line brings its own
# expression.  The output is JSONL: one line per input line, in order, each with the
# input's line number.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

echo "# value and gradient of x*y + sin(x) at every point of points.csv"
autograd-cli batch "$here/points.csv" --expr 'x*y + sin(x)' --op grad

echo "# the same, written to a file (atomically: a temporary file renamed at the end)"
out="$(mktemp -d)/grads.jsonl"
autograd-cli batch "$here/points.csv" --expr 'x*y + sin(x)' -o "$out"
echo "$(wc -l < "$out") lines in $out"
rm -r "$(dirname "$out")"

echo "# requests.jsonl: mixed expressions and ops; line 4 does not parse"
status=0
autograd-cli batch "$here/requests.jsonl" 2>/dev/null || status=$?
echo "exit code $status (1: some line failed; every other line still has its result)"
