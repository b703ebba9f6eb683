"""What a module holds: the layers a call builds, the ordered layers of an
``nn.Sequential``/``nn.ModuleList``/``nn.ModuleDict``, and for each module
class of the file the layers and layer containers its ``self`` attributes
hold, with how its methods use them.

A rule that asks "which layer comes right after this one" or "which layers
does this container hold" reads these facts and keeps only its decision.  A project's module class that wraps one
layer (``ConvNorm`` building one ``nn.Conv1d``) is that layer to whatever
follows it; which of its ``__init__``'s parameters flow into the layer comes
from the project's summaries (:class:`~torchlint.analysis.summaries.WrappedLayer`,
linked across files), or from this file's own classes.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import libcst as cst

from torchlint.data import apidata
from torchlint.data.apidata import CheckMethod, Parameter, Signature
from torchlint.analysis.names import ImportTable, dotted
from torchlint.analysis.scopes import Binding, BindingKind, Scopes
from torchlint.analysis.summaries import FileSummary, WrappedLayer
from torchlint.source.tree import walk

if TYPE_CHECKING:
    from torchlint.analysis.flow import Flow
    from torchlint.analysis.index import ProjectIndex

_SEQUENTIAL = "torch.nn.Sequential"
_MODULE_LIST = "torch.nn.ModuleList"
_MODULE_DICT = "torch.nn.ModuleDict"


@dataclass(frozen=True)
class Layer:
    """One layer a call builds: a ``torch.nn`` class, or a project's module
    class that wraps one (``wrapped``)."""

    qualified: str
    """The class the call builds (``torch.nn.Conv2d``, ``models.ConvNorm``)."""
    call: cst.Call
    statement: Optional[cst.CSTNode] = None
    """The statement that builds it, when it is reached through a name or an ``append``."""
    wrapped: Optional[WrappedLayer] = None
    """For a project's class: the one layer its ``forward`` returns the output of,
    and which of its ``__init__``'s parameters flow into that layer."""

    @property
    def layer(self) -> str:
        """The ``torch.nn`` class underneath (the wrapped layer's, for a wrapper)."""
        return self.wrapped.layer if self.wrapped is not None else self.qualified

    @property
    def short(self) -> str:
        return self.qualified.rsplit(".", 1)[-1]

    def signature(self) -> Optional[Signature]:
        """The constructor's parameters: the API data's for a ``torch.nn``
        class, the wrapper's ``__init__``'s for a project's class."""
        wrapped = self.wrapped
        if wrapped is None:
            return apidata.signatures().get(self.qualified)
        parameters = tuple(Parameter(name, True) for name in wrapped.parameters)
        parameters += tuple(Parameter(name, False) for name in wrapped.keyword_only)
        return Signature(wrapped.qualified, parameters, None, "kwargs" if wrapped.open_keywords else None, None,
                         CheckMethod.NONE, "", "")

    def flows_into(self, keyword: str) -> Optional[str]:
        """For a wrapper: the ``__init__`` parameter passed on, as is, as the
        wrapped layer's ``keyword`` (None: a literal, anything else, or not a wrapper)."""
        wrapped = self.wrapped
        signature = apidata.signatures().get(wrapped.layer) if wrapped is not None else None
        if wrapped is None or signature is None:
            return None
        inner = signature.parameters
        position = next((i for i, p in enumerate(inner) if p.name == keyword), None)
        found = wrapped.passes(keyword, position)
        return found[len("param:"):] if found is not None and found.startswith("param:") else None

    def default_of(self, parameter: str) -> Optional[bool]:
        """For a wrapper: the literal truth value its ``__init__`` gives ``parameter`` by default."""
        return self.wrapped.default_of(parameter) if self.wrapped is not None else None


class UseKind(enum.Enum):
    """How a method reads a ``self`` attribute."""

    CALL = "call"
    """``self.X(...)``"""
    INDEXED_CALL = "indexed call"
    """``self.X[i](...)`` (``self.X[i][j](...)`` for a container of containers)"""
    INDEXED_ALIAS = "indexed alias"
    """``name = self.X[i]``: one entry given a local name (:attr:`Use.variable`)"""
    APPEND = "append"
    """``self.X.append(layer)`` in ``__init__``"""
    LEN = "len"
    """``len(self.X)`` (``len(self.X[i])``)"""
    ZIP = "zip"
    """``for a, b in zip(self.X, self.Y):`` (``for i, (a, b) in enumerate(zip(...))``)"""
    ENUMERATE = "enumerate"
    """``for i, a in enumerate(self.X):``"""
    ATTRIBUTE = "attribute"
    """``self.X.<name>`` read, not called (``self.conv.weight``)"""
    OTHER = "other"
    """anything else: iterated, passed on, changed"""


