"""--device gpu: the same numbers as the CPU, through CuPy. Skipped where CuPy or a GPU is missing."""

from __future__ import annotations

import pytest

cupy = pytest.importorskip("cupy")
try:
    cupy.cuda.runtime.getDeviceCount()
except Exception:  # noqa: BLE001 - no driver or no device
    pytest.skip("no CUDA device", allow_module_level=True)


@pytest.mark.parametrize(
    "command, argv",
    [
        ("grad", ["3*a**3-b**2", "--a", "2", "--b", "6"]),
        (
            "grad",
            [
                "output = W @ x + b; sum(output)",
                "--W",
                "[[1,2,3,4],[1,2,3,4],[1,2,3,4]]",
                "--x",
                "[3,2,4,5]",
                "--b",
                "[4,5,8]",
            ],
        ),
        (
            "grad",
            [
                "y = x + 2; z = y * y * 3",
                "--x",
                "[[1,2,3],[4,5,6]]",
                "--grad-output",
                "[[1,1,1],[1,1,1]]",
            ],
        ),
        ("hessian", ["x**2*y + sin(x*y)", "--x", "1", "--y", "2"]),
        ("jacobian", ["[x*y, x+y, sin(x)]", "--x", "1", "--y", "2"]),
        (
            "grad",
            ["where(x > 0, sqrt(x), 0) + max([x, 1]) + prod([x, 2]) + norm([x, 3])", "--x", "-1"],
        ),
    ],
)
def test_gpu_matches_cpu(cli, command, argv):
    cpu = cli(command, *argv, "--json")
    gpu = cli(command, *argv, "--json", "--device", "gpu")
    assert cpu.code == 0 and gpu.code == 0, gpu.out
    assert gpu.json.keys() == cpu.json.keys()
    assert gpu.json["value"] == pytest.approx(cpu.json["value"], rel=1e-12)


def test_gpu_batch(cli, tmp_path):
    path = tmp_path / "pts.csv"
    path.write_text("x,y\n" + "".join(f"{i * 0.01},{1 - i * 0.01}\n" for i in range(1000)))
    cpu = cli("batch", str(path), "--expr", "x*y + sin(x)*exp(y)")
    gpu = cli("batch", str(path), "--expr", "x*y + sin(x)*exp(y)", "--device", "gpu")
    assert cpu.code == gpu.code == 0
    assert len(gpu.out.splitlines()) == 1000
