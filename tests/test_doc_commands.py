"""Every command the documentation shows is run (README.md, CONTRIBUTING.md,
docs/), and every relative link in it resolves.

A command is a line of a ``console``, ``bash``, ``sh`` or ``shell`` block (a
block whose first line is ``#!`` or ``#SBATCH`` is a script's text, not
commands); ``&&`` joins commands.  Each one is, by its first words:

- ``torchlint ...`` (also ``cat FILE | torchlint ...``): run here, in a
  folder with a small training project, block by block in the order shown;
  it must end with 0 or 1 and no traceback;
- ``python -m torchlint.interfaces.docs ...``: run here, on copies of the
  README and the rule pages;
- ``torchlint verify ...`` and ``python bench/...``: they need torch and
  minutes, a GPU, a cluster or downloaded corpora, or would write into the
  repository (``--record``), so only their arguments are run through their own
  parser (click's, argparse's): an option renamed or a value of the wrong type
  fails here;
- ``pip install``, ``python -m pytest``, ``python -m mypy``: run as written by
  ``.ci/run`` in fresh environments; the test checks that ``.ci/run`` holds the
  very command;
- anything else must be listed in :data:`NOT_RUN` with the reason.
"""

from __future__ import annotations

import argparse
import os
import re
import runpy
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, NoReturn, Optional, Sequence, Set, Tuple

import pytest

from conftest import run_in_process

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\S*)")
SHELL_BLOCKS = ("console", "bash", "sh", "shell")
CI_PREFIXES = (("pip", "install"), ("python", "-m", "pytest"), ("python", "-m", "mypy"))

NOT_RUN: Dict[str, str] = {
    "git clone https://github.com/pytorch-labs/torchfix /tmp/torchfix": "needs the network",
}
"""Commands no test runs, each with the reason."""

PENDING_LINKS = frozenset({
    "docs/measurements-verify.md",
    "docs/measurements-frameworks.md",
    "docs/measurements-program-model.md",
    "docs/measurements-speed.md",
})
"""Pages other branches add; a link to one of these may dangle until they are merged."""

TRAIN = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


def main(dataset, net):
    model = nn.DataParallel(net)
    loader = DataLoader(dataset, batch_size=32)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for batch in loader:
        optimizer.zero_grad()
        model(batch).sum().backward()
        optimizer.step()
    return torch.zeros(3).cuda()


if __name__ == "__main__":
    main(list(range(8)), nn.Linear(1, 1))
"""


def documents() -> List[Path]:
    """The documentation: README, CONTRIBUTING and every page under docs/."""
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _outside_fences(text: str) -> Iterator[Tuple[int, str]]:
    """(line number, line) of the lines that are not inside a fenced block."""
    fence: Optional[str] = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            yield number, line


@dataclass(frozen=True)
class Block:
    """The commands of one shell block, in order."""

    document: Path
    line: int
    commands: Tuple[str, ...]


def shell_blocks(document: Path) -> List[Block]:
    """The shell blocks of a document; a trailing ``\\`` joins lines."""
    blocks: List[Block] = []
    fence: Optional[str] = None
    language, start = "", 0
    body: List[str] = []
    for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence, language, start, body = match.group(1), match.group(2), number, []
        elif fence is not None and line.strip() == fence:
            fence = None
            script = bool(body) and body[0].startswith(("#!", "#SBATCH"))
            if language in SHELL_BLOCKS and not script:
                joined = "\n".join(body).replace("\\\n", " ")
                commands = tuple(c.strip() for c in joined.splitlines() if c.strip())
                blocks.append(Block(document, start, commands))
        elif fence is not None:
            body.append(line)
    return blocks


def simple_commands(line: str) -> List[List[str]]:
    """The words of each command of a line joined by ``&&``, comments dropped."""
    words = shlex.split(line, comments=True)
    commands: List[List[str]] = [[]]
    for word in words:
        if word == "&&":
            commands.append([])
        else:
            commands[-1].append(word)
    return [command for command in commands if command]


def _ci_commands() -> List[List[str]]:
    """The commands .ci/run runs, split as the documents' are (``&&``, ``||``, ``;``)."""
    found: List[List[str]] = []
    for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace("\\\n", " ").splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        current: List[str] = []
        for word in words + ["&&"]:
            if word in ("&&", "||", ";"):
                if current:
                    found.append(current)
                current = []
            else:
                current.append(word.rstrip(";"))
    return found


class _Parsed(Exception):
    """Raised in place of running a script once its arguments have parsed."""


