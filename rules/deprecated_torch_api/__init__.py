"""TL703 deprecated-torch-api."""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence, Tuple

import libcst as cst

from torchlint.data import apidata
from torchlint.data.apidata import Deprecation, FixKind
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FileContext, FixAvailability, FixRequest, Option, OptionValue, Rule, TorchRange
from torchlint.ruleapi.verification import Contract, VerificationSpec

from .._deprecated_api import import_rewrite, imported_symbols, is_amp, renamed_by_imports, replacement_exists, respell
from .replacers import REPLACERS, Site


def _owned() -> Dict[str, Deprecation]:
    return {symbol: entry for symbol, entry in apidata.deprecations().items() if not is_amp(symbol)}


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def _in_import_fallback(parents: Sequence[cst.CSTNode]) -> bool:
    """Whether the node sits in an ``except ImportError:`` handler: the
    old name imported only where the new one is missing (older torch), as
    compatibility code does after ``try: from torch.func import vmap``."""
    for parent in parents:
        if isinstance(parent, cst.ExceptHandler) and parent.type is not None:
            caught = parent.type.elements if isinstance(parent.type, cst.Tuple) else [parent.type]
            for element in caught:
                value = element.value if isinstance(element, cst.Element) else element
                if isinstance(value, cst.Name) and value.value in _IMPORT_ERRORS:
                    return True
    return False


