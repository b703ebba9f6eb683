"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  It keeps every ``ArgumentParser`` the
program parses with and records, for each that declares a local-rank option,
where the launcher's two spellings lead: ``--local-rank`` (torch >= 2.0) and
``--local_rank`` (before), each as the destination it sets, or None when the
parser rejects it.

In a replay (``tools.replay`` is set), ``add_argument`` gives an option
spelled ``--local_rank`` the dashed spelling too, as the fix does: the
original then accepts what the fixed program accepts and differs in nothing
else.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Dict, List, Optional

SPELLINGS = ("--local-rank", "--local_rank")


class Probe:
    """Keeps the parsers used; says where each local-rank spelling leads."""

    def __init__(self, tools: Any) -> None:
        self.replaying = tools.replay is not None
        self.parsers: List[Any] = []  # weak references
        self.parses = 0
        self._undo: List[Callable[[], None]] = []

    def __enter__(self) -> "Probe":
        import argparse

        probe = self
        original_add = argparse._ActionsContainer.add_argument
        original_parse = argparse.ArgumentParser.parse_known_args

        @functools.wraps(original_add)
        def add_argument(container: Any, *names: Any, **kwargs: Any) -> Any:
            if probe.replaying and "--local_rank" in names and "--local-rank" not in names:
                names = names + ("--local-rank",)
            return original_add(container, *names, **kwargs)

        @functools.wraps(original_parse)
        def parse_known_args(parser: Any, *args: Any, **kwargs: Any) -> Any:
            probe.parses += 1
            if all(ref() is not parser for ref in probe.parsers):
                probe.parsers.append(weakref.ref(parser))
            return original_parse(parser, *args, **kwargs)

        setattr(argparse._ActionsContainer, "add_argument", add_argument)
        setattr(argparse.ArgumentParser, "parse_known_args", parse_known_args)
        self._undo += [functools.partial(setattr, argparse._ActionsContainer, "add_argument", original_add),
                       functools.partial(setattr, argparse.ArgumentParser, "parse_known_args", original_parse)]
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def result(self) -> Dict[str, Any]:
        parsers: List[Dict[str, Optional[str]]] = []
        for ref in self.parsers:
            parser = ref()
            table = getattr(parser, "_option_string_actions", None)
            if not isinstance(table, dict) or not any(name in table for name in SPELLINGS):
                continue
            entry: Dict[str, Optional[str]] = {}
            for name in SPELLINGS:
                action = table.get(name)
                entry[name] = getattr(action, "dest", None)
                if action is not None:  # what `--option=3` becomes: the action's kind, type and default
                    entry[name + " how"] = (f"{type(action).__name__}, type "
                                            f"{getattr(getattr(action, 'type', None), '__name__', None)}, "
                                            f"default {getattr(action, 'default', None)!r}")
            parsers.append(entry)
        return {"parses": self.parses, "parsers": parsers}
