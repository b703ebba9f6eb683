"""What an expression most likely holds: a tensor, a model, an optimizer...

Facts come from torch's API (qualified constructor names through the file's
imports), from the file's own class hierarchy (a class deriving from
``nn.Module`` builds models), from bindings (assignments, parameters with
annotations or defaults, ``self.x = ...`` in ``__init__``), from simple
returns of local functions, and from use (``SGD(net.parameters())`` says
``net`` is a model).  Never from words in names.  Unknown is ``None``.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, Mapping, List, Optional, Pattern, Sequence, Set, Tuple, Union

import libcst as cst

from torchlint.analysis.scopes import Binding, BindingKind, ScopeKind, Scopes
from torchlint.data.apidata import VARIABLE_WRAPPERS as VARIABLE_WRAPPERS  # re-exported: loaders and rules read it here
from torchlint.source.tree import children, literal_constant, literal_none, walk
from torchlint.source.tree import literal_bool as literal_bool  # re-exported: the rules read it here

if TYPE_CHECKING:
    from torchlint.analysis.flow import Definition, Flow
    from torchlint.analysis.names import ImportTable
    from torchlint.source.arguments import KnownKeys


class ValueKind(enum.Enum):
    """The kinds of value rules ask about."""

    TENSOR = "tensor"
    MODEL = "model"
    LOSS = "loss"
    OPTIMIZER = "optimizer"
    GRAD_SCALER = "grad-scaler"
    DATALOADER = "dataloader"
    SAMPLER = "sampler"
    DATASET = "dataset"
    DEVICE = "device"
    DTYPE = "dtype"


class DeviceKind(enum.Enum):
    """Where a device expression points.

    ``ACCELERATOR`` is a literal non-CPU device (``"cuda"``, ``"cuda:1"``,
    ``"mps"``, an integer index); ``VARIABLE`` a device only known at run time
    (``x.device``, a ``torch.device(name)``, ``torch.cuda.current_device()``,
    a name the caller configured as a device); ``UNKNOWN`` a value that is a
    device but of no known place.
    """

    CPU = "cpu"
    ACCELERATOR = "accelerator"
    VARIABLE = "variable"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Device:
    """A device and the expression it was read from."""

    kind: DeviceKind
    expr: Optional[cst.BaseExpression] = field(default=None, compare=False, repr=False)

    @property
    def is_cpu(self) -> bool:
        """Certainly the CPU."""
        return self.kind is DeviceKind.CPU


@dataclass(frozen=True)
class Value:
    """What an expression holds; ``qualified`` is the constructor's public
    name when known (``torch.optim.SGD``), ``local_class`` the file's own
    class it instantiates."""

    kind: ValueKind
    qualified: Optional[str] = None
    device: Optional[Device] = None
    dtype: Optional[str] = None
    local_class: Optional[str] = None


# -- torch API facts used here --------------------------------------------------

TENSOR_FACTORIES: FrozenSet[str] = frozenset({
    "torch.zeros", "torch.ones", "torch.empty", "torch.eye", "torch.zeros_like", "torch.ones_like",
    "torch.empty_like", "torch.full", "torch.full_like", "torch.tensor", "torch.as_tensor",
    "torch.arange", "torch.linspace", "torch.logspace", "torch.hann_window", "torch.hamming_window",
    "torch.blackman_window", "torch.bartlett_window", "torch.kaiser_window", "torch.rand",
    "torch.randn", "torch.randint", "torch.randperm", "torch.rand_like", "torch.randn_like",
    "torch.randint_like", "torch.from_numpy", "torch.stack", "torch.cat",
})
"""Functions that return a new tensor."""

DTYPES: Dict[str, str] = {
    "torch.float16": "float16", "torch.half": "float16",
    "torch.float32": "float32", "torch.float": "float32",
    "torch.float64": "float64", "torch.double": "float64",
    "torch.bfloat16": "bfloat16",
    "torch.int64": "int64", "torch.long": "int64",
    "torch.int32": "int32", "torch.int": "int32",
    "torch.int16": "int16", "torch.short": "int16",
    "torch.int8": "int8", "torch.uint8": "uint8", "torch.bool": "bool",
    "torch.complex64": "complex64", "torch.cfloat": "complex64",
    "torch.complex128": "complex128", "torch.cdouble": "complex128",
}
"""Public dtype names and the canonical dtype each one is."""

LEGACY_CONSTRUCTORS: Dict[str, Optional[str]] = {
    "torch.Tensor": None, "torch.FloatTensor": "float32", "torch.DoubleTensor": "float64",
    "torch.HalfTensor": "float16", "torch.BFloat16Tensor": "bfloat16", "torch.LongTensor": "int64",
    "torch.IntTensor": "int32", "torch.ShortTensor": "int16", "torch.CharTensor": "int8",
    "torch.ByteTensor": "uint8", "torch.BoolTensor": "bool",
}
"""The CPU legacy typed constructors and the dtype each builds (None: the
default dtype, ``torch.get_default_dtype()``)."""


class LegacyForm(enum.Enum):
    """Which overload a legacy constructor call (``torch.FloatTensor(...)``) takes.

    ``DATA``: one list or tuple (a display, a comprehension, their sums and
    repeats, or a name bound only to those) whose elements become the values;
    ``SIZES``: integer sizes, uninitialized memory; ``NONE_GIVEN``: no
    argument, an empty tensor; ``STORAGE``: a torch storage (``torch.*Storage``
    call, or a name bound only to one), which the tensor aliases without
    copying; ``UNKNOWN``: one argument of unknown kind (a sequence, an
    ``int`` size, a ``torch.Size``, a tensor to alias, ...).
    """

    DATA = "data"
    SIZES = "sizes"
    NONE_GIVEN = "none-given"
    STORAGE = "storage"
    UNKNOWN = "unknown"


DEVICE_STRING = re.compile(
    r"^(?:cuda|cpu|mps|xpu|meta|hpu|npu|xla|mtia|ipu|privateuseone|vulkan|hip)(?::\d+)?$"
)
_DEVICE_FSTRING_PREFIX = re.compile(r"^(?:cuda|cpu|mps|xpu|hpu|npu|xla)(?::|$)")
INDEX_RETURNING: FrozenSet[str] = frozenset(
    {"torch.cuda.current_device", "torch.distributed.get_rank", "torch.distributed.get_local_rank"}
)
"""Calls returning a device index."""
_INT_RETURNING: FrozenSet[str] = INDEX_RETURNING | {"torch.cuda.device_count", "torch.distributed.get_world_size"}
"""Torch calls that return an ``int`` (``rank % torch.cuda.device_count()`` is an index)."""
DEVICE_RETURNING: FrozenSet[str] = frozenset({"torch.accelerator.current_accelerator"})
"""Calls returning a ``torch.device`` known only at run time."""

_MODULE_BASE = "torch.nn.Module"
_DATASET_BASES: FrozenSet[str] = frozenset({
    "torch.utils.data.Dataset", "torch.utils.data.IterableDataset", "torch.utils.data.dataset.Dataset",
})
_DATASETS: FrozenSet[str] = frozenset({
    "torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset", "torch.utils.data.Subset", "torch.utils.data.ConcatDataset",
    "torch.utils.data.ChainDataset", "torch.utils.data.StackDataset",
})
_SAMPLERS: FrozenSet[str] = frozenset({
    "torch.utils.data.RandomSampler", "torch.utils.data.SequentialSampler",
    "torch.utils.data.SubsetRandomSampler", "torch.utils.data.WeightedRandomSampler",
    "torch.utils.data.BatchSampler", "torch.utils.data.DistributedSampler",
    "torch.utils.data.distributed.DistributedSampler",
})
_GRAD_SCALERS: FrozenSet[str] = frozenset({
    "torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.cpu.amp.GradScaler",
    "torch.amp.grad_scaler.GradScaler", "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler",
})
_ANNOTATIONS: Dict[str, ValueKind] = {
    "torch.Tensor": ValueKind.TENSOR,
    "torch.nn.Module": ValueKind.MODEL,
    "torch.optim.Optimizer": ValueKind.OPTIMIZER,
    "torch.optim.optimizer.Optimizer": ValueKind.OPTIMIZER,
    "torch.utils.data.DataLoader": ValueKind.DATALOADER,
    "torch.utils.data.Dataset": ValueKind.DATASET,
    "torch.device": ValueKind.DEVICE,
    "torch.dtype": ValueKind.DTYPE,
}
# Methods that return their receiver's kind: modules' and tensors' moves and casts.
_SAME_KIND_METHODS: FrozenSet[str] = frozenset({
    "to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval", "requires_grad_",
    "contiguous", "detach", "clone",
})
_MAX_DEPTH = 6


def _class_kind(qualified: str) -> Optional[ValueKind]:
    """The kind of value a library class's instances are, for the kinds a
    parameter may be known as from what its callers pass (no model, loss or
    tensor: those carry facts of the call that built them)."""
    if qualified == "torch.utils.data.DataLoader":
        return ValueKind.DATALOADER
    if qualified in _SAMPLERS:
        return ValueKind.SAMPLER
    if qualified in _GRAD_SCALERS:
        return ValueKind.GRAD_SCALER
    if qualified.startswith("torch.optim.") and not qualified.startswith("torch.optim.lr_scheduler"):
        return ValueKind.OPTIMIZER if qualified.rsplit(".", 1)[-1][:1].isupper() else None
    return None

_BUILT_KINDS = frozenset({ValueKind.SAMPLER, ValueKind.DATALOADER, ValueKind.DATASET, ValueKind.GRAD_SCALER,
                          ValueKind.OPTIMIZER, ValueKind.MODEL})
"""What a project function's result may be known as from what it builds
(kinds that read nothing from the call's own arguments)."""


def _decorator_name(decorator: cst.Decorator) -> Optional[str]:
    expr = decorator.decorator
    return expr.value if isinstance(expr, cst.Name) else None


def _string_value(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _merged(first: Mapping[str, FrozenSet[Optional[cst.BaseExpression]]],
            second: Mapping[str, FrozenSet[Optional[cst.BaseExpression]]],
            ) -> Dict[str, FrozenSet[Optional[cst.BaseExpression]]]:
    """``first`` updated with ``second``: a key ``second`` may lack keeps ``first``'s values too."""
    found = dict(first)
    for key, values in second.items():
        if None in values:
            found[key] = (values - {None}) | found.get(key, frozenset({None}))
        else:
            found[key] = values
    return found


def _formatted_device_prefix(expr: cst.BaseExpression) -> Optional[str]:
    """The literal text a string built at run time starts with:
    ``"cuda:{}".format(i)`` and ``"cuda:%d" % i`` give their template,
    ``"cuda:" + str(i)`` its left side; None for anything else."""
    if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "format"
            and isinstance(expr.func.value, cst.SimpleString)):
        return _string_value(expr.func.value)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Modulo)) and isinstance(
            expr.left, cst.SimpleString):
        return _string_value(expr.left)
    return None


