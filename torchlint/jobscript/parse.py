"""Read a batch script: the ``#SBATCH`` block and the commands that launch Python.

The supported shell subset (README, "On a Slurm cluster"): one command per
line or per ``;``/``&&``/``||``, ``\\`` line continuations, single and double
quotes, ``NAME=value`` and ``export NAME=value`` (also as a prefix of a
command), ``$NAME``/``${NAME}``/``${NAME:-default}`` of variables set earlier
in the script plus ``$SLURM_SUBMIT_DIR``, and ``cd DIR``.  Relative paths are
resolved from the script's own folder (sbatch runs the job in the folder it
was submitted from, which is assumed to be the script's).  Anything else
(functions, loops, ``$(...)``) is skipped, the bodies of here-documents
and quoted strings that span lines are text, not commands, and a launch
whose file cannot be known is kept with ``target=None``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from torchlint.jobscript.model import Directive, JobScript, Launch, Launcher, Resources, Span, Word
from torchlint.source.sourcefile import SourceError, is_regular_file, read_head

SUFFIXES = (".sh", ".slurm", ".sbatch", ".job")
# A line starting with ``#SBATCH``; lines end at "\n", "\r\n" or a lone "\r" (old Mac endings).
_DIRECTIVE_LINE = re.compile(r"(?:^|(?<=\r))#SBATCH(?=\s)", re.MULTILINE)
_HEAD_BYTES = 64 * 1024

# #SBATCH short options and the long ones they stand for.
_SHORT = {"N": "nodes", "n": "ntasks", "c": "cpus-per-task", "G": "gpus", "t": "time", "p": "partition",
          "A": "account", "J": "job-name", "o": "output", "e": "error"}
_SBATCH_FLAGS = frozenset({"exclusive", "requeue", "no-requeue", "hold", "wait", "test-only", "parsable",
                           "overcommit", "contiguous", "spread-job", "use-min-nodes", "O", "H", "W", "Q", "v"})


def has_directives(text: str) -> bool:
    """Whether the text has an ``#SBATCH`` line (what makes it a batch script)."""
    return _DIRECTIVE_LINE.search(text) is not None


def is_job_script_file(path: Path) -> bool:
    """A ``*.sh``/``*.slurm``/``*.sbatch``/``*.job`` file with ``#SBATCH`` lines
    in its first 64 KiB (what discovery picks up in folders)."""
    if not path.name.endswith(SUFFIXES):
        return False
    try:
        head = read_head(path, _HEAD_BYTES)
    except SourceError:
        return False
    return has_directives(head.decode("utf-8", "replace"))


# -- lines and words ---------------------------------------------------------

_SEPARATORS = (";", "&&", "||", "|", "&")
_VARIABLE = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z_0-9]*)(?::?-(?P<default>[^}]*))?\}|(?P<plain>[A-Za-z_][A-Za-z_0-9]*))")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*=")


class _Line:
    """One logical line (continuations joined) with each character's offset."""

    def __init__(self, text: str, offsets: List[int], line: int) -> None:
        self.text = text
        self.offsets = offsets
        self.line = line

    def span(self, start: int, end: int) -> Span:
        end_offset = self.offsets[end - 1] + 1 if end > start else self.offsets[start]
        return Span(self.offsets[start], end_offset, self.line)


def _logical_lines(text: str) -> Iterator[_Line]:
    """The script's commands, one logical line each: ``\\`` continuations
    joined, a quoted string that spans lines kept in one line, and the bodies
    of here-documents (``<<EOF`` ... ``EOF``) left out, since their lines are
    text, not commands."""
    chars: List[str] = []
    offsets: List[int] = []
    start_line = line = 1
    index, size = 0, len(text)
    quote = ""  # the open quote mark, "" outside quotes
    comment = False
    arithmetic = 0  # open $(( ... )): a << in there shifts bits
    heredocs: List[Tuple[str, bool]] = []

    def take(position: int) -> None:
        chars.append(text[position])
        offsets.append(position)

    while index < size:
        char = text[index]
        if char == "\\" and quote != "'" and not comment:
            if text.startswith("\r\n", index + 1):
                index += 3
                line += 1
                continue
            if index + 1 < size and text[index + 1] in "\r\n":
                index += 2
                line += 1
                continue
            take(index)
            if index + 1 < size:
                take(index + 1)
            index += 2
            continue
        if char in "\r\n":
            end = index + 2 if text.startswith("\r\n", index) else index + 1
            if quote:  # a quoted string going on below: one word, one line
                for position in range(index, end):
                    take(position)
                index, line = end, line + 1
                continue
            yield _Line("".join(chars), offsets + [index], start_line)
            chars, offsets = [], []
            comment, arithmetic = False, 0
            index, line = end, line + 1
            if heredocs:
                index, line = _after_heredocs(text, index, line, heredocs)
                heredocs = []
            start_line = line
            continue
        if comment:
            pass
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (not chars or chars[-1] in " \t;&|()<>"):
            comment = True
        elif text.startswith("$((", index):
            arithmetic += 1
        elif arithmetic and text.startswith("))", index):
            arithmetic -= 1
        elif not arithmetic and text.startswith("<<", index) and not text.startswith("<<<", index) and \
                (index == 0 or text[index - 1] != "<"):
            found = _heredoc_delimiter(text, index + 2)
            if found is not None:
                heredocs.append(found)
        take(index)
        index += 1
    if chars:
        yield _Line("".join(chars), offsets + [len(text)], start_line)


