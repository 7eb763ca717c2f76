"""Test cases for the functions of core/ops_linalg.py, gathered by the op-wide test modules.

* ``GRAD_CASES``: keyword arguments of tests/test_ops_gradcheck.py's ``Case`` (op, shapes,
  attrs, samplers: functions (rng, shape) -> float64 array, diff, label): each op's vjp, jvp
  and second order against central differences.
* ``FORWARD_CASES``: keyword arguments of tests/test_forward_oracles.py's ``add`` (op, expr,
  values, expected, exact, zero_sign, label): the value of an expression against an
  independent oracle (Python loops, math, fractions, mpmath; never the same NumPy call).
* ``OP_TABLE_SAMPLES``: op name -> one value per argument for tests/test_op_table.py's sample
  (where a three-vector does not fit, as a square matrix for det); ``OP_TABLE_ATTRS``: op
  name -> the attributes it needs there (a required Param).
"""

from __future__ import annotations

GRAD_CASES: list[dict] = []
FORWARD_CASES: list[dict] = []
OP_TABLE_SAMPLES: dict[str, list] = {}
OP_TABLE_ATTRS: dict[str, dict] = {}
