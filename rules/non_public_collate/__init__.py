"""TL707 non-public-collate."""

from __future__ import annotations

from typing import ClassVar, Dict, Mapping, Tuple

import libcst as cst

from torchlint.ruleapi.fixes import spell
from torchlint.model import Applicability
from torchlint.analysis.names import dotted
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FixAvailability, OptionValue, Rule, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, VerificationSpec

_PRIVATE_MODULE = "torch.utils.data._utils.collate"
_PUBLIC_MODULE = "torch.utils.data"
# private name -> public name; both re-exported publicly since torch 1.11.
_PUBLIC: Dict[str, str] = {
    f"{_PRIVATE_MODULE}.default_collate": f"{_PUBLIC_MODULE}.default_collate",
    f"{_PRIVATE_MODULE}.default_convert": f"{_PUBLIC_MODULE}.default_convert",
}


class NonPublicCollate(Rule):
    """## What it does
    Reports uses of `default_collate` and `default_convert` through the
    private module `torch.utils.data._utils.collate`: attribute references
    (`torch.utils.data._utils.collate.default_collate(batch)`, or through a
    module alias) and `from torch.utils.data._utils.collate import ...`, and
    calls through a name such an import binds (as TorchFix does; the fix is
    on the import, which makes those calls public too).

    ## Why is this bad?
    Names under `_utils` are internal: PyTorch may move or change them in any
    release without a deprecation period.  Both functions are public as
    `torch.utils.data.default_collate` and `torch.utils.data.default_convert`
    (documented on the `torch.utils.data` page since torch 1.11), and the
    public names are the same function objects.

    ## Example
    ```python
    from torch.utils.data._utils.collate import default_collate

    loader = DataLoader(dataset, collate_fn=lambda b: default_collate(b))
    ```

    Use instead:
    ```python
    from torch.utils.data import default_collate

    loader = DataLoader(dataset, collate_fn=lambda b: default_collate(b))
    ```

    ## Fix safety
    Safe: `torch.utils.data.default_collate` *is*
    `torch.utils.data._utils.collate.default_collate` (the public module
    imports it from there), so every call does the same thing.  An import
    that also takes other private names from the module (such as
    `default_collate_fn_map`) is reported without a fix, since those have
    no public spelling.

    ## Options
    None.

    ## Source
    PyTorch documentation, *torch.utils.data* ("Working with
    `collate_fn`": `torch.utils.data.default_collate` and
    `torch.utils.data.default_convert`); PyTorch 1.11 release notes (the two
    functions made public).
    """

    code = "TL707"
    name = "non-public-collate"
    summary = "`default_collate`/`default_convert` used from the private `_utils.collate` module"
    aliases: ClassVar[Tuple[str, ...]] = ("TOR104", "TOR105")
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "safe: use `torch.utils.data.default_collate`/`default_convert`"
    torch_range = TorchRange(min=TorchVersion(1, 11), note="the public names exist since 1.11")
    trigger_words = ("_utils",)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """The private module resolves only through a torch import, and is
        named as `_utils` in an expression or in an imported module's path."""
        return facts.imports_torch and (
            facts.mentions(cls.trigger_words) or any("._utils." in name for name in facts.imports)
        )
    valid = (
        "from torch.utils.data import default_collate\nbatch = default_collate(samples)\n",
        "import torch\nbatch = torch.utils.data.default_convert(samples)\n",
        "from mylib._utils.collate import default_collate\nbatch = default_collate(samples)\n",
    )
    invalid = (
        Example(
            "from torch.utils.data._utils.collate import default_collate\nbatch = default_collate(samples)\n",
            fixed="from torch.utils.data import default_collate\nbatch = default_collate(samples)\n",
            findings=2,  # the import, and the call through the name it binds
        ),
        Example(
            "import torch\nbatch = torch.utils.data._utils.collate.default_convert(samples)\n",
            fixed="import torch\nbatch = torch.utils.data.default_convert(samples)\n",
        ),
        Example(
            "from torch.utils.data._utils.collate import default_collate, default_collate_fn_map\n",
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        contract=Contract(
            level="identical",
            promise="The public name is the same function, so every collated batch is the same.",
            checks=("every output is close (here: bit-identical), with the same shape, dtype and device",),
        ),
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        public = _PUBLIC.get(self.names.qualified_name(node) or "")
        if public is None:
            return
        spelled = spell(self.names, public)
        fix = None
        if spelled is not None:
            fix = self.replace(node, spelled.expression, Applicability.SAFE,
                               f"Use `{public}`", imports=spelled.imports)
        self.report(node, f"`{node.attr.value}` is used from a private module; use `{public}`", fix=fix)

    def visit_Call(self, node: cst.Call) -> None:
        # A call through a name imported from the private module: reported
        # where it is used too (as TorchFix does); the fix is on the import.
        if not isinstance(node.func, cst.Name):
            return
        public = _PUBLIC.get(self.names.qualified_name(node.func) or "")
        if public is not None:
            self.report(node.func, f"`{node.func.value}` comes from a private module; import it from "
                                   f"`{_PUBLIC_MODULE}` (the import's fix covers this use)")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted(node.module)
        if module != _PRIVATE_MODULE:
            return
        imported = [alias.name.value for alias in node.names if isinstance(alias.name, cst.Name)]
        wanted = [name for name in imported if f"{module}.{name}" in _PUBLIC]
        if not wanted:
            return
        fix = None
        if len(wanted) == len(node.names):
            public = cst.parse_expression(_PUBLIC_MODULE)
            assert isinstance(public, cst.Attribute)
            fix = self.replace(node, node.with_changes(module=public), Applicability.SAFE,
                               f"Import from `{_PUBLIC_MODULE}`")
        names = ", ".join(f"`{name}`" for name in wanted)
        self.report(node, f"{names} imported from a private module; import from `{_PUBLIC_MODULE}`", fix=fix)

