"""The FFT family's rows for the shared tables (tests/test_op_table.py's sample).

``OP_TABLE_SAMPLES``: op name -> one value per argument, where the three-vector does not fit
(the 2-d transforms need two axes); ``OP_TABLE_ATTRS``: op name -> the attributes it needs
there (a required Param: fftfreq's n; the sample's axis=0 where an op has none but axes).
"""

from __future__ import annotations

_MATRIX = [[0.3, 0.7, 0.2, 0.9], [0.6, 0.4, 0.9, 0.1], [0.5, 0.8, 0.1, 0.4]]

OP_TABLE_SAMPLES: dict[str, tuple] = {
    "fft2": (_MATRIX,),
    "ifft2": (_MATRIX,),
    "fftn": (_MATRIX,),
    "ifftn": (_MATRIX,),
    "rfftn": (_MATRIX,),
    "irfftn": (_MATRIX,),
    "fftshift": (_MATRIX,),
    "ifftshift": (_MATRIX,),
}
OP_TABLE_ATTRS: dict[str, dict] = {
    "fftfreq": {"n": 5, "d": 0.5},
    "rfftfreq": {"n": 6},
}
