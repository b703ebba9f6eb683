"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  It numbers every ``DataLoader`` in the order
it is created and records, for each pass over one (each epoch), the sample
indices its sampler gave, in order, and whether the loader keeps its workers.

A loader without persistent workers builds a new iterator every epoch, which
draws a new worker seed from the loader's generator (the global one when it
has none) and so moves every later draw from it, the next epoch's shuffle
among them.  In a replay (``tools.replay``: the fixed run's record), for a
loader the fixed program made persistent, each pass after the first gives
that draw back (the generator's state is restored and the first pass's seed
reused), as one long-lived iterator would: the original then shuffles as the
fixed program does, and its outputs must equal the fixed run's.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Optional


def _flat(index: Any) -> List[int]:
    if isinstance(index, (list, tuple)):
        return [value for item in index for value in _flat(item)]
    try:
        return [int(index)]
    except (TypeError, ValueError):
        return []


class Probe:
    """Records each pass's sample order (and, in a replay, gives back the extra seed draws)."""

    def __init__(self, tools: Any) -> None:
        self.replay: Optional[Dict[str, Any]] = tools.replay
        self.loaders: List[Dict[str, Any]] = []
        self.passes: List[Dict[str, Any]] = []
        self._numbers: Dict[int, int] = {}
        self._seeds: Dict[int, int] = {}  # a loader's number -> its first iterator's worker seed
        self._pending: Optional[int] = None  # the pass an iterator being built belongs to
        self._undo: List[Callable[[], None]] = []

    def __enter__(self) -> "Probe":
        import torch
        from torch.utils.data import DataLoader, dataloader

        probe = self
        original_init, original_iter = DataLoader.__init__, DataLoader.__iter__
        original_next_index = dataloader._BaseDataLoaderIter._next_index
        original_base_init = dataloader._BaseDataLoaderIter.__init__

        @functools.wraps(original_init)
        def numbered_init(loader: Any, *args: Any, **kwargs: Any) -> None:
            original_init(loader, *args, **kwargs)
            if id(loader) not in probe._numbers:
                probe._numbers[id(loader)] = len(probe.loaders)
                probe.loaders.append({"persistent": bool(loader.persistent_workers and loader.num_workers > 0)})

        def made_persistent(number: int, loader: Any) -> bool:
            if probe.replay is None or number < 0 or number >= len(probe.replay["loaders"]):
                return False
            own = bool(loader.persistent_workers and loader.num_workers > 0)
            return bool(probe.replay["loaders"][number]["persistent"]) and not own

        @functools.wraps(original_iter)
        def recorded_iter(loader: Any) -> Any:
            number = probe._numbers.get(id(loader), -1)
            current = len(probe.passes)
            probe.passes.append({"loader": number, "indices": []})
            existing = getattr(loader, "_iterator", None)
            if existing is not None:  # a persistent iterator prefetches the new pass in _reset
                setattr(existing, "_torchlint_pass", current)
            probe._pending = current  # a new iterator prefetches in __init__, before it is returned
            try:
                iterator = original_iter(loader)
            finally:
                probe._pending = None
            setattr(iterator, "_torchlint_pass", current)
            return iterator

        @functools.wraps(original_base_init)
        def seeded_base_init(iterator: Any, loader: Any) -> None:
            number = probe._numbers.get(id(loader), -1)
            if number in probe._seeds and made_persistent(number, loader):
                # The draw of the workers' seed is given back (the shuffle drawn next, in the
                # subclass's __init__, comes from the generator as a long-lived iterator leaves it).
                generator = loader.generator if loader.generator is not None else torch.default_generator
                state = generator.get_state()
                original_base_init(iterator, loader)
                generator.set_state(state)
                iterator._base_seed = probe._seeds[number]
            else:
                original_base_init(iterator, loader)
            probe._seeds.setdefault(number, int(getattr(iterator, "_base_seed", 0)))

        @functools.wraps(original_next_index)
        def recorded_next_index(iterator: Any) -> Any:
            index = original_next_index(iterator)  # type: ignore[no-untyped-call]
            number = getattr(iterator, "_torchlint_pass", probe._pending)
            if number is not None and number < len(probe.passes):
                probe.passes[number]["indices"].extend(_flat(index))
            return index

        setattr(DataLoader, "__init__", numbered_init)
        setattr(DataLoader, "__iter__", recorded_iter)
        setattr(dataloader._BaseDataLoaderIter, "_next_index", recorded_next_index)
        setattr(dataloader._BaseDataLoaderIter, "__init__", seeded_base_init)
        self._undo += [functools.partial(setattr, dataloader._BaseDataLoaderIter, "__init__", original_base_init),
                       functools.partial(setattr, DataLoader, "__init__", original_init),
                       functools.partial(setattr, DataLoader, "__iter__", original_iter),
                       functools.partial(setattr, dataloader._BaseDataLoaderIter, "_next_index",
                                         original_next_index)]
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def result(self) -> Dict[str, Any]:
        return {"loaders": self.loaders, "passes": self.passes}
