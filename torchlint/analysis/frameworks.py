"""Framework facts: which calls build a framework's class (a Lightning
``Trainer``, Transformers' ``TrainingArguments``, Accelerate's
``Accelerator``), what literal each of their arguments holds, which values
are instances of those classes, and which classes are LightningModules.

Decided from the file's imports and bindings and from the framework data
(``torchlint/data/frameworks.toml``, :func:`torchlint.data.apidata.frameworks`),
never from words in names: ``Trainer(...)`` is Lightning's only when the
name resolves to one of Lightning's ``Trainer`` names, or to a class of the
file that derives from one.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Set, Tuple, Union

import libcst as cst

from torchlint.analysis.scopes import BindingKind, ScopeKind, Scopes
from torchlint.data.apidata import Framework, FrameworkClass, Literal, frameworks
from torchlint.analysis.names import ImportTable
from torchlint.source.tree import literal_none


class Unknown(enum.Enum):
    """An argument whose value is not a literal written in the file."""

    UNKNOWN = "unknown"


UNKNOWN = Unknown.UNKNOWN
_MAX_DEPTH = 8


def literal_value(expr: cst.BaseExpression) -> Union[Literal, Unknown]:
    """The value of a literal expression (``16``, ``"16-mixed"``, ``True``,
    ``-1``, ``[0, 1]``, ``{"use_reentrant": False}``), else ``UNKNOWN``."""
    try:
        return ast.literal_eval(cst.Module([]).code_for_node(expr).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return UNKNOWN


_PREPARE = frozenset({"prepare", "prepare_model", "prepare_data_loader"})
"""``Accelerator`` methods that move what they are given (ACC:src/accelerate/accelerator.py@v1.14.0)."""


class ArgumentsUse(enum.Enum):
    """Where a value of Transformers' training arguments goes, as far as the file shows."""

    TRAINER = "trainer"
    """Handed to a Trainer's construction of the file (``Trainer(args=...)``, or any argument of one)."""
    KEPT = "kept"
    """Every use is known and none hands it on: its fields are read (``args.learning_rate``),
    it is printed or compared, or passed to a function (or class) of the file that does only that."""
    ESCAPES = "escapes"
    """It reaches code the file does not show: another module's or a library's function,
    a ``return``, a container, a module-level name other modules may import."""


_KEEPING_BUILTINS = frozenset({
    "print", "len", "str", "repr", "vars", "isinstance", "getattr", "hasattr", "setattr", "type", "id", "format", "dir",
})
"""Builtins that read a value and keep nothing of it (the name bound by nothing in the file)."""


@dataclass(frozen=True)
class ArgumentsFlow:
    """Where a construction of training arguments goes: the strongest :class:`ArgumentsUse`
    of its uses, and the fields the file's own code reads from it (``args.fp16``)."""

    use: ArgumentsUse
    fields: FrozenSet[str] = frozenset()


def trainer_names() -> FrozenSet[str]:
    """Every qualified name of a Transformers ``Trainer`` class the framework data
    knows (``Trainer``, ``Seq2SeqTrainer``, TRL's trainers): what reads ``TrainingArguments``."""
    return frameworks().names(Framework.TRANSFORMERS, "trainer")


FALLBACK = "fallback"
""":attr:`FrameworkCall.elsewhere` of a construction that only stands in when a
caller passes none (``if args is None: args = TrainingArguments(...)``)."""


@dataclass(frozen=True)
class FrameworkCall:
    """A call that builds a framework class, with its keyword arguments."""

    call: cst.Call
    framework: Framework
    role: str
    keywords: Mapping[str, cst.Arg]
    unpacked: bool
    """The call unpacks ``*args`` or ``**kwargs``: any argument may be in them."""
    elsewhere: str = ""
    """Why the arguments the call does not write may still be set: ``command-line``
    (``Trainer.from_argparse_args(args, ...)``), :data:`FALLBACK` (the construction is a
    default for a caller's arguments); empty when they are the class's defaults."""
    open_defaults: FrozenSet[str] = frozenset()
    """Arguments whose default the class built changes (a known subclass from another
    package, or fields a class of the file declares again): left out, they are unknown."""

    def argument(self, name: str) -> Optional[cst.Arg]:
        """The argument passed as ``name=...``."""
        return self.keywords.get(name)

    @property
    def rest_unknown(self) -> bool:
        """Any argument the call does not write may be set all the same (unpacked
        ``**kwargs``, the command line, or a caller's arguments)."""
        return self.unpacked or bool(self.elsewhere)

    def may_be_present(self, name: str) -> bool:
        """``name`` is passed, or may be (through unpacking, from elsewhere), or
        its default is not the framework's (``open_defaults``)."""
        return name in self.keywords or self.rest_unknown or name in self.open_defaults

    def literal(self, name: str) -> Union[Literal, Unknown, None]:
        """The literal passed for ``name``; ``UNKNOWN`` when it is an expression
        or may come from unpacking; None (the Python value) only for ``=None``.
        Use :meth:`may_be_present` first to tell a missing argument."""
        arg = self.keywords.get(name)
        if arg is None:
            return UNKNOWN
        return literal_value(arg.value)


