"""Every fenced block of README.md and docs/*.md runs, and what it shows is what it prints.

How a page's blocks are read (the rules a writer of the docs follows):

- ```` ```python ```` with `>>>` prompts is a doctest (the stdlib `doctest` module, ELLIPSIS
  on): each result is compared with the line under it.
- ```` ```python ```` without prompts is a script.  If a ```` ```text ```` block follows it, with
  only blank lines between, that block is exactly what the script prints; if none follows, the
  script must print nothing.
- ```` ```console ```` holds shell commands after `$ ` (a line ending in `\\` goes on), each
  followed by what it prints, standard output and error together, compared exactly.  Every
  command must exit with 0: a page that shows a failure writes `; echo "exit $?"`.
- ```` ```bash ```` is a script whose output is not shown; it must exit with 0.
- `<!-- needs: pyarrow dask -->` on the line before a fence: the block runs when those modules
  import (and are not declared absent with `--without`), else its case skips, saying why.
- `<!-- not run: REASON -->` on the line before a fence: the block is not run (an install line,
  an engine that is not installed here) and its case skips with the reason, so every block not
  run is counted in pytest's summary.  Any other fence fails `test_every_block_is_read`.

A page runs like a notebook: its blocks in order, in one Python process (one namespace for its
Python blocks) and one fresh directory holding `examples/` (the bundled answers), `logs.jsonl`
and, with pyarrow, `logs.parquet` (both made below).  `citemark` and `python` on the PATH are
the interpreter running the tests.  Each page runs once per implementation, with
`CITEMARK_IMPLEMENTATION` set, so the docs hold on the compiled kernel and on the pure twin.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_LIMIT = 10_000
# The README's first two blocks, verbatim: people paste them, and CI runs the second.
FIRST_COMMANDS = (
    "python -m pip install . && citemark extract examples/answer.txt"
    " && citemark clean examples/answer.txt",
    'python -m pip install ".[test]" && python -m pytest -n auto',
)

FENCE = re.compile(r"^(\s*)```(.*)$")
NOTE = re.compile(r"^<!--\s*(not run|needs):\s*(.*?)\s*-->$")
RUN = frozenset({"python", "console", "bash"})

# The log the pages show with `cat logs.jsonl`: what a response log looks like.
LOG_ROWS = [
    {
        "id": "resp_1",
        "response": {
            "output_text": "Panels lose about 0.5% of their output a year."
            "\ue200cite\ue202turn0search0\ue202turn0search3\ue201"
        },
    },
    {
        "id": "resp_2",
        "response": {
            "output_text": "Warranties cover 80% after 25 years,"
            "\ue200cite\ue202turn0file1\ue202L8-L13\ue201 though terms vary."
            "\ue200cite\ue202turn1news2\ue201"
        },
    },
    {
        "id": "resp_3",
        "response": {
            "output_text": 'See \ue200entity\ue202["company","Acme Solar","installer"]\ue201'
            " for a quote. citeturn0search7"
        },
    },
]


@dataclass
class Block:
    page: str  # relative to the repository: "README.md", "docs/clean.md"
    line: int  # the opening fence's line, from 1
    lang: str
    source: str
    expected: str | None = None  # what it prints (a script's text block)
    needs: list[str] = field(default_factory=list)
    not_run: str | None = None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def read_page(path: Path) -> tuple[list[Block], list[str]]:
    """The page's blocks (an output block joined to its script) and the problems found."""
    page = path.relative_to(ROOT).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    problems: list[str] = []
    after_script = False  # only blank lines since a script block closed
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            after_script = after_script and not lines[i].strip()
            i += 1
            continue
        indent, lang = opening.group(1), opening.group(2).strip()
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            problems.append(f"{page}:{start + 1}: a fence that never closes")
            break
        i += 1
        source = "".join(f"{line}\n" for line in body)
        where = f"{page}:{start + 1}"
        if indent:
            problems.append(f"{where}: a fence must start its line (no indent)")
        if lang == "text" and after_script:
            blocks[-1].expected = source
            after_script = False
            continue
        block = Block(page, start + 1, lang, source)
        note = NOTE.match(lines[start - 1].strip()) if start else None
        if note is not None and note.group(1) == "not run":
            block.not_run = note.group(2)
            if not block.not_run:
                problems.append(f"{where}: `not run` without a reason")
        elif note is not None:
            block.needs = note.group(2).split()
        if block.not_run is None and lang not in RUN:
            problems.append(
                f"{where}: a ```{lang} block is neither run nor marked "
                "<!-- not run: REASON --> (a text block shows output right after a script)"
            )
        after_script = block.not_run is None and lang == "python" and ">>>" not in source
        blocks.append(block)
    return blocks, problems