def _parse_bench_arguments(words: Sequence[str]) -> argparse.Namespace:
    """Run ``python bench/X.py ARGS`` up to its ``parse_args``: the script's
    own parser reads the arguments, and nothing else of it runs."""
    script = ROOT / words[1]
    assert script.is_file(), f"{words[1]} does not exist"
    parsed: List[argparse.Namespace] = []
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None) -> NoReturn:
        parsed.append(original(self, args, namespace))
        raise _Parsed

    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [str(script), *words[2:]]
    sys.path.insert(0, str(script.parent))
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
            with pytest.raises(_Parsed):
                runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return parsed[0]


def _parse_torchlint_arguments(words: Sequence[str], cwd: Path) -> None:
    """Parse ``torchlint ARGS`` with the command line's own click parser, without running it."""
    import click

    from torchlint.interfaces import cli

    saved = os.getcwd()
    os.chdir(cwd)
    try:
        with cli.main.make_context("torchlint", list(words[1:]), resilient_parsing=False) as context:
            # click 8.2 keeps every remaining word in ``args``; older releases
            # keep the subcommand and its words in ``protected_args``.
            remaining = [*vars(context).get("_protected_args", vars(context).get("protected_args", [])), *context.args]
            name, command, rest = cli.main.resolve_command(context, remaining)
            assert command is not None, name
            try:
                command.make_context(name or "", rest, parent=context)
            except click.UsageError as error:
                pytest.fail(f"{' '.join(words)}: {error.format_message()}")
    finally:
        os.chdir(saved)


def _project(folder: Path) -> None:
    """A small training project the documented commands lint and fix."""
    for name in ("train.py", "src/train.py", "path/to/script.py"):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TRAIN, encoding="utf-8")


def _all_but_a_few(folder: str, names: List[str]) -> Set[str]:
    """What a copy of fixtures/ leaves out: of each folder's files, all but the
    first two (a rule's example and, where it has one, its ``*.fixed.py``).
    Linting every fixture is tests/test_fixtures.py's work; here the command
    only has to run (and .ci/run runs the quick start on the whole folder)."""
    files = sorted(name for name in names if (Path(folder) / name).is_file())
    return set(files[2:])


def _needs(words: Sequence[str], folder: Path) -> None:
    """Copy into the folder what a command names from the repository."""
    for word in words:
        top = word.split("/", 1)[0]
        if top == "fixtures" and not (folder / "fixtures").exists():
            shutil.copytree(ROOT / "fixtures", folder / "fixtures", ignore=_all_but_a_few)
    if words[:3] == ["python", "-m", "torchlint.interfaces.docs"] and not (folder / "README.md").exists():
        shutil.copy(ROOT / "README.md", folder / "README.md")
        shutil.copytree(ROOT / "docs" / "rules", folder / "docs" / "rules")


def run_block(block: Block, folder: Path, ci: List[List[str]]) -> List[str]:
    """Run (or parse, or find in .ci/run) each command of a block; the problems found."""
    problems: List[str] = []
    where = f"{block.document.relative_to(ROOT)}:{block.line}"
    for line in block.commands:
        if line in NOT_RUN:
            continue
        stdin = ""
        for words in simple_commands(line):
            if "|" in words:
                left, right = words[: words.index("|")], words[words.index("|") + 1 :]
                assert left[0] == "cat" and len(left) == 2, f"{where}: only `cat FILE | ...` pipes are run: {line}"
                stdin = (folder / left[1]).read_text(encoding="utf-8")
                words = right
            _needs(words, folder)
            if any(tuple(words[: len(prefix)]) == prefix for prefix in CI_PREFIXES):
                if words not in ci:
                    problems.append(f"{where}: `{shlex.join(words)}` is not run by .ci/run")
            elif words[:2] == ["torchlint", "verify"]:
                _parse_torchlint_arguments(words, folder)
            elif words[0] == "torchlint":
                result = run_in_process(words[1:], folder, stdin=stdin)
                if result.returncode not in (0, 1) or "Traceback" in result.stderr:
                    problems.append(f"{where}: `{line}` exited {result.returncode}: {result.stderr[-600:]}")
            elif words[:3] == ["python", "-m", "torchlint.interfaces.docs"]:
                from torchlint.interfaces import docs

                saved = os.getcwd()
                os.chdir(folder)
                try:
                    status = docs.main(words[3:])
                finally:
                    os.chdir(saved)
                if status != 0:
                    problems.append(f"{where}: `{line}` exited {status}")
            elif words[0] == "python" and len(words) > 1 and words[1].startswith("bench/"):
                _parse_bench_arguments(words)
            else:
                problems.append(f"{where}: no test runs `{line}` (run it here, or say why in NOT_RUN)")
    return problems


def all_blocks() -> List[Block]:
    return [block for document in documents() for block in shell_blocks(document)]