class FrameworkFacts:
    """Framework facts of one module."""

    def __init__(self, module: cst.Module, scopes: Scopes, names: ImportTable,
                 construction: Callable[[cst.BaseExpression], Optional[cst.Call]],
                 absolute_name: Callable[[cst.BaseExpression], Optional[str]] = lambda expr: None,
                 project_bases: Callable[[str], FrozenSet[str]] = lambda qualified: frozenset(),
                 parents: Callable[[], Mapping[cst.CSTNode, cst.CSTNode]] = lambda: {},
                 calls: Callable[[], Iterable[cst.Call]] = lambda: (),
                 trainers_named: Callable[[], bool] = lambda: False) -> None:
        self._module = module
        self._trainers_named = trainers_named
        """This file names a Transformers Trainer class (not the run: flake8 and the
        editor lint one file and must agree with ``torchlint check``)."""
        self._flows: Dict[cst.Call, ArgumentsFlow] = {}
        self._parents = parents
        self._calls_of_file = calls
        self._scopes = scopes
        self._names = names
        self._construction = construction
        self._absolute_name = absolute_name
        """A relatively imported name as the absolute name the project index knows."""
        self._project_bases = project_bases
        """Every base of a class of the project's other modules (the cross-file index)."""
        self._classes: Dict[cst.ClassDef, Optional[FrameworkClass]] = {}
        self._calls: Dict[cst.Call, Optional[FrameworkCall]] = {}

    def class_of_call(self, call: cst.Call) -> Optional[FrameworkClass]:
        """The framework class ``call`` builds: a name the imports resolve to
        one, or a class of this file deriving from one."""
        return self._class_of_callee(call.func)

    def _class_of_callee(self, func: cst.BaseExpression) -> Optional[FrameworkClass]:
        found = frameworks().class_of(self._names.qualified_name(func))
        if found is not None:
            return found
        local = self._local_class(func)
        return self.class_of_class(local) if local is not None else None

    def _local_class(self, func: cst.BaseExpression) -> Optional[cst.ClassDef]:
        """The class of this file a name is bound to (once, by its ``class`` statement)."""
        if isinstance(func, cst.Name):
            bindings = self._scopes.resolve(func)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS and isinstance(bindings[0].node, cst.ClassDef):
                return bindings[0].node
        return None

    def _constructor(self, call: cst.Call) -> Optional[Tuple[FrameworkClass, str]]:
        """``Trainer.from_argparse_args(args, ...)``: the class a recorded class
        method builds, with where its other arguments come from."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        built = self._class_of_callee(func.value)
        if built is None:
            return None
        constructor = frameworks().constructor(built.framework, built.role, func.attr.value)
        return (built, constructor.values_from) if constructor is not None else None

    def _declared_fields(self, func: cst.BaseExpression) -> FrozenSet[str]:
        """The fields a class of this file (and its bases in the file) declares
        again, as a dataclass subclass of ``TrainingArguments`` does to change a
        default (``gradient_checkpointing: bool = field(default=True)``)."""
        found: Set[str] = set()
        node = self._local_class(func)
        seen: Set[cst.ClassDef] = set()
        while node is not None and node not in seen and len(seen) <= _MAX_DEPTH:
            seen.add(node)
            for statement in node.body.body:
                for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        found.add(small.target.value)
                    elif isinstance(small, cst.Assign):
                        found.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
            bases = [b for b in node.bases if b.keyword is None]
            node = self._local_class(bases[0].value) if bases else None
        return frozenset(found)

    def is_fallback(self, call: cst.Call) -> bool:
        """``call`` only stands in when a caller passes nothing: ``<param> or
        Cls(...)``, ``Cls(...) if <param> is None else <param>``, or assigned to
        the parameter (or ``self.<param>``) directly under ``if <param> is None:``,
        where ``<param>`` is a parameter of the enclosing function (a vendored
        ``Trainer``'s ``TrainingArguments(output_dir="tmp_trainer")``)."""
        parents = self._parents()
        parent = parents.get(call)
        if isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.Or) and parent.right is call:
            return isinstance(parent.left, cst.Name) and self._is_parameter(parent.left)
        if isinstance(parent, cst.IfExp) and parent.body is call:
            return _is_none_test(parent.test, self._is_parameter)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1 or parent.value is not call:
            return False
        target = parent.targets[0].target
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            name = target.attr.value
        elif isinstance(target, cst.Name):
            name = target.value
        else:
            return False
        line = parents.get(parent)
        block = parents.get(line) if line is not None else None
        branch = parents.get(block) if block is not None else None
        return isinstance(branch, cst.If) and _is_none_test(
            branch.test, lambda tested: tested.value == name and self._is_parameter(tested))

    def _is_parameter(self, name: cst.Name) -> bool:
        """``name`` is a parameter of the function it is used in."""
        return any(b.kind is BindingKind.PARAMETER for b in self._scopes.resolve(name))

    def trainer_dataset(self, arguments: FrameworkCall) -> Optional[Tuple[cst.BaseExpression, ...]]:
        """What the Transformers ``Trainer``s given these training arguments
        (``Trainer(args=arguments, train_dataset=...)``, the arguments held by a
        name or ``self`` attribute) train on; None when it is not known: no such
        Trainer in the file, or one that is not given ``train_dataset=`` by keyword."""
        found: List[cst.BaseExpression] = []
        for call in self._calls_of_file():
            trainer = self.call(call)
            if trainer is None or trainer.framework is not Framework.TRANSFORMERS or trainer.role != "trainer":
                continue
            given = trainer.argument("args")
            if given is None or self.instance_of(given.value) is not arguments:
                continue
            dataset = trainer.argument("train_dataset")
            if dataset is None:
                return None
            found.append(dataset.value)
        return tuple(found) if found else None

    def arguments_read(self, arguments: FrameworkCall, *fields: str) -> bool:
        """Whether something reads ``fields`` of these training arguments, or
        may: they are handed to a Trainer of this file; the file's own code
        reads one of ``fields`` from them (a hand-written loop that takes
        ``args.dataloader_num_workers``); or they reach code the file does not
        show while this file names a Trainer class.  False when every use is
        known and none hands them on nor reads those fields (a bag of settings
        for a hand-written loop), and when they only reach unseen code from a
        file that names no Trainer (what the rest of the project names would
        depend on which files a run lints: a one-file front end must agree
        with ``torchlint check``)."""
        flow = self.arguments_flow(arguments)
        if flow.use is ArgumentsUse.TRAINER or not flow.fields.isdisjoint(fields):
            return True
        return flow.use is ArgumentsUse.ESCAPES and self._trainers_named()

    def arguments_flow(self, arguments: FrameworkCall) -> ArgumentsFlow:
        """Where the value a construction of training arguments builds goes
        (:class:`ArgumentsFlow`): followed through names, ``self`` attributes
        (every method of the class that reads one) and the parameters of the
        file's functions and classes it is passed to."""
        known = self._flows.get(arguments.call)
        if known is None:
            found: Set[ArgumentsUse] = set()
            fields: Set[str] = set()
            self._follow(arguments.call, found, fields, set(), 0)
            use = ArgumentsUse.TRAINER if ArgumentsUse.TRAINER in found else (
                ArgumentsUse.ESCAPES if ArgumentsUse.ESCAPES in found else ArgumentsUse.KEPT)
            known = self._flows[arguments.call] = ArgumentsFlow(use, frozenset(fields))
        return known

    def _follow(self, expr: cst.BaseExpression, found: Set[ArgumentsUse], fields: Set[str], seen: Set[cst.CSTNode],
                depth: int) -> None:
        """Record what each use of the value ``expr`` holds does with it."""
        if depth > _MAX_DEPTH:
            found.add(ArgumentsUse.ESCAPES)
            return
        if expr in seen:
            return
        seen.add(expr)
        parent = self._parents().get(expr)
        if isinstance(parent, cst.Attribute) and parent.value is expr:
            fields.add(parent.attr.value)
            return  # a field read or written, or a method of it called
        if isinstance(parent, (cst.Expr, cst.FormattedStringExpression, cst.Comparison, cst.ComparisonTarget)):
            return
        if isinstance(parent, (cst.If, cst.While)) and parent.test is expr:
            return
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            return
        if (isinstance(parent, cst.IfExp) and expr is not parent.test) or isinstance(parent, cst.BooleanOperation):
            self._follow(parent, found, fields, seen, depth + 1)  # the value of `a if c else b`, `a or b`
            return
        if isinstance(parent, cst.Arg) and parent.value is expr:
            call = self._parents().get(parent)
            if isinstance(call, cst.Call):
                self._passed(call, parent, found, fields, seen, depth)
                return
        if isinstance(parent, cst.Assign) and parent.value is expr:
            for target in parent.targets:
                self._stored(target.target, found, fields, seen, depth)
            return
        if isinstance(parent, cst.AnnAssign) and parent.value is expr:
            self._stored(parent.target, found, fields, seen, depth)
            return
        found.add(ArgumentsUse.ESCAPES)

    def _passed(self, call: cst.Call, arg: cst.Arg, found: Set[ArgumentsUse], fields: Set[str],
                seen: Set[cst.CSTNode], depth: int) -> None:
        fact = self.call(call)
        if fact is not None and fact.framework is Framework.TRANSFORMERS and fact.role == "trainer":
            found.add(ArgumentsUse.TRAINER)
            return
        func = call.func
        if arg.star:
            found.add(ArgumentsUse.ESCAPES)
            return
        if isinstance(func, cst.Name) and func.value in _KEEPING_BUILTINS and not self._scopes.resolve(func):
            return
        function, bound = self._local_callee(func)
        parameter = _parameter_for(function, call, arg, bound) if function is not None else None
        scope = self._scopes.scope_of(function) if function is not None else None
        if parameter is None or scope is None:
            found.add(ArgumentsUse.ESCAPES)
            return
        for read in self._scopes.references(scope, parameter):
            self._follow(read, found, fields, seen, depth + 1)

    def _local_callee(self, func: cst.BaseExpression) -> Tuple[Optional[cst.FunctionDef], bool]:
        """The function of this file a called name is bound to (once, by its
        ``def``), or the ``__init__`` of a class of the file that defines one
        (with True: the instance takes the first parameter)."""
        if isinstance(func, cst.Name):
            bindings = self._scopes.resolve(func)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.FUNCTION \
                    and isinstance(bindings[0].node, cst.FunctionDef) and not bindings[0].node.decorators:
                return bindings[0].node, False
            local = self._local_class(func)
            if local is not None:
                for statement in local.body.body:
                    if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__" \
                            and not statement.decorators:
                        return statement, True
        return None, False

    def _stored(self, target: cst.BaseExpression, found: Set[ArgumentsUse], fields: Set[str],
                seen: Set[cst.CSTNode], depth: int) -> None:
        """The value bound to ``target``: a name's reads (a module-level name may be
        imported elsewhere, so it escapes too), a ``self`` attribute's reads in
        every method of the class; anything else escapes."""
        if isinstance(target, cst.Name):
            scope = self._scopes.name_scope(target)
            owner = scope.owner_of(target.value) if scope is not None else None
            if owner is None or owner.kind in (ScopeKind.MODULE, ScopeKind.CLASS):
                found.add(ArgumentsUse.ESCAPES)
            if owner is not None:
                for read in self._scopes.references(owner, target.value):
                    self._follow(read, found, fields, seen, depth + 1)
            return
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            reads = self._attribute_reads(target.value, target.attr.value)
            if reads is None:
                found.add(ArgumentsUse.ESCAPES)
                return
            for attribute in reads:
                if attribute is not target:
                    self._follow(attribute, found, fields, seen, depth + 1)
            return
        found.add(ArgumentsUse.ESCAPES)

    def _attribute_reads(self, instance: cst.Name, attribute: str) -> Optional[List[cst.Attribute]]:
        """``<self>.<attribute>`` in every method of the class whose method binds
        ``instance`` as its first parameter; None when ``instance`` is not one."""
        bindings = self._scopes.resolve(instance)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAMETER:
            return None
        scope = bindings[0].scope
        method = scope.node if scope is not None else None
        owner = scope.parent if scope is not None else None
        if not isinstance(method, cst.FunctionDef) or owner is None or owner.kind is not ScopeKind.CLASS \
                or not isinstance(owner.node, cst.ClassDef):
            return None
        parameters = method.params.params
        if not parameters or parameters[0].name.value != instance.value:
            return None
        found: List[cst.Attribute] = []
        for member in owner.node.body.body:
            if not isinstance(member, cst.FunctionDef) or not member.params.params:
                continue
            first = member.params.params[0].name.value
            member_scope = self._scopes.scope_of(member)
            if member_scope is None:
                continue
            for read in self._scopes.references(member_scope, first):
                parent = self._parents().get(read)
                if isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value == attribute:
                    found.append(parent)
        return found

    def class_of_class(self, node: cst.ClassDef, depth: int = 0) -> Optional[FrameworkClass]:
        """The framework class a class of this file derives from (through
        the file's other classes), if any."""
        if node in self._classes:
            return self._classes[node]
        self._classes[node] = None  # a cycle derives from nothing
        found: Optional[FrameworkClass] = None
        for base in node.bases:
            if base.keyword is not None or depth > _MAX_DEPTH:
                continue
            qualified = self._names.qualified_name(base.value) or self._absolute_name(base.value)
            found = frameworks().class_of(qualified)
            if found is None and qualified is not None:
                found = self._through_project(qualified)
            if found is None and isinstance(base.value, cst.Name):
                bindings = self._scopes.resolve(base.value)
                if len(bindings) == 1 and isinstance(bindings[0].node, cst.ClassDef) and bindings[0].kind is BindingKind.CLASS:
                    found = self.class_of_class(bindings[0].node, depth + 1)
            if found is not None:
                break
        self._classes[node] = found
        return found

    def _through_project(self, qualified: str) -> Optional[FrameworkClass]:
        """The framework class a class of another project module derives from."""
        bases = self._project_bases(qualified)
        for base in sorted(bases):
            found = frameworks().class_of(base)
            if found is not None:
                return found
        return None

    def call(self, call: cst.Call) -> Optional[FrameworkCall]:
        """``call`` as a framework construction, or None."""
        if call in self._calls:
            return self._calls[call]
        found: Optional[FrameworkCall] = None
        framework_class = self.class_of_call(call)
        elsewhere = ""
        if framework_class is None:
            built = self._constructor(call)
            if built is not None:
                framework_class, elsewhere = built
        if framework_class is not None:
            keywords = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
            unpacked = any(arg.star for arg in call.args)
            if not elsewhere and self.is_fallback(call):
                elsewhere = FALLBACK
            open_defaults = framework_class.changed_defaults | self._declared_fields(call.func)
            found = FrameworkCall(call, framework_class.framework, framework_class.role, keywords, unpacked,
                                  elsewhere, open_defaults)
        self._calls[call] = found
        return found

    def constructions(self, framework: Framework, role: str,
                      calls: "List[cst.Call]") -> Tuple[FrameworkCall, ...]:
        """The calls among ``calls`` that build ``framework``'s class ``role``."""
        found: List[FrameworkCall] = []
        for call in calls:
            fact = self.call(call)
            if fact is not None and fact.framework is framework and fact.role == role:
                found.append(fact)
        return tuple(found)

    def instance_of(self, expr: cst.BaseExpression) -> Optional[FrameworkCall]:
        """The framework construction a value was built by (``accelerator =
        Accelerator(...)``, also as a ``self`` attribute), if there is one."""
        if isinstance(expr, cst.Call):
            return self.call(expr)
        built = self._construction(expr)
        return self.call(built) if built is not None else None

    def device_moves(self, call: cst.Call) -> Tuple[cst.BaseExpression, ...]:
        """What a framework call moves to the accelerator's device, with its
        loaders' batches: ``accelerator.prepare(model, optimizer, loader)``
        (and ``prepare_model``/``prepare_data_loader``) of an Accelerate
        ``Accelerator`` with device placement on (its default).  The prepared
        loader keeps the loader's own ``num_workers`` and ``pin_memory``.
        Empty when the call moves nothing known (``Accelerator(cpu=True)``,
        ``device_placement=`` given anywhere, arguments of ``prepare`` unpacked).
        ``cpu=args.cpu`` counts as placing on the device: such a flag is off
        unless the run asks for the CPU, as Accelerate's own examples write it.
        An ``Accelerator(**kwargs)`` counts as placing on the device, its
        default: whether the keywords turn that off is a run-time choice, as
        ``device = "cuda" if ... else "cpu"`` is for a file's own copies."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _PREPARE:
            return ()
        accelerator = self.instance_of(func.value)
        if accelerator is None or accelerator.framework is not Framework.ACCELERATE or accelerator.role != "accelerator":
            return ()
        if accelerator.argument("device_placement") is not None or accelerator.literal("cpu") is True:
            return ()
        if any(arg.keyword is not None and arg.keyword.value == "device_placement" for arg in call.args):
            return ()
        return tuple(arg.value for arg in call.args if arg.keyword is None and not arg.star)

    def is_lightning_module(self, node: cst.ClassDef) -> bool:
        """The class derives from Lightning's ``LightningModule`` (in this file)."""
        found = self.class_of_class(node)
        return found is not None and found.framework is Framework.LIGHTNING and found.role == "lightning-module"


