"""A call's arguments matched to a callee's parameters.

Shared by the fix toolkit (:func:`torchlint.ruleapi.fixes.bind`, which reads the
order of positional parameters from torch's API data, per release) and by
analyses that follow values into the functions of a file (which read it
from the function's ``def``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Iterable, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst


@dataclass(frozen=True)
class KnownKeys:
    """What a ``**`` of a dict passes, as far as the flow knows it: the keys
    present on every path with one value (``certain``), and the keys present
    on some paths only, or with values that differ by path, with every value
    they may hold (``maybe``).  No other key can be present."""

    certain: Mapping[str, cst.BaseExpression] = field(default_factory=dict)
    maybe: Mapping[str, Tuple[cst.BaseExpression, ...]] = field(default_factory=dict)


Splats = Callable[[cst.BaseExpression], Optional[KnownKeys]]
"""What a ``**`` of an expression passes (``Values.splatted``), None when unknown."""


@dataclass(frozen=True)
class BoundArguments:
    """A call's arguments matched to a signature's parameters.

    ``arguments`` holds what is certain; ``unknown`` names the parameters
    that an unpacking (``*args``, ``**kwargs``) or a position whose meaning
    differs between the torch versions considered may supply.
    """

    arguments: Dict[str, cst.Arg] = field(default_factory=dict)
    by_position: FrozenSet[str] = frozenset()
    unknown: FrozenSet[str] = frozenset()
    splatted: FrozenSet[str] = frozenset()
    """Parameters passed through a ``**`` of a dict whose keys are known
    (``**dict(num_workers=8)``): their ``Arg`` is made up (the value is the
    dict's own node), so a fix must not edit the call's argument list for them."""
    possible: Mapping[str, Tuple[cst.BaseExpression, ...]] = field(default_factory=dict)
    """Parameters a ``**`` of a known dict passes on some paths only (or
    with values that differ by path), with the values they then hold; no
    other unpacking may pass them (they are in ``unknown`` too)."""

    def argument(self, name: str) -> Optional[cst.Arg]:
        """The argument certainly passed for ``name``, if any."""
        return self.arguments.get(name)

    def may_be_present(self, name: str) -> bool:
        """Whether ``name`` is, or may be, passed."""
        return name in self.arguments or name in self.unknown

    def values(self, name: str) -> Tuple[cst.BaseExpression, ...]:
        """Every value ``name`` may be passed on the paths where it is passed:
        the argument's, or those a splatted dict holds for it on some paths
        (:attr:`possible`); empty when it is not passed, or when an
        unpacking of unknown contents may pass it."""
        given = self.arguments.get(name)
        if given is not None:
            return (given.value,)
        return tuple(self.possible.get(name, ()))

    def positional(self, name: str) -> bool:
        """Whether ``name`` is passed by position."""
        return name in self.by_position


def bind_positions(call: cst.Call, orders: Sequence[Sequence[str]], parameters: Iterable[str],
                   splats: Optional[Splats] = None,
                   ) -> BoundArguments:
    """Match ``call``'s arguments to parameters: ``orders`` are the names the
    positions fill, one order per signature considered (a position counts
    as certain only when every order gives it the same name); ``parameters``
    are all the names a ``**kwargs`` unpacking may supply, unless ``splats``
    knows the keys of what is unpacked (``Values.splatted``)."""
    arguments: Dict[str, cst.Arg] = {}
    by_position: Set[str] = set()
    unknown: Set[str] = set()
    splatted: Set[str] = set()
    possible: Dict[str, Tuple[cst.BaseExpression, ...]] = {}
    open_unknown: Set[str] = set()  # what an unpacking of unknown contents may pass
    index = 0
    unpacked = False  # a `*args` came before: positions are unknown from here
    for arg in call.args:
        known = splats(arg.value) if arg.star == "**" and splats is not None else None
        if known is not None:
            for name, value in known.certain.items():
                if name not in arguments:
                    arguments[name] = cst.Arg(value=value, keyword=cst.Name(name))
                    splatted.add(name)
            for name, values in known.maybe.items():
                if name not in arguments:
                    unknown.add(name)
                    possible[name] = (*possible.get(name, ()), *values)
        elif arg.star == "**":
            open_unknown.update(parameters)
            unknown.update(parameters)
        elif arg.star == "*" or (unpacked and arg.keyword is None):
            unpacked = True
            unknown.update(name for order in orders for name in order[index:])
            open_unknown.update(name for order in orders for name in order[index:])
        elif arg.keyword is not None:
            arguments[arg.keyword.value] = arg
        else:
            names = {order[index] for order in orders if index < len(order)}
            everywhere = all(index < len(order) for order in orders)
            if len(names) == 1 and everywhere:
                name = names.pop()
                arguments[name] = arg
                by_position.add(name)
            else:
                unknown.update(names)
                open_unknown.update(names)
            index += 1
    unknown |= open_unknown
    kept = {name: values for name, values in possible.items() if name not in open_unknown and name not in arguments}
    return BoundArguments(arguments, frozenset(by_position), frozenset(unknown - set(arguments)), frozenset(splatted),
                          kept)


__all__ = ["BoundArguments", "KnownKeys", "Splats", "bind_positions"]
