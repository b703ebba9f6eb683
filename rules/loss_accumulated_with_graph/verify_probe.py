"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  After every optimizer step it looks at the
program's own frames on the stack (its functions' locals, the attributes of
a ``self`` among them, and its globals) and counts, for each tensor there
that holds an autograd graph, how many graph nodes it keeps alive: a running
total built from loss tensors keeps every step's graph, so its count grows
step after step.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, List, Optional

NODE_LIMIT = 100000  # nodes counted per step, over every tensor; beyond it the count stops
MAX_STEPS = 2000  # steps recorded


def graph_nodes(tensor: Any, budget: List[int]) -> int:
    """How many autograd nodes ``tensor`` reaches (counting stops when ``budget`` runs out)."""
    root = getattr(tensor, "grad_fn", None)
    if root is None:
        return 0
    seen = set()
    stack = [root]
    while stack and budget[0] > 0:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        budget[0] -= 1
        stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


class Probe:
    """Counts the graph nodes each of the program's tensors holds after each step."""

    def __init__(self, tools: Any) -> None:
        self.program = tools.program
        self.steps: List[Dict[str, int]] = []
        self._undo: Optional[Callable[[], None]] = None

    def __enter__(self) -> "Probe":
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self._undo = register_optimizer_step_post_hook(self._after_step).remove
        return self

    def __exit__(self, *exc: object) -> None:
        if self._undo is not None:
            self._undo()
            self._undo = None

    def _after_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        import torch

        if len(self.steps) >= MAX_STEPS:
            return
        budget = [NODE_LIMIT]
        held: Dict[str, int] = {}

        def look(name: str, value: Any) -> None:
            if isinstance(value, torch.Tensor) and value.grad_fn is not None and name not in held:
                count = graph_nodes(value, budget)
                if count:
                    held[name] = count

        frame: Optional[Any] = sys._getframe(1)
        globals_seen = False
        while frame is not None:
            code = frame.f_code
            if code.co_filename == self.program:
                where = getattr(code, "co_qualname", code.co_name)
                for name, value in list(frame.f_locals.items()):
                    look(f"{where}.{name}", value)
                    if name == "self" and isinstance(getattr(value, "__dict__", None), dict):
                        for attribute, item in list(vars(value).items()):
                            look(f"{where}.self.{attribute}", item)
                if not globals_seen:
                    globals_seen = True
                    for name, value in list(frame.f_globals.items()):
                        look(name, value)
            frame = frame.f_back
        self.steps.append(held)

    def result(self) -> Dict[str, Any]:
        return {"steps": self.steps}