def _parameter_for(function: cst.FunctionDef, call: cst.Call, arg: cst.Arg, bound: bool = False) -> Optional[str]:
    """The parameter of ``function`` that ``arg`` of ``call`` fills (by position
    before any unpacking, after the instance when ``bound``, or by keyword);
    None when it cannot be told."""
    params = function.params
    if arg.keyword is not None:
        names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        return arg.keyword.value if arg.keyword.value in names else None
    position = 0
    for given in call.args:
        if given.star or given.keyword is not None:
            return None
        if given is arg:
            break
        position += 1
    positional = [*params.posonly_params, *params.params][1 if bound else 0:]
    return positional[position].name.value if position < len(positional) else None


def _is_none_test(test: cst.BaseExpression, names: Callable[[cst.Name], bool]) -> bool:
    """``<name> is None`` for a name ``names`` accepts."""
    return (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and names(test.left)
            and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Is)
            and literal_none(test.comparisons[0].comparator))


def keeps_off_cuda(arguments: FrameworkCall) -> bool:
    """Transformers' training arguments that may keep the Trainer off CUDA:
    an argument whose ``True`` means so (``use_cpu``, and before 5.0
    ``no_cuda``, ``use_mps_device``; from the framework data) passed as
    anything but ``False``, or unpacked arguments that may carry one.  Any
    release counts: passing one at all says the author thought about devices."""
    if arguments.rest_unknown:
        return True
    names = {entry.argument for entry in frameworks().values
             if entry.framework is arguments.framework and entry.owner == arguments.role and entry.meaning == "off-cuda"}
    return any(arguments.argument(name) is not None and arguments.literal(name) is not False for name in names)


