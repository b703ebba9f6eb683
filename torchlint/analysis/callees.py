"""What a call of this file runs, from the project's summaries and the table
of library wrappers: one place where a libcst call is matched to the
:class:`~torchlint.analysis.summaries.Summary` of what it calls.

A call resolves through the file's imports (``train_one_epoch(...)``,
``tqdm(loader)``), builtins (``enumerate(loader)``), the classes that built
its receiver (``logger.log_every(loader, 10)``, ``loss_scaler(loss, opt)``
where ``loss_scaler = NativeScaler()``), or, for a parameter the function
calls, the class every project call of the function passes for it.  When
several classes may have built the receiver they must agree; anything else
is unknown, and unknown calls change no fact.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.scopes import Binding, BindingKind, ScopeKind, Scopes
from torchlint.analysis.summaries import (
    GRAD_OFF_ENTERS, GRAD_OFF_WRAPS, GRAD_OFF_YIELDS, EMPTY_SUMMARIES, HELD, VALUES, BuiltLoader, FileSummary, ReturnUse, Summaries, Summary, link, meet,
)
from torchlint.analysis.values import literal_bool
from torchlint.data.apidata import EVERY_POSITIONAL, wrappers

if TYPE_CHECKING:
    from torchlint.analysis.instances import Instances
    from torchlint.analysis.names import ImportTable


@dataclass(frozen=True)
class Target:
    """What a call runs, and whether the call binds an instance first."""

    summary: Summary
    bound: bool

    def parameter(self, position: Optional[int], keyword: Optional[str]) -> Optional[str]:
        """The parameter an argument of the call fills."""
        return self.summary.parameter_for(position, keyword, self.bound)


def arguments(call: cst.Call) -> List[Tuple[Optional[int], Optional[str], cst.BaseExpression]]:
    """(position, keyword, value) of each argument; positions stop at a ``*`` unpacking."""
    found: List[Tuple[Optional[int], Optional[str], cst.BaseExpression]] = []
    position = 0
    unpacked = False
    for arg in call.args:
        if arg.star == "*":
            unpacked = True
        elif arg.keyword is not None:
            found.append((None, arg.keyword.value, arg.value))
        elif not arg.star and not unpacked:
            found.append((position, None, arg.value))
            position += 1
    return found


@dataclass(frozen=True)
class _Spelled:
    """The last parts of the names of callables with some fact, and the
    last parts of the classes whose instances' calls have it."""

    names: FrozenSet[str]
    classes: FrozenSet[str]


