"""Values from files (issue 13): ``--x @x.npy``, ``@x.npz:KEY``, ``@x.csv``, ``@x.txt``,
``@x.json``, ``--vars @vars.npz``; unused ``--vars`` keys and CSV columns ignored with a
note (``--strict``: an error); "did you mean" for a misspelt ``--NAME``; ``diff --hessian``
(every second partial, against SymPy).  Every file lives in pytest's temporary folder."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from autograd_cli.core.errors import InputError


def _npy(path, array):
    np.save(path, np.asarray(array))
    return f"@{path}"


def _text(path, text):
    path.write_text(text)
    return f"@{path}"


def _error(r, code, kind, fragment=""):
    assert r.code == code, (r.out, r.err)
    error = r.json["error"]
    assert error["kind"] == kind, error
    assert fragment in error["message"], error["message"]
    assert "Traceback" not in r.err
    return error


# ---- the file forms -------------------------------------------------------------------------


def test_npy_value(cli, tmp_path):
    x = _npy(tmp_path / "x.npy", [1.0, 2.0, 3.0])
    r = cli("grad", "sum(x**2)", "--x", x, "--json")
    assert r.code == 0, r.out
    assert r.json["value"] == 14.0 and r.json["grad"] == {"x": [2.0, 4.0, 6.0]}


def test_npy_of_integers_and_a_scalar(cli, tmp_path):
    a = _npy(tmp_path / "a.npy", np.arange(4, dtype=np.int32).reshape(2, 2))
    s = _npy(tmp_path / "s.npy", np.float32(2.5))
    r = cli("eval", "a*s", "--a", a, "--s", s, "--json")
    assert r.json == {"expr": "a*s", "value": [[0.0, 2.5], [5.0, 7.5]], "shape": [2, 2]}


def test_npz_key_and_npz_of_one_array(cli, tmp_path):
    np.savez(tmp_path / "v.npz", w=[1.0, 2.0], b=3.0)
    np.savez(tmp_path / "one.npz", only=[[1.0, 2.0], [3.0, 4.0]])
    r = cli("eval", "w + b", "--w", f"@{tmp_path / 'v.npz'}:w", "--b", f"@{tmp_path}/v.npz:b")
    assert r.code == 0, r.out
    r = cli("eval", "w + b", "--w", f"@{tmp_path / 'v.npz'}:w", "--b", "3", "--json")
    assert r.json["value"] == [4.0, 5.0]
    r = cli("eval", "sum(m)", "--m", f"@{tmp_path / 'one.npz'}", "--json")
    assert r.json["value"] == 10.0


def test_npz_wrong_key_or_no_key_for_several(cli, tmp_path):
    np.savez(tmp_path / "v.npz", w=[1.0, 2.0], b=3.0)
    error = _error(cli("eval", "w", "--w", f"@{tmp_path / 'v.npz'}:q", "--json"), 2, "usage")
    assert "no array 'q'" in error["message"] and "'w'" in error["message"]
    error = _error(cli("eval", "w", "--w", f"@{tmp_path / 'v.npz'}", "--json"), 2, "usage")
    assert "holds 2 arrays" in error["message"] and ":KEY" in error["message"]


@pytest.mark.parametrize(
    "name, text, shape, value",
    [
        ("m.csv", "1,2\n3,4\n", [2, 2], [[1.0, 2.0], [3.0, 4.0]]),
        ("row.csv", "1, 2, 3\n", [3], [1.0, 2.0, 3.0]),  # one row: a vector (loadtxt)
        ("col.csv", "1\n2\n3\n", [3], [1.0, 2.0, 3.0]),  # one column: a vector too
        ("one.csv", "5\n", [], 5.0),  # one number: a scalar
        ("m.txt", "# a comment\n1 2\n3\t4\n", [2, 2], [[1.0, 2.0], [3.0, 4.0]]),
        ("w.TXT", "1 2 3\n", [3], [1.0, 2.0, 3.0]),
        ("nan.csv", "1,nan\ninf,-inf\n", [2, 2], [[1.0, "nan"], ["inf", "-inf"]]),
    ],
)
def test_csv_and_txt_values_follow_loadtxt_shapes(cli, tmp_path, name, text, shape, value):
    r = cli("eval", "x", "--x", _text(tmp_path / name, text), "--json")
    assert r.code == 0, r.out
    assert r.json["shape"] == shape and r.json["value"] == value


def test_json_value_and_var_option(cli, tmp_path):
    x = _text(tmp_path / "x.json", "[[1, 2], [3, 4]]\n")
    r = cli("eval", "sum(x)", "--x", x, "--json")
    assert r.json["value"] == 10.0
    r = cli("eval", "sum(json)", "--var", f"json={x}", "--json")  # a name that clashes
    assert r.json["value"] == 10.0
    r = cli("eval", "x", "--x", _text(tmp_path / "bad.json", "[1, [2]"), "--json")
    _error(r, 2, "bad_value")


def test_same_value_from_a_file_and_a_literal_is_no_conflict(cli, tmp_path):
    x = _npy(tmp_path / "x.npy", [1.0, 2.0])
    r = cli("eval", "sum(x)", "--x", x, "--var", "x=[1, 2]", "--json")
    assert r.code == 0 and r.json["value"] == 3.0
    error = _error(cli("eval", "sum(x)", "--x", x, "--var", "x=[1, 3]", "--json"), 2, "usage")
    assert "given twice with different values" in error["message"]
    assert "shape (2,)" in error["message"]


def test_vars_npz_gives_every_key(cli, tmp_path):
    np.savez(tmp_path / "vars.npz", x=[1.0, 2.0], y=3.0)
    r = cli("grad", "sum(x)*y", "--vars", f"@{tmp_path / 'vars.npz'}", "--json")
    assert r.code == 0, r.out
    assert r.json["grad"] == {"x": [3.0, 3.0], "y": 3.0}


def test_vars_json_file_still_works(cli, tmp_path):
    path = tmp_path / "vars.json"
    path.write_text(json.dumps({"x": 2, "y": [1, 2]}))
    r = cli("eval", "x*y", "--vars", f"@{path}", "--json")
    assert r.json["value"] == [2.0, 4.0] and r.err == ""


def test_vars_npy_is_refused_with_a_hint(cli, tmp_path):
    x = _npy(tmp_path / "x.npy", [1.0])
    error = _error(cli("eval", "x", "--vars", x, "--json"), 2, "usage")
    assert "--NAME @" in error["message"]


# ---- what goes wrong --------------------------------------------------------------------------


def test_missing_unreadable_and_unknown_files(cli, tmp_path):
    _error(cli("eval", "x", "--x", f"@{tmp_path / 'no.npy'}", "--json"), 2, "usage", "cannot read")
    _error(cli("eval", "x", "--x", f"@{tmp_path / 'no.csv'}", "--json"), 2, "usage", "cannot read")
    _error(cli("eval", "x", "--x", f"@{tmp_path / 'x.bin'}", "--json"), 2, "usage", ".npy, .npz")
    _error(cli("eval", "x", "--x", "@", "--json"), 2, "usage", "needs a file name")
    folder = tmp_path / "d.npy"
    folder.mkdir()
    assert cli("eval", "x", "--x", f"@{folder}", "--json").json["error"]["kind"] == "usage"
    r = cli("eval", "x", "--vars", f"@{tmp_path / 'no.npz'}", "--json")
    _error(r, 2, "usage", "cannot read")


def _pickle_bomb(marker) -> bytes:
    """A pickle that, if ever loaded, creates ``marker`` (so the test can see it was not)."""

    class Bomb:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    return pickle.dumps([Bomb()], protocol=2)


def test_pickled_object_arrays_are_refused_never_unpickled(cli, tmp_path):
    from numpy.lib import format as npy_format

    marker = tmp_path / "unpickled"
    path = tmp_path / "obj.npy"
    with open(path, "wb") as f:
        header = {"descr": "|O", "fortran_order": False, "shape": (1,)}
        npy_format.write_array_header_1_0(f, header)
        f.write(_pickle_bomb(marker))
    error = _error(cli("eval", "x", "--x", f"@{path}", "--json"), 2, "bad_value")
    assert "never unpickled" in error["message"]
    # a bare pickle named .npy or .npz, and an .npz holding an object array
    (tmp_path / "p.npy").write_bytes(_pickle_bomb(marker))
    (tmp_path / "p.npz").write_bytes(_pickle_bomb(marker))
    _error(cli("eval", "x", "--x", f"@{tmp_path / 'p.npy'}", "--json"), 2, "bad_value")
    _error(cli("eval", "x", "--x", f"@{tmp_path / 'p.npz'}", "--json"), 2, "bad_value")
    np.savez(tmp_path / "o.npz", x=np.array([None, {}], dtype=object))
    r = cli("eval", "x", "--x", f"@{tmp_path / 'o.npz'}:x", "--json")
    _error(r, 2, "bad_value", "never unpickled")
    assert not marker.exists()


def test_non_numeric_and_truncated_npy(cli, tmp_path):
    s = _npy(tmp_path / "s.npy", np.array(["a", "b"]))
    _error(cli("eval", "x", "--x", s, "--json"), 2, "bad_value", "not numbers")
    # complex arrays are numbers (issue 27): read as they are
    c = _npy(tmp_path / "c.npy", np.array([1 + 2j]))
    doc = json.loads(cli("eval", "x", "--x", c, "--json").out)
    assert doc["value"] == [{"re": 1.0, "im": 2.0}]
    np.save(tmp_path / "t.npy", np.arange(100.0))
    data = (tmp_path / "t.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(data[:-80])
    _error(cli("eval", "x", "--x", f"@{tmp_path / 't.npy'}", "--json"), 2, "bad_value")
    (tmp_path / "junk.npy").write_bytes(b"not an array at all")
    _error(cli("eval", "x", "--x", f"@{tmp_path / 'junk.npy'}", "--json"), 2, "bad_value")
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not really a zip")
    _error(cli("eval", "x", "--x", f"@{tmp_path / 'junk.npz'}", "--json"), 2, "bad_value")


def test_too_big_is_refused_before_loading(cli, tmp_path, monkeypatch):
    x = _npy(tmp_path / "x.npy", np.zeros(1000))
    np.savez_compressed(tmp_path / "z.npz", x=np.zeros(1000))
    csv = _text(tmp_path / "x.csv", ",".join(["0"] * 1000) + "\n")
    monkeypatch.setenv("AUTOGRAD_CLI_MAX_MEMORY", "1k")
    for value in (x, f"@{tmp_path / 'z.npz'}:x", csv):
        _error(cli("eval", "sum(x)", "--x", value, "--json"), 1, "limit", "memory limit")
    _error(cli("eval", "sum(x)", "--vars", f"@{tmp_path / 'z.npz'}", "--json"), 1, "limit")
    monkeypatch.delenv("AUTOGRAD_CLI_MAX_MEMORY")
    _error(cli("eval", "sum(x)", "--x", x, "--max-memory", "1k", "--json"), 1, "limit")
    assert cli("eval", "sum(x)", "--x", x, "--json").json["value"] == 0.0


def test_a_huge_npy_header_is_refused_without_reading_the_data(cli, tmp_path):
    from numpy.lib import format as npy_format

    path = tmp_path / "huge.npy"
    with open(path, "wb") as f:  # says 10**12 numbers, holds none
        header = {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)}
        npy_format.write_array_header_1_0(f, header)
    _error(cli("eval", "sum(x)", "--x", f"@{path}", "--json"), 1, "limit")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("1,2\n3,a\n", "could not convert"),
        ("1,2\n3\n", "columns"),
        ("x,y\n1,2\n", "header"),
        ("", "holds no numbers"),
        ("# only a comment\n", "holds no numbers"),
    ],
)
def test_malformed_csv(cli, tmp_path, text, fragment):
    r = cli("eval", "x", "--x", _text(tmp_path / "bad.csv", text), "--json")
    _error(r, 2, "bad_value", fragment)


# ---- unused --vars keys, --strict, did you mean -------------------------------------------


def test_unused_vars_keys_are_ignored_with_a_note(cli, tmp_path):
    path = tmp_path / "vars.json"
    path.write_text(json.dumps({"x": 2, "y": 3, "unused": 1, "other": [1, 2]}))
    r = cli("grad", "x*y", "--vars", f"@{path}", "--json")
    assert r.code == 0, r.out
    assert r.json["grad"] == {"x": 3.0, "y": 2.0}
    assert "warning" in r.err and "'unused', 'other'" in r.err and "--strict" in r.err
    assert r.err.count("\n") == 1  # one note
    r = cli("eval", "x", "--vars", '{"x": 2, "y": 3}', "--json")  # inline JSON too
    assert r.code == 0 and r.json["value"] == 2.0 and "'y'" in r.err
    np.savez(tmp_path / "v.npz", x=2.0, z=[1.0, 2.0])
    r = cli("eval", "x", "--vars", f"@{tmp_path / 'v.npz'}", "--json")
    assert r.code == 0 and r.json["value"] == 2.0 and "'z'" in r.err


def test_strict_makes_unused_vars_keys_errors(cli):
    argv = ("grad", "x*y", "--vars", '{"x": 2, "y": 3, "unused": 1}')
    for where in ((*argv, "--strict", "--json"), (*argv[:2], "--strict", *argv[2:], "--json")):
        error = _error(cli(*where), 2, "unknown_variable", "'unused'")
        assert error["variable"] == "unused"
    # --strict is an option of every command, before the expression too, and in --help
    error = _error(cli("grad", "--strict", *argv[1:], "--json"), 2, "unknown_variable")
    assert error["variable"] == "unused"
    assert "--strict" in cli("grad", "--help").out
    # a variable called strict: --strict is the flag, so its value comes with --var, and a
    # stray value says so
    r = cli("eval", "strict*2", "--var", "strict=3", "--json")
    assert r.code == 0 and r.json["value"] == 6.0
    error = _error(cli("eval", "strict*2", "--strict", "3", "--json"), 2, "usage")
    assert "--var strict=VALUE" in error["message"]


def test_strict_makes_unused_csv_columns_errors(cli, tmp_path):
    path = tmp_path / "pts.csv"
    path.write_text("x,y,unused\n1,2,3\n")
    r = cli("batch", str(path), "--expr", "x*y", "--strict", "--json")
    assert r.code == 2 and r.out.count("\n") == 1, r.out  # one error, before any line
    error = json.loads(r.out)["error"]
    assert error["kind"] == "unknown_variable" and error["variable"] == "unused"
    assert "'unused'" in error["message"]
    r = cli("batch", str(path), "--expr", "x*y", "--json")  # without: a note, every line
    assert r.code == 0 and json.loads(r.out)["grad"] == {"x": 2.0, "y": 1.0}
    assert "ignoring CSV column 'unused'" in r.err
    assert "--strict" in cli("batch", "--help").out


def test_explicit_values_the_expression_does_not_use_stay_errors(cli):
    error = _error(cli("grad", "x*yy", "--x", "1", "--y", "2", "--json"), 2, "unknown_variable")
    assert "did you mean 'yy'?" in error["message"]
    error = _error(
        cli("eval", "rate*t", "--t", "1", "--var", "rte=2", "--json"), 2, "unknown_variable"
    )
    assert "did you mean 'rate'?" in error["message"]
    # --vars gives the rest: an explicit --NAME is still checked
    r = cli("eval", "x*y", "--vars", '{"x": 1, "y": 2}', "--yy", "3", "--json")
    _error(r, 2, "unknown_variable", "'yy'")
    # nothing close: no suggestion
    error = _error(cli("eval", "x", "--x", "1", "--zeta", "2", "--json"), 2, "unknown_variable")
    assert "did you mean" not in error["message"]


def test_batch_csv_ignores_unused_columns_with_one_note(cli, tmp_path):
    plain = tmp_path / "p.csv"
    plain.write_text("x,unused,y\n1,5,2\n3,6,4\n")
    quoted = tmp_path / "q.csv"  # quoted cells: read row by row, not by loadtxt
    quoted.write_text('x,unused,y\n1,"[1, 2]",2\n3,junk,4\n')
    want = cli("batch", _csv(tmp_path, "x,y\n1,2\n3,4\n"), "--expr", "x*y").out
    for path in (plain, quoted):
        r = cli("batch", str(path), "--expr", "x*y")
        assert r.code == 0, r.out
        assert r.out == want
        assert r.err.count("ignoring CSV column 'unused'") == 1


def _csv(tmp_path, text):
    path = tmp_path / "base.csv"
    path.write_text(text)
    return str(path)


# ---- diff: mixed partials -----------------------------------------------------------------

sympy = pytest.importorskip("sympy")


@pytest.mark.parametrize(
    "expr",
    ["x**2*y + sin(x*y)", "exp(x*y)*log(z) + x/y", "sqrt(x**2 + y**2)*tanh(z*x)"],
)
def test_diff_hessian_matches_sympy(cli, expr):
    r = cli("diff", expr, "--hessian", "--json")
    assert r.code == 0, r.out
    doc = r.json
    names = list(doc["derivative"])
    symbols = {n: sympy.Symbol(n, real=True) for n in names}
    f = sympy.sympify(expr, locals=symbols)
    assert list(doc["hessian"]) == names and doc["order"] == 2
    for a in names:
        assert list(doc["hessian"][a]) == names
        assert doc["hessian"][a][a] == doc["derivative"][a]  # the diagonal: the pure partials
        for b in names:
            ours = sympy.sympify(doc["hessian"][a][b], locals=symbols)
            theirs = sympy.diff(f, symbols[a], symbols[b])
            assert sympy.simplify(ours - theirs) == 0, (a, b, ours, theirs)
            assert doc["hessian"][a][b] == doc["hessian"][b][a]


def test_diff_hessian_values_at_a_point(cli):
    r = cli("diff", "x**2*y + sin(x*y)", "--hessian", "--x", "1", "--y", "2", "--json")
    doc = r.json
    x, y = sympy.symbols("x y")
    f = x**2 * y + sympy.sin(x * y)
    for a, sa in (("x", x), ("y", y)):
        for b, sb in (("x", x), ("y", y)):
            want = float(sympy.diff(f, sa, sb).subs({x: 1, y: 2}))
            assert doc["hessian_value"][a][b] == pytest.approx(want, rel=1e-12)
    assert list(doc)[:4] == ["expr", "derivative", "order", "hessian"]
    assert list(doc)[-1] == "hessian_value"
    # the same numbers as the engine's hessian command
    h = cli("hessian", "x**2*y + sin(x*y)", "--x", "1", "--y", "2", "--json").json["hessian"]
    for a in ("x", "y"):
        assert doc["hessian_value"][a] == pytest.approx(h[a], rel=1e-12)


def test_diff_order_2_keeps_spec_shape_without_hessian(cli):
    r = cli("diff", "x**2*y", "--order", "2", "--json")
    assert r.json == {"expr": "x**2*y", "derivative": {"x": "2*y", "y": "0"}, "order": 2}
    human = cli("diff", "x**2*y", "--order", "2")
    assert "--hessian" in human.out
    human = cli("diff", "x**2*y", "--hessian", "--x", "1", "--y", "3")
    assert "d^2/dxdy" in human.out and "2*x" in human.out
    latex = cli("diff", "x**2*y", "--hessian", "--latex")
    assert latex.out.splitlines()[-1] == (
        r"\mathbf{H}_f = \begin{pmatrix} 2 y & 2 x \\ 2 x & 0 \end{pmatrix}"
    )


def test_diff_hessian_needs_order_2(cli):
    _error(cli("diff", "x*y", "--hessian", "--order", "3", "--json"), 2, "usage", "--order 2")
    assert cli("diff", "x*y", "--hessian", "--order", "2", "--json").code == 0


def test_library_diff_mixed():
    from autograd_cli.core.symbolic import diff
    from autograd_cli.grammar import parse

    r = diff(parse("x**3*y**2"), order=2, mixed=True, values={"x": 1, "y": 2})
    assert r.hessian_texts() == {
        "x": {"x": "6*x*y**2", "y": "6*x**2*y"},
        "y": {"x": "6*x**2*y", "y": "2*x**3"},
    }
    assert r.hessian_values() == {"x": {"x": 24.0, "y": 12.0}, "y": {"x": 12.0, "y": 2.0}}
    assert r.texts() == {"x": "6*x*y**2", "y": "2*x**3"}
    assert diff(parse("x*y")).hessian is None
    with pytest.raises(InputError):
        diff(parse("x*y"), order=3, mixed=True)


def test_vars_npz_key_that_is_not_a_name(cli, tmp_path):
    np.savez(tmp_path / "bad.npz", **{"1x": [1.0]})
    r = cli("eval", "x", "--vars", f"@{tmp_path / 'bad.npz'}", "--json")
    _error(r, 2, "bad_value", "not a valid variable name")
