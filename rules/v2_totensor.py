"""TL706 v2-totensor."""

from __future__ import annotations

from typing import ClassVar, List, Optional, Tuple

import libcst as cst

from torchlint.ruleapi.fixes import spell
from torchlint.model import Applicability
from torchlint.ruleapi.rule import Example, FileContext, FixAvailability, Rule, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, VerificationSpec

_V2 = "torchvision.transforms.v2"
_TO_TENSOR = f"{_V2}.ToTensor"
_MESSAGE = ("`v2.ToTensor` is deprecated (torchvision 0.16); use "
            "`v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`")


class V2ToTensor(Rule):
    """## What it does
    Reports uses of `torchvision.transforms.v2.ToTensor`: calls, and other
    references such as passing the class around.  The v1 transform
    `torchvision.transforms.ToTensor` is not deprecated and is not reported.

    ## Why is this bad?
    torchvision 0.16 deprecated `v2.ToTensor` (it warns when constructed)
    and says it will be removed: in the v2 API, turning an image into a
    tensor (`v2.ToImage()`) and converting and rescaling its dtype
    (`v2.ToDtype(torch.float32, scale=True)`) are separate steps.

    ## Example
    ```python
    from torchvision.transforms import v2

    transform = v2.Compose([v2.RandomResizedCrop(224), v2.ToTensor()])
    ```

    Use instead:
    ```python
    transform = v2.Compose([
        v2.RandomResizedCrop(224),
        v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)]),
    ])
    ```

    ## Fix safety
    Unsafe.  For the common input, a PIL image or a `uint8` NumPy array, the
    replacement gives the same float32 values in [0, 1] in the same
    channels-first layout, but not everything agrees: the result is a
    `tv_tensors.Image` (a `Tensor` subclass) rather than a plain `Tensor`;
    `ToTensor` leaves an input that is already a tensor untouched, while the
    replacement rescales a `uint8` tensor and casts any other to float32;
    and `ToTensor` keeps a floating NumPy array's dtype (float64 stays
    float64) where the replacement casts it to float32.  Only a call with
    no arguments is fixed; other references are reported without a fix.

    ## Options
    None.

    ## Source
    torchvision documentation, *Transforming and augmenting images*
    (`v2.ToTensor`: "deprecated ... use
    `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`
    instead") and the torchvision 0.16 release notes.
    """

    code = "TL706"
    name = "v2-totensor"
    summary = "`transforms.v2.ToTensor` is deprecated; use `ToImage()` + `ToDtype(torch.float32, scale=True)`"
    aliases: ClassVar[Tuple[str, ...]] = ("TOR202",)
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`"
    torch_range = TorchRange(
        min=TorchVersion(2, 1),
        note="torchvision 0.16 deprecated it; 0.16 pairs with torch 2.1, so the rule runs for torch 2.1 and newer",
    )
    trigger_words = ("ToTensor",)
    valid = (
        "from torchvision import transforms\nt = transforms.ToTensor()\n",
        "import torch\nfrom torchvision.transforms import v2\n"
        "t = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])\n",
    )
    invalid = (
        Example(
            "from torchvision.transforms import v2\nt = v2.ToTensor()\n",
            fixed="import torch\nfrom torchvision.transforms import v2\n"
                  "t = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])\n",
        ),
        Example("from torchvision.transforms.v2 import ToTensor\nkinds = [ToTensor]\n"),
        Example("from torchvision.transforms import v2\nt = v2.ToTensor()\n", findings=0, torch="2.0"),
    )
    verification = VerificationSpec(
        contract=Contract(
            level="close for PIL images and uint8 arrays",
            promise="For PIL images and uint8 NumPy arrays the transform gives the same float32 values "
                    "in [0, 1]; other inputs are converted differently (see Fix safety).",
            checks=("no program: torchvision is not a dependency of torchlint's verify environment",),
            differences=(
                "the result is a `tv_tensors.Image`, not a plain `Tensor`",
                "tensor inputs and floating NumPy arrays are cast and rescaled where `ToTensor` left them",
            ),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._callees: List[cst.BaseExpression] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.names.call_name(node) != _TO_TENSOR:
            return
        self._callees.append(node.func)
        fix = None
        if not node.args:
            replacement = self._replacement(node.func)
            if replacement is not None:
                new, imports = replacement
                fix = self.replace(node, new.with_changes(lpar=node.lpar, rpar=node.rpar), Applicability.UNSAFE,
                                   "Use `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`",
                                   imports=imports)
        self.report(node, _MESSAGE, fix=fix)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._reference(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def _reference(self, node: cst.BaseExpression) -> None:
        """A use that is not a call: report without a fix."""
        # The name's resolution first: it rules out almost every node, so the
        # scans of the callees and of the parent stack run only for the rest.
        if self.names.qualified_name(node) != _TO_TENSOR:
            return
        if any(node is callee for callee in self._callees):
            return
        if any(isinstance(parent, (cst.Import, cst.ImportFrom)) for parent in self.parents):
            return
        parent = self.parents[-1] if self.parents else None
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return  # the `ToTensor` of `v2.ToTensor`: the attribute itself is checked
        self.report(node, _MESSAGE)

    def _replacement(self, callee: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, Tuple[str, ...]]]:
        """The replacement: through the callee's module prefix (`v2.ToTensor`
        gives `v2.Compose`), else spelled through the file's imports."""
        texts: List[str] = []
        imports: List[str] = []
        prefix = None
        if isinstance(callee, cst.Attribute):
            prefix = self.context.module.code_for_node(callee.value)
        for qualified, module in ((f"{_V2}.Compose", _V2), (f"{_V2}.ToImage", _V2),
                                  (f"{_V2}.ToDtype", _V2), ("torch.float32", None)):
            if prefix is not None and module is not None:
                texts.append(f"{prefix}.{qualified.rsplit('.', 1)[1]}")
                continue
            spelled = spell(self.names, qualified, module=module)
            if spelled is None:
                return None
            texts.append(spelled.text)
            imports.extend(spelled.imports)
        compose, to_image, to_dtype, float32 = texts
        expression = cst.parse_expression(f"{compose}([{to_image}(), {to_dtype}({float32}, scale=True)])")
        return expression, tuple(dict.fromkeys(imports))
