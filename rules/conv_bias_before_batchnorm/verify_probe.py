"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  It watches every module call:

- a convolution with a bias whose output goes straight into a training-mode
  batch norm is a *pair*; at each such call it records how much the norm's
  mean subtraction cancels, ``1 + max |mean| / std`` over the channels of the
  norm's input: the factor by which rounding error grows when the bias is
  removed (the ``amplification`` of the error model);
- each top-level eval-mode call of a model holding a pair is replayed on a
  copy whose paired biases are scaled by the share of them the running means
  have absorbed so far, ``1 - (1 - momentum) ** steps``: with all of them
  scaled, and with each one alone (a fix, or a user, may remove only some).
  That copy computes what the fixed model (no bias, running means without
  it) must return for the same input, so the comparison can check the fixed
  run's eval output against it instead of only reporting that it differs.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Set, Tuple

MAX_EVAL_CALLS = 16  # eval-mode calls replayed per run (the first ones)


class Probe:
    """Pairs convolutions with the batch norms they feed; predicts eval outputs."""

    def __init__(self, tools: Any) -> None:
        self.tools = tools
        self.amplification = 1.0
        self.pairs: List[Tuple[Any, Any]] = []  # (conv, norm), each once
        self.eval_calls: List[Dict[str, Any]] = []
        self._paired: Set[int] = set()
        self._last_conv: Optional[Tuple[Any, int]] = None  # (conv, id of its output)
        self._depth = 0
        self._replaying = False
        self._handles: List[Any] = []

    def __enter__(self) -> "Probe":
        from torch.nn.modules import module as module_file

        self._handles = [
            module_file.register_module_forward_pre_hook(self._before),
            module_file.register_module_forward_hook(self._after),
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    # -- hooks -----------------------------------------------------------------------

    def _before(self, module: Any, inputs: Tuple[Any, ...]) -> None:
        if self._replaying:
            return
        self._depth += 1
        from torch import nn

        if isinstance(module, nn.modules.batchnorm._BatchNorm) and module.training and inputs:
            last = self._last_conv
            if last is not None and id(inputs[0]) == last[1]:
                if id(module) not in self._paired:
                    self._paired.add(id(module))
                    self.pairs.append((last[0], module))
                self._measure(inputs[0])

    def _after(self, module: Any, inputs: Tuple[Any, ...], output: Any) -> None:
        if self._replaying:
            return
        self._depth -= 1
        import torch
        from torch import nn

        if isinstance(module, nn.modules.conv._ConvNd) and module.bias is not None and module.training:
            self._last_conv = (module, id(output))
        if self._depth == 0 and not module.training and isinstance(output, torch.Tensor):
            if len(self.eval_calls) < MAX_EVAL_CALLS and self._holds_pair(module):
                self._predict(module, inputs, output)

    # -- measurements ------------------------------------------------------------------

    def _measure(self, activations: Any) -> None:
        import torch

        with torch.no_grad():
            x = activations.detach().double().transpose(0, 1).reshape(activations.shape[1], -1)
            if x.shape[1] < 2:
                return
            ratio = x.mean(dim=1).abs() / x.std(dim=1).clamp_min(1e-30)
            self.amplification = max(self.amplification, 1.0 + float(ratio.max()))

    def _holds_pair(self, model: Any) -> bool:
        inside = {id(sub) for sub in model.modules()}
        return any(id(conv) in inside and id(norm) in inside for conv, norm in self.pairs)

    def _predict(self, model: Any, inputs: Tuple[Any, ...], output: Any) -> None:
        """What the fixed model returns for this call: the original with each removed paired
        bias scaled to the part of it the running means absorbed.  Which biases a fix removes
        is not known here, so the call is replayed for all of them and for each one alone
        (keyed by the biases' names in the model, comma-joined)."""
        import torch

        names = {id(sub): name for name, sub in model.named_modules()}
        present = [(conv, norm) for conv, norm in self.pairs if id(conv) in names and id(norm) in names]
        subsets = [present] + ([[pair] for pair in present] if len(present) > 1 else [])
        predictions: Dict[str, Any] = {}
        self._replaying = True
        try:
            for subset in subsets:
                replica = copy.deepcopy(model)
                replicas = dict(replica.named_modules())
                with torch.no_grad():
                    for conv, norm in subset:
                        steps = int(norm.num_batches_tracked) if norm.num_batches_tracked is not None else 0
                        momentum = norm.momentum
                        share = ((1.0 - (1.0 - float(momentum)) ** steps) if momentum is not None
                                 else float(steps > 0))
                        replicas[names[id(conv)]].bias.mul_(share)
                    predicted = replica(*inputs)
                key = ",".join(sorted(f"{names[id(conv)]}.bias" if names[id(conv)] else "bias"
                                      for conv, _ in subset))
                predictions[key] = predicted.detach().to("cpu", copy=True)
        finally:
            self._replaying = False
        everything = ",".join(sorted(f"{names[id(conv)]}.bias" if names[id(conv)] else "bias" for conv, _ in present))
        self.eval_calls.append({"output": output.detach().to("cpu", copy=True),
                                "predicted": predictions.get(everything), "predictions": predictions})

    def result(self) -> Dict[str, Any]:
        return {"amplification": self.amplification, "pairs": len(self.pairs), "eval_calls": self.eval_calls}
