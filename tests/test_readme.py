"""Every `$ autograd-cli ...` example in the README and in docs/*.md runs and prints what the
page shows.

So does every ```python block (each a doctest, run on its own) and every ```text block of a
`repl` session (`> ` lines typed, then what `repl --json` prints).  And every relative link
between these pages (and ARCHITECTURE.md) points to a file that exists and, with a #fragment,
to one of its headings (GitHub's anchors).
"""

from __future__ import annotations

import doctest
import io
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _blocks(page: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def _examples():
    for page in PAGES:
        for block in _blocks(page, "console"):
            command, expected = None, []
            for line in block.splitlines():
                if line.startswith("$ "):
                    if command is not None:
                        yield _name(page), command, expected
                    command, expected = line[2:], []
                else:
                    expected.append(line)
            if command is not None:
                yield _name(page), command, expected


EXAMPLES = list(_examples())


def test_the_pages_have_examples():
    pages = {page for page, _, _ in EXAMPLES}
    assert len([e for e in EXAMPLES if e[0] == "README.md"]) >= 8
    # every command's page shows it at work
    for page in ("commands.md", "analyses.md", "batch.md", "usage.md"):
        assert f"docs/{page}" in pages, page


@pytest.mark.parametrize(
    "page, command, expected", EXAMPLES, ids=[f"{p}: {c}" for p, c, _ in EXAMPLES]
)
def test_readme_example(cli, monkeypatch, page, command, expected):
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.chdir(ROOT)  # examples refer to files like examples/points.csv
    argv = shlex.split(command)
    assert argv[0] == "autograd-cli"
    r = cli(*argv[1:])
    shown = [line.rstrip() for line in (r.out + r.err).splitlines()]
    assert shown == [line.rstrip() for line in expected]


PYTHON_BLOCKS = [
    (_name(page), i, block) for page in PAGES for i, block in enumerate(_blocks(page, "python"))
]


def test_the_pages_have_library_examples():
    assert [p for p, _, _ in PYTHON_BLOCKS].count("README.md") >= 1
    assert [p for p, _, _ in PYTHON_BLOCKS].count("docs/library.md") >= 2


@pytest.mark.parametrize(
    "page, block",
    [(p, b) for p, _, b in PYTHON_BLOCKS],
    ids=[f"{p}: python-{i}" for p, i, _ in PYTHON_BLOCKS],
)
def test_readme_python_example(page, block):
    test = doctest.DocTestParser().get_doctest(block, {}, page, str(ROOT / page), 0)
    assert test.examples, f"a python block of {page} without >>> examples"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


SESSIONS = [
    (_name(page), block)
    for page in PAGES
    for block in _blocks(page, "text")
    if block.startswith("> ")
]


def test_the_pages_show_a_session():
    assert {page for page, _ in SESSIONS} >= {"README.md", "docs/commands.md"}


@pytest.mark.parametrize(
    "page, block", SESSIONS, ids=[f"{p}: repl-{i}" for i, (p, _) in enumerate(SESSIONS)]
)
def test_readme_repl_session(cli, monkeypatch, page, block):
    """A ```text block of `> ` lines, a blank line, then what `repl --json` prints for them."""
    typed, _, expected = block.partition("\n\n")
    lines = [line.removeprefix("> ") for line in typed.splitlines()]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    r = cli("repl", "--json")
    assert r.code == 0, r.err
    assert r.out.splitlines() == expected.splitlines()


# ---- links ------------------------------------------------------------------------------------


def _outside_code(text: str) -> str:
    """The page without its fenced blocks and inline code (where `#` and `[..](..)` are text)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(page: Path) -> Iterator[str]:
    """The #fragments GitHub makes of a page's headings: the heading's text, lower case, with
    every character that is not a letter, digit, `_`, `-` or space dropped and each space made
    a `-`; a repeated slug gets `-1`, `-2`, ... (github-slugger)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *#* *$", text, flags=re.M):
        heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        yield slug if count == 0 else f"{slug}-{count}"


def _links():
    for page in [*PAGES, ROOT / "ARCHITECTURE.md"]:
        for target in re.findall(r"\]\(([^)\s]+)\)", _outside_code(page.read_text("utf-8"))):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):  # not https:, mailto:, ...
                yield _name(page), target


LINKS = list(dict.fromkeys(_links()))  # each link once per page


def test_the_pages_link_to_each_other():
    assert len(LINKS) >= 40
    linked = {(ROOT / page).parent.joinpath(t.split("#")[0]).resolve() for page, t in LINKS}
    for page in PAGES[1:]:  # every docs page is reachable
        assert page.resolve() in linked, _name(page)


@pytest.mark.parametrize("page, target", LINKS, ids=[f"{p}: {t}" for p, t in LINKS])
def test_relative_link(page, target):
    path, _, fragment = target.partition("#")
    file = (ROOT / page).parent / path if path else ROOT / page
    assert file.exists(), f"{page} links to {target}: no such file"
    if fragment:
        assert file.suffix == ".md", f"{page} links to {target}: a #fragment of a non-page"
        assert fragment in set(anchors(file)), f"{page} links to {target}: no such heading"


def test_anchors_follow_githubs_rule(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A title\n\n## eval: the value\n\n### `batch -o FILE` never leaves\n\n"
        "## Usage\n\n## Usage\n\n```sh\n# not a heading\n```\n\n## minimize, solve, critical\n",
        encoding="utf-8",
    )
    assert list(anchors(page)) == [
        "a-title",
        "eval-the-value",
        "batch--o-file-never-leaves",
        "usage",
        "usage-1",
        "minimize-solve-critical",
    ]


def test_architectures_files_and_example_row_are_todays():
    # ARCHITECTURE.md names the modules a newcomer opens and shows erfcx's table row: both
    # must be the code's, not last year's layout.
    text = (ROOT / "ARCHITECTURE.md").read_text("utf-8")
    row = next(line.strip() for line in text.splitlines() if line.strip().startswith("_unary("))
    table = (ROOT / "core" / "ops" / "elementwise.py").read_text("utf-8")
    assert row in table.splitlines()
    paths = re.findall(r"`((?:cli|core|grammar|facade)/[\w/]+\.py)", text)
    assert len(paths) >= 10
    for path in paths:
        assert (ROOT / path).is_file(), path