class DeprecatedTorchApi(Rule):
    """## What it does
    Reports calls and `from ... import`s of torch functions and classes that
    are deprecated or removed, as listed in torchlint's deprecation table
    (`torchlint/data/deprecations.toml`): the removed `torch.solve`,
    `torch.symeig`, `torch.lstsq`, `torch.eig` and `torch.matrix_rank`; the
    deprecated `torch.ger`, `torch.chain_matmul`, `torch.qr`,
    `torch.cholesky`, `torch.lu`, `torch.lu_solve`,
    `torch.triangular_solve`, `torch.range`, `torch.testing.assert_allclose`,
    `torch.nn.utils.weight_norm`, `torch.backends.cuda.sdp_kernel`,
    `torch.utils._pytree._register_pytree_node` and the `functorch`
    transforms that moved to `torch.func`.  A symbol is reported only when
    the project's target torch version (`torch-version`) already has its
    replacement.  An import inside an `except ImportError:` (or
    `ModuleNotFoundError`) handler is compatibility code for older torch,
    reached only where the new name is missing, and is left alone.

    ## Why is this bad?
    A removed function raises as soon as the code runs on a current torch.
    A deprecated one warns on every call (or, for some, only in its
    documentation) and goes away in a later release; its replacement in
    `torch.linalg` or `torch.func` is the one that gets fixes, batching and
    autograd support.

    ## Example
    ```python
    import torch
    from functorch import vmap

    rows = torch.range(0, 9)
    q, r = torch.qr(a, some=False)
    product = torch.chain_matmul(a, b, c)
    outer = torch.ger(u, v)
    ```

    Use instead:
    ```python
    import torch
    from torch.func import vmap

    rows = torch.arange(0, 10)
    q, r = torch.linalg.qr(a, mode="complete")
    product = torch.linalg.multi_dot([a, b, c])
    outer = torch.outer(u, v)
    ```

    ## Fix safety
    Each table entry says whether its fix keeps behaviour.  Safe: drop-in
    renames (`ger` → `outer`, `functorch.vmap` → `torch.func.vmap`,
    `_register_pytree_node` → `register_pytree_node`, `F.sigmoid` →
    `torch.sigmoid`) and `chain_matmul(a, b, c)` → `linalg.multi_dot([a, b,
    c])`.  Unsafe: `torch.range(a, b)` → `torch.arange(a, b + 1)` (the end
    shifts by one step, and without `dtype=` integer arguments now give an
    int64 tensor instead of the default float type); `torch.qr(some=False)`
    → `linalg.qr(mode="complete")` and `torch.cholesky(upper=True)` →
    `linalg.cholesky(...).mH` (same values, other kernels: results may
    differ in the last bits); `assert_allclose` → `assert_close` (also
    checks dtype and device, other default tolerances); legacy
    `torch.cuda.FloatTensor(2, 3)` → `torch.empty(2, 3,
    dtype=torch.float32, device="cuda")`.  Removed functions have no fix:
    their replacements take arguments in another order or return other
    types.  A `from ... import` is rewritten when every name it imports is a
    drop-in rename into one module.

    ## Options
    - `documentation-only` (default `false`): also report deprecations that
      only the documentation announces and whose replacement is not a
      drop-in (`torch.norm`, `torch.svd`, `nn.UpsamplingNearest2d`, the
      legacy `torch.cuda.*Tensor` constructors).  Documentation-only
      deprecations with a safe rename (`torch.ger`, `F.sigmoid`, `F.tanh`)
      are always reported.

    ## Source
    The PyTorch documentation page of each function (its deprecation
    note), the `torch.linalg` deprecation notes of the 1.9 release
    (pytorch#57725, #57735, #57745), the removals of pytorch#70980–#70988,
    and "Migrating from functorch to torch.func" in the PyTorch
    documentation.  Every entry of the table names its source.
    """

    code = "TL703"
    name = "deprecated-torch-api"
    summary = "A deprecated or removed torch function is used; call its replacement"
    aliases = ("TOR001", "TOR004", "TOR101", "TOR103")
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = (
        "drop-in renames and `multi_dot`: safe; `range`→`arange`, `qr`, `cholesky`, "
        "`assert_close`, legacy constructors: unsafe; removed functions: none"
    )
    torch_range = TorchRange(note="each table entry is gated by its own deprecation release and its replacement's")
    options = {
        "documentation-only": Option(
            False, "Also report documentation-only deprecations whose replacement is not a drop-in."
        )
    }
    valid = (
        "import torch\nx = torch.outer(u, v)\n",
        "import torch\nq, r = torch.linalg.qr(a)\n",
        "import numpy as np\nq, r = np.linalg.qr(a)\n",
        "def ger(a, b):\n    return a\nger(1, 2)\n",
        "try:\n    from torch.func import vmap\nexcept ImportError:\n    from functorch import vmap\n",
        "import torch\ny = torch.norm(x)\n",
        "import torch\nx = torch.arange(0, 10)\n",
    )
    invalid = (
        Example("import torch\nx = torch.ger(u, v)\n", fixed="import torch\nx = torch.outer(u, v)\n"),
        Example(
            "import torch as th\nm = th.chain_matmul(a, b, c)\n",
            fixed="import torch as th\nm = th.linalg.multi_dot([a, b, c])\n",
        ),
        Example("import torch\nx = torch.range(0, 9)\n", fixed="import torch\nx = torch.arange(0, 10)\n"),
        Example(
            "import torch\nq, r = torch.qr(a, some=False)\n",
            fixed='import torch\nq, r = torch.linalg.qr(a, mode="complete")\n',
        ),
        Example("import torch\nx = torch.solve(b, a)\n"),
        Example("import torch\ny = torch.norm(x)\n", options={"documentation-only": True}),
        Example(
            "from functorch import vmap\nf = vmap(g)\n",
            fixed="from torch.func import vmap\nf = vmap(g)\n",
            findings=2,
        ),
        Example("import torch\nx = torch.chain_matmul(a, b)\n", findings=0, torch="1.8"),
    )
    verification = VerificationSpec(
        programs=("verify_ger.py", "verify_chain_matmul.py", "verify_range.py"),
        contract=Contract(
            level="identical",
            promise=(
                "`torch.outer` is `torch.ger`, `torch.linalg.multi_dot([a, b, c])` multiplies the same "
                "chain as `torch.chain_matmul(a, b, c)`, and `torch.arange(a, b + step, step)` holds the "
                "same values as `torch.range(a, b, step)`."
            ),
            checks=("every output is close to the original's (values, shapes and dtypes)",),
            differences=(
                "Without `dtype=`, `torch.range` with integer arguments returns the default float type and "
                "`torch.arange` returns int64.",
                "`multi_dot` may choose another multiplication order, so the last bits can differ.",
            ),
        ),
    )

    @classmethod
    def triggers(cls, options: Mapping[str, OptionValue]) -> Tuple[str, ...]:
        """A file can only refer to a table entry by writing its last name."""
        return tuple(sorted({symbol.rsplit(".", 1)[-1] for symbol in _owned()}))

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A table entry resolves only through an import of its package
        (`torch`, `functorch`) and is reached through its last name, as an
        attribute or an imported name (a bare `range(...)` is the builtin)."""
        packages = {symbol.split(".", 1)[0] for symbol in _owned()}
        imported = {name.split(".", 1)[0] for name in facts.imports}
        return not packages.isdisjoint(imported) and facts.reaches(cls.triggers(options))

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._table = _owned()
        self._renamed: Optional[Mapping[str, str]] = None

    def _wanted(self, entry: Optional[Deprecation]) -> bool:
        if entry is None:
            return False
        version = self.context.torch_version
        if not (entry.applies_to(version) or entry.removed(version)) or not replacement_exists(entry, version):
            return False
        if entry.documentation_only and not self.option("documentation-only"):
            return entry.fix is FixKind.RENAME and entry.safety is Applicability.SAFE
        return True

    def _describe(self, entry: Deprecation) -> str:
        if entry.removed_in is not None and entry.removed(self.context.torch_version):
            state = f"was removed in torch {entry.removed_in}"
        elif entry.removed_in is not None:
            state = f"is deprecated and removed in torch {entry.removed_in}"
        else:
            state = f"is deprecated since torch {entry.deprecated_in}"
        use = f"; use `{entry.replacement}`" if entry.replacement else ""
        return f"`{entry.symbol}` {state}{use}"

    def visit_Call(self, node: cst.Call) -> None:
        entry = self._table.get(self.names.call_name(node) or "")
        if not self._wanted(entry):
            return
        assert entry is not None
        self.report(node, self._describe(entry), fix=self._fix(node, entry), hint=entry.note)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if _in_import_fallback(self.parents):
            return
        symbols = [s for s in imported_symbols(node, self._table) if self._wanted(s.entry)]
        rewritten = import_rewrite(node, self._table) if symbols else None
        for index, symbol in enumerate(symbols):
            fix = None
            if index == 0 and rewritten is not None:
                fix = self.replace(node, rewritten, Applicability.SAFE, "Import the replacements")
            self.report(node, f"import of {self._describe(symbol.entry)}", fix=fix, hint=symbol.entry.note)

    def _fix(self, node: cst.Call, entry: Deprecation) -> Optional[FixRequest]:
        if entry.fix is FixKind.NONE:
            return None
        if self._renamed is None:
            self._renamed = renamed_by_imports(self.context.module, self._table)
        callee = None
        imports: Tuple[str, ...] = ()
        if entry.replacement is not None:
            if isinstance(node.func, cst.Name) and self._renamed.get(node.func.value) == node.func.value:
                return None  # the import's fix renames it
            spelled = respell(node.func, entry.symbol, entry.replacement, self.names, self._renamed)
            if spelled is None:
                return None
            callee, imports = spelled.expression, spelled.imports
        if entry.fix is FixKind.RENAME:
            if callee is None:
                return None
            new: Optional[cst.BaseExpression] = node.with_changes(func=callee)
        else:
            replacer = REPLACERS.get(entry.symbol)
            new = None if replacer is None else replacer(Site(node, callee, self.context.torch_version, self.names))
        if new is None:
            return None
        description = f"Use `{entry.replacement}`" if entry.replacement else "Use the modern constructor"
        return self.replace(node, new, entry.safety, description, imports=imports)