def read_pages() -> tuple[list[Block], list[str]]:
    blocks: list[Block] = []
    problems: list[str] = []
    for path in PAGES:
        found, wrong = read_page(path)
        blocks += found
        problems += wrong
    return blocks, problems


BLOCKS, PROBLEMS = read_pages()
RUNNABLE = [block for block in BLOCKS if block.not_run is None and block.lang in RUN]
NOT_RUN = [block for block in BLOCKS if block.not_run is not None]


def run_page(request_file: str, result_file: str) -> None:
    """Run one page's blocks in order and write one result a block (in a fresh interpreter).

    Self-contained: the test hands its source to `python -c`, so it imports what it uses."""
    import contextlib
    import difflib
    import doctest
    import importlib.util
    import io
    import json
    import os
    import subprocess
    import traceback

    with open(request_file, encoding="utf-8") as file:
        request = json.load(file)
    results: dict[str, dict[str, str]] = {}
    namespace: dict[str, object] = {"__name__": "__main__"}

    def shell(command: str) -> tuple[int, str]:
        # Its own process group: a command that outlives its time (a server) goes with all
        # it started, not only the shell.
        with subprocess.Popen(
            ["bash", "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        ) as process:
            try:
                output, _ = process.communicate(timeout=300)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                output, _ = process.communicate()
                return -9, output + "\n(timed out after 300 s)"
        return process.returncode, output

    def console(source: str) -> str | None:
        commands: list[list[str]] = []  # [command, output lines...]
        continued = False
        for line in source.splitlines():
            if continued:
                commands[-1][0] += "\n" + line
            elif line.startswith("$ "):
                commands.append([line[2:]])
            elif commands:
                commands[-1].append(line)
            else:
                return f"output before the first command: {line!r}"
            continued = len(commands[-1]) == 1 and line.endswith("\\")
        for command, *shown in commands:
            code, output = shell(command)
            expected = "".join(f"{line}\n" for line in shown)
            if code != 0:
                return f"$ {command}\nexit code {code}; it printed:\n{output}"
            problem = compare(expected, output)
            if problem:
                return f"$ {command}\n{problem}"
        return None

    def python(block: dict[str, str], name: str) -> str | None:
        source = block["source"]
        if ">>>" in source:
            test = doctest.DocTestParser().get_doctest(
                source, namespace, name, block["page"], int(block["line"])
            )
            report = io.StringIO()
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            failed, _ = runner.run(test, out=report.write, clear_globs=False)
            namespace.update(test.globs)
            return report.getvalue() if failed else None
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(source, name, "exec"), namespace)
        return compare(block["expected"] or "", printed.getvalue())

    def compare(shown: str, printed: str) -> str | None:
        if printed == shown:
            return None
        lines = difflib.unified_diff(
            shown.splitlines(keepends=True), printed.splitlines(keepends=True), "shown", "printed"
        )
        # A last line without its line break is named, as diff does.
        return "".join(
            line if line.endswith("\n") else f"{line}\n\\ no line break\n" for line in lines
        )

    import citemark

    chosen = os.environ["CITEMARK_IMPLEMENTATION"]
    for block in request["blocks"]:
        name = f"{block['page']}:{block['line']}"
        missing = [
            module
            for module in block["needs"]
            if module in request["without"] or importlib.util.find_spec(module) is None
        ]
        if missing:
            results[name] = {"status": "skip", "message": f"needs {', '.join(missing)}"}
            continue
        try:
            if chosen != citemark.IMPLEMENTATION:
                problem: str | None = f"citemark.IMPLEMENTATION is {citemark.IMPLEMENTATION}"
            elif block["lang"] == "python":
                problem = python(block, name)
            elif block["lang"] == "console":
                problem = console(block["source"])
            else:
                code, output = shell("set -e\n" + block["source"])
                problem = f"exit code {code}; it printed:\n{output}" if code else None
        except Exception:
            problem = traceback.format_exc()
        results[name] = {"status": "fail" if problem else "ok", "message": problem or ""}
    with open(result_file, "w", encoding="utf-8") as file:
        json.dump(results, file)


def make_inputs(where: Path) -> None:
    """The files a page's directory starts with."""
    shutil.copytree(ROOT / "examples", where / "examples")
    with (where / "logs.jsonl").open("w", encoding="utf-8") as log:
        log.writelines(json.dumps(row) + "\n" for row in LOG_ROWS)
    if importlib.util.find_spec("pyarrow") is not None:
        pa = importlib.import_module("pyarrow")
        parquet = importlib.import_module("pyarrow.parquet")
        table = pa.table(
            {
                "id": [row["id"] for row in LOG_ROWS],
                "output_text": [row["response"]["output_text"] for row in LOG_ROWS],
            }
        )
        parquet.write_table(table, where / "logs.parquet")


class Pages:
    """The run of every page on each implementation, started together, waited for on demand.

    Under pytest-xdist every worker collects these tests and any may be sent some of them:
    `shared` is then a directory of the whole session, where each page's run is claimed by
    the first worker to start it (a file made with O_EXCL) and its results left for the
    others, so no page runs twice."""

    def __init__(self, base: Path, without: list[str], shared: Path | None = None) -> None:
        self.base = base
        self.without = without
        self.shared = shared
        self.inputs = base / "inputs"
        make_inputs(self.inputs)
        self.bin = base / "bin"
        self.bin.mkdir()
        for name, command in (("citemark", "-m citemark"), ("python", "")):
            script = self.bin / name
            script.write_text(f'#!/bin/sh\nexec "{sys.executable}" {command} "$@"\n')
            script.chmod(0o755)
        self.pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
        # None: another worker runs that page (see `shared`)
        self.runs: dict[str, Future[dict[str, dict[str, str]]] | None] = {}

    def start(self, *implementations: str) -> None:
        # The longest pages first, so that the short ones fill the gaps at the end.
        pages = sorted(
            {block.page for block in RUNNABLE}, key=lambda page: -(ROOT / page).stat().st_size
        )
        for page in pages:
            for implementation in implementations:
                key = f"{implementation}:{page}"
                if key in self.runs:
                    continue
                if self.shared is not None and not self.claim(implementation, page):
                    self.runs[key] = None
                    continue
                self.runs[key] = self.pool.submit(self.run, implementation, page)

    def result(self, implementation: str, block: Block) -> dict[str, str]:
        self.start(implementation)
        run = self.runs[f"{implementation}:{block.page}"]
        found = run.result() if run is not None else self.wait(implementation, block.page)
        return found[block.id]

    def claim(self, implementation: str, page: str) -> bool:
        """Whether this worker is the one to run the page (under pytest-xdist)."""
        assert self.shared is not None
        flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
        try:
            os.close(os.open(self.shared / f"{page_name(implementation, page)}.claim", flags))
        except FileExistsError:
            return False
        return True

    def wait(self, implementation: str, page: str) -> dict[str, dict[str, str]]:
        """The results of a page another worker runs."""
        assert self.shared is not None
        path = self.shared / f"{page_name(implementation, page)}.json"
        deadline = time.monotonic() + 660  # the page's own run is bounded at 600 s
        while not path.exists():
            if time.monotonic() > deadline:
                pytest.fail(f"no results for {implementation}:{page} from the worker running it")
            time.sleep(0.05)
        found: dict[str, dict[str, str]] = json.loads(path.read_text(encoding="utf-8"))
        return found

    def run(self, implementation: str, page: str) -> dict[str, dict[str, str]]:
        found = self.run_here(implementation, page)
        if self.shared is not None:  # for the other workers: written whole, then renamed
            path = self.shared / f"{page_name(implementation, page)}.json"
            partial = path.with_suffix(".partial")
            partial.write_text(json.dumps(found), encoding="utf-8")
            partial.replace(path)
        return found

    def run_here(self, implementation: str, page: str) -> dict[str, dict[str, str]]:
        name = page_name(implementation, page)
        work = self.base / name
        shutil.copytree(self.inputs, work)
        request = self.base / f"{name}.request.json"
        result = self.base / f"{name}.result.json"
        blocks = [asdict(block) for block in RUNNABLE if block.page == page]
        request.write_text(json.dumps({"blocks": blocks, "without": self.without}))
        env = dict(os.environ, CITEMARK_IMPLEMENTATION=implementation)
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env.pop("COLUMNS", None)  # help texts and tables wrap as on a plain terminal
        code = textwrap.dedent(inspect.getsource(run_page))
        code += f"\nrun_page({str(request)!r}, {str(result)!r})\n"
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0 or not result.exists():
            message = f"the page's run failed ({done.returncode}):\n{done.stdout}{done.stderr}"
            return {block["page"] + f":{block['line']}": {"status": "fail", "message": message}
                    for block in blocks}  # fmt: skip
        found: dict[str, dict[str, str]] = json.loads(result.read_text())
        return found


def page_name(implementation: str, page: str) -> str:
    return f"{implementation}-{page.replace('/', '-')}"


@pytest.fixture(scope="module")
def pages(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Pages]:
    shared = None
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # A worker's base directory is popen-gwN in the session's, which all workers share.
        shared = tmp_path_factory.getbasetemp().parent / "docs-pages"
        shared.mkdir(exist_ok=True)
    made = Pages(tmp_path_factory.mktemp("docs"), request.config.getoption("--without"), shared)
    # Every page of every implementation selected starts now, so the runs overlap.
    chosen: dict[str, None] = {}  # in order, once each
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if item.path == request.path and callspec is not None:
            implementation = callspec.params.get("implementation")
            if implementation is not None:
                chosen[implementation] = None
    made.start(*chosen)
    yield made
    made.pool.shutdown(wait=True)


@pytest.mark.parametrize("block", RUNNABLE, ids=[block.id for block in RUNNABLE])
def test_block(block: Block, implementation: str, pages: Pages) -> None:
    result = pages.result(implementation, block)
    if result["status"] == "skip":
        pytest.skip(f"{block.id}: {result['message']}")
    assert result["status"] == "ok", result["message"]


@pytest.mark.parametrize("block", NOT_RUN, ids=[block.id for block in NOT_RUN])
def test_not_run(block: Block) -> None:
    pytest.skip(f"{block.id}: not run: {block.not_run}")


def test_every_block_is_read() -> None:
    assert PROBLEMS == []
    assert RUNNABLE, "no block found to run"


def test_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_bytes()
    assert len(readme) <= README_LIMIT, f"README.md is {len(readme)} bytes"
    first = [block.source.strip() for block in BLOCKS if block.page == "README.md"][:2]
    assert tuple(first) == FIRST_COMMANDS
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", readme.decode()))
    pages = {path.relative_to(ROOT).as_posix() for path in PAGES[1:]}
    assert pages <= linked, f"docs pages the README does not link: {sorted(pages - linked)}"


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_local_links_resolve() -> None:
    broken = []
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        prose = re.sub(r"^```.*?^```$|`[^`\n]*`", "", text, flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue
            name, _, anchor = target.partition("#")
            linked = (path.parent / name).resolve() if name else path
            if not linked.exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
            elif anchor and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.*)$", linked.read_text(encoding="utf-8"), re.M)
                if anchor not in {slug(heading) for heading in headings}:
                    broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_internals_names_every_public_module() -> None:
    """The layer map names each public module and each layer."""
    text = (ROOT / "docs" / "internals.md").read_text(encoding="utf-8")
    package = ROOT / "src" / "citemark"
    public = [path.name for path in package.glob("*.py") if not path.name.startswith("_")]
    layers = [path.name for path in package.iterdir() if (path / "__init__.py").exists()]
    missing = [name for name in public + layers if not re.search(rf"\b{name}\b", text)]
    assert missing == []
