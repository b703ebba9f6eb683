"""TL701 deprecated-amp-api."""

from __future__ import annotations

from typing import Dict, Mapping, Optional

import libcst as cst

from torchlint.data import apidata
from torchlint.data.apidata import Deprecation
from torchlint.ruleapi.fixes import bind, set_keyword
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import (
    Example, FileContext, FixAvailability, FixRequest, OptionValue, Rule, TorchRange, TorchVersion,
)
from torchlint.ruleapi.verification import Contract, VerificationSpec

from .._deprecated_api import Respelled, is_amp, replacement_exists, respell

# The device each deprecated namespace implies.
_DEVICES = {"torch.cuda.amp.": "cuda", "torch.cpu.amp.": "cpu"}
# Replacements that take the device as their first positional argument; the
# decorators take it as the keyword `device_type`.
_DEVICE_FIRST = frozenset({"torch.amp.autocast", "torch.amp.GradScaler"})


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _device(symbol: str) -> str:
    return next(device for prefix, device in _DEVICES.items() if symbol.startswith(prefix))


def _string(text: str) -> cst.SimpleString:
    return cst.SimpleString(f'"{text}"')


def rewrite_call(
    call: cst.Call, entry: Deprecation, callee: cst.BaseExpression, oldest: TorchVersion
) -> Optional[cst.Call]:
    """The call of the replacement: every positional argument bound to the
    OLD signature and passed by keyword, then the device added, so
    ``autocast(use_fp16)`` becomes ``autocast("cuda", enabled=use_fp16)``.
    None when an unpacking hides which parameters are passed."""
    assert entry.replacement is not None
    new = call.with_changes(func=callee)
    old_signature = apidata.signatures().get(entry.symbol)
    if old_signature is not None:
        bound = bind(call, old_signature, oldest)
        if bound.unknown:
            return None
        keywords = {id(bound.arguments[name]): name for name in bound.by_position}
        equal = next((a.equal for a in call.args if isinstance(a.equal, cst.AssignEqual)), _EQUAL)
        new = new.with_changes(args=[
            arg.with_changes(keyword=cst.Name(keywords[id(arg)]), equal=equal) if id(arg) in keywords else arg
            for arg in call.args
        ])
    elif any(arg.star for arg in call.args):
        return None
    device = _string(_device(entry.symbol))
    if entry.replacement in _DEVICE_FIRST:
        first = cst.Arg(
            value=device,
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if new.args else cst.MaybeSentinel.DEFAULT,
        )
        return new.with_changes(args=[first, *new.args])
    return set_keyword(new, "device_type", device)


