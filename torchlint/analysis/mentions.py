"""Which dotted names the files of a run refer to anywhere.

A suggestion rule (turn on AMP, TF32, cuDNN benchmarking...) must stay
quiet when the project already makes that setting somewhere, often in a
helper module far from the training loop.  This is the project-level fact
that answers it: for a set of wanted names (``torch.compile``,
``torch.backends.cudnn.benchmark``), the ones some file of the run uses,
reads or assigns, resolved through that file's imports (module-level or
not), never by words alone.  Read with CPython's ``ast``, and only files
whose bytes contain a wanted name's last part are parsed.
"""

from __future__ import annotations

import ast
import warnings
from typing import Dict, FrozenSet, Sequence, Set, Union

from torchlint.analysis.imports import add_import as _add_import, dotted as _dotted
from torchlint.analysis.canonical import canonical
from torchlint.source.tree import python_nodes


def _imports(nodes: Sequence[ast.AST]) -> Dict[str, str]:
    """Local name -> dotted path, for every absolute import in the file
    (relative ones name the project's own modules, never torch's)."""
    table: Dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and not node.level):
            _add_import(table, node, "", False)
    return table


def names_used(text: Union[str, bytes], wanted: FrozenSet[str]) -> FrozenSet[str]:
    """The names of ``wanted`` that one file's code refers to."""
    return all_names_used(text) & wanted


def all_names_used(text: Union[str, bytes]) -> FrozenSet[str]:
    """Every dotted name (resolved through the file's absolute imports) that
    one file's code refers to."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return frozenset()
    return names_in_tree(tree)


def names_in_tree(tree: ast.AST) -> FrozenSet[str]:
    """:func:`all_names_used` of a file CPython has already parsed."""
    nodes = python_nodes(tree)
    imports = _imports(nodes)
    found: Set[str] = set()
    for node in nodes:
        if not isinstance(node, (ast.Attribute, ast.Name)):
            continue
        dotted = _dotted(node)
        if dotted is None:
            continue
        root, _, rest = dotted.partition(".")
        base = imports.get(root)
        if base is None:
            continue
        found.add(canonical(f"{base}.{rest}" if rest else base))
    return frozenset(found)


__all__ = ["all_names_used", "names_in_tree", "names_used"]