def _heredoc_delimiter(text: str, index: int) -> Optional[Tuple[str, bool]]:
    """The word ending the here-document whose ``<<`` ends at ``index``, with
    quotes removed, and whether its body's leading tabs are stripped (``<<-``)."""
    strip = text.startswith("-", index)
    index += strip
    while index < len(text) and text[index] in " \t":
        index += 1
    word: List[str] = []
    quote = ""
    while index < len(text):
        char = text[index]
        if quote:
            if char == quote:
                quote = ""
            else:
                word.append(char)
        elif char in "'\"":
            quote = char
        elif char == "\\" and index + 1 < len(text):
            index += 1
            word.append(text[index])
        elif char in " \t\r\n;&|<>()":
            break
        else:
            word.append(char)
        index += 1
    return ("".join(word), strip) if word else None


def _after_heredocs(text: str, index: int, line: int, heredocs: List[Tuple[str, bool]]) -> Tuple[int, int]:
    """Where the script goes on after the bodies of ``heredocs`` that start
    at ``index`` (on line ``line``): each body ends at a line that is its
    word alone."""
    for word, strip in heredocs:
        while index < len(text):
            end = index
            while end < len(text) and text[end] not in "\r\n":
                end += 1
            body = text[index:end]
            index = end + 2 if text.startswith("\r\n", end) else min(end + 1, len(text))
            line += 1
            if (body.lstrip("\t") if strip else body) == word:
                break
    return index, line


_RawWord = Tuple[str, bool, int, int]  # text with quote marks removed, whether any part was quoted, start, end


def _split_commands(line: _Line) -> List[List[_RawWord]]:
    """Words of each command on the line; quotes kept as markers for expansion."""
    commands: List[List[_RawWord]] = [[]]
    text = line.text
    index = 0
    while index < len(text):
        char = text[index]
        if char in " \t":
            index += 1
            continue
        if char == "#":
            break
        separator = next((s for s in sorted(_SEPARATORS, key=len, reverse=True) if text.startswith(s, index)), None)
        if separator is not None:
            commands.append([])
            index += len(separator)
            continue
        start = index
        pieces: List[str] = []
        quoted = False
        while index < len(text) and text[index] not in " \t;&|":
            char = text[index]
            if char == "'":
                close = text.find("'", index + 1)
                close = len(text) if close < 0 else close
                pieces.append("\x00'" + text[index + 1:close] + "\x00")
                quoted = True
                index = close + 1
            elif char == '"':
                close = index + 1
                while close < len(text) and text[close] != '"':
                    close += 2 if text[close] == "\\" else 1
                pieces.append(text[index + 1:min(close, len(text))])
                quoted = True
                index = close + 1
            elif char == "\\" and index + 1 < len(text):
                pieces.append("\x00'" + text[index + 1] + "\x00")
                index += 2
            else:
                pieces.append(char)
                index += 1
        commands[-1].append(("".join(pieces), quoted, start, min(index, len(text))))
    return [command for command in commands if command]


MAX_WORD = 4096
"""A word that expands to more characters than this is unknown (``None``):
no path or option is that long, and a script doubling a variable forty times
(``A=$A$A``) would otherwise grow without bound."""


