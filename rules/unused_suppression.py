"""TL001 unused-suppression."""

from __future__ import annotations

import re
from typing import List, Mapping, Optional, Tuple

from torchlint.model import Applicability, Edit
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.registry import expand_selector
from torchlint.ruleapi.rule import Example, FixAvailability, OptionValue, Rule, Severity
from torchlint.ruleapi.directives import Directive, Use
from torchlint.lint.suppress import entry_forms
from torchlint.ruleapi.verification import Contract, VerificationSpec

_QUICK = re.compile(r"noqa|torchlint:", re.IGNORECASE)


class UnusedSuppression(Rule):
    """## What it does
    Reports suppression comments that silence nothing: a `# noqa: CODE`
    or `# torchlint: ignore[CODE]` whose code found nothing on its line (or,
    own-line, in the next statement), a code that is not selected for the
    file, and a code or name that no rule has.  A blanket
    `# torchlint: ignore` that silences nothing is reported too; a blanket
    `# noqa` and codes of other tools in a `# noqa` list (`E501`, `F401`)
    are left alone, since other linters read the same comment.  File-level
    forms (`file-ignore`, `skip-file`) are not reported.

    ## Why is this bad?
    A suppression outlives the finding it was written for: after the code is
    fixed or the rule changes, the comment stays and would silently hide the
    next real finding on that line.  A misspelt code (`TL2O1`) never
    silenced anything.

    ## Example
    ```python
    loader = DataLoader(ds, num_workers=8)  # noqa: TL201
    ```

    Use instead:
    ```python
    loader = DataLoader(ds, num_workers=8)
    ```

    ## Fix safety
    Safe: the fix removes the codes that silence nothing (the whole comment
    when nothing else is left in it), which changes no code that runs.

    ## Options
    None.

    ## Source
    Not from the GPU guides or PyTorch's documentation: a rule about
    torchlint's own comments, after Ruff's `RUF100` (unused-noqa), which
    reports the same for Ruff's codes.
    """

    code = "TL001"
    name = "unused-suppression"
    summary = "a suppression comment silences nothing (unused, not selected, or an unknown code)"
    fix_availability = FixAvailability.ALWAYS
    fix_summary = "safe: remove the codes (or the comment)"
    default_enabled = False
    severity = Severity.WARNING
    reads_suppressions = True

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """Only a file with a suppression comment."""
        return bool(_QUICK.search(facts.source))

    valid = (
        "x = 1  # noqa\n",
        "x = 1  # noqa: E501\n",
        "x = 1  # noqa: TL001\n",
    )
    invalid = (
        Example("x = 1  # noqa: TL501\n", fixed="x = 1\n"),
        Example("x = 1  # noqa: E501, TL2O1\n", fixed="x = 1  # noqa: E501\n"),
        Example("# torchlint: ignore[TL501]\nx = 1\n", fixed="x = 1\n"),
    )

    verification = VerificationSpec(
        contract=Contract(
            level="identical",
            promise="Only comments change; the code that runs is the same.",
            checks=("no program: the fix removes text from comments only",),
        ),
    )

    def after_suppressions(self, use: Use) -> None:
        index = self.facts.located.index
        for directive in use.suppressions.directives:
            if directive.scope == "file" or directive.column < 0:
                continue
            found = self._unused(directive, use)
            if found is None:
                continue
            message, keep = found
            start = index.offset(directive.line, directive.column)
            end = start + len(directive.text)
            edits = self._removal(directive, keep, start, end)
            self.report_text(start, end, message, edits=edits, applicability=Applicability.SAFE,
                             description="Remove the unused suppression" if not keep else
                             "Remove the codes that silence nothing")

    def _unused(self, directive: Directive, use: Use) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """The message and the entries to keep, or None when all are used."""
        used = use.used_entries(directive)
        if not directive.entries:
            if not directive.torchlint or used:
                return None  # a blanket `# noqa` may be for another linter
            return "unused blanket suppression: it silences nothing here", ()
        enabled = self.context.enabled_codes
        groups: Tuple[List[str], List[str], List[str]] = ([], [], [])
        keep: List[str] = []
        for entry in directive.entries:
            rules = expand_selector(entry)
            if rules is None:
                if entry_forms(entry) & used or not (directive.torchlint or entry.upper().startswith("TL")):
                    keep.append(entry)  # used, or another tool's code
                else:
                    groups[2].append(entry)
                continue
            codes = [rule.code for rule in rules]
            if self.code in codes or entry_forms(entry) & used:
                keep.append(entry)
            elif not any(code in enabled for code in codes):
                groups[1].append(entry)
            else:
                groups[0].append(entry)
        parts = [f"{label}: {', '.join(f'`{e}`' for e in found)}"
                 for label, found in zip(("unused", "not selected", "unknown"), groups) if found]
        if not parts:
            return None
        return f"unused suppression ({'; '.join(parts)})", tuple(keep)

    def _removal(self, directive: Directive, keep: Tuple[str, ...], start: int, end: int) -> Tuple[Edit, ...]:
        """Edits that leave only ``keep`` in the directive (or remove it)."""
        source = self.context.source
        if keep:
            listed = ", ".join(keep)
            text = f"# torchlint: ignore[{listed}]" if directive.torchlint else f"# noqa: {listed}"
            return (Edit(start, end, text),)
        comment_start = start - directive.column + directive.comment_column
        comment_end = comment_start + directive.comment_length
        rest = source[end:comment_end]
        following = rest.lstrip(" \t")
        if following.startswith("#"):  # another comment follows (`# noqa: X  # why`): it stays
            return (Edit(start, end + len(rest) - len(following), ""),)
        if following:
            return (Edit(start, end, "#"),)  # other words follow: keep them a comment
        cut = start
        while cut > 0 and source[cut - 1] in " \t":
            cut -= 1
        if directive.comment_alone and start == comment_start:
            line_end = comment_end
            if source.startswith("\r\n", line_end):
                line_end += 2
            elif source[line_end:line_end + 1] in ("\n", "\r"):
                line_end += 1
            return (Edit(cut, line_end, ""),)
        return (Edit(cut, comment_end if start == comment_start else end, ""),)

