#!/usr/bin/env bash
# The Jacobian of a small vector function, f(x, y) = [x*y, x + y, sin(x)], at (1, 2):
# one row per output, one column per input (as JSON: {name: shape(output) + shape(name)}).
#
# requires-command: jacobian
set -euo pipefail

autograd-cli jacobian '[x*y, x + y, sin(x)]' --x 1 --y 2
autograd-cli jacobian '[x*y, x + y, sin(x)]' --x 1 --y 2 --json

# A function of a vector: g(v) = [sum(v**2), prod(v)] at v = (1, 2, 3).
autograd-cli jacobian '[sum(v**2), prod(v)]' --v '[1, 2, 3]' --json