def _expand(raw: str, variables: Dict[str, Optional[str]]) -> Optional[str]:
    """Expand ``$NAME`` outside single quotes; None when a value is unknown
    or the word grows past :data:`MAX_WORD` characters."""
    out: List[str] = []
    size = 0
    for number, part in enumerate(raw.split("\x00")):
        if number % 2 == 1 and part.startswith("'"):
            out.append(part[1:])
            size += len(part) - 1
            continue
        if "$(" in part or "`" in part:
            return None
        position = 0
        for match in _VARIABLE.finditer(part):
            name = match.group("braced") or match.group("plain")
            value = variables.get(name)
            if value is None and match.group("default") is not None and name not in variables:
                value = match.group("default")
            if value is None:
                return None
            out.append(part[position:match.start()])
            out.append(value)
            size += match.start() - position + len(value)
            if size > MAX_WORD:
                return None
            position = match.end()
        out.append(part[position:])
        size += len(part) - position
    return "".join(out) if size <= MAX_WORD else None


# -- #SBATCH directives ------------------------------------------------------


def _directive_options(words: Sequence[str]) -> Iterator[Tuple[str, str]]:
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word.startswith("--"):
            name, equals, value = word[2:].partition("=")
            if not equals and name not in _SBATCH_FLAGS and index < len(words):
                value = words[index]
                index += 1
            yield name, value
        elif word.startswith("-") and len(word) >= 2:
            letter, rest = word[1], word[2:]
            name = _SHORT.get(letter, letter)
            if not rest and letter not in _SBATCH_FLAGS and index < len(words):
                rest = words[index]
                index += 1
            yield name, rest.lstrip("=")


def _directives(text: str) -> Tuple[Directive, ...]:
    """The ``#SBATCH`` lines before the first command, as sbatch reads them."""
    found: List[Directive] = []
    offset = 0
    for number, raw in enumerate(text.splitlines(keepends=True), start=1):
        line = raw.rstrip("\r\n")
        stripped = line.strip()
        start = offset
        offset += len(raw)
        if number == 1 and stripped.startswith("#!"):
            continue
        if not stripped or (stripped.startswith("#") and not line.startswith("#SBATCH")):
            continue
        if not line.startswith("#SBATCH"):
            break  # the first command ends the block
        body = line[len("#SBATCH"):]
        if body and body[0] not in " \t":
            continue
        comment = re.search(r"\s#", body)
        options = (body[:comment.start()] if comment else body).rstrip()
        words = options.split()
        span = Span(start, start + len("#SBATCH") + len(options), number)
        found.extend(Directive(name, value, span) for name, value in _directive_options(words))
    return tuple(found)


def _is_number(text: str) -> bool:
    """ASCII digits only: ``str.isdigit`` also takes ``²`` and ``٣``, which
    Slurm does not read as counts (and ``int`` refuses the first)."""
    return text.isascii() and text.isdigit()


def _count(value: str) -> Optional[int]:
    """``4`` or ``a100:4`` (the count after an optional type); None otherwise."""
    last = value.rsplit(":", 1)[-1] if ":" in value else value
    return int(last) if _is_number(last) else None


def _gres_gpus(value: str) -> Optional[int]:
    """GPUs in a ``--gres`` list such as ``gpu:a100:2,shard:1``."""
    total: Optional[int] = None
    for item in value.split(","):
        parts = item.split("(")[0].split(":")
        if parts[0] != "gpu":
            continue
        count = int(parts[-1]) if len(parts) > 1 and _is_number(parts[-1]) else (1 if len(parts) <= 2 else None)
        if count is None:
            return None
        total = (total or 0) + count
    return total


def _int(value: Optional[str]) -> Optional[int]:
    return int(value) if value is not None and _is_number(value) else None


def _resources(directives: Tuple[Directive, ...]) -> Resources:
    def last(*options: str) -> Optional[str]:
        found = [d.value for d in directives if d.option in options]
        return found[-1] if found else None

    nodes = _int(last("nodes")) if last("nodes") is not None else 1
    ntasks = _int(last("ntasks"))
    per_node = _int(last("ntasks-per-node"))
    if per_node is None and ntasks is not None and nodes:
        per_node = math.ceil(ntasks / nodes)
    gpus: Optional[int] = None
    if last("gpus-per-node") is not None:
        gpus = _count(last("gpus-per-node") or "")
    elif last("gres") is not None:
        gpus = _gres_gpus(last("gres") or "")
    elif last("gpus") is not None:
        total = _count(last("gpus") or "")
        gpus = math.ceil(total / nodes) if total is not None and nodes else None
    elif last("gpus-per-task") is not None:
        each = _count(last("gpus-per-task") or "")
        gpus = each * (per_node or 1) if each is not None else None
    return Resources(nodes, per_node, _int(last("cpus-per-task")), gpus)