class Callees:
    """Calls of one file matched to what they run (answers cached per call)."""

    def __init__(self, scopes: Scopes, names: "ImportTable", instances: "Callable[[], Instances]",
                 summaries: Optional[Summaries], path: str, source: str = "",
                 own_summary: "Callable[[], Optional[FileSummary]]" = lambda: None,
                 note_grad_read: Callable[[str], None] = lambda qualified: None) -> None:
        self._source = source
        self._note_grad_read = note_grad_read
        """Records that this file's findings depend on one function's grad-mode facts."""
        self._own_summary = own_summary
        """The file's own summary (``Facts.own_summary``: made once per file, shared with the composition fact)."""
        self._scopes = scopes
        self._names = names
        self._instances = instances
        self._summaries = summaries if summaries is not None else EMPTY_SUMMARIES
        self._path = path
        self._cache: Dict[cst.Call, Optional[Target]] = {}
        self._mentioned: Dict[FrozenSet[str], bool] = {}
        self._aliases: Dict[FrozenSet[str], FrozenSet[str]] = {}
        """Names imported under another name, per set of names (asked once per set)."""
        """Whether the file's text names one of some classes (asked once per set)."""

    def _spelled(self, fact: str) -> "_Spelled":
        names, classes = self._summaries.spelled(fact)
        return _Spelled(names, classes)

    @cached_property
    def _running(self) -> "_Spelled":
        return self._spelled("runs")

    @cached_property
    def _yielding(self) -> "_Spelled":
        return self._spelled("yields")

    @cached_property
    def _iterating(self) -> "_Spelled":
        return self._spelled("iterates")

    @cached_property
    def _building(self) -> "_Spelled":
        return self._spelled("builds")

    def _worth(self, call: cst.Call, spelled: "_Spelled") -> bool:
        """Whether ``call`` may be spelled as ``spelled`` says."""
        func = call.func
        if isinstance(func, cst.Attribute):
            return func.attr.value in spelled.names or func.attr.value in self._defined_here
        if isinstance(func, cst.Call):  # `Evaluator()(x)`: a call of a new instance
            inner = func.func
            named = inner.attr.value if isinstance(inner, cst.Attribute) else (
                inner.value if isinstance(inner, cst.Name) else None)
            return named is not None and (named in spelled.classes or named in self._defined_here)
        if not isinstance(func, cst.Name):
            return False
        if func.value in spelled.names or func.value in self._renamed(spelled) or func.value in self._defined_here:
            return True
        mentioned = self._mentioned.get(spelled.classes)
        if mentioned is None:
            mentioned = self._mentioned[spelled.classes] = any(word in self._source for word in spelled.classes)
        return mentioned or self._calls_parameters

    def _renamed(self, spelled: "_Spelled") -> FrozenSet[str]:
        """Module-level names an import binds to a callable spelled as
        ``spelled`` says under another name (``from loops import train as fit``)."""
        found = self._aliases.get(spelled.names)
        if found is None:
            scope = self._scopes.module_scope
            found = frozenset(
                local for local, bindings in scope.bindings.items()
                if any(b.kind is BindingKind.IMPORT and b.imported is not None and local != b.imported.rsplit(".", 1)[-1]
                       and b.imported.rsplit(".", 1)[-1] in spelled.names for b in bindings))
            self._aliases[spelled.names] = found
        return found

    @cached_property
    def _calls_parameters(self) -> bool:
        """Some function of this file calls a parameter whose class the
        project's calls of it agree on."""
        makers = self._summaries.parameter_makers
        return bool(makers) and any(name.startswith(self._module + ".") for name in makers)

    @cached_property
    def _module(self) -> str:
        known = self._summaries.paths.get(os.path.abspath(self._path))
        if known is not None:
            return known
        from torchlint.analysis.imports import module_name

        return module_name(Path(self._path))

    def target(self, call: cst.Call, spelled: "Optional[_Spelled]" = None) -> Optional[Target]:
        """What ``call`` runs, when the wrapper table or the project's
        summaries know it (``spelled``: how a call worth resolving looks)."""
        if call in self._cache:
            return self._cache[call]
        if spelled is not None and not self._worth(call, spelled):
            return None
        found = self._resolve(call)
        self._cache[call] = found
        return found

    def runs(self, call: cst.Call) -> Tuple[FrozenSet[str], FrozenSet[str], bool]:
        """What ``call`` does (``backward``, ``step``): once, as a training
        step does, and in loops, as a training loop does; and whether a
        library wrapper does it (not another module of the project)."""
        target = self.target(call, self._running)
        if target is None:
            return frozenset(), frozenset(), False
        return target.summary.runs, target.summary.loop_runs, target.summary.wrapper

    def yielded(self, call: cst.Call) -> List[cst.BaseExpression]:
        """The arguments whose items a loop over ``call`` draws
        (``tqdm(loader)``, ``logger.log_every(loader, 10)``)."""
        return self._arguments_in(call, self._yielding, lambda target: target.summary.yields_from)

    def wrapper_yields(self, call: cst.Call) -> bool:
        """``call`` is a library wrapper (the data table's, not the project's
        code) that only draws the items of its arguments (``tqdm(loader)``,
        ``enumerate(loader)``)."""
        target = self.target(call, self._yielding)
        return target is not None and target.summary.wrapper and bool(target.summary.yields_from)

    def items_of(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The argument whose items a loop over ``call`` draws unchanged, one
        at a time: a library wrapper of the data table that yields one
        parameter's items and does not pair them with other values
        (``tqdm(reversed(steps))``, ``iter(x)``; not ``enumerate`` or ``zip``)."""
        target = self.target(call, self._yielding)
        if target is None or not target.summary.wrapper:
            return None
        wrapper = wrappers().get(target.summary.qualified)
        if wrapper is None or wrapper.paired or wrapper.yields is None or wrapper.yields == EVERY_POSITIONAL:
            return None
        return self.argument(call, wrapper.yields)

    def entered_as_itself(self, call: cst.Call) -> bool:
        """``with call as x`` binds x to the call's value: a library wrapper
        whose ``__enter__`` returns itself (``with tqdm(loader) as bar``), as
        the wrapper table says (``enters = "self"``)."""
        target = self.target(call, self._yielding)
        if target is None or not target.summary.wrapper:
            return False
        wrapper = wrappers().get(target.summary.qualified)
        return wrapper is not None and wrapper.enters_itself

    def iterated(self, call: cst.Call) -> List[cst.BaseExpression]:
        """The arguments ``call`` iterates itself (``train_one_epoch(model, loader)``)."""
        return self._arguments_in(call, self._iterating, lambda target: target.summary.iterates)

    def called_without_grad(self, function: cst.FunctionDef) -> bool:
        """The project's calls of this file's ``function`` (a module-level
        function or a method of a module-level class) all run with gradients
        off, and there is at least one (:attr:`Summaries.without_grad`)."""
        if self._left_out:
            return False
        qualified = self.qualified(function)
        if qualified is None:
            return False
        self._note_grad_read(qualified)  # (read with the function's grad-mode facts, one function at a time)
        return qualified in self._summaries.without_grad

    def returns_accelerator(self, call: cst.Call) -> bool:
        """``call`` runs a project function that returns a device that may
        be CUDA (:attr:`Summaries.accelerators`: ``DEVICE =
        torch.device(get_device())``, ``get_device`` in another module)."""
        accelerators = self._summaries.accelerators
        func = call.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if last is None or last not in self._accelerator_names:
            return False
        target = self.target(call)
        return target is not None and not target.summary.wrapper and target.summary.qualified in accelerators

    @cached_property
    def _accelerator_names(self) -> FrozenSet[str]:
        return frozenset(name.rsplit(".", 1)[-1] for name in self._summaries.accelerators)

    def pinned_copies(self) -> FrozenSet[Tuple[int, int]]:
        """Where (line, UTF-8 column) this file's copy calls without ``non_blocking`` of batches
        drawn from loaders that the project's callers build pinned and hand
        to its functions (``train_one_epoch(model, loader)`` in a driver, the
        copy in this file's loop): :attr:`Summaries.pinned_copies`."""
        if os.path.abspath(self._path) not in self._summaries.paths:
            return frozenset()
        return self._summaries.pinned_copies.get(self._module, frozenset())

    def takes_pinned(self, call: cst.Call) -> bool:
        """What ``call`` runs is a project function some of whose inputs the
        project's callers pin (:attr:`Summaries.pinned`): its own module
        reports the copies it makes of them."""
        target = self.target(call)
        if target is None or target.summary.wrapper:
            return False
        if target.summary.constructs:  # a class: the methods that get what its construction keeps
            return target.summary.qualified in self._pinned_owners
        # one of several callables (:func:`meet` joins their names by `|`): whichever runs reports its copies
        return any(name in self._summaries.pinned for name in target.summary.qualified.split("|"))

    @cached_property
    def _pinned_owners(self) -> FrozenSet[str]:
        return frozenset(name.rpartition(".")[0] for name, values in self._summaries.pinned.items()
                         if any(value.startswith(HELD) for value in values))

    def held_iterated(self, call: cst.Call) -> List[Tuple[cst.BaseExpression, bool]]:
        """For a method call on an instance (``trainer.train(epoch)``), what the
        instance's one construction passed for the ``self`` attributes the
        method iterates (``Trainer(model, loader)`` keeps ``loader`` as
        ``self.train_data``), each with whether one call iterates it again and
        again: the loop that repeats the method is the caller's to see."""
        target = self.target(call, self._iterating)
        if target is None or not target.bound or not target.summary.method:
            return []
        found: List[Tuple[cst.BaseExpression, bool]] = []
        for value in sorted(target.summary.held_iterates):
            passed = self.attribute_argument(call, value[len(HELD):])
            if passed is not None:
                found.append((passed, value in target.summary.held_repeats))
        return found

    def grad_facts(self, summary: Summary) -> Tuple[FrozenSet[str], bool]:
        """A project function's facts that change with grad mode: the
        parameters it runs forward passes of with gradients on, and whether it
        differentiates through a library; the read is recorded, one function
        at a time (:data:`~torchlint.analysis.summaries.GRAD_FACT`)."""
        self._note_grad_read(summary.qualified)
        return summary.runs_parameters, summary.gradients

    def grad_off_use(self, expr: cst.BaseExpression, decorator: bool) -> Optional[bool]:
        """What a decorator (``decorator``) or a ``with`` item of the project's
        own does to the code it is given: True when it runs it with gradients
        off (its summary's :attr:`~torchlint.analysis.summaries.Summary.grad_off`:
        a decorator whose wrapper calls the function under ``no_grad``, a
        ``@contextmanager`` that yields inside one, a class whose ``__enter__``
        switches gradients off or that derives from ``torch.no_grad``), False
        when the summaries know it and it does not, None when it is no
        project callable they know (a library's, or nothing the file names)."""
        func = expr.func if isinstance(expr, cst.Call) else expr
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return None
        qualified = self._names.qualified_name(func)
        if qualified is None:
            qualified = self._instances().absolute_name(func)
        if qualified is None and isinstance(func, cst.Name):
            qualified = self._local_definition(func)
        if qualified is None:
            return None
        summaries = self._summaries if not self._left_out else self._alone
        if summaries is None:
            return None
        if not decorator and isinstance(expr, cst.Call):
            if summaries.grad_off_class(qualified):
                return True
            entered = summaries.of(f"{qualified}.__enter__")
            if entered is not None and not entered.wrapper:  # a project class (or one of its bases) enters
                self._note_grad_read(entered.qualified)
                return GRAD_OFF_ENTERS in entered.grad_off
        found = summaries.of(qualified)
        if found is None or found.wrapper or found.constructs or found.method:
            return None  # not a project function: a class entered by a base of another package, say
        self._note_grad_read(found.qualified)
        if decorator:
            return GRAD_OFF_WRAPS in found.grad_off
        return isinstance(expr, cst.Call) and GRAD_OFF_YIELDS in found.grad_off

    def forward_arguments(self, call: cst.Call) -> List[cst.BaseExpression]:
        """The arguments ``call`` runs forward passes of with gradients on, in
        a project function (``forward(model, batch)`` whose body calls
        ``model(...)``, there or through its callees; its summary)."""
        target = self.target(call)
        if target is None or target.summary.wrapper:
            return []
        runs, _gradients = self.grad_facts(target.summary)
        return [value for position, keyword, value in arguments(call)
                if target.parameter(position, keyword) in runs]

    def repeated(self, call: cst.Call) -> List[cst.BaseExpression]:
        """The arguments ``call`` iterates again and again (``while True: for b
        in loader: yield b``): one call starts many passes over them."""
        return self._arguments_in(call, self._iterating, lambda target: target.summary.repeats)

    @cached_property
    def _moving(self) -> "_Spelled":
        return self._spelled("moves")

    def moved(self, call: cst.Call) -> List[Tuple[cst.BaseExpression, bool, str, bool]]:
        """The arguments whose data ``call`` copies to a device in another
        module's function (its summary): (argument, whether the items a loop
        draws from it are copied rather than the argument itself, device as
        the summary names it: ``cuda``, ``param:<name>``, ``attr:<name>``, ``?``,
        whether that copy passes ``non_blocking`` (or may))."""
        target = self.target(call, self._moving)
        if target is None or not (target.summary.moves_items or target.summary.moves):
            return []
        found: List[Tuple[cst.BaseExpression, bool, str, bool]] = []
        for position, keyword, value in arguments(call):
            parameter = target.parameter(position, keyword)
            if parameter is None:
                continue
            for moved, device, settled in sorted(target.summary.moves_items):
                if moved == parameter:
                    found.append((value, True, device, settled))
                elif moved == parameter + VALUES:  # the items of the loaders a dict passed for it holds
                    found.append((values_of(value), True, device, settled))
            for moved, device, settled in sorted(target.summary.moves):
                if moved == parameter:
                    found.append((value, False, device, settled))
        return found

    def argument(self, call: cst.Call, parameter: str) -> Optional[cst.BaseExpression]:
        """What ``call`` passes for ``parameter`` of what it runs (None: not
        passed, or not known)."""
        target = self._cache.get(call) if call in self._cache else self.target(call)
        if target is None:
            return None
        for position, keyword, value in arguments(call):
            if target.parameter(position, keyword) == parameter:
                return value
        return None

    def default_device(self, call: cst.Call, parameter: str) -> Optional[str]:
        """``cuda`` or ``cpu``: the device default of ``parameter`` of what
        ``call`` runs (``def __init__(self, ..., device="cuda")``), when the
        call leaves it to the default (None: passed, or no such default)."""
        target = self._cache.get(call) if call in self._cache else self.target(call)
        if target is None:
            return None
        default = dict(target.summary.device_defaults).get(parameter)
        if default is None or any(arg.star for arg in call.args) or self.argument(call, parameter) is not None:
            return None
        return default

    def attribute_default_device(self, call: cst.Call, attribute: str) -> Optional[str]:
        """For a method call on an instance, ``cuda`` or ``cpu``: the device
        default of the ``__init__`` parameter the class keeps as
        ``self.<attribute>``, when the instance's construction left it out."""
        owner = self.owner(call)
        found = self._constructed(call) if owner is not None else None
        if owner is None or found is None:
            return None
        parameter = self._summaries.init_parameter(owner, attribute)
        construction, qualified = found
        if parameter is None or self._summaries.canonical(qualified) != self._summaries.canonical(owner):
            return None
        return self.default_device(construction, parameter)

    def kept_device(self, node: cst.ClassDef, attribute: str) -> Optional[str]:
        """``cuda`` or ``cpu``: the device this file's module-level class (or
        the first of its bases, in any module, that sets it) keeps in
        ``self.<attribute>`` (``self.device = self.get_device()`` in a base
        class of another module); None when unknown."""
        scope = self._scopes.scope_of(node)
        owner = scope.parent if scope is not None else None
        if owner is None or owner.kind is not ScopeKind.MODULE:
            return None
        return self._summaries.attribute_device(f"{self._module}.{node.name.value}", attribute)

    def owner(self, call: cst.Call) -> Optional[str]:
        """The class whose method ``call`` runs on an instance (None for a function)."""
        target = self._cache.get(call) if call in self._cache else self.target(call)
        if target is None or not target.bound or not target.summary.method:
            return None
        return target.summary.qualified.rsplit(".", 1)[0]

    def attribute_argument(self, call: cst.Call, attribute: str) -> Optional[cst.BaseExpression]:
        """For a method call on an instance (``discr.update(loader)``), what the
        one construction of the instance (``discr = Discriminator(n, device)``,
        or ``Learning(...).run_train(...)`` itself) passed for the ``__init__``
        parameter the class stores as ``self.<attribute>``."""
        owner = self.owner(call)
        func = call.func
        if owner is None or not isinstance(func, cst.Attribute):
            return None
        parameter = self._summaries.init_parameter(owner, attribute)
        init = self._summaries.of(f"{owner}.__init__")
        if parameter is None or init is None:
            return None
        found = self._constructed(call)
        if found is None:
            return None
        construction, qualified = found
        if self._summaries.canonical(qualified) != self._summaries.canonical(owner):
            return None  # built by a subclass, or not known to be this class
        built = Target(init, True)
        for position, keyword, value in arguments(construction):
            if built.parameter(position, keyword) == parameter:
                return value
        return None

    def _constructed(self, call: cst.Call) -> Optional[Tuple[cst.Call, str]]:
        """For a method call on an instance, the one construction of the
        instance (``discr = Discriminator(n)``, or ``Learning(...).run(...)``
        itself) and the class it names."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        receiver = func.value
        construction = receiver if isinstance(receiver, cst.Call) else self._instances().construction(receiver)
        if construction is None:
            return None
        qualified = self._names.call_name(construction) or self._instances().absolute_name(construction.func)
        if qualified is None and isinstance(construction.func, cst.Name):
            qualified = self._local_definition(construction.func)
        if qualified is not None and self._factory_classes(qualified) is not None:
            return None  # a factory's result: one of its classes (`_maker_classes`), not a construction
        return (construction, qualified) if qualified is not None else None

    def attribute_device(self, call: cst.Call, attribute: str) -> Optional[str]:
        """For a method call on an instance, ``cuda`` or ``cpu``: the device
        the class that built the instance (or a base) keeps in ``self.<attribute>``."""
        if self.owner(call) is None:
            return None
        found = self._constructed(call)
        if found is not None:
            return self._summaries.attribute_device(found[1], attribute)
        # Built in several places (`trainer = Trainer(a)` in one branch, `Trainer(b)` in
        # the other): the device every class that may have built it keeps.
        classes = self._maker_classes(call.func.value) if isinstance(call.func, cst.Attribute) else None
        devices = {self._summaries.attribute_device(name, attribute) for name in classes or ()}
        return devices.pop() if classes and len(devices) == 1 else None

    def _maker_classes(self, receiver: cst.BaseExpression, every: bool = True) -> Optional[Set[str]]:
        """The classes (dotted names) of the constructions that may have built
        ``receiver``; None when one of them is not known (with ``every``; else
        those known)."""
        makers = self._instances().makers(receiver)
        if not makers:
            return None
        found: Set[str] = set()
        for maker in makers:
            built = self._factory_classes(maker.qualified) if maker.qualified is not None else None
            if built is not None:  # `model = define_model(opt)`: an instance of one of the classes it builds
                found.update(built)
            elif maker.qualified is not None:
                found.add(maker.qualified)
            elif maker.local is not None:
                found.add(f"{self._module}.{maker.local.name.value}")
            elif every:
                return None
        return found

    def _factory_classes(self, qualified: str) -> Optional[FrozenSet[str]]:
        """The project classes a project function's every return builds (None: not such a factory)."""
        return self._summaries.factories.get(self._summaries.canonical(qualified))

    def builds(self, call: cst.Call) -> Optional[str]:
        """The class every return of the project function ``call`` runs
        builds, given the literal truth values it passes (``distributed=True``)."""
        target = self.target(call, self._building)
        if target is None or target.summary.wrapper:
            return None
        truths: Dict[str, bool] = {}
        for position, keyword, value in arguments(call):
            truth = literal_bool(value)
            parameter = target.parameter(position, keyword)
            if truth is not None and parameter is not None:
                truths[parameter] = truth
        return target.summary.builds(truths)

    def _arguments_in(self, call: cst.Call, spelled: "_Spelled",
                      chosen: Callable[[Target], FrozenSet[str]]) -> List[cst.BaseExpression]:
        target = self.target(call, spelled)
        if target is None:
            return []
        wanted = chosen(target)
        if not wanted:
            return []
        found = []
        for position, keyword, value in arguments(call):
            parameter = target.parameter(position, keyword)
            if parameter is not None and parameter in wanted:
                found.append(value)
            if parameter is not None and parameter + VALUES in wanted:
                found.append(values_of(value))
        return found

    def built_loader(self, call: cst.Call) -> Optional[Tuple[BuiltLoader, Target]]:
        """The loader a call of a project function (or method) builds, when
        every return of it builds one (:class:`~torchlint.analysis.summaries.BuiltLoader`),
        and what the call runs; a function of this file is read from the
        file itself when the project's summaries leave the file out."""
        if call in self._loaders:
            return self._loaders[call]
        found: Optional[Tuple[BuiltLoader, Target]] = None
        func = call.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if last is not None and last in self._loader_words:
            target = self.target(call)
            if target is not None:
                qualified = target.summary.qualified
                built = self._summaries.loader_of(qualified)
                if built is None and self._local is not None and qualified.startswith(self._module + "."):
                    built = self._local.loader_of(qualified)  # this script's own function
                found = (built, target) if built is not None else None
            elif self._local is not None:
                found = self._local_loader(call, self._local)
        self._loaders[call] = found
        return found

    @cached_property
    def _loaders(self) -> Dict[cst.Call, Optional[Tuple[BuiltLoader, Target]]]:
        return {}

    @cached_property
    def _local(self) -> Optional[Summaries]:
        """This file's own summary, linked alone, when the project's summaries
        leave the file out (a script on its own) and it defines a function
        that builds a loader."""
        if not self._left_out or not self._source:
            return None
        from torchlint.data.apidata import loader_words

        if not any(word in self._source for word in loader_words()):
            return None
        alone = self._alone
        return alone if alone is not None and alone.loaders else None

    @cached_property
    def _loader_words(self) -> FrozenSet[str]:
        """The last parts of the names of functions that build a loader."""
        found = {name.rsplit(".", 1)[-1] for name in self._summaries.loaders}
        if self._local is not None:
            found.update(name.rsplit(".", 1)[-1] for name in self._local.loaders)
        return frozenset(found)

    def _local_loader(self, call: cst.Call, local: Summaries) -> Optional[Tuple[BuiltLoader, Target]]:
        func = call.func
        name: Optional[str] = None
        bound = False
        if isinstance(func, cst.Name):
            bindings = self._scopes.resolve(func)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.FUNCTION and bindings[0].scope is not None \
                    and bindings[0].scope.kind is ScopeKind.MODULE:
                name = f"{self._module}.{func.value}"
        elif isinstance(func, cst.Attribute):
            makers = self._instances().makers(func.value)
            classes = {maker.local.name.value for maker in makers or () if maker.local is not None}
            if makers and len(classes) == 1 and all(maker.local is not None for maker in makers):
                name, bound = f"{self._module}.{classes.pop()}.{func.attr.value}", True
        if name is None:
            return None
        summary = local.of(name)
        built = local.loader_of(name)
        return (built, Target(summary, bound)) if built is not None and summary is not None else None

    # -- resolving ---------------------------------------------------------------------

    def _resolve(self, call: cst.Call) -> Optional[Target]:
        func = call.func
        if isinstance(func, cst.Call) and isinstance(func.func, (cst.Name, cst.Attribute)):
            # `Evaluator()(x)`: the class's `__call__` (its own or a base's), on the new instance
            built = self._names.call_name(func)
            if built is None and isinstance(func.func, cst.Name):
                built = self._local_definition(func.func)
            return self._named(f"{built}.__call__", True) if built is not None else None
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if last is None:
            return None
        qualified = self._names.call_name(call)
        if qualified is None and isinstance(func, cst.Name) and not self._scopes.resolve(func):
            qualified = f"builtins.{last}"
        if qualified is None and isinstance(func, (cst.Name, cst.Attribute)):
            qualified = self._instances().absolute_name(func)
        if qualified is None and isinstance(func, cst.Name):
            qualified = self._local_definition(func)
        if qualified is not None:
            return self._named(qualified, False)
        if isinstance(func, cst.Name):
            imported = self._alternatives(func)
            if imported is not None:
                return imported
        if isinstance(func, cst.Attribute):
            return self._through_makers(func.value, last)
        through = self._through_makers(func, "__call__")
        return through if through is not None else self._called_parameter(func)

    def _local_definition(self, func: cst.Name) -> Optional[str]:
        """A module-level function or class of this file, as the summaries
        name it (``<module>.<name>``), when the file is summarised."""
        bindings = self._scopes.resolve(func)
        if len(bindings) != 1 or bindings[0].kind not in (BindingKind.FUNCTION, BindingKind.CLASS):
            return None
        scope = bindings[0].scope
        if scope is None or scope.kind is not ScopeKind.MODULE:
            return None
        return f"{self._module}.{func.value}"

    def _alternatives(self, func: cst.Name) -> Optional[Target]:
        """A name imported from one project module or another in two branches
        (``if task == "vqa": from train import train`` / ``else: from
        train_flickr import train``): what every one of them does."""
        names: Set[str] = set()
        for binding in self._scopes.resolve(func):
            if binding.import_fallback:
                continue
            if binding.kind is not BindingKind.IMPORT or binding.imported is None:
                return None
            names.add(binding.imported)
        if len(names) < 2:
            return None
        targets = [self._named(name, False) for name in sorted(names)]
        summaries = [target.summary for target in targets if target is not None]
        if len(summaries) != len(targets):
            return None
        merged = meet(summaries)
        return Target(merged, False) if merged is not None else None

    def _named(self, qualified: str, bound: bool) -> Optional[Target]:
        summary = self._summaries.of(qualified)
        if summary is None and qualified.startswith(self._module + ".") and self._left_out:
            alone = self._alone  # a script the run left out: its own functions, from its own text
            summary = alone.of(qualified) if alone is not None else None
        return Target(summary, bound) if summary is not None else None

    @cached_property
    def _left_out(self) -> bool:
        """The project's summaries leave this file out (a script on its own:
        it imports no project module and none imports it)."""
        return os.path.abspath(self._path) not in self._summaries.paths

    @cached_property
    def _defined_here(self) -> FrozenSet[str]:
        """The module-level functions and classes of a file the summaries
        leave out, and the methods of those classes: its calls of them are
        worth resolving from its own text (:meth:`_worth`)."""
        if not self._left_out:
            return frozenset()
        found: Set[str] = set()
        for name, bindings in self._scopes.module_scope.bindings.items():
            for binding in bindings:
                if binding.kind is BindingKind.FUNCTION:
                    found.add(name)
                elif binding.kind is BindingKind.CLASS and isinstance(binding.node, cst.ClassDef):
                    found.add(name)
                    found.update(member.name.value for member in binding.node.body.body
                                 if isinstance(member, cst.FunctionDef))
        return frozenset(found)

    def _through_makers(self, receiver: cst.BaseExpression, method: str) -> Optional[Target]:
        classes = self._maker_classes(receiver, every=False)
        if not classes:
            return None
        found = {f"{name}.{method}" for name in classes}
        targets = {name: self._named(name, True) for name in found}
        summaries = {target.summary for target in targets.values() if target is not None}
        if not summaries or any(target is None for target in targets.values()):
            return None
        if len(summaries) == 1:
            return next(t for t in targets.values() if t is not None)
        merged = meet(sorted(summaries, key=lambda summary: summary.qualified))  # built by one class or another
        return Target(merged, True) if merged is not None else None

    def _called_parameter(self, func: cst.BaseExpression) -> Optional[Target]:
        """A parameter the function calls: what every project call passes."""
        if not isinstance(func, cst.Name) or not self._summaries.parameter_makers:
            return None
        bindings = self._scopes.resolve(func)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAMETER:
            return None
        scope = bindings[0].scope
        function = scope.node if scope is not None else None
        if not isinstance(function, cst.FunctionDef) or scope is None:
            return None
        qualified = self.qualified(function)
        if qualified is None:
            return None
        built = self._summaries.maker_of(qualified, func.value)
        return self._named(f"{built}.__call__", True) if built is not None else None

    def qualified(self, function: cst.FunctionDef) -> Optional[str]:
        """The name the summaries give a module-level function or a method of
        a module-level class of this file (None for anything nested deeper)."""
        scope = self._scopes.scope_of(function)
        owner = scope.parent if scope is not None else None
        if owner is not None and owner.kind is ScopeKind.CLASS and isinstance(owner.node, cst.ClassDef):
            if owner.parent is None or owner.parent.kind is not ScopeKind.MODULE:
                return None
            return f"{self._module}.{owner.node.name.value}.{function.name.value}"
        if owner is not None and owner.kind is ScopeKind.MODULE:
            return f"{self._module}.{function.name.value}"
        return None

    def passed_classes(self, binding: Binding) -> FrozenSet[str]:
        """The classes whose instances the project's calls pass for the
        parameter ``binding`` (:attr:`Summaries.passed`: ``fit(..., scaler)``
        in a driver fills ``scaler`` of ``fit`` in another module); from this
        file's own summary, linked alone, when the run left the file out."""
        scope = binding.scope
        function = scope.node if scope is not None else None
        if binding.kind is not BindingKind.PARAMETER or not isinstance(function, cst.FunctionDef):
            return frozenset()
        qualified = self.qualified(function)
        if qualified is None:
            return frozenset()
        summaries = self._summaries if os.path.abspath(self._path) in self._summaries.paths else self._alone
        return summaries.passed_classes(qualified, binding.name) if summaries is not None else frozenset()

    def sibling(self, function: cst.FunctionDef, method: str) -> Optional[Summary]:
        """The summary of ``method`` of the class whose method ``function`` is
        (``self._process_one_batch(x)`` inside ``vali``), found through the
        class's bases: from the project's summaries, or from this file's own
        summary, linked alone, when the run left the file out."""
        qualified = self.qualified(function)
        if qualified is None or qualified.count(".") < self._module.count(".") + 2:
            return None  # not a method of a module-level class
        name = f"{qualified.rpartition('.')[0]}.{method}"
        if not self._left_out:
            return self._summaries.of(name)
        alone = self._alone
        return alone.of(name) if alone is not None else None

    @cached_property
    def _alone(self) -> Optional[Summaries]:
        """This file's own summary, linked alone."""
        summary = self._own_summary()
        return link([summary]) if summary is not None else None

    def kept_use(self, function: cst.FunctionDef, attribute: str) -> Optional[ReturnUse]:
        """What the methods of the subclasses (in any module) of the class
        whose method ``function`` is do with ``self.<attribute>`` (None: this
        file is not summarised, or no subclass uses it)."""
        if os.path.abspath(self._path) not in self._summaries.paths:
            return None
        qualified = self.qualified(function)
        if qualified is None or qualified.count(".") < self._module.count(".") + 2:
            return None
        return self._summaries.kept_use(qualified.rpartition(".")[0], attribute)

    def returned_use(self, function: cst.FunctionDef, position: str) -> Optional[ReturnUse]:
        """What the project's callers (in this file or any other module) do
        with what ``function`` returns at ``position`` (``""``: the whole
        value; a digit: that element of a returned tuple); None when this
        file is not summarised or no caller keeps the value."""
        if os.path.abspath(self._path) not in self._summaries.paths:
            return None
        qualified = self.qualified(function)
        return self._summaries.returned_use(qualified, position) if qualified is not None else None


__all__ = ["Callees", "Target", "arguments"]


def values_of(argument: cst.BaseExpression) -> cst.Subscript:
    """``argument[...]``: what a callee reads from a container an argument
    passes (:data:`~torchlint.analysis.summaries.VALUES`), for the loader
    facts, which read a subscript as any value of the dict it reads.  Not a
    node of the module: only its ``value`` is looked up."""
    return cst.Subscript(value=argument, slice=(cst.SubscriptElement(cst.Index(cst.Ellipsis())),))