@dataclass(frozen=True)
class Use:
    """One read of ``self.X`` in a method of the class."""

    kind: UseKind
    node: cst.Attribute
    method: cst.FunctionDef
    parent_of: Mapping[int, cst.CSTNode] = field(repr=False)
    call: Optional[cst.Call] = None
    """For ``CALL``/``INDEXED_CALL``: the call; for ``APPEND``: the ``append`` call."""
    index: Optional[str] = None
    """For ``INDEXED_CALL`` and ``INDEXED_ALIAS``: the index as written (the
    indices of nested subscripts joined by ``][``: ``i][j``)."""
    depth: int = 1
    """For ``INDEXED_CALL``, ``INDEXED_ALIAS`` and ``LEN`` of an entry
    (``len(self.X[i])``, :attr:`index` set): how many subscripts deep."""
    loop: Optional[cst.For] = None
    """For ``ZIP`` and ``ENUMERATE``: the loop."""
    variable: Optional[str] = None
    """For ``ZIP`` and ``ENUMERATE``: the loop's name for this attribute's items
    (for ``ENUMERATE``, :attr:`index` is its name for their positions); for
    ``INDEXED_ALIAS``: the local name."""
    partners: Tuple[Tuple[str, str], ...] = ()
    """For ``ZIP``: the other zipped attributes and the loop's names for their items."""
    attribute: Optional[str] = None
    """For ``ATTRIBUTE``: the name read."""


@dataclass(frozen=True)
class Element:
    """One entry of a layer container, in order."""

    layer: Optional[Layer]
    """None: not known to be a layer."""
    key: Optional[str] = None
    """A ``ModuleDict`` literal's key."""
    last: bool = False
    """Known to be the container's last entry (what ``[-1]`` reads)."""
    inner: Optional[Tuple["Element", ...]] = None
    """For an entry that is itself a container built in place, as
    :meth:`Composition._container_start` reads one
    (``nn.ModuleList([nn.Conv2d(...) for _ in range(k)])``): its layers."""


@dataclass(frozen=True)
class Member:
    """A ``self`` attribute of a module class."""

    name: str
    value: Optional[cst.BaseExpression]
    """The value of its one plain assignment (None: assigned otherwise or more than once)."""
    statement: Optional[cst.CSTNode]
    elements: Optional[Tuple[Element, ...]]
    """For a ``ModuleList``/``ModuleDict``/list that ``__init__`` builds (and fills by
    ``append``): its layers in order; None when not such a container."""
    uses: Tuple[Use, ...]
    entries: Tuple[Tuple[Optional[cst.BaseExpression], Optional[cst.CSTNode]], ...] = ()
    """Every assignment of the attribute (value and statement; ``(None, None)``
    for one that is not a plain one-target assignment), in the order written."""


_Entry = Tuple[Optional[cst.BaseExpression], Optional[cst.CSTNode]]


