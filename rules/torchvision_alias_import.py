"""TL708 torchvision-alias-import."""

from __future__ import annotations

from typing import ClassVar, Tuple

import libcst as cst

from torchlint.model import Applicability
from torchlint.analysis.names import dotted
from torchlint.ruleapi.rule import Example, FixAvailability, Rule, TorchRange
from torchlint.ruleapi.verification import Contract, VerificationSpec

# The submodules TorchFix's TOR203 covers.
_SUBMODULES = ("datasets", "models", "transforms")


class TorchvisionAliasImport(Rule):
    """## What it does
    Reports `import torchvision.models as models` (and the same for
    `datasets` and `transforms`): an import of a torchvision submodule
    renamed to its own last name.

    ## Why is this bad?
    It is a roundabout spelling of `from torchvision import models`, which
    binds the same module to the same name and is the form torchvision's
    documentation uses.  This is a matter of style, so the rule is off by
    default.

    ## Example
    ```python
    import torchvision.models as models
    ```

    Use instead:
    ```python
    from torchvision import models
    ```

    ## Fix safety
    Safe: both statements import `torchvision` and its submodule and bind the
    submodule to the same local name.  An `import` statement that imports
    several modules is reported without a fix.

    ## Options
    None.

    ## Source
    torchvision documentation, *Models and pre-trained weights* and
    *Transforming and augmenting images* (`from torchvision import models`,
    `from torchvision.transforms import v2`).
    """

    code = "TL708"
    name = "torchvision-alias-import"
    summary = "`import torchvision.models as models`: write `from torchvision import models`"
    aliases: ClassVar[Tuple[str, ...]] = ("TOR203",)
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "safe: `from torchvision import <module>`"
    default_enabled = False
    torch_range = TorchRange(note="any torchvision")
    trigger_words = ("torchvision.",)
    valid = (
        "from torchvision import models\n",
        "import torchvision.models as tvm\n",
        "import torchvision.models\n",
        "import torchvision.ops as ops\n",
    )
    invalid = (
        Example("import torchvision.models as models\n", fixed="from torchvision import models\n"),
        Example("import os, torchvision.datasets as datasets\n"),
    )
    verification = VerificationSpec(
        contract=Contract(
            level="identical",
            promise="The same module is bound to the same name; nothing that runs changes.",
            checks=("no program: the fix changes only how an import statement is spelled",),
        ),
    )

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = dotted(alias.name)
            if alias.asname is None or not isinstance(alias.asname.name, cst.Name) or name is None:
                continue
            package, _, submodule = name.partition(".")
            if package != "torchvision" or submodule not in _SUBMODULES or alias.asname.name.value != submodule:
                continue
            fix = None
            if len(node.names) == 1:
                new = cst.ImportFrom(
                    module=cst.Name("torchvision"),
                    names=(cst.ImportAlias(name=cst.Name(submodule)),),
                    semicolon=node.semicolon,
                )
                fix = self.replace(node, new, Applicability.SAFE, f"Write `from torchvision import {submodule}`")
            self.report(
                alias if fix is None else node,
                f"`import {name} as {submodule}` is `from torchvision import {submodule}`",
                fix=fix,
            )
