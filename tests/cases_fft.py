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

#: the transforms whose op-table sample has a complex value or a complex gradient (fft of a
#: real vector; irfft's gradient of a real one): the generated code reads and returns real
#: arrays and writes its constants in its real dtype, so its check waits for complex
#: codegen (issue 27's complex numbers everywhere); rfft's and rfftn's gradients are real
COMPLEX_SAMPLES = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "irfft", "irfftn")
_WHY = "generated code with complex values (issue 27's complex numbers): not written yet"
CODEGEN_PENDING = {(n, t): _WHY for n in COMPLEX_SAMPLES for t in ("numpy", "torch", "jax")}
#: in float32 the complex results are complex64 (rfft's and rfftn's too)
FLOAT32_PENDING = {
    (n, t): _WHY for n in COMPLEX_SAMPLES + ("rfft", "rfftn") for t in ("numpy", "torch", "jax")
}
