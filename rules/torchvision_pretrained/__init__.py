"""TL704 torchvision-pretrained."""

from __future__ import annotations

from typing import ClassVar, List, Optional, Tuple

import libcst as cst

from torchlint.ruleapi.fixes import keyword_argument, replace_argument, spell
from torchlint.model import Applicability
from torchlint.ruleapi.rule import Example, FixAvailability, Rule, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, VerificationSpec
from torchlint.analysis.values import literal_bool

from .weights import BUILDERS

_MODELS = "torchvision.models"
# Subpackages of torchvision.models whose builders and weights live apart
# from the classification ones.
_SUBPACKAGES = ("detection", "optical_flow", "quantization", "segmentation", "video")
_BUILDER_MODULES = frozenset({_MODELS, *(f"{_MODELS}.{p}" for p in _SUBPACKAGES)})
# The legacy parameters and what replaced them.
_RENAMED = (("pretrained", "weights"), ("pretrained_backbone", "weights_backbone"))


def _builder_key(qualified: Optional[str]) -> Optional[str]:
    """`detection.fasterrcnn_resnet50_fpn` for any path under
    `torchvision.models` that ends in a known builder (the builders are also
    reachable through their defining modules, e.g. `torchvision.models.resnet`)."""
    if qualified is None or not qualified.startswith(_MODELS + "."):
        return None
    parts = qualified[len(_MODELS) + 1:].split(".")
    package = parts[0] if len(parts) > 1 and parts[0] in _SUBPACKAGES else ""
    key = f"{package}.{parts[-1]}" if package else parts[-1]
    return key if key in BUILDERS else None


