"""The Python examples of README.md and docs/*.md run, and print what the text says they print.

The convention every page follows (also in docs/writing_docs.md):

- Every ```python block runs, unless its info string is ```python fragment or its first line is
  ``# fragment``: a fragment shows a piece of code that needs context the page does not give.
- The blocks of one page run in order, in a temporary folder of the page's own, sharing one namespace: a later
  block may use what an earlier one defined. (All pages run in one fresh interpreter, so imports are paid once.)
- Each block is written to a file of its own and run from it, so source lines in the output name that file.
  The file name is the one the text gives when the paragraph right before the block says "save as `X.py`"
  (or "saved as"); otherwise it is ``<page>_<n>.py``.
- When the next fenced block after a python block (with only prose between them) is an ```output block, the
  block's printed output must match it. In the expected text, a line that is just ``...`` stands for any
  number of lines, and ``...`` inside a line for any text on that line (timings, machine-dependent figures);
  trailing spaces do not count.

Run as a script (``python tests/e2e/test_docs_run.py --child SPEC.json``) this file is the child that runs the pages'
blocks, each page in a folder and namespace of its own, and writes what each block printed into a JSON file
next to the spec.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```(\S*)[ \t]*(.*)$")
_SAVE_AS = re.compile(r"save[sd]? (?:this |it )?as `([\w.-]+\.py)`", re.IGNORECASE)


@dataclass
class Block:
    """One ```python block of a page."""

    page: str
    """The page's file name (README.md, docs/compile.md shows as compile.md)."""
    line: int
    """1-based line of the opening fence in the page."""
    filename: str
    """The file the block is saved as and run from."""
    code: str
    expected: str | None
    """The ```output block that follows, or None when the text shows no output."""


def blocks_of(page: Path) -> list[Block]:
    """The runnable python blocks of one page, with their file names and expected output."""
    lines = page.read_text(encoding="utf-8").splitlines()
    fences: list[tuple[int, str, str, list[str], str]] = []  # (line, lang, rest, body, prose before)
    prose: list[str] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            prose.append(lines[i])
            i += 1
            continue
        start, lang, rest = i, m.group(1), m.group(2)
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        fences.append((start + 1, lang, rest, body, "\n".join(prose)))
        prose = []

    blocks = []
    for k, (line, lang, rest, body, before) in enumerate(fences):
        if lang != "python" or rest == "fragment" or (body and body[0].strip() == "# fragment"):
            continue
        last_paragraph = before.strip().split("\n\n")[-1]
        named = _SAVE_AS.search(last_paragraph)
        filename = named.group(1) if named else f"{page.stem.lower()}_{len(blocks) + 1}.py"
        expected = None
        if k + 1 < len(fences) and fences[k + 1][1] == "output":
            expected = "\n".join(fences[k + 1][3])
        blocks.append(Block(page.name, line, filename, "\n".join(body) + "\n", expected))
    return blocks


def matches(expected: str, actual: str) -> bool:
    """Whether `actual` is `expected` with its elisions filled in (see the module docstring)."""
    parts = []
    for line in expected.rstrip().splitlines():
        line = line.rstrip()
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    actual = "".join(line.rstrip() + "\n" for line in actual.rstrip().splitlines())
    return re.fullmatch("".join(parts), actual) is not None


def run_pages(pages: list[Path]) -> dict[str, list[tuple[Block, str, str | None]]]:
    """Run each page's blocks (one fresh folder and namespace per page, all pages in one fresh interpreter, so
    NumPy and graph_lab are imported once); page name -> (block, printed text, traceback or None) per block."""
    blocks = {page.name: blocks_of(page) for page in pages}
    with tempfile.TemporaryDirectory(prefix="graph_lab_docs_") as folder:
        spec = Path(folder) / "spec.json"
        spec.write_text(json.dumps({name: [[b.filename, b.code] for b in page_blocks]
                                    for name, page_blocks in blocks.items()}))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
                   PYTHONIOENCODING="utf-8", PYTHONHASHSEED="0")
        env.pop("GRAPH_LAB_LOGS", None)
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(spec)], cwd=folder,
                              env=env, capture_output=True, text=True, encoding="utf-8", timeout=600)
        results_file = spec.with_suffix(".out.json")
        if not results_file.exists():
            raise AssertionError(f"the docs runner failed:\n{done.stderr}")
        results = json.loads(results_file.read_text())
    return {name: [(block, printed, error) for block, (printed, error) in zip(blocks[name], results.get(name, []))]
            for name in blocks}


def _child(spec_path: str) -> None:
    """Run each page's blocks from their own files, in order, in one namespace per page; a block that raises does
    not stop the next (so one failure does not hide the state of the rest of the page)."""
    spec = json.loads(Path(spec_path).read_text())
    results: dict[str, list] = {}
    home = Path.cwd()
    for page, blocks in spec.items():
        folder = home / page.replace(".", "_")
        folder.mkdir()
        os.chdir(folder)
        namespace: dict = {"__name__": "__main__"}
        results[page] = []
        for filename, code in blocks:
            path = folder / filename
            path.write_text(code, encoding="utf-8")
            printed = io.StringIO()
            error = None
            try:
                with redirect_stdout(printed):
                    exec(compile(code, str(path), "exec"), namespace)
            except BaseException:  # noqa: BLE001 -- a block's failure is reported, not raised
                error = traceback.format_exc()
            results[page].append([printed.getvalue(), error])
    os.chdir(home)
    Path(spec_path).with_suffix(".out.json").write_text(json.dumps(results))


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    _child(sys.argv[2])
else:
    import pytest

    @pytest.fixture(scope="module")
    def page_results():
        return run_pages(PAGES)

    @pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
    def test_page_examples_run_and_print_what_the_text_shows(page: Path, page_results):
        results = page_results[page.name]
        problems = []
        for block, printed, error in results:
            where = f"{block.page}:{block.line} ({block.filename})"
            if error:
                problems.append(f"{where} raised:\n{error}")
            elif block.expected is not None and not matches(block.expected, printed):
                problems.append(f"{where} printed:\n{printed}\n--- but the text shows:\n{block.expected}")
        if len(results) != len(blocks_of(page)) and not problems:
            problems.append(f"{len(blocks_of(page)) - len(results)} block(s) of {page.name} did not run")
        assert not problems, "\n\n".join(problems)

    def test_elisions():
        assert matches("a\n...\nd", "a\nb\nc\nd\n")
        assert matches("a\n...\nd", "a\nd")
        assert matches("took ... ms, 2 graphs", "took 0.61 ms, 2 graphs")
        assert not matches("took ... ms, 2 graphs", "took 0.61 ms, 3 graphs")
        assert not matches("a\nb", "a\nb\nc")
        assert not matches("a\n...\nd", "a\nb\nc")
        assert matches("x  \ny", "x\ny  \n")

    def test_save_as_names_the_file(tmp_path):
        page = tmp_path / "page.md"
        page.write_text("Save this as `demo.py`:\n\n```python\nprint(1)\n```\n\nprints\n\n```output\n1\n```\n\n"
                        "```python fragment\nundefined_name\n```\n\n```python\n# fragment\nundefined\n```\n\n"
                        "```python\nprint(2)\n```\n")
        blocks = blocks_of(page)
        assert [(b.filename, b.expected) for b in blocks] == [("demo.py", "1"), ("page_2.py", None)]
