"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  For each pass over a ``DataLoader`` it
records whether the loader asked for pinned memory and whether the first
batch's tensors really were pinned (torch pins only where an accelerator is
present).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List


class Probe:
    """Whether each pass over a loader asked for, and got, pinned batches."""

    def __init__(self, tools: Any) -> None:
        self.tensors = tools.tensors
        self.passes: List[Dict[str, bool]] = []
        self._undo: List[Callable[[], None]] = []

    def __enter__(self) -> "Probe":
        from torch.utils.data import dataloader

        probe = self
        original_next = dataloader._BaseDataLoaderIter.__next__

        @functools.wraps(original_next)
        def recorded_next(iterator: Any) -> Any:
            batch = original_next(iterator)
            if getattr(iterator, "_num_yielded", 0) == 1:  # the first batch of a pass
                tensors = probe.tensors(batch)
                probe.passes.append({
                    "pin_memory": bool(getattr(iterator, "_pin_memory", False)),
                    "pinned": bool(tensors) and all(t.is_pinned() for t in tensors),
                })
            return batch

        setattr(dataloader._BaseDataLoaderIter, "__next__", recorded_next)
        self._undo.append(functools.partial(setattr, dataloader._BaseDataLoaderIter, "__next__", original_next))
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def result(self) -> Dict[str, Any]:
        return {"passes": self.passes}