# -- launch lines ------------------------------------------------------------

_PYTHON = re.compile(r"^python(\d(\.\d+)?)?$")
_WRAPPERS = frozenset({"time", "exec", "nohup", "command", "env"})
_LAUNCH_MODULES = {"torch.distributed.launch": Launcher.LEGACY_LAUNCH, "torch.distributed.run": Launcher.DISTRIBUTED_RUN}
_SRUN_FLAGS = frozenset({"pty", "l", "label", "u", "unbuffered", "exclusive", "overlap", "K", "v", "X", "Q",
                         "quiet", "verbose", "overcommit", "O"})
_MPIRUN_FLAGS = frozenset({"oversubscribe", "allow-run-as-root", "v", "verbose", "q", "quiet", "tag-output",
                           "timestamp-output", "report-bindings", "display-map", "noprefix"})
_TORCHRUN_FLAGS = frozenset({"standalone", "use_env", "use-env", "no_python", "no-python", "module", "m",
                             "run_path", "run-path"})
_ACCELERATE_FLAGS = frozenset({"multi_gpu", "multi-gpu", "cpu", "use_deepspeed", "use-deepspeed", "use_fsdp",
                               "use-fsdp", "use_megatron_lm", "module", "m", "no_python", "no-python",
                               "debug", "quiet", "q", "tpu", "same_network"})
_PYTHON_VALUE_OPTIONS = frozenset({"W", "X", "Q"})


def _options(words: Sequence[Word], flags: frozenset[str], start: int) -> Tuple[Dict[str, str], int]:
    """Read ``--name=value``/``--name value``/``-n value``/``-n4`` options from
    ``start``; returns them and the index of the first other word."""
    values: Dict[str, str] = {}
    index = start
    while index < len(words):
        text = words[index].text
        if text is None or not text.startswith("-") or text == "-":
            break
        index += 1
        if text == "--":
            break
        body = text.lstrip("-")
        name, equals, value = body.partition("=")
        if not equals and text.startswith("-") and not text.startswith("--") and len(body) > 1 and name[0] not in flags:
            if body[:2] in ("np",):  # mpirun's -np 4
                name, value = "np", ""
            else:
                name, value = body[0], body[1:]
            equals = "=" if value else ""
        if not equals and name not in flags and index < len(words):
            value = words[index].text or ""
            index += 1
        values[name] = value
    return values, index


def _srun_tasks(options: Dict[str, str], resources: Resources) -> Optional[int]:
    given = [options[key] for key in ("ntasks-per-node", "nodes", "N", "ntasks", "n") if key in options]
    if not all(_is_number(value) for value in given):
        return None  # a count that is not a number (`-n ²`, `-n $TASKS`): unknown
    per_node = _int(options.get("ntasks-per-node"))
    nodes = _int(options.get("nodes") or options.get("N")) or resources.nodes
    total = _int(options.get("ntasks") or options.get("n"))
    if per_node is not None:
        return per_node
    if total is not None and nodes:
        return math.ceil(total / nodes)
    return resources.tasks_per_node or 1


def _resolve(text: Optional[str], cwd: Optional[Path], module: bool) -> Optional[Path]:
    if text is None or cwd is None or not text:
        return None
    if module:
        base = cwd.joinpath(*text.split("."))
        for candidate in (base.with_name(base.name + ".py"), base / "__main__.py"):
            if is_regular_file(candidate):
                return candidate
        return None
    path = Path(text)
    path = path if path.is_absolute() else cwd / path
    return path if path.suffix == ".py" and is_regular_file(path) else None


