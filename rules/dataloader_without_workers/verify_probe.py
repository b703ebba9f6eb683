"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  It records every dataset a ``DataLoader``
is built on and, after the run, asks of each whether worker processes could
change what it yields: an ``IterableDataset`` (every worker yields every
sample unless it shards itself), or a ``__getitem__`` that draws random
numbers (workers draw from their own seeds).
"""

from __future__ import annotations

import contextlib
import functools
import random
from typing import Any, Callable, Dict, List, Optional


class Probe:
    """Records the datasets loaded from; probes them when asked for the result."""

    def __init__(self, tools: Any) -> None:
        self.tools = tools
        self.datasets: List[Any] = []
        self._undo: Optional[Callable[[], None]] = None

    def __enter__(self) -> "Probe":
        from torch.utils.data import DataLoader

        original_init = DataLoader.__init__
        probe = self

        @functools.wraps(original_init)
        def recording_init(self: Any, *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            if all(dataset is not self.dataset for dataset in probe.datasets):
                probe.datasets.append(self.dataset)

        DataLoader.__init__ = recording_init  # type: ignore[method-assign]
        self._undo = lambda: setattr(DataLoader, "__init__", original_init)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._undo is not None:
            self._undo()
            self._undo = None

    def result(self) -> List[Dict[str, Any]]:
        """Is each dataset iterable, and does its ``__getitem__`` use randomness?"""
        from torch.utils.data import IterableDataset

        found = []
        for dataset in self.datasets:
            info: Dict[str, Any] = {
                "class": type(dataset).__qualname__,
                "iterable": isinstance(dataset, IterableDataset),
                "random_getitem": None,
            }
            if not info["iterable"]:
                with contextlib.suppress(Exception):
                    info["random_getitem"] = self._getitem_is_random(dataset)
            found.append(info)
        return found

    def _getitem_is_random(self, dataset: Any) -> Optional[bool]:
        import torch

        if len(dataset) == 0:
            return None
        python_state = random.getstate()
        with torch.random.fork_rng(devices=[]):
            draws = []
            for seed in (12345, 54321):
                self.tools.seed_everything(seed)
                draws.append(self.tools.flatten(dataset[0]))
        random.setstate(python_state)
        first, second = draws
        return bool(first.keys() != second.keys() or any(
            self.tools.difference(first[key], second[key]) != 0.0 for key in first
        ))
