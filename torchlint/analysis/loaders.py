"""Loader facts: which ``DataLoader`` a value comes from, which loops iterate
it, and where its batches are copied to an accelerator.

Everything is traced through bindings (assignments, ``for`` targets and
unpacking, ``self.x`` assigned in ``__init__``, simple returns of the file's
functions, and a parameter through the file's calls of its function), never
through names.  A batch is a value drawn from a loader without a computation
in between: the loop's target, ``next(iter(loader))``, its parts
(``x, y = batch``, ``batch[0]``, ``batch["image"]``, ``batch.items()``, the
names a loop over those binds), views of them (``batch.view(n, -1)``), and
containers of them (``dict(zip(names, batch))``, what the file's function
returns of its parameter), so that a copy of it copies what the loader
produced (pinned memory, when the loader pins).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple, Union, cast

import libcst as cst

from torchlint.data.apidata import Signature, loader_signature
from torchlint.analysis.scopes import Binding, BindingKind, ScopeKind, Scopes
from torchlint.analysis.training import FunctionNode, Training, argument_for
from torchlint.analysis.summaries import MAYBE, SPLATTED, VARARG, VIEW_METHODS, ReturnUse
from torchlint.analysis.values import (
    NOT_DEVICE, VARIABLE_WRAPPERS, Device, DeviceKind, Values, collect_returns,
)
from torchlint.analysis.names import ImportTable
from torchlint.source.tree import children

if TYPE_CHECKING:
    from torchlint.analysis.callees import Callees, Target
    from torchlint.analysis.summaries import BuiltLoader
    from torchlint.analysis.flow import Flow
    from torchlint.source.arguments import Splats

DATALOADER = "torch.utils.data.DataLoader"


def loader_class(qualified: Optional[str]) -> bool:
    """torch's ``DataLoader``, or a library's subclass that passes its other
    keywords on to it (``torchlint/data/loaders.toml``: PyG's loaders)."""
    return qualified is not None and loader_signature(qualified) is not None

_PARTS = frozenset({"items", "values"})
_VIEWS = VIEW_METHODS
_MAX_DEPTH = 8
_CONTAINERS = frozenset({"dict", "list", "tuple", "zip"})
"""Builtins whose result holds their arguments' items: ``dict(zip(names, batch))`` holds the batch's parts."""
_ACCELERATOR_MODULES = ("torch.cuda", "torch.accelerator")
"""Modules whose use says the file runs on an accelerator (``torch.accelerator``
picks CUDA on an NVIDIA machine)."""


@dataclass(frozen=True)
class BatchMove:
    """``batch.cuda(...)`` or ``batch.to(device, ...)`` of a loader's batch."""

    call: cst.Call
    receiver: cst.BaseExpression
    loaders: FrozenSet[cst.Call]
    """The ``DataLoader(...)`` constructor calls the batch may come from."""
    cuda: bool
    """Certainly CUDA: ``.cuda()``, a ``"cuda..."`` literal or ``torch.device("cuda...")``;
    False for a device only known at run time."""
    non_blocking: Optional[cst.Arg]
    """The ``non_blocking`` argument when passed (by keyword or position)."""
    settled: bool
    """``non_blocking`` is passed, or may be (``*args``/``**kwargs``, extra positions)."""


@dataclass(frozen=True)
class HandedMove:
    """A call that hands a loader (or one of its batches) to another module's
    function that copies the batches to a device: ``train_epoch(model,
    device, loader)``, ``model.parse_batch(batch)`` (its summary says so)."""

    call: cst.Call
    loaders: FrozenSet[cst.Call]
    cuda: bool
    """Certainly CUDA (the callee writes ``.cuda()`` or a ``"cuda"`` device)."""
    items: bool = False
    """The callee copies the batches a loop draws from the argument (not the argument itself)."""
    blocking: bool = False
    """The callee's copy passes no ``non_blocking`` (and cannot through ``*``/``**``)."""


@dataclass(frozen=True)
class LoaderPass:
    """A call that hands a loader to a function of another module (or a
    library) that iterates it: ``train_one_epoch(model, loader, optimizer)``."""

    call: cst.Call
    loaders: FrozenSet[cst.Call]
    repeated: bool
    """The call runs inside a loop: lexically, or through the file's calls
    of its function (an epoch loop)."""
    each_call: FrozenSet[cst.Call] = frozenset()
    """The loaders one call iterates again and again itself (its own epoch
    loop): repeated even when each loader is built anew before each call."""


@dataclass(frozen=True)
class LoaderLoop:
    """A ``for`` loop over a loader (possibly through ``enumerate``/``tqdm``/``zip``)."""

    loop: cst.For
    loaders: FrozenSet[cst.Call]
    repeated: bool
    """The loop itself runs inside another loop: lexically, or through the
    file's calls of its function (an epoch loop)."""


@dataclass(frozen=True)
class LoaderKeyword:
    """What one keyword of a loader built by a project function is, seen
    from a call of that function (:class:`WrappedLoader`)."""

    known: bool
    """False: the value cannot be known here (an expression inside the
    function, a ``**`` at the call, keywords the function does not show)."""
    value: Optional[cst.BaseExpression] = None
    """The value the loader gets: the call's argument, or a literal written
    in the function (a default included); None with :attr:`known`: not
    passed at all, so the loader's default."""
    at_call: bool = False
    """The call decides it: an argument of the call, a parameter's default
    the call leaves, or a keyword the call could pass through ``**kwargs``."""
    argument: Optional[cst.BaseExpression] = None
    """The call's own argument that carries it, when it passes one."""
    settable: Optional[str] = None
    """The keyword the call may add to set it (a parameter whose default is
    used, or the loader's keyword itself through ``**kwargs``); None when
    the call cannot set it."""
    partial: bool = False
    """Passed on some paths only: the call's ``**`` of a dict that holds it
    under a condition (``{"num_workers": 1} if cuda else {}``); :attr:`value`
    is what it is where passed, the loader's default elsewhere."""


_UNKNOWN = LoaderKeyword(False)


class WrappedLoader:
    """A call of a project function (or method), in this file or another
    module, that builds and returns a loader: ``get_dataloader(train_ds, 32,
    shuffle=True)`` where ``get_dataloader`` returns ``DataLoader(ds,
    batch_size=batch_size, **kwargs)``.  Its keywords are what the function
    writes, with the call's arguments put in for the parameters and the
    ``**kwargs`` it passes on."""

    def __init__(self, call: cst.Call, built: "BuiltLoader", target: "Target",
                 splats: "Optional[Splats]" = None) -> None:
        self.call = call
        self.built = built
        self.function = built.qualified
        """The function that builds the loader (its dotted name)."""
        self.loader = built.loader
        """The loader class."""
        self._target = target
        self._splats = splats
        self._passed: Dict[str, cst.BaseExpression] = {}
        self._extra: Dict[str, cst.BaseExpression] = {}
        self._splatted: Set[str] = set()
        """Keywords the call passes inside a known ``**`` dict: its own keyword cannot be added beside them."""
        self._partial: Set[str] = set()
        """Of those, the ones the dict holds on some paths only (:attr:`LoaderKeyword.partial`)."""
        self._unknown: Set[str] = set()
        """Of those, the ones whose value differs by path: not known."""
        from torchlint.analysis.callees import arguments

        given = list(arguments(call))
        self._unpacks = False
        for arg in call.args:
            known = splats(arg.value) if splats is not None and arg.star == "**" else None
            if arg.star and known is None:
                self._unpacks = True
            elif known is not None:  # `make_data_loader(args, **kwargs)`, `kwargs` a dict the flow knows
                for key, value in known.certain.items():
                    given.append((None, key, value))
                for key, values in known.maybe.items():
                    # present on some paths only (`{...} if cuda else {}`): what it is where given;
                    # values that differ by path are not known
                    if all(values[0].deep_equals(value) for value in values[1:]):
                        given.append((None, key, values[0]))
                        self._partial.add(key)
                    else:
                        self._unknown.add(key)
                self._splatted.update(known.certain, known.maybe)
        self._varargs: List[cst.BaseExpression] = []
        """The call's positional arguments beyond the function's parameters (its ``*args``)."""
        for position, keyword, value in given:
            parameter = target.parameter(position, keyword)
            if parameter is not None:
                self._passed[parameter] = value
            elif keyword is not None:
                self._extra[keyword] = value
            elif position is not None:
                self._varargs.append(value)

    @property
    def name(self) -> str:
        """The function's own name (``get_dataloader``)."""
        return self.function.rsplit(".", 1)[-1]

    def keyword(self, keyword: str) -> LoaderKeyword:
        """What the loader gets as ``keyword`` from this call."""
        spec = dict(self.built.arguments).get(keyword)
        # the call's keyword that may carry it (a keyword names the parameter it fills)
        key = spec[len("param:"):] if spec is not None and spec.startswith("param:") else keyword
        if key in self._unknown:
            return _UNKNOWN
        found = self._vararg(keyword, spec) if spec is not None and spec.startswith(VARARG) else self._keyword(
            keyword, spec)
        if key in self._partial and found.known and found.at_call and found.value is not None:
            return dataclasses.replace(found, partial=True)
        return found

    def _vararg(self, keyword: str, spec: str) -> LoaderKeyword:
        """``vararg:<i>``: the call's ``i``-th extra positional argument, else
        the keyword the call passes on through ``**``, else not passed."""
        index = int(spec[len(VARARG):])
        if index < len(self._varargs):
            given = self._varargs[index]
            return LoaderKeyword(True, given, True, given)
        if self._unpacks:
            return _UNKNOWN
        if keyword in self._extra and self.built.forwards is not None:
            given = self._extra[keyword]
            return LoaderKeyword(True, given, True, None if keyword in self._splatted else given)
        return LoaderKeyword(True, None, True, settable=keyword) if self.built.forwards is not None else (
            LoaderKeyword(True))

    def _keyword(self, keyword: str, spec: Optional[str]) -> LoaderKeyword:
        if spec is not None:
            return self._spec(spec)
        splatted = dict(self.built.arguments).get(SPLATTED)
        if splatted is not None and splatted.startswith("param:"):
            return self._from_passed_dict(keyword, splatted[len("param:"):])
        summary = self._target.summary
        if self.built.forwards is not None and not self.built.open_keywords:
            if keyword in self._extra:
                given = self._extra[keyword]
                return LoaderKeyword(True, given, True, None if keyword in self._splatted else given)
            if self._unpacks:
                return _UNKNOWN
            if keyword in summary.parameters or keyword in summary.keyword_only:
                return LoaderKeyword(True)  # a parameter of that name takes it: the function decides
            return LoaderKeyword(True, None, True, settable=keyword)
        if self.built.open_keywords or self.built.forwards is not None:
            return _UNKNOWN
        return LoaderKeyword(True)  # not passed, whatever the caller does

    def _from_passed_dict(self, keyword: str, parameter: str) -> LoaderKeyword:
        """A keyword of the dict the call passes for the ``parameter`` the
        function unpacks into the loader (:data:`SPLATTED`): its value where
        the dict's keys are known, not passed where they are and it is not
        among them."""
        given = self._passed.get(parameter)
        known = self._splats(given) if given is not None and self._splats is not None else None
        if known is None or self.built.open_keywords or self.built.forwards is not None:
            return _UNKNOWN
        if keyword in known.certain:
            return LoaderKeyword(True, known.certain[keyword], True)
        values = known.maybe.get(keyword)
        if values:
            if all(values[0].deep_equals(value) for value in values[1:]):
                return LoaderKeyword(True, values[0], True, partial=True)
            return _UNKNOWN
        return LoaderKeyword(True)

    def _spec(self, spec: str) -> LoaderKeyword:
        kind, _, text = spec.partition(":")
        if kind == "lit":
            return LoaderKeyword(True, _literal(text))
        if spec.startswith(MAYBE):  # a dict in the function that holds it on some paths only
            return LoaderKeyword(True, _literal(spec[len(MAYBE):]), partial=True)
        if kind != "param":
            return _UNKNOWN
        given = self._passed.get(text)
        if given is None and text not in self._target.summary.parameters:
            given = self._extra.get(text)  # a keyword the function passes on through ``**`` to the one that builds it
        if given is not None:
            return LoaderKeyword(True, given, True, None if text in self._splatted else given)
        if self._unpacks:
            return _UNKNOWN
        default = dict(self.built.defaults).get(text)
        if default is None or not default.startswith("lit:"):
            return _UNKNOWN
        return LoaderKeyword(True, _literal(default[4:]), True, settable=text)


def _literal(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def _is_builtin(func: cst.BaseExpression, scopes: Scopes, names: FrozenSet[str]) -> bool:
    return isinstance(func, cst.Name) and func.value in names and not scopes.resolve(func)


def _string(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


class Loaders:
    """Loader facts of one module."""

    def __init__(self, module: cst.Module, scopes: Scopes, names: ImportTable, values: Values,
                 training: Training, callees: "Optional[Callees]" = None, flow: "Optional[Flow]" = None,
                 method_next: bool = False) -> None:
        self._module = module
        self._next_methods = ("__next__", "next") if method_next else ("__next__",)
        """What ``it.<method>()`` draws a batch: ``it.next()`` only where the target torch has it."""
        self._flow = flow
        self._callees = callees
        self._scopes = scopes
        self._names = names
        self._values = values
        self._training = training
        self._constructors: List[cst.Call] = []
        self._in_loop: Set[cst.CSTNode] = set()
        self._loop_stack: List[cst.CSTNode] = []
        self._loader_loops: Optional[List[LoaderLoop]] = None
        self._loops_around: Dict[cst.CSTNode, Tuple[cst.CSTNode, ...]] = {}
        """For each loader construction and each ``for`` loop: the loops around it in its function."""
        self._for_loops: List[Tuple[cst.For, bool]] = []
        self._looped_yields: List[cst.BaseExpression] = []
        self._yields_from: List[cst.From] = []
        """Every ``yield from`` of the file (its function: :attr:`_function_of`)."""
        self._calls: List[cst.Call] = []
        self._order: Dict[cst.CSTNode, int] = {}
        self._function_of: Dict[cst.CSTNode, FunctionNode] = {}
        self._attribute_of: Dict[cst.Call, cst.Attribute] = {}
        """Calls that are the whole value of an assignment to one attribute (``self.tr_set = DataLoader(...)``)."""
        self.uses_cuda = False
        """The file names ``torch.cuda`` or ``torch.accelerator``, calls ``.cuda()``,
        writes a ``"cuda..."`` device or calls a project function that returns
        one (:meth:`Callees.returns_accelerator`)."""
        self.cuda_sign: Optional[cst.CSTNode] = None
        """The first node (in source order) that makes :attr:`uses_cuda` true."""
        self._walk(module, module, 0)
        self._wrapped: Dict[cst.Call, Optional[WrappedLoader]] = {}
        self._held: Dict[cst.CSTNode, FrozenSet[cst.Call]] = {}
        self._attribute_stores: Dict[cst.ClassDef, Dict[str, List[cst.BaseExpression]]] = {}
        self._batches: Dict[cst.CSTNode, FrozenSet[cst.Call]] = {}
        self._call_loops: Dict[cst.Call, bool] = {}
        for facts in training.functions.values():
            for fact in facts.calls:
                self._call_loops[fact.call] = any(
                    not (isinstance(loop, cst.For) and self.single_pass(loop)) for loop in fact.loops
                )

    # -- the walk ---------------------------------------------------------------------

    def _walk(self, node: cst.CSTNode, function: FunctionNode, loops: int) -> None:
        self._order[node] = len(self._order)
        self._function_of[node] = function
        kind = type(node)  # exact types: libcst's concrete nodes have no subclasses
        if kind is cst.FunctionDef:
            definition = cast(cst.FunctionDef, node)
            outer, self._loop_stack = self._loop_stack, []  # the loops around a function's body are its own
            for child in children(definition):
                inside = child is definition.body
                self._loop_stack = [] if inside else outer
                self._walk(child, definition if inside else function, 0 if inside else loops)
            self._loop_stack = outer
            return
        if kind is cst.Call:
            call = cast(cst.Call, node)
            self._calls.append(call)
            qualified = self._names.call_name(call)
            if loader_class(qualified):
                self._constructors.append(call)
                self._loops_around[call] = tuple(self._loop_stack)
            if loops:
                self._in_loop.add(call)
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda" and qualified is None:
                self.cuda_sign = self.cuda_sign or node
                self.uses_cuda = True
            elif not self.uses_cuda and self._callees is not None and self._callees.returns_accelerator(call):
                self.cuda_sign = node  # `torch.device(get_device())`, the project's helper returning "cuda"
                self.uses_cuda = True
        elif (kind is cst.Attribute or kind is cst.Name) and not self.uses_cuda:
            qualified = self._names.qualified_name(cast(Union[cst.Attribute, cst.Name], node))
            if qualified is not None and qualified.startswith(_ACCELERATOR_MODULES):
                self.cuda_sign = node
                self.uses_cuda = True
        elif kind is cst.Assign:
            assign = cast(cst.Assign, node)
            target = assign.targets[0].target if len(assign.targets) == 1 else None
            if type(target) is cst.Attribute and type(assign.value) is cst.Call:
                self._attribute_of[assign.value] = target
        elif kind is cst.SimpleString and not self.uses_cuda:
            text = _string(cast(cst.SimpleString, node))
            if text is not None and (text == "cuda" or text.startswith("cuda:")):
                self.cuda_sign = node
                self.uses_cuda = True
        is_loop = kind is cst.While or (kind is cst.For and not self.single_pass(cast(cst.For, node)))
        if kind is cst.For:
            self._for_loops.append((cast(cst.For, node), loops > 0))
            self._loops_around[node] = tuple(self._loop_stack)
        elif kind is cst.Yield and isinstance(cast(cst.Yield, node).value, cst.From):
            delegated = cast(cst.From, cast(cst.Yield, node).value)
            self._yields_from.append(delegated)
            self._function_of[delegated] = function
            if loops:
                self._looped_yields.append(delegated.item)
        body = getattr(node, "body", None) if is_loop else None
        for child in children(node):
            if body is not None and child is body:
                self._loop_stack.append(node)
                self._walk(child, function, loops + 1)
                self._loop_stack.pop()
            else:
                self._walk(child, function, loops)

    def single_pass(self, loop: cst.For) -> bool:
        """``for epoch in range(1):`` (or ``range(0, 1)``, Python's own ``range``)
        runs its body at most once: what it holds is not repeated."""
        call = loop.iter
        if not isinstance(call, cst.Call) or not _is_builtin(call.func, self._scopes, frozenset({"range"})):
            return False
        if any(arg.keyword is not None or arg.star for arg in call.args) or not 1 <= len(call.args) <= 2:
            return False
        bounds = [arg.value for arg in call.args]
        if not all(isinstance(bound, cst.Integer) for bound in bounds):
            return False
        numbers = [int(cast(cst.Integer, bound).evaluated_value) for bound in bounds]
        return (numbers[-1] - (numbers[0] if len(numbers) == 2 else 0)) <= 1

    # -- questions --------------------------------------------------------------------

    def wrapped(self, call: cst.Call) -> Optional[WrappedLoader]:
        """``call`` runs a project function (or method) that builds and returns
        a loader, wherever it is defined: the loader with the keywords this
        call gives it (None: not such a call, or not known)."""
        if call in self._wrapped:
            return self._wrapped[call]
        found: Optional[WrappedLoader] = None
        if self._callees is not None and not loader_class(self._names.call_name(call)):
            built = self._callees.built_loader(call)
            if built is not None:
                found = WrappedLoader(call, built[0], built[1], self._values.splatted)
        self._wrapped[call] = found
        return found

    def decided(self, loaders: FrozenSet[cst.Call]) -> FrozenSet[cst.Call]:
        """``loaders`` without the ``DataLoader(...)`` calls inside a function
        of this file whose call is among them too: the call says what that
        loader gets there (its parameters filled in), the constructor alone
        does not."""
        inside = set()
        for call in loaders:
            if self.wrapped(call) is not None:
                function = self._training.local_function(call)
                if function is not None:
                    inside.add(function)
        if not inside:
            return loaders
        return frozenset(call for call in loaders if self._function_of.get(call) not in inside)

    @property
    def wrapped_calls(self) -> Tuple[WrappedLoader, ...]:
        """Every call of the file that builds a loader through a project
        function (:meth:`wrapped`), in source order."""
        found = (self.wrapped(call) for call in self._calls)
        return tuple(wrapped for wrapped in found if wrapped is not None)

    @property
    def constructors(self) -> Tuple[cst.Call, ...]:
        """Every ``DataLoader(...)`` call of the file (a library's subclass
        that passes the keywords on too), in source order."""
        return tuple(self._constructors)

    def signature(self, constructor: cst.Call) -> Signature:
        """The signature to read a loader construction's arguments with."""
        found = loader_signature(self._names.call_name(constructor) or DATALOADER)
        assert found is not None
        return found

    def before(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """``first`` starts before ``second`` in the source."""
        return self._order.get(first, -1) < self._order.get(second, -1)

    def function_of(self, node: cst.CSTNode) -> Optional[FunctionNode]:
        """The function (or module) whose body holds ``node``."""
        return self._function_of.get(node)

    def nodes_after(self, node: cst.CSTNode, within: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Nodes of ``within`` that come after ``node`` ends, in source order."""
        start = self._order.get(node, -1)
        last = start
        for found in _descendants(node):
            last = max(last, self._order.get(found, last))
        for found in _descendants(within):
            if self._order.get(found, -1) > last:
                yield found

    def loops(self) -> Iterator[LoaderLoop]:
        """Every ``for`` loop over a loader of this file (found once)."""
        if self._loader_loops is None:
            self._loader_loops = list(self._find_loops())
        return iter(self._loader_loops)

    def _find_loops(self) -> Iterator[LoaderLoop]:
        for loop, nested in self._for_loops:
            loaders = self._iterated(loop.iter)
            if not loaders:
                continue
            repeated = nested or self._called_in_loop(loop, set())
            if nested and self._only_walked(loop) and not self._called_in_loop(loop, set()):
                repeated = False  # `for loader in [first, second]: for x in loader`: each once
            split = self._by_caller(loop) if repeated and not nested else None
            if split is None:
                yield LoaderLoop(loop, loaders, repeated)
                continue
            again = loaders & split  # passed by calls that run in a loop; the rest once per call
            if again:
                yield LoaderLoop(loop, again, True)
            if loaders - again:
                yield LoaderLoop(loop, loaders - again, False)

    def _walked(self, binding: Binding, depth: int = 0) -> List[cst.BaseExpression]:
        """What a ``for`` binding takes from the container its loop walks: a
        display's elements (:func:`_displayed_elements`), or a dict's values
        (``for name, loader in loaders.items()``, ``for loader in loaders.values()``)."""
        source = binding.source
        if source is None or binding.path is None:
            return []
        if (isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and not source.args
                and (source.func.attr.value, binding.path) in (("values", ()), ("items", (1,)))):
            return self._dict_values(source.func.value, depth + 1)
        return _displayed_elements(source, binding.path, self._scopes)

    def _only_walked(self, loop: cst.For) -> bool:
        """Every loop around ``loop`` is one that walks a container of loaders
        and binds the name ``loop`` iterates (``for loader in [a, b]``,
        ``for name, loader in loaders.items()``)."""
        if not isinstance(loop.iter, cst.Name):
            return False
        bindings = self.reaching(loop.iter)
        walkers = {binding.node for binding in bindings
                   if binding.kind is BindingKind.FOR and self._walked(binding)}
        if not walkers or len(walkers) != len(bindings):
            return False
        around = self._loops_around.get(loop, ())
        return bool(around) and all(outer in walkers for outer in around)

    def _by_caller(self, loop: cst.For) -> Optional[FrozenSet[cst.Call]]:
        """For a loop over one of its function's parameters (``for x, y in
        loader``, through ``enumerate``/``tqdm`` too) that repeats only
        because the file calls the function in a loop: the loaders the calls
        made in a loop pass (a ``test(model, test_loader)`` after the epoch
        loop that also calls ``test(model, val_loader)`` passes one pass's
        loader); None when the loop's source is not such a parameter."""
        source: cst.BaseExpression = loop.iter
        if isinstance(source, cst.Call) and self._callees is not None:
            drawn = self._callees.yielded(source)
            if len(drawn) != 1:
                return None
            source = drawn[0]
        if not isinstance(source, cst.Name):
            return None
        bindings = self._scopes.resolve(source)
        function = self._function_of.get(loop)
        if (len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAMETER or bindings[0].scope is None
                or bindings[0].scope.node is not function or not isinstance(function, cst.FunctionDef)
                or not isinstance(bindings[0].node, cst.Param)):
            return None
        scope = bindings[0].scope
        positional = [*function.params.posonly_params, *function.params.params]
        index = next((i for i, p in enumerate(positional) if p is bindings[0].node), None)
        method = scope.parent is not None and scope.parent.kind is ScopeKind.CLASS
        again: Set[cst.Call] = set()
        for edge in self._training.callers(function):
            if self._call_loops.get(edge.call, False) or self._called_in_loop(edge.call, set()):
                passed = argument_for(edge.call, bindings[0].name, index, method)
                if passed is None:
                    return None  # the default is what repeats
                again |= self._iterated(passed)
        return frozenset(again)

    def looped_yields(self) -> FrozenSet[cst.Call]:
        """Loaders a generator hands out pass after pass: a ``yield from``
        over them inside a loop (``while True: yield from loader``), each
        turn of which starts a new pass."""
        found: Set[cst.Call] = set()
        for item in self._looped_yields:
            found |= self._iterated(item)
        return frozenset(found)

    def restarted(self) -> FrozenSet[cst.Call]:
        """Loaders iterated by hand again and again: an ``iter(loader)`` that
        runs in a loop (or in a function of the file called in one), as
        where an iterator run dry is made anew inside the step loop
        (``except StopIteration: it = iter(loader)``); each call starts a
        new pass over the loader."""
        found: Set[cst.Call] = set()
        for call in self._calls:
            if (len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star
                    and _is_builtin(call.func, self._scopes, frozenset({"iter"}))
                    and (call in self._in_loop or self._called_in_loop(call, set()))):
                found |= self._iterated(call.args[0].value)
        return frozenset(found)

    def passes(self) -> Iterator[LoaderPass]:
        """Every call that hands a loader to another module's function (or
        a library's) which iterates it; the file's own functions are
        followed through their parameters instead (:meth:`loops`)."""
        if self._callees is None:
            return
        for call in self._calls:
            if self._training.local_function(call) is not None:
                continue
            loaders: Set[cst.Call] = set()
            for argument in self._callees.iterated(call):
                loaders |= self._iterated(argument)
            again: Set[cst.Call] = set()
            # `trainer.train(epoch)`: a loader the instance's construction handed over.
            for argument, repeats in self._callees.held_iterated(call):
                held = self._iterated(argument)
                loaders |= held
                if repeats:
                    again |= held
            if not loaders:
                continue
            for argument in self._callees.repeated(call):
                again |= self._iterated(argument)
            inside = frozenset(again)
            if self._call_loops.get(call, False) or self._called_in_loop(call, set()):
                again = loaders
            if again:
                yield LoaderPass(call, frozenset(again), True, inside)
            if loaders - again:
                yield LoaderPass(call, frozenset(loaders - again), False)

    def handed_moves(self) -> Iterator[HandedMove]:
        """Calls of other modules' functions that copy a loader's batches to a
        device that is not the CPU: a loader they iterate, or a batch they are
        given (the file's own functions are followed through their
        parameters instead: :meth:`moves`)."""
        if self._callees is None:
            return
        for call in self._calls:
            if self._training.local_function(call) is not None:
                continue
            for argument, items, device, settled in self._callees.moved(call):
                # Items of a batch (`[t.to(device) for t in batch]`) are its parts.
                loaders = (self._iterated(argument) or self.batch_origins(argument)) if items \
                    else self.batch_origins(argument)
                if not loaders or (not items and self.copied_on_some_path(argument)):
                    continue
                where = self._remote_device(call, device)
                if where is None or where.is_cpu:
                    continue
                # CUDA by name: the summary's `cuda`, or a device its class keeps (read at the call itself).
                yield HandedMove(call, loaders, where.kind is DeviceKind.ACCELERATOR and where.expr is call, items,
                                 not settled)

    def _remote_device(self, call: cst.Call, device: str) -> Optional[Device]:
        """A device as another module's summary names it, seen from ``call``."""
        assert self._callees is not None
        kind, _, name = device.partition(":")
        if kind == "cuda":
            return Device(DeviceKind.ACCELERATOR, call)
        if kind == "param":
            passed = self._callees.argument(call, name)
            where = self._callees.default_device(call, name) if passed is None else None
        elif kind == "attr":
            passed = self._callees.attribute_argument(call, name)
            where = None
            if passed is None:  # a device the class (or a base) sets itself, or a parameter's default
                where = self._callees.attribute_device(call, name) or self._callees.attribute_default_device(
                    call, name)
        else:
            return None
        if where is not None:
            return Device(DeviceKind.ACCELERATOR if where == "cuda" else DeviceKind.CPU, call)
        return self.device_of(passed) if passed is not None else None

    def moves(self) -> Iterator[BatchMove]:
        """Every copy of a loader's batch to a device that is not the CPU."""
        for call in self._calls:
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in ("cuda", "to"):
                continue
            if self._names.call_name(call) is not None:
                continue  # `torch.cuda(...)` or a module's function, not a method
            loaders = self.batch_origins(func.value)
            if not loaders:
                continue
            move = self._move(call, func.value, loaders, func.attr.value == "cuda")
            if move is not None:
                yield move

    def _move(self, call: cst.Call, receiver: cst.BaseExpression, loaders: FrozenSet[cst.Call],
              cuda_method: bool) -> Optional[BatchMove]:
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        keywords = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
        starred = any(arg.star for arg in call.args)
        non_blocking = keywords.get("non_blocking")
        if cuda_method:
            # Tensor.cuda(device=None, non_blocking=False, memory_format=...)
            if len(positional) >= 2 and non_blocking is None:
                non_blocking = positional[1]
            settled = non_blocking is not None or starred
            return BatchMove(call, receiver, loaders, True, non_blocking, settled)
        # Tensor.to(device, dtype, non_blocking, copy) / to(dtype, non_blocking, copy) / to(other, ...)
        target = keywords.get("device") or (positional[0] if positional else None)
        if target is None:
            return None
        device = self.device_of(target.value)
        if device is None or device.is_cpu:
            return None
        if len(positional) >= 3 and non_blocking is None:
            non_blocking = positional[2]
        settled = non_blocking is not None or starred or len(positional) == 2
        # `self.device` a base class of another module sets: CUDA by name there (the summaries).
        kept = isinstance(target.value, cst.Attribute) and self._kept_device(target.value) == "cuda"
        return BatchMove(call, receiver, loaders, self._certainly_cuda(target.value) or kept, non_blocking, settled)

    def device_of(self, expr: cst.BaseExpression, depth: int = 0) -> Optional[Device]:
        """The device ``expr`` is, following a parameter to the arguments the
        file's calls of its function pass."""
        fact = self._values.device_fact(expr)
        if isinstance(fact, Device):
            return fact
        if fact is NOT_DEVICE or depth > 5:
            return None
        if isinstance(expr, cst.Attribute) and self._option_of(expr.value, expr.attr.value) == "int":
            return Device(DeviceKind.VARIABLE, expr)  # `.to(args.local_rank)`: a device index
        if isinstance(expr, cst.Attribute):
            passed = self._self_attribute_values(expr)
        elif isinstance(expr, cst.Name):
            if self._annotated_int(expr):
                return Device(DeviceKind.VARIABLE, expr)  # `.to(index)`: a device index
            own = set(self.reaching(expr))
            # A recursive call that passes the parameter on (`move(v, device)` inside `move`) adds nothing.
            passed = [value for values in self._unfilled(self.reaching(expr)) for value in values
                      if not (isinstance(value, cst.Name) and own.issuperset(self.reaching(value)))]
        elif isinstance(expr, cst.Call) and self._training.local_function(expr) is not None:
            function = self._training.local_function(expr)
            assert function is not None
            passed = self._returns(function)  # `device = setup(args)`: what every return gives
        else:
            return None
        if not passed:
            return None
        devices = [self.device_of(value, depth + 1) for value in passed]
        if any(device is None for device in devices):
            return None
        if all(device is not None and device.is_cpu for device in devices):
            return Device(DeviceKind.CPU, expr)
        return Device(DeviceKind.VARIABLE, expr)

    def _option_of(self, receiver: cst.BaseExpression, option: str, depth: int = 0) -> Optional[str]:
        """The type of ``<receiver>.<option>`` when ``receiver`` is the parsed
        command line (:meth:`Values.option_type`), also a parameter every call
        of its function in this file fills with it, through callers' own
        parameters."""
        bindings = self._scopes.resolve(receiver) if isinstance(receiver, cst.Name) else ()
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAMETER:
            return self._values.option_type(receiver, option)
        if depth > 4:
            return None
        assert isinstance(receiver, cst.Name)
        kinds = {self._option_of(value, option, depth + 1) for value in self._bound_values(receiver)}
        return kinds.pop() if len(kinds) == 1 else None

    def _annotated_int(self, name: cst.Name) -> bool:
        """A parameter annotated ``int``."""
        bindings = self._scopes.resolve(name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAMETER:
            return False
        annotation = bindings[0].annotation
        return isinstance(annotation, cst.Name) and annotation.value == "int" and not self._scopes.resolve(annotation)

    def _certainly_cuda(self, expr: cst.BaseExpression) -> bool:
        text = _string(expr)
        if text is not None:
            return text == "cuda" or text.startswith("cuda:")
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, cst.Call) and self._names.call_name(expr) == "torch.device" and expr.args:
            return self._certainly_cuda(expr.args[0].value)
        return False

    # -- where values come from ----------------------------------------------------------

    def origins(self, expr: cst.BaseExpression) -> FrozenSet[cst.Call]:
        """The ``DataLoader(...)`` calls of this file ``expr`` may hold, and the
        calls of project functions that build one (:meth:`wrapped`)."""
        return frozenset(call for call in self._held_of(expr, 0)
                         if loader_class(self._names.call_name(call)) or self.wrapped(call) is not None)

    def held(self, expr: cst.BaseExpression) -> FrozenSet[cst.Call]:
        """The calls of this file whose result ``expr`` may hold: through
        names (their reaching bindings, unpackings included), ``x if c else
        y``, ``self`` attributes set in ``__init__``, the returns of the
        file's functions and ``iter(...)``; a call of anything else is a leaf
        (``DistributedSampler(ds)``, ``DataLoader(...)``)."""
        return self._held_of(expr, 0)

    def _held_of(self, expr: cst.BaseExpression, depth: int) -> FrozenSet[cst.Call]:
        if depth > _MAX_DEPTH:
            return frozenset()
        cached = self._held.get(expr)
        if cached is not None:
            return cached
        self._held[expr] = frozenset()  # cycles resolve to nothing
        found = self._compute_held(expr, depth)
        self._held[expr] = found
        return found

    def _compute_held(self, expr: cst.BaseExpression, depth: int) -> FrozenSet[cst.Call]:
        if isinstance(expr, cst.Call):
            if loader_class(self._names.call_name(expr)):
                return frozenset({expr})
            if _is_builtin(expr.func, self._scopes, frozenset({"iter"})) and expr.args:
                return self._held_of(expr.args[0].value, depth + 1)  # an iterator over the loader
            function = self._training.local_function(expr)
            if function is not None:
                found = self._union(self._returns(function), depth)
                return found | {expr} if self.wrapped(expr) is not None else found
            return frozenset({expr})
        if isinstance(expr, cst.IfExp):
            return self._union([expr.body, expr.orelse], depth)
        if isinstance(expr, cst.Name):
            return self._union(self._bound_values(expr), depth)
        if isinstance(expr, cst.Attribute):
            return self._union(self._self_attribute_values(expr), depth)
        if isinstance(expr, cst.Subscript):  # `loaders[phase]`: any value of the dict it reads
            return self._union(self._dict_values(expr.value, depth), depth)
        return frozenset()

    def _dict_values(self, expr: cst.BaseExpression, depth: int) -> List[cst.BaseExpression]:
        """The values a dict ``expr`` may hold, when it is a dict display or
        a dict comprehension (through names): ``{"train": DataLoader(...),
        "val": DataLoader(...)}``, ``{x: DataLoader(sets[x]) for x in phases}``;
        through a name, also what the assignments ``loaders[key] = value``
        that reach the read store in it (``loaders = dict()`` then filled in a loop)."""
        if depth > _MAX_DEPTH:
            return []
        if isinstance(expr, cst.Dict):
            return [element.value for element in expr.elements if isinstance(element, cst.DictElement)]
        if isinstance(expr, cst.DictComp):
            return [expr.value]
        if isinstance(expr, cst.Name):
            found = [value for bound in self._bound_values(expr) for value in self._dict_values(bound, depth + 1)]
            return found + self._stored_items(expr)
        if isinstance(expr, cst.Attribute):  # `self.data_loader`, a dict the class fills key by key
            found = [value for bound in self._self_attribute_values(expr)
                     for value in self._dict_values(bound, depth + 1)]
            return found + self._stored_attribute_items(expr)
        return []

    def _stored_attribute_items(self, expr: cst.Attribute) -> List[cst.BaseExpression]:
        """The values the class's methods store in ``self.<attr>[key] = value``."""
        node = self._own_class(expr)
        if node is None:
            return []
        stores = self._attribute_stores.get(node)
        if stores is None:
            stores = self._attribute_stores[node] = _subscript_stores(node)
        return list(stores.get(expr.attr.value, ()))

    def _stored_items(self, name: cst.Name) -> List[cst.BaseExpression]:
        """The values ``name[key] = value`` statements that reach this read store."""
        definitions = self._flow.definitions_at(name) if self._flow is not None else None
        found: List[cst.BaseExpression] = []
        for definition in definitions or ():
            change = definition.change
            if isinstance(change, cst.Assign) and any(
                    isinstance(target.target, cst.Subscript) and isinstance(target.target.value, cst.Name)
                    and target.target.value.value == name.value for target in change.targets):
                found.append(change.value)
        return found

    def _union(self, exprs: Sequence[cst.BaseExpression], depth: int) -> FrozenSet[cst.Call]:
        found: Set[cst.Call] = set()
        for value in exprs:
            found |= self._held_of(value, depth + 1)
        return frozenset(found)

    def reaching(self, name: cst.Name) -> Tuple[Binding, ...]:
        """The bindings of ``name`` whose value can reach this read (the flow's
        reaching definitions; every binding where it cannot order the read)."""
        if self._flow is None:
            return self._scopes.resolve(name)
        return self._flow.bindings_at(name)

    def _unfilled(self, bindings: Tuple[Binding, ...]) -> List[List[cst.BaseExpression]]:
        """What each of ``bindings`` may give its name (:meth:`_binding_values`),
        leaving out the default fills of a parameter (``if device is None:
        device = model.device()``) where every call of the function gives it a
        value other than None: the fill never runs."""
        values = [self._binding_values(binding, 0) for binding in bindings]
        flow = self._flow
        fill = [flow is not None and flow.fills_default(binding) for binding in bindings]
        filled = {binding.name for binding, fills in zip(bindings, fill) if fills}
        if not filled:
            return values
        given = [value for binding, found in zip(bindings, values)
                 if binding.kind is BindingKind.PARAMETER and binding.name in filled for value in found]
        if not given or any(isinstance(value, cst.Name) and value.value == "None" for value in given):
            return values
        return [found for found, fills in zip(values, fill) if not fills]

    def _bound_values(self, name: cst.Name) -> List[cst.BaseExpression]:
        values: List[cst.BaseExpression] = []
        for binding in self.reaching(name):
            values.extend(self._binding_values(binding, 0))
        return values

    def _binding_values(self, binding: Binding, depth: int) -> List[cst.BaseExpression]:
        """What a binding may give its name: its value, the element of what an
        unpacking unpacks (``train_loader, sampler = make_loaders(cfg)``,
        ``train_loader, val_loader = loaders`` with a list passed in), or
        what the file's calls pass for a parameter."""
        if binding.kind in (BindingKind.ASSIGN, BindingKind.ANN_ASSIGN, BindingKind.WALRUS):
            if binding.value is not None:
                return [binding.value]
            if binding.source is not None and binding.path:
                arities = _target_arities(binding)
                return [] if arities is None else self._parts(binding.source, binding.path, depth + 1, arities)
        elif binding.kind is BindingKind.PARAMETER:
            return self._parameter_values(binding)
        elif binding.kind is BindingKind.FOR:
            return self._walked(binding, depth)
        elif binding.kind is BindingKind.WITH and isinstance(binding.source, cst.Call) and binding.path == () and (
                self._callees is not None and self._callees.entered_as_itself(binding.source)):
            return [binding.source]  # `with tqdm(loader) as bar`: the bar itself
        return []

    def _parts(self, expr: cst.BaseExpression, path: Tuple[int, ...], depth: int,
               arities: Tuple[int, ...]) -> List[cst.BaseExpression]:
        """The expressions at ``path`` of the sequences ``expr`` may hold: a
        tuple or list display of the unpacking's length (``arities``, one per
        level of ``path``), through names, the file's functions' returns and
        parameters; nothing where it is not known."""
        if depth > _MAX_DEPTH:
            return []
        if not path:
            return [expr]
        if isinstance(expr, (cst.Tuple, cst.List)):
            elements = expr.elements
            if any(isinstance(e, cst.StarredElement) for e in elements) or len(elements) != arities[0]:
                return []  # a starred part or another length: which element lands where is not known
            return self._parts(elements[path[0]].value, path[1:], depth + 1, arities[1:])
        if isinstance(expr, cst.IfExp):
            return [*self._parts(expr.body, path, depth + 1, arities),
                    *self._parts(expr.orelse, path, depth + 1, arities)]
        if isinstance(expr, cst.Name):
            found: List[cst.BaseExpression] = []
            for binding in self.reaching(expr):
                for value in self._binding_values(binding, depth + 1):
                    found.extend(self._parts(value, path, depth + 1, arities))
            return found
        if isinstance(expr, cst.Call):
            function = self._training.local_function(expr)
            if function is not None:
                return [part for value in self._returns(function)
                        for part in self._parts(value, path, depth + 1, arities)]
            wrapped = self.wrapped(expr)
            if (wrapped is not None and len(path) == 1 and wrapped.built.arity == arities[0]
                    and path[0] in wrapped.built.parts):
                return [expr]  # `train_loader, val_loader = loaders(...)`, another module's function
        return []

    def _arguments(self, name: cst.Name) -> List[cst.BaseExpression]:
        """What the file's calls pass for parameter ``name`` of its function
        (``Cls(...)`` calls too, for a parameter of ``__init__``)."""
        bindings = self._scopes.resolve(name)
        if len(bindings) != 1:
            return []
        return self._parameter_values(bindings[0])

    def _parameter_values(self, binding: Binding) -> List[cst.BaseExpression]:
        scope = binding.scope
        extra: List[cst.Call] = []
        if (
            scope is not None and isinstance(scope.node, cst.FunctionDef) and scope.node.name.value == "__init__"
            and scope.parent is not None and scope.parent.kind is ScopeKind.CLASS
        ):
            extra = self._instantiations(scope.parent.node)
        return list(self._training.parameter_arguments(binding, extra) or ())

    def _instantiations(self, node: Optional[cst.CSTNode]) -> List[cst.Call]:
        """``Cls(...)`` calls of this file that build the class ``node``."""
        if not isinstance(node, cst.ClassDef):
            return []
        found: List[cst.Call] = []
        for call in self._calls:
            func = call.func
            if isinstance(func, cst.Name) and func.value == node.name.value:
                bindings = self._scopes.resolve(func)
                if len(bindings) == 1 and bindings[0].node is node:
                    found.append(call)
        return found

    def _kept_device(self, expr: cst.Attribute) -> Optional[str]:
        """``self.x`` in a method: the device the summaries say the class (or
        a base) keeps there, ``cuda`` by name on some path or ``cpu``."""
        node = self._own_class(expr)
        if node is None or self._callees is None:
            return None
        return self._callees.kept_device(node, expr.attr.value)

    def _own_class(self, expr: cst.Attribute) -> Optional[cst.ClassDef]:
        """The class whose method reads ``self.x`` (``self`` its first parameter)."""
        receiver = expr.value
        if not isinstance(receiver, cst.Name):
            return None
        bindings = self._scopes.resolve(receiver)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAMETER:
            return None
        scope = bindings[0].scope
        if scope is None or scope.parent is None or scope.parent.kind is not ScopeKind.CLASS:
            return None
        node = scope.parent.node
        return node if isinstance(node, cst.ClassDef) else None

    def _self_attribute_values(self, expr: cst.Attribute) -> List[cst.BaseExpression]:
        """``self.x``: what the class's ``__init__`` assigns to ``self.x``."""
        node = self._own_class(expr)
        if node is None:
            return []
        return [value for value in self._values.attribute_writes(node).get(expr.attr.value, ()) if value is not None]

    def returned_use(self, constructor: cst.Call) -> "Optional[ReturnUse]":
        """What the project's callers do with the loader ``constructor`` builds,
        when its function returns it (whole, or as an element of a returned
        tuple: ``return dataset, loader``): the callers' uses joined across
        every position it is returned at (None when it is not returned, or
        no caller keeps it)."""
        function = self._function_of.get(constructor)
        if self._callees is None or not isinstance(function, cst.FunctionDef):
            return None
        positions: Set[str] = set()
        for value in self._returns(function):
            if constructor in self.origins(value):
                positions.add("")
            elif isinstance(value, cst.Tuple):
                for index, element in enumerate(value.elements):
                    if isinstance(element, cst.StarredElement):
                        break
                    if constructor in self.origins(element.value):
                        positions.add(str(index))
        found: "Optional[ReturnUse]" = None
        for position in sorted(positions):
            use = self._callees.returned_use(function, position)
            if use is not None:
                found = use if found is None else found.merged(use)
        if any(self._function_of.get(delegated) is function and constructor in self.origins(delegated.item)
               for delegated in self._yields_from):
            # A generator that yields the loader's batches (`yield from loader`): its callers'
            # copies of the items they draw (`next(data)`) copy those batches; how often they
            # iterate the generator says nothing about the loader's passes.
            use = self._callees.returned_use(function, "")
            if use is not None and use.to_cuda:
                drawn = ReturnUse(to_cuda=True, blocking=use.blocking, callers=use.callers, yielded=True)
                found = drawn if found is None else found.merged(drawn)
        attribute = self._kept_as(constructor, function)
        if attribute is not None:  # `self.tr_set = DataLoader(...)`, used by subclasses' methods
            use = self._callees.kept_use(function, attribute)
            if use is not None:
                found = use if found is None else found.merged(use)
        return found

    def _kept_as(self, constructor: cst.Call, function: cst.FunctionDef) -> Optional[str]:
        """The attribute of a method's own instance the loader is assigned to
        (``self.tr_set = DataLoader(...)``), if that is the whole statement."""
        target = self._attribute_of.get(constructor)
        params = function.params.params
        if target is None or not params:
            return None
        if (isinstance(target.value, cst.Name)
                and target.value.value == params[0].name.value):
            return target.attr.value
        return None

    @staticmethod
    def _returns(function: cst.FunctionDef) -> List[cst.BaseExpression]:
        found: List[cst.Return] = []
        collect_returns(function.body, found)
        return [statement.value for statement in found if statement.value is not None]

    # -- batches ---------------------------------------------------------------------

    def _iterated(self, expr: cst.BaseExpression, depth: int = 0) -> FrozenSet[cst.Call]:
        """Loaders a ``for`` over ``expr`` draws batches from: directly, through
        a call that yields their items (``enumerate``, ``zip``, ``tqdm``, a
        project generator over its argument), or through a name bound to
        such a call (``bar = tqdm(loader); for batch in bar``)."""
        if depth > _MAX_DEPTH:
            return frozenset()
        if isinstance(expr, cst.Call) and self._callees is not None:
            drawn = self._callees.yielded(expr)  # enumerate, zip, tqdm, a project generator over its argument
            if drawn:
                found: Set[cst.Call] = set()
                for value in drawn:
                    found |= self._iterated(value, depth + 1)
                return frozenset(found)
        if isinstance(expr, (cst.Name, cst.Attribute)) and self._callees is not None:
            through: Set[cst.Call] = set()
            # `bar = tqdm(loader)`, or `self.valid_iter = cycle(self.valid_dl)` (a generator over it)
            values = self._bound_values(expr) if isinstance(expr, cst.Name) else self._self_attribute_values(expr)
            for value in values:
                if isinstance(value, cst.Call) and self._callees.yielded(value):
                    through |= self._iterated(value, depth + 1)
            if through:
                return frozenset(through | self.origins(expr))
        return self.origins(expr)

    def handed_out(self, constructor: cst.Call) -> bool:
        """A call of this file hands the loader ``constructor`` builds to code
        other than the file's own functions (which are followed through their
        parameters), ``len`` and the library wrappers that only draw its
        items (``enumerate``, ``tqdm``): that code may do anything with it."""
        for call in self._calls:
            if call is constructor or self._training.local_function(call) is not None:
                continue
            if _is_builtin(call.func, self._scopes, frozenset({"len", "iter"})):
                continue
            if self._callees is not None and self._callees.wrapper_yields(call):
                continue
            if any(constructor in self.origins(arg.value) for arg in call.args):
                return True
        return False

    def copied_on_some_path(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is a name one of whose reaching bindings copies a batch to
        a device (``if use_gpu: inputs = inputs.cuda()``): where the batch
        goes from there depends on the path."""
        if not isinstance(expr, cst.Name):
            return False
        for binding in self.reaching(expr):
            value = binding.value if binding.kind in (BindingKind.ASSIGN, BindingKind.WALRUS) else None
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):  # `x.cuda().detach()`
                if value.func.attr.value in ("cuda", "to") and self.batch_origins(value.func.value):
                    return True
                value = value.func.value
        return False

    def read_name(self, expr: cst.BaseExpression) -> Optional[str]:
        """The name a batch expression reads (``batch`` of ``batch["x"]``,
        ``Variable(batch[0])``, ``batch.x.view(n, -1)``), through what
        :meth:`batch_origins` reads through; None for anything else."""
        for _ in range(_MAX_DEPTH * 4):
            if isinstance(expr, (cst.Subscript, cst.Attribute)):
                expr = expr.value
                continue
            if isinstance(expr, cst.Call):
                func = expr.func
                if isinstance(func, cst.Attribute) and self._names.call_name(expr) is None and (
                        (func.attr.value in _PARTS and not expr.args) or func.attr.value in _VIEWS):
                    expr = func.value
                    continue
                if expr.args and expr.args[0].keyword is None and self._names.call_name(expr) in VARIABLE_WRAPPERS:
                    expr = expr.args[0].value
                    continue
            break
        return expr.value if isinstance(expr, cst.Name) else None

    def batch_origins(self, expr: cst.BaseExpression) -> FrozenSet[cst.Call]:
        """The loaders whose batch (or a part of it) ``expr`` holds."""
        return self._batch_of(expr, 0)

    def _batch_of(self, expr: cst.BaseExpression, depth: int) -> FrozenSet[cst.Call]:
        if depth > _MAX_DEPTH:
            return frozenset()
        cached = self._batches.get(expr)
        if cached is not None:
            return cached
        self._batches[expr] = frozenset()
        found = self._compute_batch(expr, depth)
        self._batches[expr] = found
        return found

    def _compute_batch(self, expr: cst.BaseExpression, depth: int) -> FrozenSet[cst.Call]:
        if isinstance(expr, cst.Name):
            found: Set[cst.Call] = set()
            for binding in self.reaching(expr):
                found |= self._binding_batch(binding, depth)
            return frozenset(found)
        if isinstance(expr, cst.Subscript):
            return self._batch_of(expr.value, depth + 1)
        if isinstance(expr, cst.Attribute):
            return self._batch_of(expr.value, depth + 1) if self._names.qualified_name(expr) is None else frozenset()
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in _PARTS and not expr.args:
                return self._batch_of(func.value, depth + 1)
            if isinstance(func, cst.Attribute) and func.attr.value in _VIEWS and self._names.call_name(expr) is None:
                return self._batch_of(func.value, depth + 1)
            if _is_builtin(func, self._scopes, frozenset({"next"})) and expr.args:
                return self._iterated(expr.args[0].value)
            if isinstance(func, cst.Attribute) and func.attr.value in self._next_methods and not expr.args:
                return self._iterated(func.value)  # `it.__next__()` is `next(it)`, as old loaders' `it.next()` was
            if expr.args and expr.args[0].keyword is None and self._names.call_name(expr) in VARIABLE_WRAPPERS:
                return self._batch_of(expr.args[0].value, depth + 1)  # `Variable(t)` is `t` since torch 0.4
            if _is_builtin(func, self._scopes, _CONTAINERS):
                held: Set[cst.Call] = set()
                for arg in expr.args:
                    if arg.keyword is None:
                        held |= self._batch_of(arg.value, depth + 1)
                return frozenset(held)
            function = self._training.local_function(expr)
            if function is not None:
                return self._returned_parts(expr, function, depth)
        return frozenset()

    def _returned_parts(self, call: cst.Call, function: cst.FunctionDef, depth: int) -> FrozenSet[cst.Call]:
        """The loaders whose batch (or parts of it) a call of the file's function
        returns: what the call passes for the parameters whose parts the
        function's ``return`` holds (``return dict(zip(self.fields, data))``),
        call by call, so that each call answers for its own argument."""
        scope = self._scopes.scope_of(function)
        method = scope is not None and scope.parent is not None and scope.parent.kind is ScopeKind.CLASS
        positional = [*function.params.posonly_params, *function.params.params]
        found: Set[cst.Call] = set()
        for value in self._returns(function):
            for binding in self._parameters_held(value, depth + 1):
                index = next((i for i, p in enumerate(positional) if p is binding.node), None)
                passed = argument_for(call, binding.name, index, method and isinstance(call.func, cst.Attribute))
                if passed is not None:
                    found |= self._batch_of(passed, depth + 1)
        return frozenset(found)

    def _parameters_held(self, expr: cst.BaseExpression, depth: int) -> List[Binding]:
        """The parameters of its function whose data (or a part of it) ``expr``
        holds as is: the parameter, its items and attributes, views, the
        containers ``dict``/``list``/``tuple``/``zip`` of them, displays of them."""
        if depth > _MAX_DEPTH:
            return []
        if isinstance(expr, cst.Name):
            found: List[Binding] = []
            for binding in self.reaching(expr):
                if binding.kind is BindingKind.PARAMETER:
                    found.append(binding)
                elif binding.kind in (BindingKind.ASSIGN, BindingKind.ANN_ASSIGN) and binding.value is not None:
                    found.extend(self._parameters_held(binding.value, depth + 1))
            return found
        if isinstance(expr, (cst.Subscript, cst.Attribute)):
            if isinstance(expr, cst.Attribute) and self._names.qualified_name(expr) is not None:
                return []
            return self._parameters_held(expr.value, depth + 1)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return [b for e in expr.elements for b in self._parameters_held(e.value, depth + 1)]
        if isinstance(expr, cst.Dict):
            return [b for e in expr.elements if isinstance(e, cst.DictElement)
                    for b in self._parameters_held(e.value, depth + 1)]
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and (func.attr.value in _PARTS or func.attr.value in _VIEWS) \
                    and self._names.call_name(expr) is None:
                return self._parameters_held(func.value, depth + 1)
            if _is_builtin(func, self._scopes, _CONTAINERS):
                return [b for arg in expr.args if arg.keyword is None
                        for b in self._parameters_held(arg.value, depth + 1)]
        return []

    def _binding_batch(self, binding: Binding, depth: int) -> FrozenSet[cst.Call]:
        if binding.kind in (BindingKind.FOR, BindingKind.COMPREHENSION):
            source = binding.source
            if source is None:
                return frozenset()
            loaders = self._iterated(source)
            if loaders:
                return loaders
            parts = set(self._batch_of(source, depth + 1))  # `for k, v in batch.items()`: its parts
            if not parts and isinstance(source, cst.Call) and self._callees is not None:
                for value in self._callees.yielded(source):  # `for i, t in enumerate(batch)`: its parts too
                    parts |= self._batch_of(value, depth + 1)
            return frozenset(parts)
        if binding.kind in (BindingKind.ASSIGN, BindingKind.WALRUS):
            drawn = binding.value if binding.value is not None else binding.source
            return self._batch_of(drawn, depth + 1) if drawn is not None else frozenset()
        if binding.kind is BindingKind.PARAMETER:  # a batch handed to one of the file's functions
            found: Set[cst.Call] = set()
            for value in self._parameter_values(binding):
                found |= self._batch_of(value, depth + 1)
            return frozenset(found)
        return frozenset()

    # -- repetition --------------------------------------------------------------------

    def rebuilt(self, constructor: cst.Call) -> bool:
        """The ``DataLoader(...)`` call itself runs in a loop (lexically, or its
        function is called in one): each loader it builds may be iterated once.
        Not when every loop over it is a later loop of the same function,
        outside the loop that builds it (``for phase in cfg: loaders[phase] =
        DataLoader(...)``, then the epoch loop): each loader outlives the pass
        that built it."""
        if constructor in self._in_loop:
            return not self._built_before_use(constructor)
        return self._called_in_loop(constructor, set())

    def _built_before_use(self, constructor: cst.Call) -> bool:
        around = self._loops_around.get(constructor, ())
        if not around:
            return False
        building = around[-1]
        function = self._function_of.get(constructor)
        uses = [found.loop for found in self.loops() if constructor in found.loaders]
        return bool(uses) and all(
            self._function_of.get(use) is function and use is not building and (
                (building not in self._loops_around.get(use, ()) and self.before(building, use))
                or self._repeated_within_pass(constructor, building, use))
            for use in uses
        )

    def _repeated_within_pass(self, constructor: cst.Call, building: cst.CSTNode, use: cst.CSTNode) -> bool:
        """``for name in objects: loader = DataLoader(...)`` then, later in the
        same pass, ``for epoch in ...: for batch in loader``: a loop nested in
        the building loop (not around the construction) repeats the use, so
        each loader built is iterated again and again."""
        around = self._loops_around.get(use, ())
        if building not in around or not self.before(constructor, use):
            return False
        return len(around) > around.index(building) + 1

    def _called_in_loop(self, node: cst.CSTNode, seen: Set[cst.FunctionDef]) -> bool:
        """The function holding ``node`` is called inside a loop of this file
        (directly, or through a function that is)."""
        function = self._function_of.get(node)
        if not isinstance(function, cst.FunctionDef) or function in seen:
            return False
        seen.add(function)
        for edge in self._training.callers(function):
            if self._call_loops.get(edge.call, False) or self._called_in_loop(edge.call, seen):
                return True
        return False


def _displayed_elements(source: cst.BaseExpression, path: Tuple[int, ...],
                        scopes: Scopes) -> List[cst.BaseExpression]:
    """What a ``for`` loop binds at ``path`` of its target when it walks a
    list or tuple display (``for loader in [train_loader, val_loader]``), or
    one through ``zip``/``enumerate`` (``for loader, split in zip([valid_loader,
    test_loader], ["val", "test"])``): the display's elements."""
    if isinstance(source, cst.Call) and path and not any(arg.keyword or arg.star for arg in source.args):
        if _is_builtin(source.func, scopes, frozenset({"zip"})) and path[0] < len(source.args):
            source, path = source.args[path[0]].value, path[1:]
        elif _is_builtin(source.func, scopes, frozenset({"enumerate"})) and path[0] == 1 and source.args:
            source, path = source.args[0].value, path[1:]
    if path or not isinstance(source, (cst.List, cst.Tuple)):
        return []
    return [element.value for element in source.elements if isinstance(element, cst.Element)]


def _target_arities(binding: Binding) -> Optional[Tuple[int, ...]]:
    """The length of each unpacking on the way to the binding's name in its
    assignment target (``(2, 3)`` for ``c`` of ``a, (b, c, d) = ...``); None
    when the target is not a plain unpacking of displays."""
    statement = binding.node
    if isinstance(statement, cst.Assign):
        targets: List[cst.BaseExpression] = [target.target for target in statement.targets]
    elif isinstance(statement, (cst.AnnAssign, cst.NamedExpr)):
        targets = [statement.target]
    else:
        return None
    for target in targets:
        arities: List[int] = []
        node: cst.BaseExpression = target
        for index in binding.path or ():
            if not isinstance(node, (cst.Tuple, cst.List)) or index >= len(node.elements):
                break
            arities.append(len(node.elements))
            node = node.elements[index].value
        else:
            if node is binding.target:
                return tuple(arities)
    return None


def _subscript_stores(node: cst.ClassDef) -> Dict[str, List[cst.BaseExpression]]:
    """For each ``self.<attr>``, the values the class's methods store with
    ``self.<attr>[key] = value`` (``self`` the method's first parameter)."""
    found: Dict[str, List[cst.BaseExpression]] = {}
    for method in node.body.body:
        if not isinstance(method, cst.FunctionDef):
            continue
        first = [*method.params.posonly_params, *method.params.params][:1]
        if not first:
            continue
        receiver = first[0].name.value
        for child in _descendants(method.body):
            if not isinstance(child, cst.Assign):
                continue
            for target in child.targets:
                inner = target.target
                if (isinstance(inner, cst.Subscript) and isinstance(inner.value, cst.Attribute)
                        and isinstance(inner.value.value, cst.Name) and inner.value.value.value == receiver):
                    found.setdefault(inner.value.attr.value, []).append(child.value)
    return found


def _descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


__all__ = [
    "BatchMove", "DATALOADER", "HandedMove", "LoaderKeyword", "LoaderLoop", "LoaderPass", "Loaders", "WrappedLoader",
    "loader_class",
]
