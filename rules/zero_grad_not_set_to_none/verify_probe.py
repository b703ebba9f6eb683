"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  At every optimizer step it counts the
parameters whose gradient is ``None`` and those whose gradient is all zeros:
the fix turns the second kind into the first, which the optimizer skips.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional


class Probe:
    """Counts parameters without a gradient, or with a zero one, at each step."""

    def __init__(self, tools: Any) -> None:
        del tools
        self.steps = 0
        self.most_without_grad = 0  # parameters whose .grad is None at a step
        self.most_zero_grad = 0  # parameters whose .grad is all zeros at a step
        self._undo: Optional[Callable[[], None]] = None

    def __enter__(self) -> "Probe":
        try:
            from torch.optim.optimizer import register_optimizer_step_pre_hook
        except ImportError:  # torch < 2.0
            return self
        self._undo = register_optimizer_step_pre_hook(self._before_step).remove
        return self

    def __exit__(self, *exc: object) -> None:
        if self._undo is not None:
            self._undo()
            self._undo = None

    def _before_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        without = zero = 0
        for group in optimizer.param_groups:
            parameters: List[Any] = group["params"]
            for parameter in parameters:
                if not parameter.requires_grad:
                    continue
                if parameter.grad is None:
                    without += 1
                elif not parameter.grad.is_sparse and not bool(parameter.grad.any()):
                    zero += 1
        self.steps += 1
        self.most_without_grad = max(self.most_without_grad, without)
        self.most_zero_grad = max(self.most_zero_grad, zero)

    def result(self) -> Dict[str, int]:
        return {
            "steps": self.steps,
            "most_without_grad": self.most_without_grad,
            "most_zero_grad": self.most_zero_grad,
        }