class Composition:
    """The file's layers and what its module classes hold (built per class on first use)."""

    def __init__(self, names: ImportTable, scopes: Scopes, absolute_name: Callable[[cst.BaseExpression], Optional[str]],
                 project: "ProjectIndex", own_summary: Callable[[], Optional[FileSummary]],
                 flow: "Optional[Callable[[], Flow]]" = None) -> None:
        self.names = names
        self._flow = flow
        self.scopes = scopes
        self._absolute_name = absolute_name
        self._project = project
        self._own_summary = own_summary
        self._local: Optional[Dict[str, WrappedLayer]] = None
        self._members: Dict[int, Dict[str, Member]] = {}

    # -- what a call builds ---------------------------------------------------

    def layer(self, expr: Optional[cst.BaseExpression], follow_names: bool = True) -> Optional[Layer]:
        """The layer ``expr`` builds: a call of a ``torch.nn`` class (through
        imports and single assignments such as ``BN = nn.BatchNorm2d``), or of a
        project's module class that wraps one layer; with ``follow_names``, a
        name assigned such a call once and read only here."""
        if isinstance(expr, cst.Call):
            qualified = self.names.call_name(expr) or self.alias(expr.func)
            if qualified is not None and qualified.startswith("torch.nn."):
                return Layer(qualified, expr)
            wrapped = self._wrapper(expr, qualified)
            return Layer(wrapped.qualified, expr, None, wrapped) if wrapped is not None else None
        if isinstance(expr, cst.Name) and follow_names:
            binding = self.single_assignment(expr)
            if binding is not None and not (binding.scope is not None and len(
                    self.scopes.references(binding.scope, expr.value)) == 1):
                binding = None  # read elsewhere too
            elif binding is None:
                binding = self._reaching_assignment(expr)
            if binding is not None:
                found = self.layer(binding.value, follow_names=False)
                if found is not None:
                    return Layer(found.qualified, found.call, binding.statement, found.wrapped)
        return None

    def _reaching_assignment(self, name: cst.Name) -> Optional[Binding]:
        """The one plain assignment whose value reaches this read of ``name``,
        when this read is the only one it reaches (the flow's reaching
        definitions): ``conv2d = nn.Conv2d(...)`` in each branch of a loop
        body, each read once in its own branch."""
        if self._flow is None:
            return None
        flow = self._flow()
        bindings = flow.reaching_bindings(name)
        if not bindings or len(bindings) != 1:
            return None
        node = bindings[0].node
        if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)):
            return None
        reads = flow.reads_reached(node.targets[0].target)
        return bindings[0] if reads is not None and len(reads) == 1 and reads[0] is name else None

    def single_assignment(self, name: cst.Name) -> Optional[Binding]:
        """The one plain assignment (``x = value``, one target) that binds
        ``name`` where it is read, if that is the only binding."""
        bindings = self.scopes.resolve(name)
        if len(bindings) != 1:
            return None
        binding = bindings[0]
        node = binding.node
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            return binding
        if isinstance(node, cst.AnnAssign) and node.value is not None:
            return binding
        return None

    def alias(self, func: cst.BaseExpression) -> Optional[str]:
        """``BN = nn.BatchNorm2d`` (assigned once, in this function or the module)."""
        if not isinstance(func, cst.Name):
            return None
        binding = self.single_assignment(func)
        if binding is not None and isinstance(binding.value, (cst.Name, cst.Attribute)):
            return self.names.qualified_name(binding.value)
        return None

    def _wrapper(self, call: cst.Call, qualified: Optional[str]) -> Optional[WrappedLayer]:
        """A module class of the project (another module's, through the
        project's summaries, or this file's) that wraps one layer."""
        func = call.func
        if qualified is None and isinstance(func, cst.Name):
            bindings = self.scopes.resolve(func)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS:
                return self._local_layers().get(func.value)
            qualified = self._absolute_name(func)
        elif qualified is None and isinstance(func, cst.Attribute):
            qualified = self._absolute_name(func)
        summaries = self._project.summaries
        if qualified is None or summaries is None:
            return None
        return summaries.wrapped(self._project.defined_as(qualified))

    def _local_layers(self) -> Dict[str, WrappedLayer]:
        """This file's module classes that wrap one layer, by class name."""
        if self._local is None:
            summary = self._own_summary()
            found = summary.layers if summary is not None else ()
            self._local = {wrapped.qualified.rsplit(".", 1)[-1]: wrapped for wrapped in found}
        return self._local

    # -- containers ---------------------------------------------------------------

    def sequence(self, call: cst.Call) -> List[Optional[cst.BaseExpression]]:
        """What ``nn.Sequential(...)`` (or ``super().__init__(...)`` of a
        subclass) holds, in order: its positional arguments, or the values of
        one ``OrderedDict``; None for an unpacked entry."""
        positional = [arg for arg in call.args if arg.keyword is None]
        if len(positional) == 1 and not positional[0].star:
            ordered = ordered_dict_values(positional[0].value)
            if ordered is not None:
                return ordered
        return [None if arg.star else arg.value for arg in positional]

    def is_sequential(self, call: cst.Call) -> bool:
        return self.names.call_name(call) == _SEQUENTIAL

    # -- module classes ---------------------------------------------------------

    def members(self, node: cst.ClassDef) -> Mapping[str, Member]:
        """The ``self`` attributes of a class, with what they hold and how its methods use them."""
        found = self._members.get(id(node))
        if found is None:
            found = self._members[id(node)] = self._build_members(node)
        return found

    def _build_members(self, node: cst.ClassDef) -> Dict[str, Member]:
        assigned: Dict[str, List[_Entry]] = {}
        uses: Dict[str, List[Use]] = {}
        returns_in_init = False
        for method in node.body.body:
            if not isinstance(method, cst.FunctionDef):
                continue
            params = [*method.params.posonly_params, *method.params.params]
            if not params:
                continue
            receiver = params[0].name.value
            parent_of: Dict[int, cst.CSTNode] = {}
            for child, parent in walk(method.body):
                if parent is not None:
                    parent_of[id(child)] = parent
                if method.name.value == "__init__" and isinstance(child, cst.Return):
                    returns_in_init = True
                if not (isinstance(child, cst.Attribute) and isinstance(child.value, cst.Name)
                        and child.value.value == receiver):
                    continue
                attr = child.attr.value
                if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and parent.target is child:
                    entry: _Entry = (None, None)
                    assign = parent_of.get(id(parent))
                    if isinstance(parent, cst.AssignTarget) and isinstance(assign, cst.Assign):
                        if len(assign.targets) == 1:
                            entry = (assign.value, parent_of.get(id(assign)))
                    elif isinstance(parent, cst.AnnAssign) and parent.value is not None:
                        entry = (parent.value, parent_of.get(id(parent)))
                    assigned.setdefault(attr, []).append(entry)
                else:
                    uses.setdefault(attr, []).append(self._use(child, method, parent_of, receiver))
        members: Dict[str, Member] = {}
        for attr in sorted(set(assigned) | set(uses), key=lambda a: a):
            entries = assigned.get(attr, [])
            value, statement = entries[0] if len(entries) == 1 else (None, None)
            attr_uses = tuple(uses.get(attr, ()))
            elements = self._elements(value, attr_uses, returns_in_init) if len(entries) == 1 else None
            members[attr] = Member(attr, value, statement, elements, attr_uses, tuple(entries))
        return members

    def _use(self, node: cst.Attribute, method: cst.FunctionDef, parent_of: Dict[int, cst.CSTNode],
             receiver: str) -> Use:
        parent = parent_of.get(id(node))
        outer = parent_of.get(id(parent)) if parent is not None else None
        if isinstance(parent, cst.Call) and parent.func is node:
            return Use(UseKind.CALL, node, method, parent_of, call=parent)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            if (parent.attr.value == "append" and method.name.value == "__init__" and isinstance(outer, cst.Call)
                    and outer.func is parent and len(outer.args) == 1 and not outer.args[0].star
                    and outer.args[0].keyword is None):
                return Use(UseKind.APPEND, node, method, parent_of, call=outer)
            if not (isinstance(outer, cst.Call) and outer.func is parent):
                return Use(UseKind.ATTRIBUTE, node, method, parent_of, attribute=parent.attr.value)
            return Use(UseKind.OTHER, node, method, parent_of)
        if isinstance(parent, cst.Subscript) and parent.value is node:
            return self._indexed_use(node, parent, method, parent_of)
        if isinstance(parent, cst.Arg) and isinstance(outer, cst.Call) and isinstance(outer.func, cst.Name) \
                and parent.keyword is None and not parent.star:
            if outer.func.value == "len" and len(outer.args) == 1 and self._builtin(outer.func):
                return Use(UseKind.LEN, node, method, parent_of)
            if outer.func.value == "enumerate" and len(outer.args) == 1 and self._builtin(outer.func):
                loop = parent_of.get(id(outer))
                target = loop.target if isinstance(loop, cst.For) and loop.iter is outer else None
                if (isinstance(loop, cst.For) and isinstance(target, cst.Tuple) and len(target.elements) == 2
                        and all(isinstance(e.value, cst.Name) for e in target.elements)):
                    index, item = (e.value for e in target.elements)
                    assert isinstance(index, cst.Name) and isinstance(item, cst.Name)
                    return Use(UseKind.ENUMERATE, node, method, parent_of, loop=loop, variable=item.value,
                               index=index.value)
            if outer.func.value == "zip" and self._builtin(outer.func):
                zipped = self._zip_use(node, outer, method, parent_of, receiver)
                if zipped is not None:
                    return zipped
        return Use(UseKind.OTHER, node, method, parent_of)

    def _indexed_use(self, node: cst.Attribute, subscript: cst.Subscript, method: cst.FunctionDef,
                     parent_of: Dict[int, cst.CSTNode]) -> Use:
        """``self.X[i](...)``, ``self.X[i][j](...)``, ``name = self.X[i]``,
        ``len(self.X[i])``; anything else done with an entry is ``OTHER``."""
        code = cst.Module([]).code_for_node
        levels = ["".join(code(e) for e in subscript.slice)]
        outer = parent_of.get(id(subscript))
        while isinstance(outer, cst.Subscript) and outer.value is subscript and len(levels) < 2:
            subscript = outer
            levels.append("".join(code(e) for e in subscript.slice))
            outer = parent_of.get(id(subscript))
        index, depth = "][".join(levels), len(levels)
        if isinstance(outer, cst.Call) and outer.func is subscript:
            return Use(UseKind.INDEXED_CALL, node, method, parent_of, call=outer, index=index, depth=depth)
        if isinstance(outer, cst.Assign) and outer.value is subscript and len(outer.targets) == 1 \
                and isinstance(outer.targets[0].target, cst.Name):
            return Use(UseKind.INDEXED_ALIAS, node, method, parent_of, index=index, depth=depth,
                       variable=outer.targets[0].target.value)
        call = parent_of.get(id(outer)) if isinstance(outer, cst.Arg) else None
        if (isinstance(outer, cst.Arg) and outer.keyword is None and not outer.star and isinstance(call, cst.Call)
                and isinstance(call.func, cst.Name) and call.func.value == "len" and len(call.args) == 1
                and self._builtin(call.func)):
            return Use(UseKind.LEN, node, method, parent_of, index=index, depth=depth)
        return Use(UseKind.OTHER, node, method, parent_of)

    def _builtin(self, name: cst.Name) -> bool:
        return not self.scopes.resolve(name)

    def _zip_use(self, node: cst.Attribute, zipped: cst.Call, method: cst.FunctionDef,
                 parent_of: Dict[int, cst.CSTNode], receiver: str) -> Optional[Use]:
        """``for a, b in zip(self.X, self.Y):`` (or ``for i, (a, b) in
        enumerate(zip(...))``): the loop's names for each attribute's items."""
        holder = parent_of.get(id(zipped))
        target: Optional[cst.BaseExpression] = None
        loop = holder
        if isinstance(holder, cst.For) and holder.iter is zipped:
            target = holder.target
        elif isinstance(holder, cst.Arg):
            outer = parent_of.get(id(holder))
            loop = parent_of.get(id(outer)) if outer is not None else None
            if (isinstance(outer, cst.Call) and isinstance(outer.func, cst.Name) and outer.func.value == "enumerate"
                    and self._builtin(outer.func) and len(outer.args) == 1 and isinstance(loop, cst.For)
                    and loop.iter is outer and isinstance(loop.target, cst.Tuple)
                    and len(loop.target.elements) == 2):
                target = loop.target.elements[1].value
        if not isinstance(loop, cst.For) or not isinstance(target, cst.Tuple):
            return None
        if any(arg.keyword is not None or arg.star for arg in zipped.args) or len(target.elements) != len(zipped.args):
            return None
        names: List[Tuple[str, str]] = []
        mine: Optional[str] = None
        for arg, element in zip(zipped.args, target.elements):
            if not isinstance(element.value, cst.Name):
                return None
            value = arg.value
            attr = value.attr.value if (isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name)
                                        and value.value.value == receiver) else None
            if value is node:
                mine = element.value.value
            elif attr is not None:
                names.append((attr, element.value.value))
        if mine is None:
            return None
        return Use(UseKind.ZIP, node, method, parent_of, loop=loop, variable=mine, partners=tuple(names))

    def _elements(self, value: Optional[cst.BaseExpression], uses: Sequence[Use],
                  returns_in_init: bool) -> Optional[Tuple[Element, ...]]:
        """The layers of a container ``__init__`` builds, then fills by ``append``."""
        start = self._container_start(value)
        if start is None:
            return None
        elements = list(start)
        appends = [use for use in uses if use.kind is UseKind.APPEND]
        for use in appends:
            assert use.call is not None
            layer = self.layer(use.call.args[0].value)
            statement = _statement_of(use.call, use.parent_of)
            if layer is not None:
                layer = Layer(layer.qualified, layer.call, statement, layer.wrapped)
            inner = self._container_start(use.call.args[0].value, nested=False)
            elements.append(Element(layer, inner=tuple(inner) if inner else None))
        if appends and not returns_in_init and self._runs_last(appends[-1], [u for u in appends[:-1]]):
            elements[-1] = dataclasses.replace(elements[-1], last=True)
        return tuple(elements)

    def _container_start(self, value: Optional[cst.BaseExpression], nested: bool = True) -> Optional[List[Element]]:
        """The layers a container attribute starts with: none for
        ``nn.ModuleList()`` (or ``[]``), the element of
        ``nn.ModuleList([<layer> for ...])``, the entries of a list or dict
        literal; None for anything else."""
        if isinstance(value, cst.List) and not value.elements:
            return []
        if not isinstance(value, cst.Call):
            return None
        qualified = self.names.call_name(value)
        if qualified not in (_MODULE_LIST, _MODULE_DICT):
            return None
        if not value.args:
            return []
        only = value.args[0].value if len(value.args) == 1 and not value.args[0].keyword else None
        if qualified == _MODULE_DICT:
            if isinstance(only, cst.Dict):
                found: List[Element] = []
                for entry in only.elements:
                    if not isinstance(entry, cst.DictElement):
                        return None
                    key = entry.key.evaluated_value if isinstance(entry.key, cst.SimpleString) else None
                    if not isinstance(key, str):
                        return None
                    found.append(Element(self.layer(entry.value, follow_names=False), key))
                return found
            if isinstance(only, cst.DictComp):
                return [Element(self.layer(only.value, follow_names=False))]
            return None
        if isinstance(only, cst.List) and not only.elements:
            return []
        if isinstance(only, cst.ListComp):
            inner = self._container_start(only.elt, nested=False) if nested else None
            return [Element(self.layer(only.elt, follow_names=False), inner=tuple(inner) if inner else None)]
        return None

    @staticmethod
    def _runs_last(last: Use, others: Sequence[Use]) -> bool:
        """Whether the ``append`` of ``last`` runs after every other one, once:
        it is in no loop, and every compound statement around it holds the others too."""
        around: List[cst.CSTNode] = []
        current: Optional[cst.CSTNode] = last.call
        while current is not None and current is not last.method:
            if isinstance(current, (cst.For, cst.While)):
                return False
            if isinstance(current, (cst.If, cst.Try, cst.With, cst.Else, cst.ExceptHandler, cst.Finally)):
                around.append(current)
            current = last.parent_of.get(id(current))
        for other in others:
            chain = set()
            node: Optional[cst.CSTNode] = other.call
            while node is not None and node is not other.method:
                chain.add(id(node))
                node = other.parent_of.get(id(node))
            if any(id(statement) not in chain for statement in around):
                return False
        return True


