"""``sarif``: SARIF 2.1.0 for code-scanning services (GitHub code scanning and others)."""

from __future__ import annotations

import os
import posixpath
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import quote

from torchlint.model import Diagnostic, Fix, Position
from torchlint.ruleapi.registry import PARSE_ERROR_CODE, PARSE_ERROR_NAME, all_rules, severity_of
from torchlint.report.context import ReportContext
from torchlint.report.fingerprint import fingerprints
from torchlint.report.json import dumps
from torchlint.report.source import cell_position, edit_range, file_range, token_edits
from torchlint.ruleapi.rule import FixAvailability, RuleClass

JsonObject = Dict[str, Any]

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
PARSE_ERROR_SUMMARY = "The file could not be read or parsed as Python"
PARSE_ERROR_DOC = (
    f"# {PARSE_ERROR_NAME} ({PARSE_ERROR_CODE})\n\n"
    "Reported when a file cannot be decoded or is not valid Python, so no rule could run on it.\n"
    "Fix the syntax (or the encoding) and lint again.\n"
)


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """One SARIF log with one run holding every rule and every finding."""
    rules = rule_descriptors()
    indices = {rule["id"]: number for number, rule in enumerate(rules)}
    results = [result(d, indices, context.source_for(d), context) for d in diagnostics]
    for item, fingerprint in zip(results, fingerprints(diagnostics, context.source_for)):
        # Code scanning tracks a finding across commits by this key.
        item["partialFingerprints"] = {"torchlint/v1": fingerprint}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {"tool": {"driver": driver(rules)}, "columnKind": "unicodeCodePoints", "results": results}
        ],
    }
    return dumps(log)


def driver(rules: List[JsonObject]) -> JsonObject:
    """``tool.driver``: name, version, home page (when packaged with one) and rules."""
    from torchlint.version import __version__

    described: JsonObject = {"name": "torchlint"}
    uri = _information_uri()
    if uri:
        described["informationUri"] = uri
    described.update({"version": __version__, "rules": rules})
    return described


def _information_uri() -> Optional[str]:
    """The project's home page from the installed distribution's metadata, if any."""
    from importlib import metadata

    try:
        meta = metadata.metadata("torchlint")
    except metadata.PackageNotFoundError:
        return None
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "home", "repository", "source"):
            return str(url).strip()
    homes = meta.get_all("Home-page") or []
    return str(homes[0]) if homes else None


def rule_descriptors() -> List[JsonObject]:
    """Every rule, the parse-error pseudo-rule first, in code order."""
    parse_error = descriptor(
        PARSE_ERROR_CODE, PARSE_ERROR_NAME, PARSE_ERROR_SUMMARY, PARSE_ERROR_SUMMARY, PARSE_ERROR_DOC,
        enabled=True, tags=("torchlint", "parse-error"),
    )
    return [parse_error, *(rule_descriptor(rule) for rule in all_rules())]


def rule_descriptor(rule: RuleClass) -> JsonObject:
    """A SARIF ``reportingDescriptor`` built from a rule's metadata and docs."""
    what = rule.doc_sections().get("What it does") or rule.summary
    tags = ("torchlint",) if rule.fix_availability is FixAvailability.NONE else ("torchlint", "autofix")
    return descriptor(
        rule.code, rule.name, rule.summary, what, rule.documentation(),
        enabled=rule.default_enabled, tags=tags, level=rule.severity.value,
        extra={"fixAvailability": rule.fix_availability.value, "torchVersions": rule.torch_versions},
    )


def descriptor(
    code: str,
    name: str,
    summary: str,
    full: str,
    doc: str,
    *,
    enabled: bool,
    tags: Tuple[str, ...],
    extra: Optional[Mapping[str, str]] = None,
    level: str = "error",
) -> JsonObject:
    """One ``reportingDescriptor`` object."""
    return {
        "id": code,
        "name": name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": full},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": {"level": level, "enabled": enabled},
        "properties": {"tags": list(tags), **(extra or {})},
    }


def artifact_location(path: str) -> JsonObject:
    """A relative path as a URI under ``%SRCROOT%``; an absolute one as a ``file:`` URI.

    The URI is percent-encoded from the name's bytes, so a file name that is
    not UTF-8 (held as surrogate escapes) keeps its exact bytes.
    """
    pure: PurePath = PureWindowsPath(path) if "\\" in path else PurePosixPath(path)
    if pure.is_absolute():
        return {"uri": pure.as_uri()}
    return {"uri": quote(os.fsencode(posixpath.normpath(pure.as_posix())), safe="/"), "uriBaseId": SRCROOT}


def region(start: Position, end: Position) -> JsonObject:
    """A SARIF region (1-based; ``endColumn`` is exclusive, as in torchlint)."""
    return {
        "startLine": start.line,
        "startColumn": start.column,
        "endLine": end.line,
        "endColumn": end.column,
    }


def result(diagnostic: Diagnostic, indices: Mapping[str, int], source: Optional[str],
           context: Optional[ReportContext] = None) -> JsonObject:
    """One SARIF ``result``, with its fix when the source is known.  A
    notebook finding's region is the lines of the ``.ipynb`` file that hold
    it; the cell and the line in it are in the message and ``properties``."""
    start, end = file_range(diagnostic, context.sources) if context is not None else (diagnostic.start, diagnostic.end)
    physical = {
        "artifactLocation": artifact_location(diagnostic.path),
        "region": region(start, end),
    }
    item: JsonObject = {"ruleId": diagnostic.code}
    if diagnostic.code in indices:
        item["ruleIndex"] = indices[diagnostic.code]
    item["level"] = severity_of(diagnostic.code).value
    message = diagnostic.message
    if diagnostic.cell is not None:
        message = f"{cell_position(diagnostic, column=False)}: {message}"
    item["message"] = {"text": message}
    item["locations"] = [{"physicalLocation": physical}]
    if diagnostic.cell is not None:
        item["properties"] = {"cell": diagnostic.cell, "cellLine": diagnostic.start.line,
                              "cellColumn": diagnostic.start.column}
    # A notebook fix's edits are offsets in its cell, which no SARIF consumer could apply to the file.
    fix = sarif_fix(diagnostic.path, diagnostic.fix, source) if diagnostic.fix and diagnostic.cell is None else None
    if fix is not None:
        item["fixes"] = [fix]
    return item


def sarif_fix(path: str, fix: Fix, source: Optional[str]) -> Optional[JsonObject]:
    """A SARIF ``fix`` (one artifact change, one replacement per edit); None without the source."""
    replacements: List[JsonObject] = []
    for edit in token_edits(source, fix.edits):
        where = edit_range(source, edit)
        if where is None:
            return None
        replacements.append({"deletedRegion": region(*where), "insertedContent": {"text": edit.text}})
    change = {"artifactLocation": artifact_location(path), "replacements": replacements}
    return {"description": {"text": fix.description}, "artifactChanges": [change]}
