"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  It numbers every module in the order it is
created and, at each call of a *top-level* module (one not called from
another module's forward), records the training flag of every module, whether
grad was enabled, and, through a hook on the output's autograd node, whether a
backward pass later went through that call (a training forward).

In a replay (``tools.replay``: the fixed run's record), it sets every module's
training flag, before each top-level call and when the program ends, to what
the fixed run had at the same point: the original then does what the fix
promises and nothing else, and its outputs must equal the fixed run's.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Dict, List, Optional

MAX_CALLS = 20000  # top-level calls recorded; later ones are counted only


class Probe:
    """Records modules' training flags at each top-level call (and replays them)."""

    def __init__(self, tools: Any) -> None:
        self.replay: Optional[Dict[str, Any]] = tools.replay
        self.tensors = tools.tensors
        self.modules: List[Any] = []  # weak references, in creation order
        self.index: Dict[int, int] = {}  # id(module) -> creation index
        self.calls: List[Dict[str, Any]] = []
        self.subtrees: Dict[int, List[int]] = {}  # a called module's index -> its modules' indices
        self.total = 0
        self._depth = 0
        self._undo: List[Callable[[], None]] = []

    def __enter__(self) -> "Probe":
        import torch
        from torch.nn.modules import module as module_file

        probe = self
        original_init = torch.nn.Module.__init__

        @functools.wraps(original_init)
        def numbered_init(module: Any, *args: Any, **kwargs: Any) -> None:
            if id(module) not in probe.index:
                probe.index[id(module)] = len(probe.modules)
                probe.modules.append(weakref.ref(module))
            original_init(module, *args, **kwargs)

        setattr(torch.nn.Module, "__init__", numbered_init)
        self._undo.append(functools.partial(setattr, torch.nn.Module, "__init__", original_init))
        before = module_file.register_module_forward_pre_hook(self._before)
        after = module_file.register_module_forward_hook(self._after, always_call=True)
        self._undo += [before.remove, after.remove]
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def _flags(self) -> str:
        return "".join("1" if (m := ref()) is not None and m.training else "0" for ref in self.modules)

    def _force(self, flags: str) -> None:
        for ref, flag in zip(self.modules, flags):
            module = ref()
            if module is not None:
                module.training = flag == "1"

    def _before(self, module: Any, args: Any) -> None:
        import torch

        self._depth += 1
        if self._depth != 1:
            return
        number = self.total
        self.total += 1
        if self.replay is not None and number < len(self.replay["calls"]):
            self._force(self.replay["calls"][number]["modes"])
        if number >= MAX_CALLS:
            return
        index = self.index.get(id(module), -1)
        if index >= 0 and index not in self.subtrees:
            self.subtrees[index] = sorted(self.index[id(m)] for m in module.modules() if id(m) in self.index)
        self.calls.append({"module": index, "modes": self._flags(), "grad": torch.is_grad_enabled(),
                           "trained": False})

    def _after(self, module: Any, args: Any, output: Any) -> None:
        self._depth = max(self._depth - 1, 0)
        if self._depth != 0 or self.total > MAX_CALLS or not self.calls:
            return
        call = self.calls[-1]

        def mark(*_: Any) -> None:
            call["trained"] = True

        for tensor in self.tensors(output):
            node = tensor.grad_fn
            if node is not None:
                node.register_prehook(mark)

    def finished(self) -> None:
        if self.replay is not None:
            self._force(self.replay["final"])

    def result(self) -> Dict[str, Any]:
        return {"calls": self.calls, "final": self._flags(), "total": self.total,
                "subtrees": {str(k): v for k, v in self.subtrees.items()}, "modules": len(self.modules)}