def _statement_of(node: cst.CSTNode, parent_of: Mapping[int, cst.CSTNode]) -> Optional[cst.CSTNode]:
    current: Optional[cst.CSTNode] = node
    while current is not None and not isinstance(current, cst.SimpleStatementLine):
        current = parent_of.get(id(current))
    return current


def list_elements(node: Union[cst.List, cst.Tuple]) -> List[Optional[cst.BaseExpression]]:
    """The entries of a list or tuple display (None for an unpacked one)."""
    return [e.value if isinstance(e, cst.Element) else None for e in node.elements]


def ordered_dict_values(expr: cst.BaseExpression) -> Optional[List[Optional[cst.BaseExpression]]]:
    """The layers of ``OrderedDict([("conv", ...), ...])``, ``OrderedDict({...})`` or a dict display."""
    if isinstance(expr, cst.Dict):
        return [e.value if isinstance(e, cst.DictElement) else None for e in expr.elements]
    if not isinstance(expr, cst.Call):
        return None
    name = dotted(expr.func)
    if name is None or name.split(".")[-1] != "OrderedDict" or len(expr.args) != 1:
        return None
    inner = expr.args[0].value
    if isinstance(inner, cst.Dict):
        return [e.value if isinstance(e, cst.DictElement) else None for e in inner.elements]
    if not isinstance(inner, (cst.List, cst.Tuple)):
        return None
    values: List[Optional[cst.BaseExpression]] = []
    for element in inner.elements:
        pair = element.value if isinstance(element, cst.Element) else None
        if isinstance(pair, cst.Tuple) and len(pair.elements) == 2:
            values.append(pair.elements[1].value)
        else:
            values.append(None)
    return values
