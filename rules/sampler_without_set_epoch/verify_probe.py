"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  It numbers every ``DistributedSampler`` in
the order it is created and records, at each start of an iteration over one
(each epoch of its loader), the epoch the sampler was set to: the seed of
that epoch's order.

In a replay (``tools.replay``: the fixed run's record), it sets each
sampler's epoch, at each start of an iteration, to what the fixed run had at
the same one: the original then shuffles as the fixed program does and
changes nothing else, and its outputs must equal the fixed run's.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Optional


class Probe:
    """Records (and, in a replay, sets) each sampler's epoch at each iteration."""

    def __init__(self, tools: Any) -> None:
        self.replay: Optional[Dict[str, Any]] = tools.replay
        self.samplers = 0
        self.iterations: List[List[int]] = []  # [sampler number, epoch], in order
        self._numbers: Dict[int, int] = {}
        self._undo: List[Callable[[], None]] = []

    def __enter__(self) -> "Probe":
        from torch.utils.data import DistributedSampler

        probe = self
        original_init, original_iter = DistributedSampler.__init__, DistributedSampler.__iter__

        @functools.wraps(original_init)
        def numbered_init(sampler: Any, *args: Any, **kwargs: Any) -> None:
            original_init(sampler, *args, **kwargs)
            if id(sampler) not in probe._numbers:
                probe._numbers[id(sampler)] = probe.samplers
                probe.samplers += 1

        @functools.wraps(original_iter)
        def recorded_iter(sampler: Any) -> Any:
            number = probe._numbers.get(id(sampler), -1)
            if probe.replay is not None:
                wanted = [epoch for s, epoch in probe.replay["iterations"] if s == number]
                done = sum(1 for s, _ in probe.iterations if s == number)
                if done < len(wanted):
                    sampler.epoch = wanted[done]
            probe.iterations.append([number, int(sampler.epoch)])
            return original_iter(sampler)

        setattr(DistributedSampler, "__init__", numbered_init)
        setattr(DistributedSampler, "__iter__", recorded_iter)
        self._undo += [functools.partial(setattr, DistributedSampler, "__init__", original_init),
                       functools.partial(setattr, DistributedSampler, "__iter__", original_iter)]
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def result(self) -> Dict[str, Any]:
        return {"samplers": self.samplers, "iterations": self.iterations}
