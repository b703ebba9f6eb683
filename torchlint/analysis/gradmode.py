"""What a context manager or decorator does to autograd: the one grad-mode
fact, shared by the per-file training facts (libcst) and the cross-file
facts read with CPython's ``ast``.  Neither tree type is imported here: the
callers pass the qualified name and the first argument's literal value.
torch's own grad-mode API is listed here; other libraries' context managers
and decorators that set the mode (MONAI's ``eval_mode``) are data
(``[[grad_mode]]`` in ``data/autograd.toml``)."""

from __future__ import annotations

import enum
from typing import Dict, Optional

from torchlint.data.apidata import GradUse, library_grad_modes


class GradMode(enum.Enum):
    """What a region does to autograd."""

    DISABLED = "disabled"  # no_grad, inference_mode, set_grad_enabled(False)
    ENABLED = "enabled"  # enable_grad, set_grad_enabled(True), inference_mode(False)


GRAD_CONTEXTS: Dict[str, GradMode] = {
    "torch.no_grad": GradMode.DISABLED,
    "torch.inference_mode": GradMode.DISABLED,
    "torch.autograd.no_grad": GradMode.DISABLED,
    "torch.autograd.grad_mode.no_grad": GradMode.DISABLED,
    "torch.autograd.inference_mode": GradMode.DISABLED,
    "torch.autograd.grad_mode.inference_mode": GradMode.DISABLED,
    "torch.enable_grad": GradMode.ENABLED,
    "torch.autograd.enable_grad": GradMode.ENABLED,
    "torch.autograd.grad_mode.enable_grad": GradMode.ENABLED,
    "torch.set_grad_enabled": GradMode.ENABLED,
    "torch.autograd.set_grad_enabled": GradMode.ENABLED,
    "torch.autograd.grad_mode.set_grad_enabled": GradMode.ENABLED,
}
"""torch's grad-mode context managers and decorators, by public name."""


INERT_WHEN_DISCARDED = frozenset(name for name in GRAD_CONTEXTS if not name.endswith("set_grad_enabled"))
"""Of those, the context managers whose construction alone changes nothing (only
``__enter__`` does): a bare ``torch.no_grad()`` statement; ``set_grad_enabled(...)``
switches the mode when called."""


def is_grad_mode_api(qualified: Optional[str]) -> bool:
    """``qualified`` is a callable that sets the grad mode (torch's, or a
    library's from the data), whatever mode a given use of it sets:
    ``torch.set_grad_enabled(flag)`` decided at run time still manages it."""
    return qualified is not None and (qualified in GRAD_CONTEXTS or qualified in library_grad_modes())


def grad_mode_of(qualified: Optional[str], called: bool, first: Optional[bool]) -> Optional[GradMode]:
    """The grad mode ``qualified`` sets when used as a context manager or
    decorator (``called``: written as a call, ``first``: its first argument
    when that is a literal ``True``/``False``, else None), or None when it is
    not one or the mode depends on a run-time value."""
    mode = GRAD_CONTEXTS.get(qualified or "")
    if mode is None and qualified is not None:
        library = library_grad_modes().get(qualified)
        if library is not None:  # a library's, from the data: it takes no mode argument
            return GradMode.DISABLED if library is GradUse.DISABLED else GradMode.ENABLED
    if mode is None or qualified is None:
        return None
    if called and qualified.endswith("set_grad_enabled"):
        return None if first is None else (GradMode.ENABLED if first else GradMode.DISABLED)
    if called and qualified.endswith("inference_mode") and first is False:
        return GradMode.ENABLED
    return mode


MODULE_RETURNS_ITSELF = frozenset({
    "cuda", "cpu", "to", "float", "half", "double", "bfloat16", "eval", "train", "requires_grad_", "share_memory",
})
"""``nn.Module`` methods that return the module itself: ``net.cuda().eval()``
switches ``net`` to eval mode (the mode facts of both trees read it)."""
