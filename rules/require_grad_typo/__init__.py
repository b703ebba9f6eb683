"""TL307 require-grad-typo."""

from __future__ import annotations

from typing import ClassVar, List, Tuple

import libcst as cst

from torchlint.model import Applicability
from torchlint.ruleapi.rule import Example, FileContext, FixAvailability, Option, Rule, TorchRange
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec

_TYPO = "require_grad"
_RIGHT = "requires_grad"


class RequireGradTypo(Rule):
    """## What it does
    Reports assignments to an attribute named `require_grad`
    (`param.require_grad = False`) in a file that imports torch.

    ## Why is this bad?
    Tensors and parameters have `requires_grad`.  Python lets you set any
    attribute on a tensor, so `p.require_grad = False` raises nothing and
    freezes nothing: the parameter keeps receiving gradients and the
    optimizer keeps updating it, which usually goes unnoticed until the
    "frozen" backbone turns out to have been trained.

    ## Example
    ```python
    for p in model.backbone.parameters():
        p.require_grad = False
    ```

    Use instead:
    ```python
    for p in model.backbone.parameters():
        p.requires_grad = False
    ```

    ## Fix safety
    Unsafe: the fix changes what the program does, which is its point (the
    parameters really stop, or start, requiring gradients).  And
    `require_grad` may be an attribute of your own, on an object that is not
    a tensor; by default the rule stays silent in a file that also reads
    `.require_grad` or defines something named `require_grad`, since that
    is a sign the name is meant.

    ## Options
    - `ignore-when-read` (default `true`): no finding in a file that reads
      `.require_grad` somewhere or defines a function, class attribute or
      parameter named `require_grad`.

    ## Source
    PyTorch documentation, *Autograd mechanics* ("Locally disabling
    gradient computation": setting `requires_grad` to freeze parameters)
    and `torch.Tensor.requires_grad`.
    """

    code = "TL307"
    name = "require-grad-typo"
    summary = "`x.require_grad = ...` sets a new attribute; the flag is `requires_grad`"
    aliases: ClassVar[Tuple[str, ...]] = ("TOR002",)
    fix_availability = FixAvailability.ALWAYS
    fix_summary = "unsafe: rename to `requires_grad`"
    torch_range = TorchRange(note="`requires_grad` in every release")
    options = {
        "ignore-when-read": Option(True, "No finding in a file that reads or defines `require_grad`."),
    }
    trigger_words = (_TYPO,)
    valid = (
        "import torch\nfor p in model.parameters():\n    p.requires_grad = False\n",
        "class Config:\n    pass\ncfg = Config()\ncfg.require_grad = True\n",
        "import torch\nopts.require_grad = True\nif opts.require_grad:\n    x.requires_grad_()\n",
    )
    invalid = (
        Example(
            "import torch\nfor p in model.parameters():\n    p.require_grad = False\n",
            fixed="import torch\nfor p in model.parameters():\n    p.requires_grad = False\n",
        ),
        Example(
            "import torch\nopts.require_grad = True\nif opts.require_grad:\n    x.requires_grad_()\n",
            fixed="import torch\nopts.requires_grad = True\nif opts.require_grad:\n    x.requires_grad_()\n",
            options={"ignore-when-read": False},
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("require-grad", "verify_probe.py"),),
        replay="require-grad",
        contract=Contract(
            level="intended change",
            promise="The fix makes each assignment set the autograd flag, so gradients start or stop "
                    "flowing where the code said they should; nothing else changes.",
            checks=(
                "observed (a probe): the assignments to `require_grad` the program makes as it runs",
                "the original makes some; the changed program makes none",
                "the original, with each such assignment setting the autograd flag instead (the probe "
                "redirects it), gives the changed program's outputs and printed text (identical on the "
                "CPU, close on CUDA): nothing but the flag changed",
                "an original that never makes the assignment must be equivalent to the fixed program",
            ),
            differences=("parameters the code meant to freeze stop receiving gradients and updates",),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._assigned: List[Tuple[cst.Attribute, cst.CSTNode]] = []
        self._meant = False  # the file reads or defines `require_grad`

    def visit_Assign(self, node: cst.Assign) -> None:
        statement = self.parents[-1] if self.parents else node
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == _TYPO:
                self._assigned.append((target.target, statement))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == _TYPO and not any(node is target for target, _ in self._assigned):
            self._meant = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value == _TYPO:
            self._meant = True

    def visit_Param(self, node: cst.Param) -> None:
        if node.name.value == _TYPO:
            self._meant = True

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for statement in node.body.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    targets = ([t.target for t in small.targets] if isinstance(small, cst.Assign)
                               else [small.target] if isinstance(small, cst.AnnAssign) else [])
                    if any(isinstance(t, cst.Name) and t.value == _TYPO for t in targets):
                        self._meant = True

    def leave_Module(self, original_node: cst.Module) -> None:
        # The import scan walks the whole tree: only a file with the typo pays for it.
        if not self._assigned or not self._imports_torch(original_node):
            return
        if self._meant and self.option("ignore-when-read"):
            return
        for attribute, statement in self._assigned:
            fixed = attribute.with_changes(attr=cst.Name(_RIGHT))
            self.report(
                attribute,
                "`require_grad` is not a tensor attribute; did you mean `requires_grad`?",
                fix=self.replace(attribute, fixed, Applicability.UNSAFE, "Rename to `requires_grad`"),
                statement=statement,
            )

    def _imports_torch(self, module: cst.Module) -> bool:
        found = False

        class _Imports(cst.CSTVisitor):
            def visit_Import(self, node: cst.Import) -> None:
                nonlocal found
                found = found or any(_root(alias.name) == "torch" for alias in node.names)

            def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
                nonlocal found
                if not node.relative and node.module is not None:
                    found = found or _root(node.module) == "torch"

        module.visit(_Imports())
        return found


def _root(node: cst.BaseExpression) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""
