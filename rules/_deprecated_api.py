"""What the deprecated-API rules share: finding references to a symbol of
the deprecation table, and rewriting them.

The table (``torchlint/data/deprecations.toml``) says what is deprecated,
since when and what replaces it; the rules decide which entries they own
and how to word the finding.  A reference is found through the file's
imports, so a local ``def ger(...)`` or ``numpy.linalg.qr`` never matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple

import libcst as cst

from torchlint.data import apidata
from torchlint.data.apidata import Deprecation
from torchlint.ruleapi.fixes import dotted_expression, spell
from torchlint.analysis.names import ImportTable, dotted
from torchlint.ruleapi.rule import TorchVersion

# The mixed-precision entries belong to deprecated-amp-api; every other
# entry to deprecated-torch-api.
AMP_PREFIXES = ("torch.cuda.amp.", "torch.cpu.amp.")


def is_amp(symbol: str) -> bool:
    return symbol.startswith(AMP_PREFIXES)


def replacement_since(entry: Deprecation) -> Optional[TorchVersion]:
    """The first release in which the replacement can be used: its recorded
    signature's ``since`` when the data has one, else the deprecation
    release (the replacement came with the deprecation)."""
    if entry.replacement is not None:
        signature = apidata.signatures().get(entry.replacement)
        if signature is not None and signature.since is not None:
            return signature.since
    return entry.deprecated_in


def replacement_exists(entry: Deprecation, version: TorchVersion) -> bool:
    since = replacement_since(entry)
    return since is None or not version < since


@dataclass(frozen=True)
class ImportedSymbol:
    """One name of a ``from X import a, b`` that is a table entry."""

    alias: cst.ImportAlias
    entry: Deprecation


def imported_symbols(node: cst.ImportFrom, table: Mapping[str, Deprecation]) -> Tuple[ImportedSymbol, ...]:
    """The names ``node`` imports that are entries of ``table``."""
    if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
        return ()
    module = dotted(node.module)
    if module is None:
        return ()
    found = []
    for alias in node.names:
        if isinstance(alias.name, cst.Name):
            entry = table.get(f"{module}.{alias.name.value}")
            if entry is not None:
                found.append(ImportedSymbol(alias, entry))
    return tuple(found)


def _split(symbol: str) -> Tuple[str, str]:
    module, _, name = symbol.rpartition(".")
    return module, name


def import_rewrite(node: cst.ImportFrom, table: Mapping[str, Deprecation]) -> Optional[cst.ImportFrom]:
    """``from old import a, b`` importing the replacements instead, when
    every name is a drop-in rename into one module; None otherwise."""
    if isinstance(node.names, cst.ImportStar):
        return None
    symbols = imported_symbols(node, table)
    if not symbols or len(symbols) != len(node.names):
        return None
    targets = set()
    for symbol in symbols:
        replacement = symbol.entry.replacement
        if symbol.entry.fix is not apidata.FixKind.RENAME or replacement is None:
            return None
        targets.add(_split(replacement)[0])
    if len(targets) != 1:
        return None
    module = targets.pop()
    renamed = {id(s.alias): _split(s.entry.replacement or "")[1] for s in symbols}
    names = [alias.with_changes(name=cst.Name(renamed[id(alias)])) for alias in node.names]
    return node.with_changes(module=dotted_expression(module), names=names)


def renamed_by_imports(module: cst.Module, table: Mapping[str, Deprecation]) -> Dict[str, str]:
    """Local names bound by a module-level import that :func:`import_rewrite`
    fixes, mapped to the name the fixed import binds (``as g`` keeps ``g``)."""
    renamed: Dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and import_rewrite(small, table) is not None:
                for symbol in imported_symbols(small, table):
                    asname = symbol.alias.asname
                    if asname is not None and isinstance(asname.name, cst.Name):
                        renamed[asname.name.value] = asname.name.value  # `as g` keeps `g`
                    elif isinstance(symbol.alias.name, cst.Name):
                        renamed[symbol.alias.name.value] = _split(symbol.entry.replacement or "")[1]
    return renamed


@dataclass(frozen=True)
class Respelled:
    """A new callee expression and the imports it needs."""

    expression: cst.BaseExpression
    imports: Tuple[str, ...]


def respell(
    func: cst.BaseExpression, old: str, new: str, names: ImportTable, renamed: Mapping[str, str]
) -> Optional[Respelled]:
    """Write ``new`` where ``func`` wrote ``old``, keeping the user's spelling
    of the part the two names share (``foo.chain_matmul`` under
    ``import torch as foo`` becomes ``foo.linalg.multi_dot``).  A bare name
    imported by an import that is itself fixed takes the import's new name;
    anything else is spelled through the file's imports."""
    written = dotted(func)
    if written is None:
        return None
    old_parts, new_parts, parts = old.split("."), new.split("."), written.split(".")
    shared = 0
    while shared < min(len(old_parts), len(new_parts)) - 1 and old_parts[shared] == new_parts[shared]:
        shared += 1
    tail = len(old_parts) - shared
    if shared and len(parts) > tail and parts[-tail:] == old_parts[shared:]:
        prefix = parts[:-tail]
        prefix_expr = dotted_expression(".".join(prefix))
        if names.qualified_name(prefix_expr) == ".".join(old_parts[:shared]):
            return Respelled(dotted_expression(".".join(prefix + new_parts[shared:])), ())
    if len(parts) == 1 and parts[0] in renamed:
        return Respelled(cst.Name(renamed[parts[0]]), ())
    spelling = spell(names, new)
    if spelling is None:
        return None
    return Respelled(spelling.expression, spelling.imports)