class TorchvisionPretrained(Rule):
    """## What it does
    Reports `pretrained=` and `pretrained_backbone=` arguments (and a
    `pretrained` flag passed as the only positional argument) to
    torchvision's model builders, such as `models.resnet50(pretrained=True)`
    or `detection.fasterrcnn_resnet50_fpn(pretrained_backbone=False)`.  A
    table in the rule knows, for about 120 builders, which weights
    `pretrained=True` stood for.  Builders looked up at run time on
    torchvision's modules (`models.__dict__[arch](pretrained=True)`,
    `getattr(torchvision.models, name)(pretrained=...)`) are reported too,
    for the keyword flags only; the same lookups on other modules are not.

    ## Why is this bad?
    torchvision 0.13 replaced the boolean flags with `weights=` and
    `weights_backbone=`, which name the exact weights to load (and carry
    their preprocessing transforms, categories and accuracy).  The flags
    still work through a compatibility shim that warns on every call, and
    torchvision has announced their removal.

    ## Example
    ```python
    from torchvision import models

    model = models.resnet50(pretrained=True)
    scratch = models.vgg16(pretrained=False)
    ```

    Use instead:
    ```python
    model = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V1)
    scratch = models.vgg16(weights=None)
    ```

    ## Fix safety
    Safe for literal `True`/`False`: the fix writes the weights the
    compatibility shim loads for `pretrained=True`, which are the model's
    first published weights (`IMAGENET1K_V1`, `COCO_V1`, `KINETICS400_V1`,
    ...), not `DEFAULT` (for `resnet50`, `DEFAULT` is the better
    `IMAGENET1K_V2`, so switching to it changes the model's outputs; do that
    on purpose).  `False` becomes `None`.  A value that is not a literal
    (`pretrained=args.pretrained`) is reported without a fix, as are builders
    whose `True` has no single equivalent (`vit_h_14`, `regnet_y_128gf`, the
    quantized builders, whose weights depend on `quantize`, and
    `resnet_fpn_backbone`), calls that already pass `weights=`, and
    builders looked up at run time: their weights enum is unknown, and the
    string `weights="DEFAULT"` that every builder accepts names the newest
    weights, not necessarily those `pretrained=True` loaded.

    ## Options
    None.

    ## Source
    torchvision documentation, *Models and pre-trained weights* (the
    multi-weight API and the deprecation of `pretrained`), and the
    torchvision 0.13 release notes.
    """

    code = "TL704"
    name = "torchvision-pretrained"
    summary = "torchvision `pretrained=`/`pretrained_backbone=` is deprecated; pass `weights=`"
    aliases: ClassVar[Tuple[str, ...]] = ("TOR201",)
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "safe for literals: `weights=<Model>_Weights.<first weights>` / `weights=None`"
    torch_range = TorchRange(
        min=TorchVersion(1, 12),
        note="torchvision 0.13 added `weights=`; 0.13 pairs with torch 1.12, so the rule runs for torch 1.12 and newer",
    )
    trigger_words = ("torchvision",)  # a positional flag need not say "pretrained"
    valid = (
        "from torchvision import models\nm = models.resnet50(weights=models.ResNet50_Weights.DEFAULT)\n",
        "import timm\nm = timm.create_model('resnet50', pretrained=True)\n",
        "from transformers import AutoModel\nm = AutoModel.from_pretrained('bert-base-uncased')\n",
    )
    invalid = (
        Example(
            "from torchvision import models\nm = models.resnet50(pretrained=True)\n",
            fixed="from torchvision import models\nm = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V1)\n",
        ),
        Example(
            "import torchvision\nm = torchvision.models.vgg16(pretrained=False)\n",
            fixed="import torchvision\nm = torchvision.models.vgg16(weights=None)\n",
        ),
        Example("from torchvision import models\nm = models.resnet50(pretrained=args.pretrained)\n"),
        Example("from torchvision import models\nm = models.resnet50(pretrained=True)\n", findings=0, torch="1.11"),
    )
    verification = VerificationSpec(
        contract=Contract(
            level="identical",
            promise="The builder loads the same weights that `pretrained=True` loaded (or none for `False`).",
            checks=("no program: torchvision is not a dependency of torchlint's verify environment",),
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        key = _builder_key(self.names.call_name(node))
        if key is None:
            if self._is_dynamic_builder(node.func):
                self._report_dynamic(node)
            return
        found: List[Tuple[cst.Arg, str, str]] = []  # argument, old name, new name
        for old, new in _RENAMED:
            arg = keyword_argument(node, old)
            if arg is not None:
                found.append((arg, old, new))
        positional = [arg for arg in node.args if arg.keyword is None]
        if positional and not positional[0].star and literal_bool(positional[0].value) is not None:
            found.append((positional[0], "pretrained", "weights"))
        if not found:
            return
        fixed: Optional[cst.Call] = node
        imports: List[str] = []
        for arg, old, new in found:
            value = self._weights(node, key, old, arg) if fixed is not None else None
            if value is None or keyword_argument(node, new) is not None:
                fixed = None
                continue
            expression, needs = value
            imports.extend(needs)
            assert fixed is not None
            current = next(a for a in fixed.args if a.value is arg.value)
            fixed = replace_argument(fixed, current, expression, keyword=new)
        names = " and ".join(f"`{old}`" for _, old, _ in found)
        wanted = " and ".join(f"`{new}`" for _, _, new in found)
        fix = None
        if fixed is not None:
            fix = self.replace(node, fixed, Applicability.SAFE, f"Pass {wanted}",
                               imports=tuple(dict.fromkeys(imports)))
        verb = "is" if len(found) == 1 else "are"
        self.report(node, f"{names} {verb} deprecated since torchvision 0.13; pass {wanted}", fix=fix)

    def _is_dynamic_builder(self, func: cst.BaseExpression) -> bool:
        """`models.__dict__[name]` or `getattr(models, name)` where `models`
        is `torchvision.models` (or one of its builder subpackages): a
        builder chosen at run time, so its weights enum is unknown."""
        holder: Optional[cst.BaseExpression] = None
        if (
            isinstance(func, cst.Subscript)
            and isinstance(func.value, cst.Attribute)
            and func.value.attr.value == "__dict__"
        ):
            holder = func.value.value
        elif (
            isinstance(func, cst.Call)
            and len(func.args) == 2
            and not any(a.keyword or a.star for a in func.args)
            and isinstance(func.func, cst.Name)
            and func.func.value == "getattr"
            and not self.names.scopes.resolve(func.func)  # the builtin, not a shadowing name
        ):
            holder = func.args[0].value
        if holder is None:
            return False
        return self.names.qualified_name(holder) in _BUILDER_MODULES

    def _report_dynamic(self, node: cst.Call) -> None:
        found = [(old, new) for old, new in _RENAMED if keyword_argument(node, old) is not None]
        if not found:
            return
        names = " and ".join(f"`{old}`" for old, _ in found)
        wanted = " and ".join(f"`{new}`" for _, new in found)
        verb = "is" if len(found) == 1 else "are"
        self.report(
            node,
            f"{names} {verb} deprecated since torchvision 0.13; pass {wanted}",
            hint=(
                "The builder is chosen at run time, so no weights enum can be written: "
                "`weights=\"DEFAULT\"` names each builder's best weights, which may differ "
                "from what `pretrained=True` loaded"
            ),
        )

    def _weights(
        self, call: cst.Call, key: str, old: str, arg: cst.Arg
    ) -> Optional[Tuple[cst.BaseExpression, Tuple[str, ...]]]:
        """What replaces the argument's value, and the imports that needs."""
        if arg.keyword is None and len([a for a in call.args if a.keyword is None]) > 1:
            return None  # a positional flag followed by more positional arguments
        flag = literal_bool(arg.value)
        if flag is None:
            return None
        if not flag:
            return cst.Name("None"), ()
        entry = BUILDERS[key]
        member = entry.pretrained if old == "pretrained" else entry.backbone
        if member is None:
            return None
        package = key.split(".")[0] if "." in key and old == "pretrained" else ""
        module = f"{_MODELS}.{package}" if package else _MODELS
        enum, _, value = member.partition(".")
        callee = call.func
        if isinstance(callee, cst.Attribute) and self.names.qualified_name(callee.value) == module:
            # `models.resnet50(...)`: the enum through the same module prefix.
            prefix = self.context.module.code_for_node(callee.value)
            return cst.parse_expression(f"{prefix}.{enum}.{value}"), ()
        local = self.names.local_name_for(module)
        if local is not None:
            return cst.parse_expression(f"{local}.{enum}.{value}"), ()
        spelled = spell(self.names, f"{module}.{enum}", module=module)
        if spelled is None:
            return None
        return cst.parse_expression(f"{spelled.text}.{value}"), spelled.imports