def _launch(words: List[Word], cwd: Optional[Path], resources: Resources) -> Optional[Launch]:
    """The launch started by one command, or None when it starts no Python."""
    index = 0
    while index < len(words) and words[index].text is not None and _ASSIGNMENT.match(words[index].text or ""):
        index += 1
    while index < len(words) and words[index].text in _WRAPPERS:
        index += 1
    under_srun = under_mpirun = False
    per_node: Optional[int] = 1
    if index < len(words) and words[index].text == "srun":
        options, index = _options(words, _SRUN_FLAGS, index + 1)
        under_srun, per_node = True, _srun_tasks(options, resources)
    elif index < len(words) and words[index].text in ("mpirun", "mpiexec"):
        options, index = _options(words, _MPIRUN_FLAGS, index + 1)
        under_mpirun = True
        explicit = _int(options.get("npernode") or options.get("N") or options.get("ppn"))
        total = _int(options.get("np") or options.get("n"))
        nodes = resources.nodes or 1
        per_node = explicit if explicit is not None else (math.ceil(total / nodes) if total is not None else None)
    if index >= len(words) or words[index].text is None:
        return None
    first = words[index]
    name = Path(first.text or "").name
    begin = index
    if name == "torchrun":
        launcher = Launcher.TORCHRUN
        index += 1
    elif name == "accelerate" and index + 1 < len(words) and words[index + 1].text == "launch":
        launcher = Launcher.ACCELERATE
        index += 2
    elif _PYTHON.match(name):
        index += 1
        module: Optional[str] = None
        while index < len(words):
            text = words[index].text
            if text is None or not text.startswith("-") or text == "-":
                break
            index += 1
            if text == "-m" and index < len(words):
                module = words[index].text
                index += 1
                break
            if text.startswith("-m") and len(text) > 2:
                module = text[2:]
                break
            if text == "-c":
                return None
            if text.lstrip("-") in _PYTHON_VALUE_OPTIONS:
                index += 1
        if module in _LAUNCH_MODULES:
            launcher = _LAUNCH_MODULES[module or ""]
        elif module is not None:
            return _make(Launcher.PYTHON, words, begin, index, index, _resolve(module, cwd, True), per_node,
                         under_srun, under_mpirun)
        else:
            return _make(Launcher.PYTHON, words, begin, index, index,
                         _resolve(words[index].text if index < len(words) else None, cwd, False),
                         per_node, under_srun, under_mpirun)
    else:
        return None
    launcher_end = index
    flags = _ACCELERATE_FLAGS if launcher is Launcher.ACCELERATE else _TORCHRUN_FLAGS
    options, index = _options(words, flags, index)
    processes: Optional[int]
    if launcher is Launcher.ACCELERATE:
        total = _int(options.get("num_processes") or options.get("num-processes"))
        machines = _int(options.get("num_machines") or options.get("num-machines")) or 1
        processes = math.ceil(total / machines) if total is not None else None
    else:
        processes = _int(options.get("nproc_per_node") or options.get("nproc-per-node"))
        if processes is None and not any(k in options for k in ("nproc_per_node", "nproc-per-node")):
            processes = 1  # torchrun's default
    per_node = processes * per_node if processes is not None and per_node is not None else None
    as_module = any(k in options for k in ("m", "module"))
    target = _resolve(words[index].text if index < len(words) else None, cwd, as_module)
    return _make(launcher, words, begin, launcher_end, index, target, per_node, under_srun, under_mpirun)


def _make(launcher: Launcher, words: List[Word], begin: int, launcher_end: int, options_end: int,
          target: Optional[Path], per_node: Optional[int], under_srun: bool, under_mpirun: bool) -> Launch:
    whole = Span(words[0].span.start, words[-1].span.end, words[0].span.line)
    return Launch(launcher, whole, target, per_node, under_srun, under_mpirun,
                  tuple(words[begin:launcher_end]), tuple(words[launcher_end:options_end]))


def _launches(text: str, path: Path, resources: Resources) -> Tuple[Launch, ...]:
    directory = path.absolute().parent
    variables: Dict[str, Optional[str]] = {"SLURM_SUBMIT_DIR": str(directory), "PWD": str(directory)}
    cwd: Optional[Path] = directory
    found: List[Launch] = []
    for line in _logical_lines(text):
        if line.text.lstrip().startswith("#"):
            continue
        for raw_words in _split_commands(line):
            words = [Word(_expand(raw, variables), line.span(start, end)) for raw, _, start, end in raw_words]
            first = words[0].text
            if first == "export":
                words = words[1:]
            assignments = [w for w in words if w.text is not None and _ASSIGNMENT.match(w.text)]
            if len(assignments) == len(words):
                for raw, word in zip(raw_words[-len(words):], words):
                    name = raw[0].split("=", 1)[0]
                    variables[name] = None if word.text is None else word.text.split("=", 1)[1]
                continue
            if first == "cd":
                target = words[1].text if len(words) > 1 else None
                cwd = None if target is None or cwd is None else (cwd / target)
                continue
            launch = _launch(words, cwd, resources)
            if launch is not None:
                found.append(launch)
    return tuple(found)


def parse_job_script(text: str, path: Path) -> JobScript:
    """Parse a batch script; never raises on odd shell (unknowns stay None)."""
    directives = _directives(text)
    resources = _resources(directives)
    return JobScript(path, directives, _launches(text, path, resources), resources)