def _keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


class _NotDevice:
    """Marker: certainly not a device (a dtype, a tensor, a float...)."""


NOT_DEVICE = _NotDevice()
DeviceFact = Union[Device, _NotDevice, None]


class Values:
    """Value inference for one module; answers are cached per node."""

    def __init__(self, module: cst.Module, scopes: Scopes, names: "ImportTable",
                 builds: "Optional[Callable[[cst.Call], Optional[str]]]" = None,
                 parents: "Optional[Callable[[], Mapping[cst.CSTNode, cst.CSTNode]]]" = None,
                 flow: "Optional[Callable[[], Flow]]" = None,
                 passed: "Optional[Callable[[Binding], FrozenSet[str]]]" = None) -> None:
        self._parents = parents
        self._passed = passed
        """The classes whose instances the project's calls pass for a parameter
        (the project's summaries: a ``GradScaler`` built in ``main`` and handed to ``fit``)."""
        self._flow = flow
        """The file's flow facts (reaching definitions), for values that change."""
        self._module = module
        self._scopes = scopes
        self._names = names
        self._builds = builds
        """What a call of a project function returns a new instance of (the
        project's summaries: ``make_sampler(ds, distributed=True)``)."""
        self._cache: Dict[cst.CSTNode, Optional[Value]] = {}
        self._classes: Optional[Dict[str, cst.ClassDef]] = None
        self._kinds: Dict[str, Optional[ValueKind]] = {}
        self._optimized: Optional[Set[Binding]] = None
        self._attributes: Dict[cst.ClassDef, Dict[str, Optional[Value]]] = {}
        self._writes: Dict[cst.ClassDef, Dict[str, List[Optional[cst.BaseExpression]]]] = {}
        self._option_types: Optional[Dict[Tuple[int, str], Set[Optional[str]]]] = None

    # -- classes of the file ----------------------------------------------------

    @property
    def classes(self) -> Dict[str, cst.ClassDef]:
        """Module-level and nested classes of the file, by name."""
        if self._classes is None:
            self._classes = {
                scope.node.name.value: scope.node
                for scope in self._scopes.all_scopes()
                if scope.kind is ScopeKind.CLASS and isinstance(scope.node, cst.ClassDef)
            }
        return self._classes

    def class_kind(self, name: str) -> Optional[ValueKind]:
        """MODEL for a file class deriving (through the file's classes) from
        ``nn.Module``, DATASET for one deriving from ``Dataset``."""
        if name in self._kinds:
            return self._kinds[name]
        self._kinds[name] = None  # cycles resolve to unknown
        found: Optional[ValueKind] = None
        node = self.classes.get(name)
        if node is not None:
            for base in node.bases:
                found = self._base_kind(base.value)
                if found is not None:
                    break
        self._kinds[name] = found
        return found

    def _base_kind(self, base: cst.BaseExpression) -> Optional[ValueKind]:
        qualified = self._names.qualified_name(base)
        if qualified is not None:
            if qualified in _DATASET_BASES:
                return ValueKind.DATASET
            if qualified == _MODULE_BASE or self._is_module_class(qualified):
                return ValueKind.MODEL
            return None
        if isinstance(base, cst.Name) and base.value in self.classes:
            return self.class_kind(base.value)
        return None

    @staticmethod
    def _is_module_class(qualified: str) -> bool:
        """A class of ``torch.nn`` (models, layers, containers, losses)."""
        if not qualified.startswith("torch.nn."):
            return False
        last = qualified.rsplit(".", 1)[-1]
        return last[:1].isupper() and last not in ("Parameter", "Buffer") and ".functional." not in qualified

    def is_model_class(self, node: cst.ClassDef) -> bool:
        """Whether a class of this file derives from ``nn.Module``."""
        return self.class_kind(node.name.value) is ValueKind.MODEL

    # -- the main question ----------------------------------------------------------

    def of(self, expr: cst.BaseExpression) -> Optional[Value]:
        """What ``expr`` most likely is, or None when unknown."""
        return self._of(expr, 0)

    def kind(self, expr: cst.BaseExpression) -> Optional[ValueKind]:
        """Just the kind of :meth:`of`."""
        value = self.of(expr)
        return value.kind if value is not None else None

    def _of(self, expr: cst.BaseExpression, depth: int) -> Optional[Value]:
        if depth > _MAX_DEPTH:
            return None
        if expr in self._cache:
            return self._cache[expr]
        self._cache[expr] = None  # a cycle resolves to unknown
        found = self._compute(expr, depth)
        self._cache[expr] = found
        return found

    def _compute(self, expr: cst.BaseExpression, depth: int) -> Optional[Value]:
        if isinstance(expr, cst.Call):
            return self._of_call(expr, depth)
        if isinstance(expr, cst.Name):
            return self._of_name(expr, depth)
        if isinstance(expr, cst.Attribute):
            qualified = self._names.qualified_name(expr)
            if qualified in DTYPES:
                return Value(ValueKind.DTYPE, qualified, dtype=DTYPES[qualified])
            if qualified is None and expr.attr.value == "device":
                return Value(ValueKind.DEVICE, device=Device(DeviceKind.VARIABLE, expr))
            if qualified is None and expr.attr.value == "dtype":
                return Value(ValueKind.DTYPE)
            return self._of_self_attribute(expr, depth)
        if isinstance(expr, (cst.SimpleString, cst.Integer)):
            device = self.device_of(expr)
            return Value(ValueKind.DEVICE, device=device) if device is not None else None
        if isinstance(expr, cst.IfExp):
            return self._of_branches(expr, depth)
        return None

    def _of_branches(self, expr: cst.IfExp, depth: int) -> Optional[Value]:
        """``A if c else B``: what both branches agree on; a literal ``None`` branch
        (``GradScaler() if amp else None``) leaves the other's value, since every
        use of the value where it is not None sees that one."""
        branches = [b for b in (expr.body, expr.orelse) if not literal_none(b)]
        values = [self._of(b, depth + 1) for b in branches]
        if not values or any(v is None for v in values):
            return None
        first = values[0]
        assert first is not None
        if any(v is None or v.kind is not first.kind for v in values):
            return None
        return first if all(v == first for v in values) else Value(first.kind)

    def _of_call(self, call: cst.Call, depth: int) -> Optional[Value]:
        qualified = self._names.call_name(call)
        if qualified is not None:
            found = self._of_constructor(call, qualified)
            if found is None and self._builds is not None:
                built = self._builds(call)
                made = self._of_constructor(call, built) if built is not None else None
                if made is not None and made.kind in _BUILT_KINDS:
                    return Value(made.kind, built)
            return found
        func = call.func
        if isinstance(func, cst.Name):
            bindings = self._scopes.resolve(func)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS:
                kind = self.class_kind(func.value)
                return Value(kind, local_class=func.value) if kind is not None else None
            callee = self.local_callee(func)
            return self._returned(callee[0], depth) if callee is not None else None
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            callee = self.local_callee(func)
            from_method = self._returned(callee[0], depth) if callee is not None else None
            if from_method is not None:
                return from_method
            if method in _SAME_KIND_METHODS:
                receiver = self._of(func.value, depth + 1)
                if receiver is None or receiver.kind not in (ValueKind.TENSOR, ValueKind.MODEL, ValueKind.LOSS):
                    return None
                if method == "cuda":
                    return replace(receiver, device=Device(DeviceKind.ACCELERATOR, call))
                if method == "cpu":
                    return replace(receiver, device=Device(DeviceKind.CPU, call))
                if method == "to" and call.args and call.args[0].keyword is None:
                    device = self.device_of(call.args[0].value)
                    if device is not None:
                        return replace(receiver, device=device)
                return receiver
        return None

    def _of_constructor(self, call: cst.Call, qualified: str) -> Optional[Value]:
        if qualified in TENSOR_FACTORIES:
            device_expr = _keyword(call, "device")
            device = self.device_of(device_expr) if device_expr is not None else Device(DeviceKind.CPU)
            dtype_expr = _keyword(call, "dtype")
            dtype = self.dtype_name(dtype_expr) if dtype_expr is not None else None
            return Value(ValueKind.TENSOR, qualified, device, dtype)
        if qualified == "torch.device":
            device = self.device_of(call)
            return Value(ValueKind.DEVICE, qualified, device=device)
        kind = _class_kind(qualified)  # loaders, samplers, gradient scalers, optimizers
        if kind is not None:
            return Value(kind, qualified)
        if qualified in _DATASETS or qualified.startswith("torchvision.datasets."):
            return Value(ValueKind.DATASET, qualified)
        if qualified == "torch.nn.Parameter":
            return Value(ValueKind.TENSOR, qualified)
        if qualified.startswith("torch.optim.") and not qualified.startswith("torch.optim.lr_scheduler"):
            return None
        if self._is_module_class(qualified):
            if qualified.endswith("Loss"):
                return Value(ValueKind.LOSS, qualified)
            return Value(ValueKind.MODEL, qualified)
        if qualified.startswith("torchvision.models.") and qualified.rsplit(".", 1)[-1][:1].islower():
            return Value(ValueKind.MODEL, qualified)
        return None

    def _returned(self, function: cst.CSTNode, depth: int) -> Optional[Value]:
        """The value a local function returns, when all its returns agree."""
        if not isinstance(function, cst.FunctionDef):
            return None
        returns: List[cst.Return] = []
        collect_returns(function.body, returns)
        values = [self._of(r.value, depth + 1) if r.value is not None else None for r in returns]
        if not values or any(v is None for v in values):
            return None
        kinds = {v.kind for v in values if v is not None}
        return values[0] if len(kinds) == 1 else None

    def _of_name(self, name: cst.Name, depth: int) -> Optional[Value]:
        bindings = self._scopes.resolve(name)
        if not bindings:
            return None
        values: List[Optional[Value]] = [self._of_binding(b, depth) for b in bindings]
        if all(v is None for v in values):
            if self._passed_to_optimizer(bindings):
                return Value(ValueKind.MODEL)
            return None
        # A binding of unknown value (a loop variable, an augmented assignment)
        # beside known ones still leaves the most likely kind.
        known = [v for v in values if v is not None]
        if len({v.kind for v in known}) != 1:
            return None
        first = known[0]
        if any(v != first for v in known):
            return Value(first.kind, first.qualified if all(v.qualified == first.qualified for v in known) else None)
        return first

    def _of_binding(self, binding: Binding, depth: int) -> Optional[Value]:
        if binding.kind is BindingKind.IMPORT:
            return None
        if binding.kind is BindingKind.PARAMETER or binding.kind is BindingKind.ANN_ASSIGN:
            if binding.annotation is not None:
                from_annotation = self._of_annotation(binding.annotation)
                if from_annotation is not None:
                    return from_annotation
            if binding.kind is BindingKind.PARAMETER and self._passed is not None:
                from_callers = self._of_passed(self._passed(binding))
                if from_callers is not None:
                    return from_callers
        if binding.kind is BindingKind.FOR and binding.source is not None:
            return None
        if binding.value is not None:
            return self._of(binding.value, depth + 1)
        return None

    @staticmethod
    def _of_passed(classes: FrozenSet[str]) -> Optional[Value]:
        """What a parameter holds when every class the project's calls build
        its argument with is of one kind that reads nothing from the call's
        arguments (:data:`_PASSED_KINDS`)."""
        kinds = {_class_kind(name) for name in classes}
        if len(kinds) != 1:
            return None
        kind = next(iter(kinds))
        if kind is None:
            return None
        return Value(kind, next(iter(classes)) if len(classes) == 1 else None)

    def _of_annotation(self, annotation: cst.BaseExpression) -> Optional[Value]:
        if isinstance(annotation, cst.Subscript):  # Optional[nn.Module]
            if self._names.qualified_name(annotation.value) in ("typing.Optional",):
                inner = annotation.slice[0].slice
                if isinstance(inner, cst.Index):
                    return self._of_annotation(inner.value)
            return None
        qualified = self._names.qualified_name(annotation)
        if qualified is not None:
            kind = _ANNOTATIONS.get(qualified)
            if kind is None and self._is_module_class(qualified):
                kind = ValueKind.MODEL
            if kind is None and qualified in _GRAD_SCALERS:
                kind = ValueKind.GRAD_SCALER
            if kind is None and qualified.startswith("torch.optim.") and qualified.rsplit(".", 1)[-1][:1].isupper():
                kind = ValueKind.OPTIMIZER
            return Value(kind, qualified) if kind is not None else None
        if isinstance(annotation, cst.Name) and annotation.value in self.classes:
            kind = self.class_kind(annotation.value)
            return Value(kind, local_class=annotation.value) if kind is not None else None
        return None

    def _passed_to_optimizer(self, bindings: Sequence[Binding]) -> bool:
        """``torch.optim.X(net.parameters(), ...)`` somewhere says ``net`` is a model."""
        if self._optimized is None:
            self._optimized = set()
            _OptimizerArguments(self).collect(self._module, self._optimized)
        return any(b in self._optimized for b in bindings)

    # -- self.attributes --------------------------------------------------------

    def self_class(self, receiver: cst.BaseExpression) -> Optional[cst.ClassDef]:
        """The class whose instance ``receiver`` is, when it is a method's first
        parameter (``self``) of a class of this file."""
        if not isinstance(receiver, cst.Name):
            return None
        bindings = self._scopes.resolve(receiver)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAMETER:
            return None
        method_scope = bindings[0].scope
        if method_scope is None or method_scope.kind is not ScopeKind.FUNCTION:
            return None
        method = method_scope.node
        class_scope = method_scope.parent
        if not isinstance(method, cst.FunctionDef) or class_scope is None or class_scope.kind is not ScopeKind.CLASS:
            return None
        if any(_decorator_name(d) in ("staticmethod", "classmethod") for d in method.decorators):
            return None
        first = [*method.params.posonly_params, *method.params.params][:1]
        if not first or first[0].name.value != receiver.value:
            return None
        return class_scope.node if isinstance(class_scope.node, cst.ClassDef) else None

    def _of_self_attribute(self, expr: cst.Attribute, depth: int) -> Optional[Value]:
        """``self.model`` where the class's ``__init__`` assigns ``self.model = Net()``."""
        owner = self.self_class(expr.value)
        if owner is None:
            return None
        found = self.init_attributes(owner, depth).get(expr.attr.value)
        if found is not None:
            return found
        return self._filled_later(owner, expr.attr.value, depth)

    def _filled_later(self, owner: cst.ClassDef, attribute: str, depth: int) -> Optional[Value]:
        """An attribute ``__init__`` sets to ``None`` only (``self.scaler =
        None``) and other methods fill in (``self.scaler = GradScaler()`` in
        ``run``): what those writes agree on, as for ``GradScaler() if amp
        else None``; every use of it where it is not None sees one of them."""
        writes = self.attribute_writes(owner).get(attribute, [])
        placeholders = [value for value in writes if value is not None and literal_none(value)]
        filled = [value for value in writes if value is None or not literal_none(value)]
        if not placeholders or not filled or any(value is None for value in filled):
            return None
        init = next((s for s in owner.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
                    None)
        if init is None or not [*init.params.posonly_params, *init.params.params]:
            return None
        in_init: Dict[str, List[Optional[cst.BaseExpression]]] = {}
        collect_self_assignments(init.body, [*init.params.posonly_params, *init.params.params][0].name.value, in_init)
        if not in_init.get(attribute) or not all(v is not None and literal_none(v) for v in in_init[attribute]):
            return None  # `__init__` sets something besides None (or nothing)
        values = [self._of(value, depth + 1) for value in filled if value is not None]
        first = values[0]
        if first is None or any(v is None or v.kind is not first.kind for v in values):
            return None
        return first if all(v == first for v in values) else Value(first.kind)

    def local_callee(self, func: cst.BaseExpression) -> Optional[Tuple[cst.FunctionDef, int]]:
        """The ``def`` of this file that calling ``func`` runs: a function the
        name is bound to once, or ``self.<method>`` where the class defines
        that method once; with how many leading parameters the call does not
        pass (1 for the instance)."""
        if isinstance(func, cst.Name):
            bindings = self._scopes.resolve(func)
            node = bindings[0].node if len(bindings) == 1 and bindings[0].kind is BindingKind.FUNCTION else None
            return (node, 0) if isinstance(node, cst.FunctionDef) else None
        if isinstance(func, cst.Attribute):
            owner = self.self_class(func.value)
            methods = [] if owner is None else [
                s for s in owner.body.body if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value
            ]
            return (methods[0], 1) if len(methods) == 1 else None
        return None

    def init_attributes(self, node: cst.ClassDef, depth: int = 0) -> Dict[str, Optional[Value]]:
        """``self.<name>`` → value for each attribute ``__init__`` assigns
        (None where it assigns it more than once)."""
        cached = self._attributes.get(node)
        if cached is None:
            cached = self._attributes[node] = self._init_attributes(node, depth)
        return cached

    def _init_attributes(self, node: cst.ClassDef, depth: int) -> Dict[str, Optional[Value]]:
        init = next(
            (s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
            None,
        )
        if init is None:
            return {}
        params = [*init.params.posonly_params, *init.params.params]
        if not params:
            return {}
        receiver = params[0].name.value
        written: Dict[str, List[Optional[cst.BaseExpression]]] = {}
        collect_self_assignments(init.body, receiver, written)
        assigned = {attr: [v for v in values if v is not None] for attr, values in written.items()}
        return {
            attr: (self._of(values[0], depth + 1) if len(values) == 1 else None)
            for attr, values in assigned.items() if values
        }

    def attribute_writes(self, node: cst.ClassDef) -> Dict[str, List[Optional[cst.BaseExpression]]]:
        """``self.<name>`` -> every value any method of the class writes to it
        (None for a write of no single expression: see :func:`collect_self_assignments`)."""
        cached = self._writes.get(node)
        if cached is None:
            cached = self._writes[node] = {}
            for method in node.body.body:
                if isinstance(method, cst.FunctionDef):
                    receiver = [*method.params.posonly_params, *method.params.params][:1]
                    if receiver:
                        collect_self_assignments(method.body, receiver[0].name.value, cached)
        return cached

    # -- dictionaries unpacked into calls ------------------------------------------

    def splatted(self, expr: cst.BaseExpression) -> "Optional[KnownKeys]":
        """What ``**expr`` passes, when the keys are known: a dict display with
        string keys, ``dict(key=value, ...)``, ``dict(other, ...)``,
        ``other.copy()``, ``a if cond else b`` of those (each key of one side
        only a maybe-key), or a name whose reaching definitions (the flow) are
        those, changed on the way only by ``.update(...)``, ``[key] = value``,
        ``.setdefault(...)`` or ``.pop(key)``.  A key present on some paths
        only (``if use_cuda: kwargs.update(cuda_kwargs)``) is a maybe-key with
        its values; anything else that may change the dict (passed on,
        aliased, changed by another method) leaves it unknown (None)."""
        found = self._dict_value(expr, 0, set())
        if found is None:
            return None
        from torchlint.source.arguments import KnownKeys

        certain: Dict[str, cst.BaseExpression] = {}
        maybe: Dict[str, Tuple[cst.BaseExpression, ...]] = {}
        for key, values in found.items():
            present = [value for value in values if value is not None]
            if len(values) == 1 and present:
                certain[key] = present[0]
            elif present:
                maybe[key] = tuple(present)
        return KnownKeys(certain, maybe)

    def _dict_value(self, expr: cst.BaseExpression, depth: int,
                    seen: Set[object]) -> Optional[Dict[str, FrozenSet[Optional[cst.BaseExpression]]]]:
        """Each key of the dict ``expr`` holds, with the values it may hold
        (None among them: the key may be missing); None when unknown."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Dict):
            found: Dict[str, FrozenSet[Optional[cst.BaseExpression]]] = {}
            for element in expr.elements:
                if isinstance(element, cst.StarredDictElement):
                    inner = self._dict_value(element.value, depth + 1, seen)
                    if inner is None:
                        return None
                    found = _merged(found, inner)
                    continue
                key = _string_value(element.key) if isinstance(element, cst.DictElement) else None
                if key is None:
                    return None
                found[key] = frozenset({element.value})
            return found
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Name) and func.value == "dict" and not self._scopes.resolve(func):
                found = {}
                for position, arg in enumerate(expr.args):
                    if arg.star == "**" or (arg.keyword is None and not arg.star and position == 0):
                        inner = self._dict_value(arg.value, depth + 1, seen)
                        if inner is None:
                            return None
                        found = _merged(found, inner)
                    elif arg.keyword is not None:
                        found[arg.keyword.value] = frozenset({arg.value})
                    else:
                        return None
                return found
            if isinstance(func, cst.Attribute) and func.attr.value == "copy" and not expr.args:
                return self._dict_value(func.value, depth + 1, seen)
            return None
        if isinstance(expr, cst.IfExp):  # `{"num_workers": 1, "pin_memory": True} if args.cuda else {}`: two paths
            return self._joined([self._dict_value(expr.body, depth + 1, seen),
                                 self._dict_value(expr.orelse, depth + 1, seen)])
        if isinstance(expr, cst.Name) and self._flow is not None:
            definitions = self._flow().definitions_at(expr)
            if definitions is None:
                return self._single_dict(expr, depth, seen)
            return self._joined([self._definition_value(d, depth + 1, seen) for d in definitions])
        return None

    def _single_dict(self, name: cst.Name, depth: int,
                     seen: Set[object]) -> Optional[Dict[str, FrozenSet[Optional[cst.BaseExpression]]]]:
        """A name the flow cannot order (a global read in a function): its one
        assignment, when every other use of it is a ``**`` unpacking."""
        bindings = self._scopes.resolve(name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].value is None:
            return None
        binding = bindings[0]
        statement = binding.node
        if (binding.scope is None or not isinstance(statement, cst.Assign) or len(statement.targets) != 1
                or not isinstance(statement.targets[0].target, cst.Name) or self._parents is None):
            return None
        parents = self._parents()
        for reference in self._scopes.references(binding.scope, binding.name):
            argument = parents.get(reference)
            if not (isinstance(argument, cst.Arg) and argument.star == "**" and argument.value is reference):
                return None  # read as a whole: passed on, updated, printed...
        return self._dict_value(statement.value, depth + 1, seen)

    @staticmethod
    def _joined(values: Sequence[Optional[Dict[str, FrozenSet[Optional[cst.BaseExpression]]]]],
                ) -> Optional[Dict[str, FrozenSet[Optional[cst.BaseExpression]]]]:
        """Paths meeting: a key missing on one path may be missing."""
        if not values or any(value is None for value in values):
            return None
        keys = {key for value in values if value is not None for key in value}
        return {
            key: frozenset().union(*(value.get(key, frozenset({None})) for value in values if value is not None))
            for key in keys
        }

    def _definition_value(self, definition: "Definition", depth: int,
                          seen: Set[object]) -> Optional[Dict[str, FrozenSet[Optional[cst.BaseExpression]]]]:
        if definition in seen or depth > _MAX_DEPTH or self._flow is None:
            return None  # a change inside a loop feeding itself: not followed
        seen = seen | {definition}
        binding = definition.binding
        if binding is not None:
            statement = binding.node
            if binding.kind is BindingKind.ASSIGN and isinstance(statement, cst.Assign) and (
                    len(statement.targets) == 1 and binding.path == () and binding.value is not None):
                return self._dict_value(binding.value, depth + 1, seen)
            if binding.kind is BindingKind.ANN_ASSIGN and binding.value is not None:
                return self._dict_value(binding.value, depth + 1, seen)
            return None
        change = definition.change
        if change is None:
            return None  # escaped: anything may have changed it
        before = self._joined([self._definition_value(d, depth + 1, seen)
                               for d in self._flow().before(definition)])
        if before is None:
            return None
        if isinstance(change, cst.Call) and isinstance(change.func, cst.Attribute):
            method = change.func.attr.value
            args = change.args
            if method == "update":
                if len([a for a in args if a.keyword is None and not a.star]) > 1:
                    return None
                added = self._update_value(args, depth, seen)
                return _merged(before, added) if added is not None else None
            if method == "setdefault" and len(args) == 2 and not any(a.keyword or a.star for a in args):
                key = _string_value(args[0].value)
                if key is None:
                    return None
                found = dict(before)
                old = found.get(key, frozenset({None}))
                found[key] = (old - {None}) | ({args[1].value} if None in old else set())
                return found
            if method == "pop" and args and not args[0].keyword and not args[0].star:
                key = _string_value(args[0].value)
                if key is None:
                    return None
                found = dict(before)
                found.pop(key, None)
                return found
            return None
        if isinstance(change, cst.Assign) and len(change.targets) == 1:
            target = change.targets[0].target
            if isinstance(target, cst.Subscript) and len(target.slice) == 1:
                index = target.slice[0].slice
                key = _string_value(index.value) if isinstance(index, cst.Index) else None
                if key is not None:
                    found = dict(before)
                    found[key] = frozenset({change.value})
                    return found
        return None

    def _update_value(self, args: Sequence[cst.Arg], depth: int,
                      seen: Set[object]) -> Optional[Dict[str, FrozenSet[Optional[cst.BaseExpression]]]]:
        """What ``d.update(...)`` writes: a mapping positionally, then keywords."""
        found: Dict[str, FrozenSet[Optional[cst.BaseExpression]]] = {}
        for arg in args:
            if arg.keyword is not None:
                found[arg.keyword.value] = frozenset({arg.value})
            elif arg.star == "**" or not arg.star:
                inner = self._dict_value(arg.value, depth + 1, seen)
                if inner is None:
                    return None
                found = _merged(found, inner)
            else:
                return None
        return found

    # -- devices and dtypes -------------------------------------------------------

    def device_of(self, expr: cst.BaseExpression, pattern: Optional[Pattern[str]] = None) -> Optional[Device]:
        """The device ``expr`` certainly is, or None.  ``pattern`` names the
        attributes and names a caller configured as devices (an option)."""
        fact = self.device_fact(expr, pattern)
        return fact if isinstance(fact, Device) else None

    def device_fact(self, expr: cst.BaseExpression, pattern: Optional[Pattern[str]] = None,
                    depth: int = 0) -> DeviceFact:
        """Like :meth:`device_of`, but says NOT_DEVICE when ``expr`` is certainly
        something else (for a name: some value assigned to it is)."""
        text = _string_value(expr)
        if text is not None:
            if not DEVICE_STRING.match(text):
                return NOT_DEVICE
            return Device(DeviceKind.CPU if text.startswith("cpu") else DeviceKind.ACCELERATOR, expr)
        if isinstance(expr, cst.FormattedString):
            first = expr.parts[0] if expr.parts else None
            if isinstance(first, cst.FormattedStringText) and _DEVICE_FSTRING_PREFIX.match(first.value):
                return Device(DeviceKind.VARIABLE, expr)
            return None
        if isinstance(expr, cst.Integer):
            return Device(DeviceKind.ACCELERATOR, expr)
        template = _formatted_device_prefix(expr)
        if template is not None:  # `"cuda:{}".format(rank)`, `"cuda:" + str(rank)`, as an f-string is
            if not _DEVICE_FSTRING_PREFIX.match(template):
                return None
            return Device(DeviceKind.CPU if template.startswith("cpu") else DeviceKind.VARIABLE, expr)
        if isinstance(expr, cst.Call):
            qualified = self._names.call_name(expr)
            if qualified == "torch.device":
                first_arg = expr.args[0].value if expr.args else None
                first_text = _string_value(first_arg)
                if first_text is not None and first_text.startswith("cpu"):
                    return Device(DeviceKind.CPU, expr)
                if first_text is not None:
                    return Device(DeviceKind.ACCELERATOR, expr)
                return Device(DeviceKind.VARIABLE, expr)
            if qualified in INDEX_RETURNING or qualified in DEVICE_RETURNING:
                return Device(DeviceKind.VARIABLE, expr)
            if isinstance(expr.func, cst.Name) and expr.func.value == "int" and not self._scopes.resolve(expr.func):
                return Device(DeviceKind.VARIABLE, expr)
            if qualified in TENSOR_FACTORIES:
                return NOT_DEVICE
            return None
        if isinstance(expr, cst.Attribute):
            if self.is_dtype(expr):
                return NOT_DEVICE
            attr = expr.attr.value
            if attr == "device" or (pattern is not None and pattern.fullmatch(attr)):
                return Device(DeviceKind.CPU if "cpu" in attr.lower() else DeviceKind.VARIABLE, expr)
            return None
        if isinstance(expr, cst.IfExp):
            sides = [self.device_fact(expr.body, pattern, depth), self.device_fact(expr.orelse, pattern, depth)]
            if not all(isinstance(side, Device) for side in sides):
                return None
            cpu = all(isinstance(side, Device) and side.is_cpu for side in sides)
            return Device(DeviceKind.CPU if cpu else DeviceKind.VARIABLE, expr)
        if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation)) and self.is_int(expr):
            return Device(DeviceKind.VARIABLE, expr)  # an index computed from integers: `rank % n`
        if isinstance(expr, (cst.Float, cst.Imaginary, cst.List, cst.Tuple, cst.Dict, cst.Set,
                             cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            return NOT_DEVICE
        if isinstance(expr, cst.Name):
            bound = self._name_device(expr, pattern, depth)
            if bound is NOT_DEVICE:
                return NOT_DEVICE
            if bound is not None:
                return bound
            if pattern is not None and pattern.fullmatch(expr.value):
                return Device(DeviceKind.CPU if "cpu" in expr.value.lower() else DeviceKind.VARIABLE, expr)
            return None
        return None

    def _name_device(self, name: cst.Name, pattern: Optional[Pattern[str]], depth: int) -> DeviceFact:
        """Follow a name to the values its scope assigns it."""
        if depth >= 4 or literal_constant(name):
            return None
        if self.is_dtype(name):
            return NOT_DEVICE
        bindings = self._scopes.resolve(name)
        if not bindings:
            return None
        values: List[cst.BaseExpression] = []
        for binding in bindings:
            if binding.kind not in (BindingKind.ASSIGN, BindingKind.ANN_ASSIGN) or binding.value is None:
                if binding.kind is BindingKind.ANN_ASSIGN:
                    continue  # `x: torch.device` declares, binds nothing
                return None
            values.append(binding.value)
        if not values:
            return None
        facts = [self.device_fact(value, pattern, depth + 1) for value in values]
        if any(fact is NOT_DEVICE for fact in facts):
            return NOT_DEVICE
        devices = [fact for fact in facts if isinstance(fact, Device)]
        if len(devices) != len(facts):
            return None
        if all(device.is_cpu for device in devices):
            return Device(DeviceKind.CPU, name)
        kinds = {device.kind for device in devices}
        return Device(kinds.pop() if len(kinds) == 1 else DeviceKind.VARIABLE, name)

    def is_int(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """``expr`` is certainly an ``int``: a literal, ``int(...)`` or
        ``len(...)``, integer arithmetic (``+ - * // %``) of such, or a name
        every binding of which assigns one."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Name) and func.value in ("int", "len") and not self._scopes.resolve(func):
                return True
            return self._names.call_name(expr) in _INT_RETURNING
        if isinstance(expr, cst.UnaryOperation):
            return isinstance(expr.operator, (cst.Minus, cst.Plus)) and self.is_int(expr.expression, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return (isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo))
                    and self.is_int(expr.left, depth + 1) and self.is_int(expr.right, depth + 1))
        if isinstance(expr, cst.Name):
            bindings = self._scopes.resolve(expr)
            return bool(bindings) and all(
                b.kind is BindingKind.ASSIGN and b.value is not None and self.is_int(b.value, depth + 1)
                for b in bindings
            )
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            return self.option_type(expr.value, expr.attr.value) == "int"
        return False

    def option_type(self, receiver: cst.BaseExpression, option: str) -> Optional[str]:
        """``args.local_rank`` where ``args`` is ``parser.parse_args()`` (or a
        name every binding of which is) and every ``parser.add_argument`` of
        this file whose destination is ``local_rank`` passes ``type=int`` (or
        another builtin) and a default of that type (or ``required=True``):
        that builtin's name; None when anything else may set it."""
        values: List[cst.BaseExpression] = [receiver]
        if isinstance(receiver, cst.Name):
            bindings = self._scopes.resolve(receiver)
            if not bindings or any(b.kind is not BindingKind.ASSIGN or b.value is None for b in bindings):
                return None
            values = [b.value for b in bindings if b.value is not None]
        parsers: Set[Binding] = set()
        for value in values:
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                    and value.func.attr.value == "parse_args" and isinstance(value.func.value, cst.Name)):
                return None
            found = self._scopes.resolve(value.func.value)
            if len(found) != 1:
                return None
            parsers.add(found[0])
        types = {kind for parser in parsers for kind in self._options().get((id(parser), option), {None})}
        return types.pop() if len(types) == 1 else None

    def _options(self) -> Dict[Tuple[int, str], Set[Optional[str]]]:
        """(parser binding's id, destination) -> the ``type=`` builtins of the
        file's ``add_argument`` calls for it (None for any other type, or none)."""
        if self._option_types is None:
            found: Dict[Tuple[int, str], Set[Optional[str]]] = {}
            self._module.visit(_OptionCollector(self._scopes, found))
            self._option_types = found
        return self._option_types

    def int_constant(self, expr: cst.BaseExpression) -> Optional[int]:
        """The integer ``expr`` certainly is: a literal, or a name every
        binding of which assigns the same literal."""
        if isinstance(expr, cst.Integer):
            try:
                return int(expr.value.replace("_", ""), 0)
            except ValueError:
                return None
        if isinstance(expr, cst.Name):
            bindings = self._scopes.resolve(expr)
            found: Set[int] = set()
            for binding in bindings:
                if binding.kind is not BindingKind.ASSIGN or not isinstance(binding.value, cst.Integer):
                    return None
                value = self.int_constant(binding.value)
                if value is None:
                    return None
                found.add(value)
            return found.pop() if len(found) == 1 else None
        return None

    def tensor_device(self, expr: cst.BaseExpression) -> Optional[Device]:
        """The device a tensor expression certainly lives on: a tensor value
        with a known device, every binding of a name agreeing on it."""
        if isinstance(expr, cst.Name):
            bindings = self._scopes.resolve(expr)
            if not bindings:
                return None
            found: List[Device] = []
            for binding in bindings:
                if binding.kind not in (BindingKind.ASSIGN, BindingKind.ANN_ASSIGN) or binding.value is None:
                    return None
                device = self.tensor_device(binding.value)
                if device is None:
                    return None
                found.append(device)
            kinds = {device.kind for device in found}
            return Device(kinds.pop(), expr) if len(kinds) == 1 else None
        value = self.of(expr)
        if value is None or value.kind is not ValueKind.TENSOR or value.device is None:
            return None
        return value.device

    def legacy_form(self, call: cst.Call) -> LegacyForm:
        """Which overload a legacy typed constructor call takes (see :class:`LegacyForm`)."""
        if any(arg.keyword is not None for arg in call.args):
            return LegacyForm.UNKNOWN
        if not call.args:
            return LegacyForm.NONE_GIVEN
        if any(arg.star for arg in call.args):
            return LegacyForm.UNKNOWN
        if len(call.args) >= 2:
            return LegacyForm.SIZES  # only the size overload takes more than one argument
        only = call.args[0].value
        if isinstance(only, cst.Integer):
            return LegacyForm.SIZES
        if self._is_storage(only):
            return LegacyForm.STORAGE
        return LegacyForm.DATA if self._is_sequence_display(only, 0) else LegacyForm.UNKNOWN

    def _is_storage(self, expr: cst.BaseExpression) -> bool:
        """A call of a torch storage class or its constructors
        (``torch.ByteStorage.from_buffer(b)``), or a name bound only to one."""
        if isinstance(expr, cst.Name):
            bindings = self._scopes.resolve(expr)
            return bool(bindings) and all(
                binding.kind is BindingKind.ASSIGN and isinstance(binding.value, cst.Call)
                and self._is_storage(binding.value)
                for binding in bindings
            )
        if not isinstance(expr, cst.Call):
            return False
        qualified = self._names.call_name(expr)
        if qualified is None or not qualified.startswith("torch."):
            return False
        parts = qualified.split(".")
        return any(part.endswith("Storage") for part in parts[1:])

    def _is_sequence_display(self, expr: cst.BaseExpression, depth: int) -> bool:
        """A list or tuple written out: a display, a comprehension, ``[x] * n``,
        ``a + b`` of such, or a name every binding of which is one."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp)):
            return True
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Multiply):
                return self._is_sequence_display(expr.left, depth + 1) or self._is_sequence_display(
                    expr.right, depth + 1
                )
            if isinstance(expr.operator, cst.Add):
                return self._is_sequence_display(expr.left, depth + 1) and self._is_sequence_display(
                    expr.right, depth + 1
                )
            return False
        if isinstance(expr, cst.Name):
            bindings = self._scopes.resolve(expr)
            return bool(bindings) and all(
                binding.kind is BindingKind.ASSIGN
                and binding.value is not None
                and self._is_sequence_display(binding.value, depth + 1)
                for binding in bindings
            )
        return False

    def is_dtype(self, expr: cst.BaseExpression) -> bool:
        """A torch dtype (``torch.float16``, ``x.dtype``, or a name bound to one)."""
        if self.dtype_name(expr) is not None:
            return True
        if isinstance(expr, cst.Attribute):
            return expr.attr.value == "dtype"
        return False

    def dtype_name(self, expr: cst.BaseExpression) -> Optional[str]:
        """The canonical dtype (``float16``) of a public dtype name."""
        qualified = self._names.qualified_name(expr)
        return DTYPES.get(qualified) if qualified is not None else None


class _OptimizerArguments:
    """Bindings whose ``.parameters()`` an optimizer constructor receives."""

    def __init__(self, values: Values) -> None:
        self._values = values

    def collect(self, module: cst.Module, found: Set[Binding]) -> None:
        for node, _ in walk(module):
            if not isinstance(node, cst.Call) or not node.args:
                continue
            value = self._values._of_constructor(node, self._values._names.call_name(node) or "")
            if value is None or value.kind is not ValueKind.OPTIMIZER:
                continue
            first = node.args[0].value
            if (
                isinstance(first, cst.Call)
                and isinstance(first.func, cst.Attribute)
                and first.func.attr.value in ("parameters", "named_parameters")
                and isinstance(first.func.value, cst.Name)
            ):
                found.update(self._values._scopes.resolve(first.func.value))


def collect_returns(node: cst.CSTNode, found: List[cst.Return]) -> None:
    """``return`` statements of a function body, not of nested functions."""
    if isinstance(node, cst.Return):
        found.append(node)
        return
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return
    if isinstance(node, cst.BaseExpression):
        return
    for child in children(node):
        collect_returns(child, found)


def collect_self_assignments(node: cst.CSTNode, receiver: str,
                             found: Dict[str, List[Optional[cst.BaseExpression]]]) -> None:
    """Each ``<receiver>.<attr>`` written in a function body (nested
    functions and classes left out), with the value it is given: None for a
    write whose value is not one expression (an unpacking, ``+=``, a ``for``
    or ``with`` target)."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) or isinstance(node, cst.BaseExpression):
        return
    if isinstance(node, (cst.Assign, cst.AnnAssign)):
        if node.value is None:
            return  # `self.x: int` declares, writes nothing
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            attr = _self_attribute(target, receiver)
            if attr is not None:
                found.setdefault(attr, []).append(node.value)
                continue
            for element in _unpacked(target):
                attr = _self_attribute(element, receiver)
                if attr is not None:
                    found.setdefault(attr, []).append(None)
        return
    written: List[cst.BaseExpression] = []
    if isinstance(node, cst.AugAssign):
        written = [node.target]
    elif isinstance(node, cst.For):
        written = _unpacked(node.target)
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        written = _unpacked(node.asname.name)
    for place in written:
        attr = _self_attribute(place, receiver)
        if attr is not None:
            found.setdefault(attr, []).append(None)
    for child in children(node):
        collect_self_assignments(child, receiver, found)


def _self_attribute(target: cst.BaseExpression, receiver: str) -> Optional[str]:
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == receiver:
        return target.attr.value
    return None


class _OptionCollector(cst.CSTVisitor):
    """The file's ``parser.add_argument(...)`` calls: each destination's ``type=``."""

    _BUILTIN_TYPES = frozenset({"int", "float", "str", "bool"})

    def __init__(self, scopes: Scopes, found: Dict[Tuple[int, str], Set[Optional[str]]]) -> None:
        super().__init__()
        self._scopes = scopes
        self._found = found

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"
                and isinstance(func.value, cst.Name)):
            return
        parsers = self._scopes.resolve(func.value)
        if len(parsers) != 1:
            return
        flags = [_string_value(arg.value) for arg in node.args if arg.keyword is None and not arg.star]
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
        dest = _string_value(keywords["dest"]) if "dest" in keywords else next(
            (flag.lstrip("-").replace("-", "_") for flag in flags if flag is not None and flag.startswith("--")),
            next((flag for flag in flags if flag is not None and not flag.startswith("-")), None))
        if dest is None:
            return
        given = keywords.get("type")
        kind = (given.value if isinstance(given, cst.Name) and given.value in self._BUILTIN_TYPES
                and not self._scopes.resolve(given) and "action" not in keywords and "nargs" not in keywords
                else None)
        # An option left out holds its default (None unless given): only a value of the type counts.
        always_given = literal_bool(keywords["required"]) is True if "required" in keywords else not any(
            flag is not None and flag.startswith("-") for flag in flags)
        default = keywords.get("default")
        if default is not None and isinstance(default, cst.UnaryOperation) and isinstance(default.operator, cst.Minus):
            default = default.expression
        default_kind = {cst.Integer: "int", cst.Float: "float", cst.SimpleString: "str"}.get(type(default)) if (
            default is not None) else None
        if not always_given and default_kind != kind:
            kind = None
        self._found.setdefault((id(parsers[0]), dest), set()).add(kind)


def _unpacked(target: cst.BaseExpression) -> List[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [leaf for element in target.elements for leaf in _unpacked(element.value)]
    if isinstance(target, cst.StarredElement):
        return _unpacked(target.value)
    return [target]