@pytest.mark.parametrize("block", all_blocks(), ids=lambda b: f"{b.document.relative_to(ROOT)}:{b.line}")
def test_every_command_shown_runs(block: Block, tmp_path: Path) -> None:
    _project(tmp_path)
    assert run_block(block, tmp_path, _ci_commands()) == []


def test_the_quick_start_is_the_readmes_first_block_and_ci_runs_it_as_written() -> None:
    """The two quick-start lines, whole, are lines of .ci/run (in fresh environments)."""
    first = shell_blocks(ROOT / "README.md")[0]
    assert [line.split("&&")[0].strip() for line in first.commands] == ["pip install .", "pip install -e '.[dev]'"]
    ci_text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for line in first.commands:
        assert line in ci_text, line


def test_not_run_lists_only_commands_the_documents_show() -> None:
    shown = {line for block in all_blocks() for line in block.commands}
    assert set(NOT_RUN) <= shown, set(NOT_RUN) - shown


def test_a_command_no_test_knows_is_reported(tmp_path: Path) -> None:
    document = tmp_path / "x.md"
    document.write_text("```console\nmake install\n```\n", encoding="utf-8")
    (block,) = shell_blocks(document)
    problems = run_block(Block(ROOT / "x.md", block.line, block.commands), tmp_path, [])
    assert problems == ["x.md:1: no test runs `make install` (run it here, or say why in NOT_RUN)"]


def test_a_failing_torchlint_command_and_a_command_ci_lacks_are_reported(tmp_path: Path) -> None:
    _project(tmp_path)
    block = Block(ROOT / "x.md", 1, ("torchlint check src/ --no-such-option", "pip install '.[gpu]'"))
    problems = run_block(block, tmp_path, [["pip", "install", ".[dev]"]])
    assert len(problems) == 2
    assert "exited 2" in problems[0] and "is not run by .ci/run" in problems[1]


def test_a_renamed_option_fails_the_parse_of_verify_and_of_a_bench_script(tmp_path: Path) -> None:
    _project(tmp_path)
    with pytest.raises(pytest.fail.Exception):
        _parse_torchlint_arguments(["torchlint", "verify", "--rule", "TL101"], tmp_path)
    with pytest.raises(SystemExit):
        _parse_bench_arguments(["python", "bench/score_labels.py", "--source", "/tmp/x"])


# Links ---------------------------------------------------------------------


def anchors(text: str) -> List[str]:
    """GitHub's anchors for the headings of a Markdown text."""
    seen: Dict[str, int] = {}
    found = []
    for _, line in _outside_fences(text):
        heading = re.match(r"^#{1,6} (.*)$", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.append(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(document: Path) -> List[str]:
    """The relative links of a document whose file or anchor does not exist
    (links inside code spans and fenced blocks are code, not links)."""
    problems = []
    for number, line in _outside_fences(document.read_text(encoding="utf-8")):
        for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "``", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            path, _, anchor = target.partition("#")
            destination = (document.parent / path).resolve() if path else document
            name = f"{document.relative_to(ROOT)}:{number}: {target}"
            if not destination.exists():
                relative = destination.relative_to(ROOT).as_posix() if destination.is_relative_to(ROOT) else ""
                if relative not in PENDING_LINKS:
                    problems.append(f"{name}: no such file")
            elif anchor and destination.suffix == ".md" and anchor not in anchors(destination.read_text(encoding="utf-8")):
                problems.append(f"{name}: no such heading")
    return problems


@pytest.mark.parametrize("document", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(document: Path) -> None:
    assert broken_links(document) == []


def test_the_pending_pages_are_linked_from_measurements() -> None:
    text = (ROOT / "docs" / "measurements.md").read_text(encoding="utf-8")
    for name in PENDING_LINKS:
        assert f"]({Path(name).name})" in text, name


def test_a_broken_link_and_a_missing_heading_are_found(tmp_path: Path) -> None:
    page = ROOT / "docs" / "index.md"
    text = "# Title\n\n[a](usage.md#no-such-heading) [b](nowhere.md) [c](#title) `[d](x.md)`\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "read_text", lambda self, encoding=None: text if self == page else
                      Path.read_bytes(self).decode("utf-8"))
        problems = broken_links(page)
    assert problems == ["docs/index.md:3: usage.md#no-such-heading: no such heading",
                        "docs/index.md:3: nowhere.md: no such file"]


def test_anchors_follow_githubs_rules() -> None:
    text = "# Verify a fix: `torchlint verify`\n## `torchlint verify --slurm`\n## A\n## A\n```\n# not a heading\n```\n"
    assert anchors(text) == ["verify-a-fix-torchlint-verify", "torchlint-verify---slurm", "a", "a-1"]