class DeprecatedAmpApi(Rule):
    """## What it does
    Reports the device-specific mixed-precision API that torch 2.4
    deprecated: `torch.cuda.amp.autocast`, `torch.cuda.amp.GradScaler`,
    `torch.cuda.amp.custom_fwd`, `torch.cuda.amp.custom_bwd` and
    `torch.cpu.amp.autocast`, however they are imported (`from torch.cuda
    import amp`, `from torch.cuda.amp import autocast`), as calls, context
    managers and decorators.  A finding is made only when the replacement
    exists in the oldest torch the project targets (`torch-version`):
    `torch.amp.autocast` from 1.10, `torch.amp.GradScaler` from 2.3,
    `torch.amp.custom_fwd`/`custom_bwd` from 2.4.

    ## Why is this bad?
    Since torch 2.4 every call warns (`FutureWarning: torch.cuda.amp.autocast(args...)
    is deprecated. Please use torch.amp.autocast('cuda', args...) instead`),
    once per process and call site, and the device-specific names are slated
    for removal.  The `torch.amp` spelling names the device once and works
    the same way for CUDA, CPU, XPU and other back ends.

    ## Example
    ```python
    from torch.cuda.amp import GradScaler, autocast

    scaler = GradScaler(2.0**14)
    with autocast(use_amp):
        loss = model(x)
    ```

    Use instead:
    ```python
    import torch

    scaler = torch.amp.GradScaler("cuda", init_scale=2.0**14)
    with torch.amp.autocast("cuda", enabled=use_amp):
        loss = model(x)
    ```

    ## Fix safety
    Safe.  The replacement takes the device type as its first positional
    argument, so the fix first binds each positional argument to the old
    signature and passes it by keyword: `autocast(use_amp)` means
    `enabled=use_amp` and becomes `torch.amp.autocast("cuda",
    enabled=use_amp)`; moving the arguments along unchanged would pass
    `use_amp` as the dtype and fail.  A call with `*args` or `**kwargs` is
    reported without a fix.  The decorators get `device_type="cuda"`.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center) and *Chapter 16: GPU
    Acceleration & Distributed Training* (an online PyTorch training book)
    teach mixed precision with `from torch.cuda.amp import autocast,
    GradScaler`, the spelling this rule migrates; *DGX cluster guidelines*
    (a GPU cluster's user guide) already writes
    `torch.autocast(device_type="cuda")`.  The deprecation itself is in the
    PyTorch 2.4 release notes and on the "Automatic Mixed Precision package
    - torch.amp" page of the PyTorch documentation.
    """

    code = "TL701"
    name = "deprecated-amp-api"
    summary = "`torch.cuda.amp` / `torch.cpu.amp` is deprecated; use `torch.amp` with a device type"
    aliases = ("TOR101",)
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "safe: `torch.amp.autocast(\"cuda\", ...)` with positional arguments bound to the old signature"
    torch_range = TorchRange(min=TorchVersion(1, 10), note="`torch.amp.autocast` exists from 1.10, "
                             "`torch.amp.GradScaler` from 2.3, `torch.amp.custom_fwd` from 2.4")
    trigger_words = ("amp",)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """The old modules are reached through the name `amp` (`torch.cuda.amp.autocast`,
        `from torch.cuda import amp`) or by importing from them (`from torch.cuda.amp
        import autocast`); `amp` inside `example` or `clamp` does not count."""
        return facts.mentions(cls.trigger_words) or any(
            name.startswith(module) for name in facts.imports for module in ("torch.cuda.amp.", "torch.cpu.amp.")
        )
    valid = (
        'import torch\nwith torch.amp.autocast("cuda"):\n    pass\n',
        'import torch\nscaler = torch.amp.GradScaler("cuda")\n',
        "import apex.amp as amp\nwith amp.autocast():\n    pass\n",
        "def autocast(flag):\n    return flag\nautocast(True)\n",
    )
    invalid = (
        Example(
            "import torch\nwith torch.cuda.amp.autocast(use_fp16):\n    pass\n",
            fixed='import torch\nwith torch.amp.autocast("cuda", enabled=use_fp16):\n    pass\n',
        ),
        Example(
            "from torch.cuda import amp\nscaler = amp.GradScaler(1024.0)\n",
            fixed='import torch\nfrom torch.cuda import amp\nscaler = torch.amp.GradScaler("cuda", init_scale=1024.0)\n',
        ),
        Example(
            "import torch\n@torch.cuda.amp.custom_fwd\ndef forward(ctx, x):\n    return x\n",
            fixed='import torch\n@torch.amp.custom_fwd(device_type="cuda")\ndef forward(ctx, x):\n    return x\n',
        ),
        Example("import torch\nscaler = torch.cuda.amp.GradScaler()\n", findings=0, torch="2.2"),
        Example("import torch\nwith torch.cuda.amp.autocast():\n    pass\n", findings=0, torch="1.9"),
    )

    verification = VerificationSpec(
        programs=("verify_program.py",),
        contract=Contract(
            level="identical",
            promise=(
                "`torch.amp.autocast(device, ...)` and `torch.amp.GradScaler(\"cuda\", ...)` are what the "
                "deprecated names call, with the same arguments bound to the same parameters: training "
                "gives the same parameters, losses and outputs."
            ),
            checks=("every output is close to the original's (parameters, losses, logits)",),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._table: Dict[str, Deprecation] = {
            symbol: entry for symbol, entry in apidata.deprecations().items() if is_amp(symbol)
        }

    def _entry(self, expr: cst.BaseExpression) -> Optional[Deprecation]:
        entry = self._table.get(self.names.qualified_name(expr) or "")
        if entry is None or not replacement_exists(entry, self.context.torch_version):
            return None
        return entry

    def _message(self, entry: Deprecation) -> str:
        device = _device(entry.symbol)
        how = f'"{device}", ...' if entry.replacement in _DEVICE_FIRST else f'..., device_type="{device}"'
        return f"`{entry.symbol}` is deprecated since torch {entry.deprecated_in}; use `{entry.replacement}({how})`"

    def _callee(self, func: cst.BaseExpression, entry: Deprecation) -> Optional[Respelled]:
        assert entry.replacement is not None
        return respell(func, entry.symbol, entry.replacement, self.names, {})

    def visit_Call(self, node: cst.Call) -> None:
        entry = self._entry(node.func)
        if entry is None:
            return
        fix: Optional[FixRequest] = None
        spelled = self._callee(node.func, entry)
        if spelled is not None:
            new = rewrite_call(node, entry, spelled.expression, self.context.torch_version)
            if new is not None:
                fix = self.replace(node, new, entry.safety, f"Use `{entry.replacement}`", imports=spelled.imports)
        self.report(node, self._message(entry), fix=fix)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if isinstance(node.decorator, cst.Call):
            return  # visit_Call reports it
        entry = self._entry(node.decorator)
        if entry is None:
            return
        fix: Optional[FixRequest] = None
        spelled = self._callee(node.decorator, entry)
        if spelled is not None and entry.replacement not in _DEVICE_FIRST:
            call = cst.Call(func=spelled.expression, args=[
                cst.Arg(value=_string(_device(entry.symbol)), keyword=cst.Name("device_type"), equal=_EQUAL)])
            fix = self.replace(node.decorator, call, entry.safety, f"Use `{entry.replacement}`",
                               imports=spelled.imports)
        self.report(node.decorator, self._message(entry), fix=fix)

