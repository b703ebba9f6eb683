"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  It keeps every optimizer and gradient scaler
the program creates and, at each call of ``clip_grad_norm_`` or
``clip_grad_value_``, records whether the gradients it clips were still
multiplied by a loss scale: an enabled scaler has scaled a loss and not yet
unscaled an optimizer that owns those parameters.

In a replay (``tools.replay`` is set), such a clip first calls
``scaler.unscale_(optimizer)``, as the fix does: the original then clips the
true gradients and differs in nothing else.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Dict, List, Tuple


class Probe:
    """Records whether each clip saw scaled gradients (and, in a replay, unscales first)."""

    def __init__(self, tools: Any) -> None:
        self.replaying = tools.replay is not None
        self.optimizers: List[Any] = []  # weak references
        self.scalers: List[Any] = []
        self.clips: List[Dict[str, Any]] = []
        self._undo: List[Callable[[], None]] = []

    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        original = getattr(owner, name)
        setattr(owner, name, replacement)
        self._undo.append(functools.partial(setattr, owner, name, original))

    def __enter__(self) -> "Probe":
        import torch
        import torch.nn.utils as utils
        from torch.nn.utils import clip_grad

        probe = self
        optimizer_init = torch.optim.Optimizer.__init__

        @functools.wraps(optimizer_init)
        def kept_optimizer(optimizer: Any, *args: Any, **kwargs: Any) -> None:
            optimizer_init(optimizer, *args, **kwargs)
            probe.optimizers.append(weakref.ref(optimizer))

        self._patch(torch.optim.Optimizer, "__init__", kept_optimizer)
        scaler_class = getattr(getattr(torch, "amp", None), "GradScaler", None)
        if scaler_class is not None:
            scaler_init = scaler_class.__init__

            @functools.wraps(scaler_init)
            def kept_scaler(scaler: Any, *args: Any, **kwargs: Any) -> None:
                scaler_init(scaler, *args, **kwargs)
                probe.scalers.append(weakref.ref(scaler))

            self._patch(scaler_class, "__init__", kept_scaler)
        for name in ("clip_grad_norm_", "clip_grad_value_"):
            original = getattr(clip_grad, name)
            wrapped = self._clip(original)
            for owner in (utils, clip_grad):
                if getattr(owner, name, None) is original:
                    self._patch(owner, name, wrapped)
        return self

    def _scaled(self, parameters: List[Any]) -> List[Tuple[Any, Any]]:
        """(scaler, optimizer) pairs whose scaled, not yet unscaled gradients these are."""
        from torch.amp.grad_scaler import OptState

        wanted = {id(p) for p in parameters}
        pairs = []
        for scaler_ref in self.scalers:
            scaler = scaler_ref()
            if scaler is None or not scaler.is_enabled() or getattr(scaler, "_scale", None) is None:
                continue
            for optimizer_ref in self.optimizers:
                optimizer = optimizer_ref()
                if optimizer is None:
                    continue
                owns = any(id(p) in wanted for group in optimizer.param_groups for p in group["params"])
                state = scaler._per_optimizer_states.get(id(optimizer))
                stage = state["stage"] if state is not None else OptState.READY
                if owns and stage is OptState.READY:
                    pairs.append((scaler, optimizer))
        return pairs

    def _clip(self, original: Callable[..., Any]) -> Callable[..., Any]:
        import torch

        probe = self

        @functools.wraps(original)
        def clip(parameters: Any, *args: Any, **kwargs: Any) -> Any:
            listed = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
            pairs = probe._scaled(listed)
            if probe.replaying:
                for scaler, optimizer in pairs:
                    scaler.unscale_(optimizer)
            result = original(listed, *args, **kwargs)
            probe.clips.append({"scaled": bool(pairs) and not probe.replaying})
            return result

        return clip

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def result(self) -> Dict[str, Any]:
        return {"clips": len(self.clips), "scaled": sum(1 for clip in self.clips if clip["scaled"])}
