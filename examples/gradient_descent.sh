#!/usr/bin/env bash
# Gradient descent driven by the command line: every step asks
# `autograd-cli grad --json` for the value and gradient, jq picks the numbers out,
# awk does the update x <- x - lr * df/dx.
#
#   STEPS=30 LR=0.1 ./gradient_descent.sh
#
# It is kept as an example of scripting the tool; the same minimum in one command, with
# Newton's method on the exact Hessian:
#
#   autograd-cli minimize '(x - 3)**2 + 2*(y + 1)**2 + 0.5*x*y' --x 0 --y 0
#
# requires: jq
set -euo pipefail

if ! command -v jq >/dev/null 2>&1; then
    echo "gradient_descent.sh needs jq (https://jqlang.github.io/jq/)" >&2
    exit 3
fi

f='(x - 3)**2 + 2*(y + 1)**2 + 0.5*x*y'
x=${X0:-0}
y=${Y0:-0}
lr=${LR:-0.1}
steps=${STEPS:-25}

echo "minimising f(x, y) = $f from ($x, $y), learning rate $lr"
for ((i = 1; i <= steps; i++)); do
    doc=$(autograd-cli grad "$f" --x "$x" --y "$y" --json)
    read -r value gx gy < <(jq -r '[.value, .grad.x, .grad.y] | @tsv' <<<"$doc")
    printf 'step %3d  x = %-12.6g y = %-12.6g f = %.10g\n' "$i" "$x" "$y" "$value"
    x=$(awk -v a="$x" -v g="$gx" -v lr="$lr" 'BEGIN { printf "%.17g", a - lr * g }')
    y=$(awk -v a="$y" -v g="$gy" -v lr="$lr" 'BEGIN { printf "%.17g", a - lr * g }')
done
printf 'after %d steps: x = %.6g, y = %.6g\n' "$steps" "$x" "$y"
