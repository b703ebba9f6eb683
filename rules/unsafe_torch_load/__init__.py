"""TL801 unsafe-torch-load."""

from __future__ import annotations

import ast
import os
from typing import List, Mapping, Tuple

import libcst as cst

from torchlint.data import apidata
from torchlint.analysis import Analysis
from torchlint.analysis.queries import whole_saves
from torchlint.analysis.saves import saves_of_module
from torchlint.ruleapi.fixes import add_keyword, bind
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FixAvailability, Option, OptionValue, Rule, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, VerificationSpec
from torchlint.analysis.values import literal_bool

_LOAD = "torch.load"
_WEIGHTS_ONLY_ADDED = TorchVersion(1, 13)
_SAFE_BY_DEFAULT = TorchVersion(2, 6)


def _shown(path: str) -> str:
    """A path as a person reads it: relative to the working folder when under it."""
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    return relative if not relative.startswith("..") else path


class UnsafeTorchLoad(Rule):
    """## What it does
    Reports `torch.load(...)` calls that unpickle arbitrary objects.  When
    the project targets a torch older than 2.6 (`torch-version`), that is
    every call without `weights_only=`: before 2.6 the default is
    `weights_only=False`.  From 2.6 on the default is `True`, so only an
    explicit `weights_only=False` (or a custom `pickle_module` without
    `weights_only=`, which keeps the old default) loads arbitrary objects;
    those are reported only with the `audit` option.

    Where the project saves whole objects with `torch.save` (a module, an
    optimizer, a tuple such as `(model, criterion, optimizer)`, an instance
    of one of its own classes: anywhere in the files of the run), the
    finding says so and no fix is offered: `weights_only=True` would make
    those loads fail.  Save the `state_dict()` instead (or allow the classes
    with `torch.serialization.add_safe_globals`) before switching.

    ## Why is this bad?
    `torch.load` without `weights_only=True` runs Python's `pickle`, and
    unpickling a file can execute any code its author put in it.  A
    checkpoint downloaded from a model hub, a shared drive or a colleague's
    bucket is enough to run a program on your machine.  With
    `weights_only=True` the loader accepts only tensors, primitive types,
    dicts and lists (and the classes you allow with
    `torch.serialization.add_safe_globals`).

    ## Example
    ```python
    state = torch.load("checkpoint.pt", map_location="cpu")
    ```

    Use instead:
    ```python
    state = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
    ```

    ## Fix safety
    Unsafe: `weights_only=True` refuses checkpoints that pickle more than
    tensors and plain containers (a whole `nn.Module`, an optimizer object,
    an `argparse.Namespace` of hyper-parameters, NumPy arrays in older
    releases): loading them raises `UnpicklingError` until those classes
    are allowed with `torch.serialization.add_safe_globals` or the files are
    re-saved as state dicts.  No fix is offered when a `pickle_module` is
    passed, since the weights-only loader does not use it, nor when the
    project saves whole objects (see above): those are the checkpoints it
    would refuse.

    ## Options
    - `audit` (default `false`): also report explicit `weights_only=False`,
      and, from torch 2.6, a `pickle_module` without `weights_only=`: every
      load that can run code, for a security review.

    ## Source
    The `torch.load` page of the PyTorch documentation (its warning about
    `weights_only=False`), and the PyTorch 2.6 release notes, which made
    `weights_only=True` the default.
    """

    code = "TL801"
    name = "unsafe-torch-load"
    summary = "`torch.load` unpickles arbitrary objects; pass `weights_only=True`"
    aliases = ("TOR102",)
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: `weights_only=True` (not with a `pickle_module`)"
    torch_range = TorchRange(min=_WEIGHTS_ONLY_ADDED, note="`weights_only` exists since 1.13 and is the default "
                             "from 2.6, where only explicit `weights_only=False` is reported (`audit`)")
    options = {"audit": Option(False, "Also report explicit `weights_only=False` (every load that can run code).")}
    trigger_words = ("load",)
    requires = frozenset({Analysis.PROJECT})
    project_queries = (whole_saves(),)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """`torch.load` resolves only through a torch import and is written
        `load` (`torch.load`, `from torch import load`); `load` inside
        `loader` or `download` does not count."""
        return facts.imports_torch and facts.mentions(cls.trigger_words)
    valid = (
        "import torch\nstate = torch.load(path, weights_only=True)\n",
        "import torch\nstate = torch.load(path)\n",
        "import torch\nstate = torch.load(path, weights_only=False)\n",
        "import pickle\nstate = pickle.load(handle)\n",
        "import numpy as np\nstate = np.load(path)\n",
    )
    invalid = (
        Example(
            "import torch\nstate = torch.load(path)\n",
            fixed="import torch\nstate = torch.load(path, weights_only=True)\n",
            torch="2.5",
        ),
        Example("import torch, dill\nstate = torch.load(path, pickle_module=dill)\n", torch="2.5"),
        Example("import torch\nstate = torch.load(path, weights_only=False)\n", options={"audit": True}),
        Example("import torch\nstate = torch.load(path, **kwargs)\n", findings=0, torch="2.5"),
        Example("import torch\nstate = torch.load(path)\n", findings=0, torch="1.12"),
    )

    verification = VerificationSpec(
        programs=("verify_program.py",),
        # At the current release the default is already `weights_only=True`
        # and the rule is silent: the program is a torch 2.5 project's.
        program_torch_version="2.5",
        contract=Contract(
            level="identical",
            promise=(
                "A checkpoint that holds only tensors, numbers, strings and plain containers (state "
                "dicts) loads into the same objects with `weights_only=True`."
            ),
            checks=("every output is close to the original's",),
            differences=(
                "A checkpoint that pickles other objects (a whole module, an `argparse.Namespace`) "
                "raises `UnpicklingError` with `weights_only=True`.",
            ),
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.names.call_name(node) != _LOAD:
            return
        version = self.context.torch_version
        bound = bind(node, apidata.signature(_LOAD), version)
        weights_only = bound.argument("weights_only")
        audit = bool(self.option("audit"))
        if weights_only is not None:
            if audit and literal_bool(weights_only.value) is False:
                self.report(node, "`torch.load(..., weights_only=False)` unpickles arbitrary objects, "
                                  "which can run code; load only files you trust")
            return
        if bound.may_be_present("weights_only"):
            return  # an unpacking may pass it
        pickled = bound.may_be_present("pickle_module")
        if not version < _SAFE_BY_DEFAULT:
            if audit and pickled:
                self.report(node, "`torch.load` with a `pickle_module` and no `weights_only` unpickles "
                                  "arbitrary objects, which can run code; load only files you trust")
            return
        message = (f"`torch.load` without `weights_only=True` unpickles arbitrary objects before torch 2.6 "
                   f"(target: {version}), which can run code from the file")
        if pickled:
            self.report(node, message, hint="With a `pickle_module`, check where the files come from")
            return
        saves = self._whole_saves()
        if saves:
            path, line = saves[0]
            more = f" and {len(saves) - 1} more" if len(saves) > 1 else ""
            self.report(
                node,
                f"{message}; the project saves whole objects with `torch.save` ({path}, line {line}{more}), "
                "which `weights_only=True` cannot load: no fix is offered",
                hint="Save the `state_dict()` instead (or allow the classes with "
                     "`torch.serialization.add_safe_globals`), then pass `weights_only=True`",
            )
            return
        self.report(
            node,
            message,
            fix=self.replace(node, add_keyword(node, "weights_only", cst.Name("True")),
                             Applicability.UNSAFE, "Pass `weights_only=True`"),
        )

    def _whole_saves(self) -> List[Tuple[str, int]]:
        """Where the project saves whole objects: the run's index, or (when
        this file is linted alone) this file."""
        found = list(self.facts.project.whole_saves)
        if not found:
            tree = self.facts.python_tree
            if tree is None:
                try:
                    tree = ast.parse(self.context.source)
                except (SyntaxError, ValueError, RecursionError):
                    tree = None
            if isinstance(tree, ast.Module):
                found = [(self.context.path, line) for line, names in saves_of_module(tree) if not names]
        return [(_shown(path), line) for path, line in found]