def lightning_module_names() -> FrozenSet[str]:
    """Every qualified name of Lightning's ``LightningModule``."""
    return frameworks().names(Framework.LIGHTNING, "lightning-module")


def hooks_without_grad() -> FrozenSet[str]:
    """The LightningModule hooks Lightning runs with autograd off."""
    return frameworks().hook_names(Framework.LIGHTNING, "lightning-module", "disabled")


@lru_cache(maxsize=None)
def class_words(framework: Framework, role: str) -> FrozenSet[str]:
    """The last parts of the names of ``framework``'s class ``role`` and its known
    subclasses (``TrainingArguments``, ``SFTConfig``): what a file must mention
    to build one (for the pre-check)."""
    return frozenset(name.rsplit(".", 1)[-1] for name in frameworks().names(framework, role))


@lru_cache(maxsize=None)
def packages(framework: Framework) -> FrozenSet[str]:
    """The top-level packages of ``framework``'s classes (``lightning``, ``pytorch_lightning``);
    read once: several rules' pre-checks ask it for every file."""
    return frozenset(name.split(".")[0] for entry in frameworks().classes if entry.framework is framework
                     for name in entry.names)


def imports_framework(names: ImportTable, framework: Framework) -> bool:
    """The module binds, at module level, a name imported from ``framework``'s packages."""
    roots = packages(framework)
    module_scope = names.scopes.module_scope
    for local in module_scope.bindings:
        imported = names.binding(local, module_scope)
        if imported is not None and imported.split(".")[0] in roots:
            return True
    return False


__all__ = [
    "ArgumentsFlow", "ArgumentsUse", "FALLBACK", "FrameworkCall", "trainer_names", "class_words", "FrameworkFacts", "UNKNOWN", "Unknown", "hooks_without_grad", "imports_framework", "keeps_off_cuda",
    "lightning_module_names", "literal_value", "packages",
]
