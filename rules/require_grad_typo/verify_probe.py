"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  It counts the assignments to an attribute
named ``require_grad`` on tensors and modules (which set a plain attribute,
as in the original program), and the assignments to ``requires_grad``'s
flag through them in a replay.

In a replay (``tools.replay`` is set), an assignment to ``require_grad`` does
what the fix makes it do: a tensor's ``requires_grad`` flag is set, and a
module gets a plain ``requires_grad`` attribute (as the fixed line gives it).
The original then differs from the fixed program only by that, and its
outputs must equal the fixed run's.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List

_TYPO = "require_grad"


class Probe:
    """Counts (and, in a replay, redirects) assignments to ``require_grad``."""

    def __init__(self, tools: Any) -> None:
        self.replaying = tools.replay is not None
        self.assigned = 0
        self._undo: List[Callable[[], None]] = []

    def __enter__(self) -> "Probe":
        import torch

        probe = self

        def tensor_get(tensor: Any) -> Any:
            try:
                return tensor.__dict__[_TYPO]
            except KeyError:
                raise AttributeError(_TYPO) from None

        def tensor_set(tensor: Any, value: Any) -> None:
            probe.assigned += 1
            if probe.replaying:
                tensor.requires_grad = value
            else:
                tensor.__dict__[_TYPO] = value

        def module_get(module: Any) -> Any:
            try:
                return module.__dict__[_TYPO]
            except KeyError:
                raise AttributeError(_TYPO) from None

        def module_set(module: Any, value: Any) -> None:
            probe.assigned += 1
            if probe.replaying:
                object.__setattr__(module, "requires_grad", value)
            else:
                module.__dict__[_TYPO] = value

        for owner, prop in ((torch.Tensor, property(tensor_get, tensor_set)),
                            (torch.nn.Module, property(module_get, module_set))):
            if _TYPO in vars(owner):
                continue
            setattr(owner, _TYPO, prop)
            self._undo.append(functools.partial(delattr, owner, _TYPO))
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def result(self) -> Dict[str, Any]:
        return {"assigned": self.assigned}
