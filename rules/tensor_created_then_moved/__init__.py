"""TL101 tensor-created-then-moved."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Mapping, Optional, Set, Tuple, Union

import libcst as cst

from torchlint.data import apidata
from torchlint.analysis.scopes import Binding, BindingKind
from torchlint.ruleapi.fixes import Spelling, bind, comments, dotted_expression, keyword_argument, set_keyword, spell
from torchlint.analysis.values import (
    INDEX_RETURNING,
    LEGACY_CONSTRUCTORS,
    VARIABLE_WRAPPERS,
    Device,
    DeviceKind,
    LegacyForm,
    ValueKind,
)
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.analysis.queries import summaries
from torchlint.ruleapi.rule import (
    Example, FileContext, FixAvailability, FixRequest, Option, OptionValue, Replacement, Rule, TorchRange,
    TorchVersion,
)
from torchlint.ruleapi.verification import Contract, VerificationSpec
from torchlint.analysis.values import literal_bool
from torchlint.source.tree import literal_none

# -- what counts as a factory ------------------------------------------------

# How a device change affects a factory's values, and which casts may fold.
_EXACT = "exact"  # same values on any device; any cast folds into dtype=
_VALUE = "value"  # same values on any device; casts stay as method calls
_ROUNDING = "rounding"  # CPU and CUDA kernels may round differently
_RANDOM = "random"  # the device's own generator draws different numbers

_FACTORIES: Dict[str, str] = {
    "torch.zeros": _EXACT,
    "torch.ones": _EXACT,
    "torch.empty": _EXACT,
    "torch.eye": _EXACT,
    "torch.zeros_like": _EXACT,
    "torch.ones_like": _EXACT,
    "torch.empty_like": _EXACT,
    "torch.full": _VALUE,
    "torch.full_like": _VALUE,
    "torch.tensor": _VALUE,
    "torch.as_tensor": _VALUE,
    "torch.asarray": _VALUE,  # torch >= 1.11: as as_tensor, with device= and dtype= keywords
    "torch.arange": _VALUE,  # downgraded to _ROUNDING unless its bounds are integers
    "torch.linspace": _ROUNDING,
    "torch.logspace": _ROUNDING,
    "torch.hann_window": _ROUNDING,
    "torch.hamming_window": _ROUNDING,
    "torch.blackman_window": _ROUNDING,
    "torch.bartlett_window": _ROUNDING,
    "torch.kaiser_window": _ROUNDING,
    "torch.rand": _RANDOM,
    "torch.randn": _RANDOM,
    "torch.randint": _RANDOM,
    "torch.randperm": _RANDOM,
    "torch.rand_like": _RANDOM,
    "torch.randn_like": _RANDOM,
    "torch.randint_like": _RANDOM,
}

# torch.nn constructors that take the `device=`/`dtype=` factory keywords.
# Where `device` sits among their parameters, and since which release, is in
# torchlint/data/signatures.toml.
_MODULES: FrozenSet[str] = frozenset(
    {
        "Linear",
        "Bilinear",
        "LazyLinear",
        "Conv1d",
        "Conv2d",
        "Conv3d",
        "ConvTranspose1d",
        "ConvTranspose2d",
        "ConvTranspose3d",
        "LazyConv1d",
        "LazyConv2d",
        "LazyConv3d",
        "LazyConvTranspose1d",
        "LazyConvTranspose2d",
        "LazyConvTranspose3d",
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "LazyBatchNorm1d",
        "LazyBatchNorm2d",
        "LazyBatchNorm3d",
        "SyncBatchNorm",
        "InstanceNorm1d",
        "InstanceNorm2d",
        "InstanceNorm3d",
        "LazyInstanceNorm1d",
        "LazyInstanceNorm2d",
        "LazyInstanceNorm3d",
        "GroupNorm",
        "LayerNorm",
        "RMSNorm",
        "Embedding",
        "EmbeddingBag",
        "RNN",
        "LSTM",
        "GRU",
        "RNNCell",
        "LSTMCell",
        "GRUCell",
        "MultiheadAttention",
        "Transformer",
        "TransformerEncoderLayer",
        "TransformerDecoderLayer",
        "PReLU",
        "AdaptiveLogSoftmaxWithLoss",
    }
)

_SEQUENTIAL = "torch.nn.Sequential"
# torch.nn layers with no parameters or buffers: nothing of theirs is copied by a move.
_STATELESS: FrozenSet[str] = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
    "Softmax", "LogSoftmax", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink",
    "Threshold", "GLU", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity",
    "Flatten", "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d", "Upsample", "PixelShuffle", "PixelUnshuffle", "ZeroPad2d", "ConstantPad1d",
    "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
    "ReplicationPad2d",
})
# Modules whose parameters and buffers start as constants (ones, zeros):
# building them on the device gives bit-identical state.
_CONSTANT_INIT_MODULES: FrozenSet[str] = frozenset(
    name
    for name in _MODULES
    if "Norm" in name  # BatchNorm*, SyncBatchNorm, InstanceNorm*, GroupNorm, LayerNorm, RMSNorm
)

# Keywords that, when given to the factory or constructor, rule the finding out.
_NO_REPORT_KEYWORDS: Dict[str, FrozenSet[str]] = {
    "factory": frozenset({"out", "generator"}),
    "module": frozenset({"_weight", "custom_encoder", "custom_decoder"}),
}

# -- dtypes ------------------------------------------------------------------

_TENSOR_CASTS: Dict[str, str] = {
    "float": "float32",
    "half": "float16",
    "double": "float64",
    "bfloat16": "bfloat16",
    "long": "int64",
    "int": "int32",
    "short": "int16",
    "char": "int8",
    "byte": "uint8",
    "bool": "bool",
    "cfloat": "complex64",
    "cdouble": "complex128",
}
_MODULE_CASTS: Dict[str, str] = {
    "float": "float32",
    "half": "float16",
    "double": "float64",
    "bfloat16": "bfloat16",
}
_FLOAT_DTYPES: FrozenSet[str] = frozenset({"float16", "float32", "float64", "bfloat16"})

# Shape-only tensor methods that may sit between the factory and the move.
# `expand` is left out on purpose: a copy of an expanded tensor is dense,
# the expanded view is not.
# `repeat` copies into a dense tensor either way, so it may sit there too.
_TENSOR_VIEWS: FrozenSet[str] = frozenset(
    {"view", "reshape", "contiguous", "t", "unsqueeze", "squeeze", "flatten", "permute", "transpose",
     "repeat"}
)
# Triangle masks: deterministic, zero outside the triangle, so they commute
# with a device change and with casts (a cast keeps zero at zero).
_TENSOR_MASKS: FrozenSet[str] = frozenset({"tril", "triu"})
# In-place fills that may sit between the factory and the move; they stay
# as calls, and the random ones make the fix unsafe when they run before
# the move (they would draw from the device's generator instead).
_IN_PLACE_ARITHMETIC: FrozenSet[str] = frozenset({"add_", "sub_", "mul_", "div_"})
"""In-place arithmetic a chain may apply with a Python number (kept as it is by the fix)."""
_TENSOR_FILLS: Dict[str, bool] = {
    "fill_": False,
    "zero_": False,
    "normal_": True,
    "uniform_": True,
    "random_": True,
    "bernoulli_": True,
    "exponential_": True,
    "geometric_": True,
    "log_normal_": True,
    "cauchy_": True,
}
# Module methods that return the module itself and do not depend on its device.
_MODULE_PASSTHROUGH: FrozenSet[str] = frozenset({"train", "eval", "requires_grad_"})

# Methods of tensors (and modules, which a legacy constructor rejects) that
# return a tensor: a legacy constructor given their result aliases it.
_TENSOR_RETURNING: FrozenSet[str] = frozenset({"cpu", "cuda", "detach", "clone", "contiguous", "to"})

_DTYPE_NAME = re.compile(r"(?i)^(?:\w*_)?dtype$")

_MASK_FUNCTIONS: FrozenSet[str] = frozenset({"torch.triu", "torch.tril"})
"""The function forms of the triangle masks (their tensor is the first argument)."""

_MAX_CHAIN = 16
_SCALE_OPERATORS = (cst.Multiply, cst.Add, cst.Subtract, cst.Divide, cst.Modulo, cst.FloorDivide)
"""Arithmetic with a number whose result is the same on every device (correctly rounded)."""


@dataclass(frozen=True)
class _Step:
    """One method call, index or ``Variable(...)`` wrapper of the chain, in
    the order they run."""

    call: Union[cst.Call, cst.Subscript, cst.BinaryOperation]
    kind: str  # "move", "cast", "view", "fill", "pass", "wrap", "scale", "mask" (`torch.triu(t)`)
    device: Optional[cst.BaseExpression] = None  # where a move goes
    to_cpu: bool = False  # a move certainly to the CPU
    device_safe: bool = True  # False: `.cuda(k)` with a k that may be None
    dtype: Optional[cst.BaseExpression] = None  # a cast's dtype as written (`.to`)
    dtype_name: Optional[str] = None  # the cast's dtype if known: "float16", ...
    keeps_dtype: bool = True  # for views: certainly not a `.view(dtype)`
    random: bool = False  # for fills: draws random numbers
    makes_leaf: bool = False  # for wraps: `Variable(..., requires_grad=True)`
    left: bool = True  # for scales: the tensor is the left operand (`t * 2`, not `2 * t`)


@dataclass(frozen=True)
class _Chain:
    base: cst.Call
    qualified: str
    is_module: bool
    steps: Tuple[_Step, ...]




def _mask_arguments(call: cst.Call) -> bool:
    """``torch.triu(t)``, ``torch.triu(t, k)``, ``torch.triu(t, diagonal=k)``: no ``out=``, nothing unpacked."""
    first = call.args[0] if call.args else None
    if first is None or first.keyword is not None or first.star:
        return False
    rest = call.args[1:]
    if len(rest) > 1 or any(arg.star for arg in rest):
        return False
    return all(arg.keyword is None or arg.keyword.value == "diagonal" for arg in rest)


def _loss(qualified: Optional[str]) -> bool:
    """One of torch's loss classes (their base too)."""
    return qualified is not None and qualified.startswith("torch.nn.") and (
        qualified.endswith("Loss") or qualified.endswith("._Loss") or qualified.endswith("._WeightedLoss"))


def _positional(call: cst.Call) -> List[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and not arg.star]


def _method(call: Union[cst.Call, cst.Subscript, cst.BinaryOperation]) -> str:
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    return ""


def _adds_axes(node: cst.Subscript) -> bool:
    """``x[None, ...]``, ``x[:, None]``: indexing that only adds axes, a view
    of all the elements.  Selecting (``x[0]``, ``x[1:]``) is left out: moved
    first, the view would keep the whole tensor alive on the device where
    the original moved only the part."""
    for element in node.slice:
        part = element.slice
        if isinstance(part, cst.Slice):
            if part.lower is not None or part.upper is not None or part.step is not None:
                return False
        elif not isinstance(part, cst.Index) or not (
            isinstance(part.value, cst.Ellipsis)
            or literal_none(part.value)
        ):
            return False
    return True


def _string_value(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


class TensorCreatedThenMoved(Rule):
    r"""## What it does
    Reports a tensor factory (`torch.zeros`, `torch.randn`, `torch.tensor`,
    `torch.arange`, the other creation functions that take `device=`, and
    the `*_like` forms when their input is known to be on the CPU: they
    are made on their input's device, most often the target already), a legacy typed constructor (`torch.FloatTensor`,
    `torch.LongTensor`, `torch.Tensor`, ...) or a built-in `torch.nn` layer
    constructor (`nn.Linear`, `nn.Conv2d`, `nn.LayerNorm`, `nn.LSTM`, ...)
    whose result is sent to a device in the same expression with `.cuda()`
    or `.to(<device>)`, possibly after shape-only calls such as `.view()` or
    `.unsqueeze()` (or `.repeat()`; not `.expand()`, whose result is a view that a copy to
    the device makes dense, so building the factory there would change what the code gets),
    indexing that only adds axes (`[None, ...]`, `[:, None]`), triangle
    masks (`.triu()`, `.tril()`, and `torch.triu(<factory>, diagonal=k)`
    around it, which gives the same zeros and values on every device),
    fills such as `.fill_(0)`, dtype casts such as `.float()`, or a
    `torch.autograd.Variable(...)` wrapper.  Callees are resolved through
    the file's imports, aliases included (`import torch as t`).

    A `.to(...)` call counts as a move only when its argument is certainly a
    device: a device string such as `"cuda:0"`, `torch.device(...)`, an
    integer index, an attribute or name matching the `device-pattern`
    option (`x.device`, `self.device`, `device`, `local_rank`, ...), or a
    name that the enclosing function or module assigns only such values.
    `.to(other)` and `.type_as(other)` count as moves only when `other` is
    a name every assignment of which gives a tensor of known device
    (`buf = torch.zeros(3, device="cuda")`, `buf = t.cuda()`).
    `.to(torch.float16)`, `.to(other_tensor)` of unknown device and
    `.to(memory_format=...)` are not moves, and a move to the CPU is not
    reported.  A legacy constructor given a keyword, or wrapping a tensor
    or a storage (which it aliases rather than copies), is not reported.  A call that
    already passes `device=` is reported only when that device is the CPU
    and the values are not random (random numbers drawn from the CPU
    generator on purpose, for a seeded stream that all ranks share, are
    left alone).  A tensor that is moved in a later statement is out of
    scope, and so is a model handed to Hugging Face Accelerate's
    `accelerator.prepare(...)`, which moves it (every release): that is
    Accelerate's way of placing it, not a `.to()`/`.cuda()` of a fresh
    tensor.

    What it covers: tensor expressions, built-in layers and built-in
    containers of them.  Arithmetic with a Python number between the
    factory and the move counts (`+`, `-`, `*`, `/`, `//`, `%`, and in place,
    `.add_(n)`, `.sub_(n)`, `.mul_(n)`, `.div_(n)`:
    `(torch.ones(n) * i).to(x.device)`, `(torch.LongTensor(n).random_() %
    depth).cuda()`, with
    `i` a literal, a size read from a tensor (`x.shape[1]`, `x.size(1)`,
    `x.numel()`), a call of the builtins `int`, `float` or `len`, integer
    arithmetic of these, the variable of a loop over `range(...)`, or a
    name every assignment of which gives one of these); a name the code
    does not show to be a number (a parameter, `length` in
    `(torch.ones(b, l) / length).to(x.device)`) may be a tensor on another
    device, and keeps the report away.  An `nn.Sequential(...)` of
    built-in layers counts too (nested `Sequential` ones too), with parameter-free
    layers (activations, dropout, pooling, `Flatten`, `Identity`) among
    them, moved as a whole (a layer class named through an alias such as
    `Dense = nn.Linear` counts; a project's module class inside the
    container, even one that wraps a single layer, keeps it quiet).  A
    project's own module class built and then moved (`Net(...).to(device)`)
    is reported only with the `user-modules` option.  Losses without parameters (`nn.CrossEntropyLoss().cuda()`)
    are never reported: moving them copies nothing.

    ## Why is this bad?
    The tensor is first built in host memory (for the random factories and
    for layers with random initial weights, with the CPU random number
    generator), then copied to the accelerator, and the host copy is thrown
    away.  That is a host allocation, CPU work and a synchronous
    host-to-device transfer for every call, which adds up inside a training
    step or in a model's `forward`.  Passing `device=` makes the tensor (or
    the layer's parameters) appear directly on the accelerator; passing
    `dtype=` instead of a following `.half()` avoids building a
    full-precision copy first.

    ## Example
    ```python
    noise = torch.randn(batch, latent_dim).cuda()
    mask = torch.ones(seq_len, seq_len).bool().to(device)
    head = nn.Linear(hidden, classes).half().cuda()
    ```

    Use instead:
    ```python
    noise = torch.randn(batch, latent_dim, device="cuda")
    mask = torch.ones(seq_len, seq_len, device=device, dtype=torch.bool)
    head = nn.Linear(hidden, classes, device="cuda", dtype=torch.float16)
    ```

    ## Fix safety
    The fix adds `device=` to the call and removes the `.cuda()`/`.to()`
    call together with its `non_blocking=`.  A cast in the chain becomes
    `dtype=` only where creating the values in that dtype is the same as
    casting them afterwards: any cast for `zeros`, `ones`, `empty`, `eye`
    and their `*_like` forms, a floating-point cast for the random
    factories and for layers.  Other casts (`torch.tensor([1.5]).long()`,
    `torch.rand(3).long()`, `torch.full(..., 0.1).double()`) stay as method
    calls after the factory, which is always equivalent.  Axis-adding
    indexing, fills, a `Variable(...)` wrapper and arithmetic with a number
    stay where they are, around the factory that now creates the tensor on
    the device (the same IEEE-754 operation on the same values gives the
    same result on every device; a cast after the arithmetic is not folded,
    since `int * 0.5` changes the dtype).  For an `nn.Sequential(...)` of
    layers, each layer with parameters gets `device=`; the fix is safe only
    when all of them are normalization layers, as for a single layer.

    A legacy typed constructor becomes a factory call, depending on what it
    is given (the overload torch picks):
    - one list or tuple (a display, a comprehension, `[x] * n`, their sums,
      or a name assigned only those): `torch.FloatTensor(data)` becomes
      `torch.tensor(data, dtype=torch.float32, device=...)`, `LongTensor`
      `dtype=torch.int64` and so on; both convert each element to that dtype
      the same way (`LongTensor([1.7])` and `tensor([1.7], dtype=torch.int64)`
      both truncate to 1).  `torch.Tensor(data)` has the default dtype, and
      `torch.tensor` would infer `int64` from integers, so it becomes
      `torch.tensor(data, dtype=torch.get_default_dtype(), device=...)`;
    - integer sizes (two or more arguments, or one integer literal):
      `torch.LongTensor(n, m)` becomes `torch.empty(n, m, dtype=torch.int64,
      device=...)`.  Both allocate uninitialized memory of that shape and
      dtype, so any fill in the chain (`.fill_(0)`, `.zero_()`) gives the
      same values;
    - one argument of unknown kind (`torch.FloatTensor(cfg.MEANS)`: a
      sequence, but an `int` would be a size, a `torch.Size` a shape), or no
      argument: reported with a hint and no fix.

    A move to another tensor (`.to(other)`, `.type_as(other)`) becomes
    `device=other.device` and `dtype=other.dtype` (folded where casts fold,
    else `.to(other.dtype)` after the factory).

    The fix is safe when the values are bit-identical on every device:
    `zeros`, `ones`, `empty`, `eye`, `full`, `tensor`, `as_tensor`, `asarray`, the
    non-random `*_like` forms, an `arange` with integer bounds, and the
    normalization layers, whose parameters start as ones and zeros.  It is
    unsafe when:
    - the factory is random (`rand`, `randn`, `randint`, `randperm`,
      `rand_like`, ...), a random fill such as `.normal_()` runs before the
      move, or the layer initializes its weights randomly (`Linear`,
      `Conv*`, `Embedding`, RNNs, attention, `PReLU`): the accelerator's
      generator gives different numbers from the CPU's for the same seed,
      and every later CPU random draw shifts because the CPU generator is
      no longer consumed;
    - the factory is `linspace`, `logspace`, a window function or an
      `arange` whose bounds may be fractional: device kernels may round the
      last bit differently;
    - the factory passes `requires_grad=True`, or a `Variable(...,
      requires_grad=True)` wraps it: the original result is a non-leaf copy
      that never receives `.grad`, the fixed one is a leaf;
    - the move is `.cuda(k)` with a variable `k`: `device=k` is right for
      an index or a device, but puts the tensor on the CPU if `k` is `None`.

    No fix is offered when `pin_memory=True` is passed, when a legacy
    constructor's argument is of unknown kind, or when the edit would drop
    a comment.  Indexing that selects elements (`[0]`, `[1:]`, a mask)
    breaks the chain: created on the device first, the view would keep all
    of the tensor there, where the original moves only the part.  Nothing is reported when a `generator=` or
    `out=` argument, `**kwargs`, or a layer's pre-built weight or custom
    sub-module is passed, or when `device` or `dtype` is (or may be)
    passed by position: an unpacked `*args` that can reach it, or a
    position whose parameter differs between the targeted torch releases
    (`nn.LayerNorm`'s 4th is `device` before 2.1 and `bias` after).  Those
    tie the result to the CPU or may hide the keywords the fix would add.

    ## Options
    - `user-modules` (default `false`): also report a module class of the
      project (this file's, or another module's that derives from
      `nn.Module`, and from no loss class) built and then moved in one
      expression.  The fix, for `x = Net(...).to(d)` on a line of its own
      and torch 2.0 or later, builds it under `with torch.device(d):`; it is
      unsafe: the parameters are initialised by the device's generator, and
      a tensor the class's `__init__` builds from host data (`torch.load`,
      `torch.from_numpy`) stays on the CPU where `.to(d)` would have moved it.
    - `device-pattern` (default
      `(?i)^(?:\w*_)?(?:device|dev)$|^(?:local_)?rank$|^gpu(?:_?id)?$|^device_?id$`,
      which matches `device`, `dev`, `torch_device`, `DEVICE`, `rank`,
      `local_rank`, `gpu`, `gpu_id`, `device_id`, ...): a regular
      expression.  The argument of `.to(x)` is taken as a device when it is
      a name, or an attribute whose last part, that fully matches the
      pattern, unless the enclosing scope assigns that name a dtype, a
      tensor or another value that is certainly no device.  A name with
      `cpu` in it counts as the CPU.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide; the text names no
    publisher), in its list of cheap code changes, asks for tensors to be
    created directly on the target device rather than created and then
    moved with `.cuda()`; *Chapter 16: GPU Acceleration & Distributed
    Training* (an online PyTorch training book) builds its layer with
    `device='cuda'` in the constructor.
    """

    code = "TL101"
    name = "tensor-created-then-moved"
    summary = "A tensor or `torch.nn` layer is created on the CPU and then moved; pass `device=`"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = (
        "`device=` (and `dtype=`) on the factory: safe for deterministic factories, unsafe for "
        "random factories and layers (the device's generator draws other numbers)"
    )
    torch_range = TorchRange(
        note="`torch.nn` layer constructors take `device=`/`dtype=` since 1.9, pytorch#54508; "
        "`RMSNorm` exists from 2.4"
    )
    options = {
        "device-pattern": Option(
            r"(?i)^(?:\w*_)?(?:device|dev)$|^(?:local_)?rank$|^gpu(?:_?id)?$|^device_?id$",
            "Regex: a `.to(x)` argument that is a name, or an attribute whose last part, "
            "fully matching it is a device",
        ),
        "user-modules": Option(
            False,
            "Also report the project's own module classes built and then moved (`Net(...).to(device)`); "
            "the fix builds them under `with torch.device(...)` (torch >= 2.0)",
        ),
    }
    trigger_words = (".cuda(", ".to(", ".type_as(")
    project_queries = (summaries(),)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A torch factory or layer (a torch import) moved by ``.cuda()``, ``.to()``
        or ``.type_as()``."""
        return facts.imports_torch and not facts.called_attributes.isdisjoint(("cuda", "to", "type_as"))
    valid = (
        """
        import torch
        x = torch.zeros(3, device="cuda")
        """,
        """
        import torch
        x = load_tensor().cuda()
        """,
    )
    invalid = (
        Example(
            """
            import torch
            x = torch.zeros(3).cuda()
            """,
            fixed="""
            import torch
            x = torch.zeros(3, device="cuda")
            """,
        ),
        Example(
            """
            import torch
            noise = torch.randn(8, 8).to(device)
            """,
            fixed="""
            import torch
            noise = torch.randn(8, 8, device=device)
            """,
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        seed_probe=True,
        contract=Contract(
            level=(
                "identical (deterministic factories, and every factory on the CPU); same "
                "distribution (random factories on CUDA)"
            ),
            promise=(
                "A tensor or layer created directly on the device equals the one created on the "
                "CPU and then moved: `zeros`, `ones`, `full`, `eye`, `arange`, `linspace`, "
                "`tensor` give the same values; on the CPU random factories draw the same numbers "
                "from the same generator; on CUDA they give values of the same shape, dtype, "
                "device and distribution, but not the same numbers, because the CPU and CUDA "
                "generators are different algorithms."
            ),
            checks=(
                (
                    "every output has the same shape, dtype, device, layout, `requires_grad` and "
                    "leaf status as before"
                ),
                (
                    "on the CPU every output, random or not, is identical, and so is every "
                    "printed number"
                ),
                (
                    "on CUDA, outputs that do not depend on the seed (found by re-running the "
                    "original with another seed) are identical; floating `arange`/`linspace` "
                    "results may also differ in the last bit, within the dtype's default "
                    "tolerance"
                ),
                (
                    "on CUDA, outputs that depend on the seed pass a two-sample Kolmogorov-Smirnov "
                    "test (rejected at p < 0.001) and keep the values that occur (integer and "
                    "boolean outputs), their range (within 10% of it), mean and standard "
                    "deviation (within 8 standard errors): a shifted range, a changed constant "
                    "or a scaled spread fails"
                ),
                "the CPU random generator's state after the run is compared",
            ),
            differences=(
                (
                    "On CUDA the fixed code no longer draws from the CPU generator, so every "
                    "later CPU random number (sampler order, CPU-side dropout or augmentation) "
                    "shifts; verify reports this as an RNG-stream shift."
                ),
                (
                    "A factory with `requires_grad=True` moved by `.to()` is a non-leaf copy that "
                    "never receives `.grad`; created on the device it is a leaf.  Verify reports "
                    "the change as not equivalent."
                ),
            ),
            speed=(
                "Saves the host allocation, the CPU fill or random draw and the host-to-device "
                "copy: large for big random tensors and layers on a GPU, nothing on a CPU, where "
                "`.to('cpu')` is already free."
            ),
        ),
    )

    # -- state ----------------------------------------------------------

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._consumed: Set[int] = set()
        self._pattern: Optional["re.Pattern[str]"] = None

    # -- visitor --------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self._consumed:
            return
        chain = self._parse(node)
        if chain is None:
            if self.option("user-modules"):
                self._user_module(node)
            return
        for step in chain.steps:
            self._consumed.add(id(step.call))
        self._consumed.add(id(chain.base))
        self._check(node, chain)

    # -- parsing the chain ----------------------------------------------

    def _parse(self, top: cst.Call) -> Optional[_Chain]:
        calls: List[Tuple[Union[cst.Call, cst.Subscript, cst.BinaryOperation], str]] = []
        expr: cst.BaseExpression = top
        base: Optional[cst.Call] = None
        qualified: Optional[str] = None
        while len(calls) <= _MAX_CHAIN:
            if isinstance(expr, cst.Subscript):
                if not _adds_axes(expr):
                    return None
                calls.append((expr, "[]"))
                expr = expr.value
                continue
            if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _SCALE_OPERATORS):
                # `(torch.ones(n) * k).to(device)`: a number on one side, the chain on the other.
                if self._number(expr.right):
                    calls.append((expr, "scale-left"))
                    expr = expr.left
                elif self._number(expr.left):
                    calls.append((expr, "scale-right"))
                    expr = expr.right
                else:
                    return None
                continue
            if not isinstance(expr, cst.Call):
                return None
            qualified = self.names.call_name(expr)
            if qualified is not None and (self._is_creator(qualified) or (
                    qualified == _SEQUENTIAL and bool(self._container_layers(expr, 0)))):
                base = expr
                break
            if qualified in VARIABLE_WRAPPERS:
                if not calls or not expr.args or expr.args[0].keyword is not None or expr.args[0].star:
                    return None  # the chain is reported from the move inside the wrapper
                calls.append((expr, "Variable"))
                expr = expr.args[0].value
                continue
            if qualified in _MASK_FUNCTIONS:
                # `torch.triu(torch.ones(n, n), diagonal=1)`: the triangle of its first argument.
                if not calls or not _mask_arguments(expr):
                    return None
                calls.append((expr, "mask"))
                expr = expr.args[0].value
                continue
            func = expr.func
            if not isinstance(func, cst.Attribute):
                return None
            calls.append((expr, func.attr.value))
            expr = func.value
        if base is None or qualified is None or not calls:
            return None
        is_module = qualified not in _FACTORIES and qualified not in LEGACY_CONSTRUCTORS
        steps: List[_Step] = []
        for call, method in reversed(calls):
            if isinstance(call, cst.BinaryOperation):
                # The same operation on the same numbers on any device (IEEE-754 arithmetic);
                # it may change the dtype (`int * 0.5`), so no later cast folds into `dtype=`.
                step: Optional[_Step] = None if is_module else _Step(call, "scale", keeps_dtype=False,
                                                                      left=method == "scale-left")
            elif isinstance(call, cst.Subscript):
                step = None if is_module else _Step(call, "view")
            elif method == "Variable":
                step = None if is_module else self._variable_step(call)
            elif method == "mask":
                step = None if is_module else _Step(call, "mask")
            else:
                step = self._step(call, method, is_module)
            if step is None:
                return None
            steps.append(step)
        if not any(step.kind == "move" for step in steps):
            return None
        return _Chain(base, qualified, is_module, tuple(steps))

    def _number(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """A Python number: a literal (negated too), a size read from a tensor
        (``x.shape[1]``, ``x.size(1)``, ``x.numel()``), a call of the builtins
        ``int``/``float``/``len``, integer arithmetic of such (``values.is_int``), the variable
        of a loop over ``range(...)`` (``for i in reversed(range(steps))``), or
        a name every binding of which assigns one of these."""
        if depth > 4:
            return False
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            expr = expr.expression
        if isinstance(expr, (cst.Integer, cst.Float)):
            return True
        if self._integer_expr(expr) or self.facts.values.is_int(expr):
            return True
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "float" \
                and not self.facts.scopes.resolve(expr.func):
            return True
        if not isinstance(expr, cst.Name):
            return False
        bindings = self.facts.scopes.resolve(expr)
        return bool(bindings) and all(
            (binding.kind is BindingKind.FOR and binding.node is not None and self._over_range(binding))
            or (binding.kind is BindingKind.ASSIGN and binding.value is not None
                and self._number(binding.value, depth + 1))
            for binding in bindings
        )

    def _over_range(self, binding: Binding) -> bool:
        """A ``for`` target that is the loop's whole target, over the builtin
        ``range(...)``, also through library wrappers that hand its items on
        unchanged (``reversed``, ``tqdm``: :meth:`Callees.items_of`):
        ``for i in tqdm(reversed(range(1, steps)))``."""
        loop = binding.statement
        if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
            return False
        source: Optional[cst.BaseExpression] = loop.iter
        for _ in range(4):
            if not isinstance(source, cst.Call):
                return False
            if (isinstance(source.func, cst.Name) and source.func.value == "range" and source.args
                    and not self.facts.scopes.resolve(source.func)):
                return True
            source = self.facts.callees.items_of(source)
        return False

    def _is_creator(self, qualified: str) -> bool:
        if qualified in _FACTORIES or qualified in LEGACY_CONSTRUCTORS:
            return True
        prefix = "torch.nn."
        if not (qualified.startswith(prefix) and qualified[len(prefix):] in _MODULES):
            return False
        device = apidata.signature(qualified).parameter("device")
        return device is not None and device.exists_in(self.context.torch_version)

    @staticmethod
    def _variable_step(call: cst.Call) -> Optional[_Step]:
        """``Variable(t, requires_grad=...)``: the same values on ``t``'s device."""
        makes_leaf = False
        for arg in call.args[1:]:
            if arg.star or arg.keyword is None or arg.keyword.value not in ("requires_grad", "volatile"):
                return None
            if arg.keyword.value == "requires_grad" and literal_bool(arg.value) is not False:
                makes_leaf = True
        return _Step(call, "wrap", makes_leaf=makes_leaf)

    def _step(self, call: cst.Call, method: str, is_module: bool) -> Optional[_Step]:
        if method == "cuda":
            return self._cuda_step(call, is_module)
        if method == "to":
            return self._to_step(call)
        if method == "type_as" and not is_module:
            if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
                return None
            return self._tensor_target_step(call, call.args[0].value)
        casts = _MODULE_CASTS if is_module else _TENSOR_CASTS
        if method in casts:
            return _Step(call, "cast", dtype_name=casts[method]) if not call.args else None
        if is_module:
            return _Step(call, "pass") if method in _MODULE_PASSTHROUGH else None
        if method in _TENSOR_VIEWS:
            if any(arg.keyword is not None for arg in call.args):
                return None
            return _Step(call, "view", keeps_dtype=self._view_keeps_dtype(call, method))
        if method in _TENSOR_MASKS:
            if any(arg.star or (arg.keyword is not None and arg.keyword.value != "diagonal") for arg in call.args):
                return None
            return _Step(call, "view")
        if method in _TENSOR_FILLS:
            if any(arg.star or (arg.keyword is not None and arg.keyword.value == "generator") for arg in call.args):
                return None  # a CPU generator ties the values to the CPU
            return _Step(call, "fill", random=_TENSOR_FILLS[method])
        if method in _IN_PLACE_ARITHMETIC:
            # `.sub_(0.5).mul_(2.0)`: the same operation with a number, in place, on any device.
            if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star \
                    or not self._number(call.args[0].value):
                return None
            return _Step(call, "fill")
        if method == "type" and len(call.args) == 1 and call.args[0].keyword is None:
            dtype = call.args[0].value
            if self._is_dtype(dtype):  # `.type("torch.cuda.FloatTensor")` is left alone
                return _Step(call, "cast", dtype=dtype, dtype_name=self._dtype_name(dtype))
        return None

    @staticmethod
    def _view_keeps_dtype(call: cst.Call, method: str) -> bool:
        if method != "view" or len(call.args) != 1 or call.args[0].star:
            return True
        value = call.args[0].value
        if isinstance(value, cst.UnaryOperation):
            value = value.expression
        return isinstance(value, (cst.Integer, cst.Tuple, cst.List, cst.Call, cst.Subscript))

    def _cuda_step(self, call: cst.Call, is_module: bool) -> Optional[_Step]:
        device: Optional[cst.BaseExpression] = None
        positional = 0
        for arg in call.args:
            if arg.star:
                return None
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword is None:
                positional += 1
                if positional == 1:
                    device = arg.value
                elif positional > (1 if is_module else 2):
                    return None
            elif keyword == "device":
                device = arg.value
            elif keyword != "non_blocking":
                return None
        if device is None or literal_none(device):
            return _Step(call, "move", device=cst.SimpleString('"cuda"'))
        if isinstance(device, cst.Integer):
            return _Step(call, "move", device=cst.SimpleString(f'"cuda:{device.evaluated_value}"'))
        text = _string_value(device)
        if text is not None:
            return _Step(call, "move", device=device) if text.startswith("cuda") else None
        safe = isinstance(device, cst.Call) and self.names.call_name(device) in (
            {"torch.device"} | INDEX_RETURNING
        )
        return _Step(call, "move", device=device, device_safe=safe)

    def _to_step(self, call: cst.Call) -> Optional[_Step]:
        positional: List[cst.BaseExpression] = []
        device: Optional[cst.BaseExpression] = None
        dtype: Optional[cst.BaseExpression] = None
        for arg in call.args:
            if arg.star:
                return None
            if arg.keyword is None:
                positional.append(arg.value)
            elif arg.keyword.value == "device":
                device = arg.value
            elif arg.keyword.value == "dtype":
                dtype = arg.value
            elif arg.keyword.value != "non_blocking":
                return None  # copy=, memory_format=: not a plain move
        found: Optional[Device] = None
        if device is not None:
            if positional:
                return None
            found = self._device(device) or Device(DeviceKind.UNKNOWN, device)
        elif positional:
            first = positional[0]
            found = self._device(first)
            if found is not None:
                device = first
                if len(positional) >= 2:
                    if dtype is not None or len(positional) > 3:
                        return None
                    dtype = positional[1]  # `.to(device, dtype[, non_blocking])`
            elif self._is_dtype(first):
                if dtype is not None or len(positional) > 2:
                    return None
                dtype = first  # `.to(dtype[, non_blocking])`
            else:
                if dtype is not None or len(positional) > 2:
                    return None
                return self._tensor_target_step(call, first)  # `.to(other[, non_blocking])`
        if device is None:
            if dtype is None:
                return None
            return _Step(call, "cast", dtype=dtype, dtype_name=self._dtype_name(dtype))
        assert found is not None
        return _Step(
            call,
            "move",
            device=device,
            to_cpu=found.is_cpu,
            dtype=dtype,
            dtype_name=self._dtype_name(dtype) if dtype is not None else None,
        )

    def _tensor_target_step(self, call: cst.Call, target: cst.BaseExpression) -> Optional[_Step]:
        """``.to(other)`` / ``.type_as(other)``: a move to ``other``'s device and
        a cast to its dtype, when ``other`` is a name whose device is known."""
        if not isinstance(target, cst.Name):
            return None
        device = self.facts.values.tensor_device(target)
        if device is None:
            return None
        return _Step(
            call,
            "move",
            device=cst.Attribute(value=target, attr=cst.Name("device")),
            to_cpu=device.is_cpu,
            dtype=cst.Attribute(value=target, attr=cst.Name("dtype")),
        )

    # -- what an expression is --------------------------------------------

    def _device_pattern(self) -> "re.Pattern[str]":
        if self._pattern is None:
            self._pattern = re.compile(str(self.option("device-pattern")))
        return self._pattern

    def _device(self, expr: cst.BaseExpression) -> Optional[Device]:
        """The device ``expr`` certainly is (names matching ``device-pattern``
        count as devices)."""
        return self.facts.values.device_of(expr, self._device_pattern())

    def _is_dtype(self, expr: cst.BaseExpression) -> bool:
        if self.facts.values.is_dtype(expr):
            return True
        return isinstance(expr, cst.Name) and bool(_DTYPE_NAME.match(expr.value))

    def _dtype_name(self, expr: cst.BaseExpression) -> Optional[str]:
        return self.facts.values.dtype_name(expr)

    # -- judging the chain and building the fix -------------------------

    # -- the project's own modules (the `user-modules` option) ----------------

    def _user_module(self, node: cst.Call) -> None:
        """``Net(...).to(device)`` or ``.cuda()``, ``Net`` a module class of
        the project (not a loss): built on the CPU, then copied."""
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "cuda"):
            return
        built = func.value
        if not isinstance(built, cst.Call) or not self._project_module(built):
            return
        step = self._cuda_step(node, True) if func.attr.value == "cuda" else self._to_step(node)
        if step is None or step.kind != "move" or step.to_cpu or step.dtype is not None or step.device is None:
            return
        module = self.context.module
        device_code = module.code_for_node(step.device)
        class_code = module.code_for_node(built.func)
        self.report(
            node,
            f"`{class_code}(...)` is built on the CPU and then moved to the device; build it there "
            f"under `with torch.device({device_code}):`",
            fix=self._under_device(node, built, step.device),
            hint="Every parameter is initialised on the CPU and then copied; `torch.device` as a context "
                 "manager (torch >= 2.0) makes the factories inside `__init__` create them on the device",
        )

    def _project_module(self, call: cst.Call) -> bool:
        """A class of this file or of the project that derives from
        ``nn.Module`` and from no loss class (a parameter-free loss costs
        nothing to move)."""
        func = call.func
        if isinstance(func, cst.Name):
            bindings = self.facts.scopes.resolve(func)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS:
                node = bindings[0].node
                if not isinstance(node, cst.ClassDef) or not self.facts.values.is_model_class(node):
                    return False
                return not any(_loss(self.names.qualified_name(base.value)) for base in node.bases)
        summaries = self.facts.project.summaries
        qualified = self.facts.instances.absolute_name(func)
        if summaries is None or qualified is None:
            return False
        seen: Set[str] = set()
        pending = [summaries.canonical(qualified)]
        module_base = False
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            if _loss(name):
                return False
            if name == "torch.nn.Module":
                module_base = True
            pending.extend(summaries.bases.get(name, ()))
        return module_base and summaries.canonical(qualified) in summaries.bases

    def _under_device(self, node: cst.Call, built: cst.Call, device: cst.BaseExpression) -> Optional[FixRequest]:
        """``x = Net(...).to(d)`` on a line of its own becomes ``with
        torch.device(d):`` around ``x = Net(...)`` (torch >= 2.0)."""
        if self.context.torch_version < TorchVersion(2, 0):
            return None
        parents = self.facts.parents
        assign = parents.get(node)
        line = parents.get(assign) if assign is not None else None
        if not (isinstance(assign, cst.Assign) and assign.value is node and isinstance(line, cst.SimpleStatementLine)
                and len(line.body) == 1 and isinstance(parents.get(line), (cst.IndentedBlock, cst.Module))):
            return None
        spelling = spell(self.names, "torch.device")
        if spelling is None:
            return None
        inner = line.with_changes(body=[assign.with_changes(value=built)], leading_lines=[])
        block = cst.With(
            items=[cst.WithItem(item=cst.Call(func=spelling.expression, args=[cst.Arg(value=device)]))],
            body=cst.IndentedBlock(body=[inner]),
            leading_lines=line.leading_lines,
        )
        if comments(block) != comments(line):
            return None
        return FixRequest((Replacement(line, block),), Applicability.UNSAFE,
                          "Build it under `with torch.device(...)`", spelling.imports)

    def _container_layers(self, call: cst.Call, depth: int) -> Optional[List[cst.Call]]:
        """The layers with parameters of ``nn.Sequential(...)``, each one the
        fix can give ``device=`` (nested ``Sequential`` containers included);
        None when some element is anything else (a project's module, a
        variable, an unpacking, a layer given a device or weights already)."""
        if depth > 4 or not call.args:
            return None
        found: List[cst.Call] = []
        for arg in call.args:
            layer = arg.value
            if arg.keyword is not None or arg.star or not isinstance(layer, cst.Call):
                return None
            built = self.facts.composition.layer(layer, follow_names=False)
            qualified = built.qualified if built is not None and built.wrapped is None else None
            if qualified == _SEQUENTIAL:
                inner = self._container_layers(layer, depth + 1)
                if inner is None:
                    return None
                found += inner
                continue
            if qualified is None or not qualified.startswith("torch.nn."):
                return None
            if qualified[len("torch.nn."):] in _STATELESS and not any(a.star for a in layer.args):
                continue
            if not self._is_creator(qualified):
                return None
            arguments = bind(layer, apidata.signature(qualified), self.context.torch_version)
            if any(arguments.may_be_present(word) for word in _NO_REPORT_KEYWORDS["module"]):
                return None
            if any(arguments.may_be_present(word) for word in ("device", "dtype")):
                return None
            found.append(layer)
        return found

    def _check_container(self, top: cst.Call, chain: _Chain) -> None:
        """``nn.Sequential(nn.Linear(a, b), nn.Tanh()).to(device)``: each
        layer's parameters are built on the CPU and copied; ``device=`` on
        every layer with parameters builds them there."""
        if any(step.kind not in ("move", "pass") or step.dtype is not None for step in chain.steps):
            return  # a cast on the way: left to the layers' own reports
        final = [step for step in chain.steps if step.kind == "move"][-1]
        if final.to_cpu or final.device is None:
            return
        layers = self._container_layers(chain.base, 0) or []
        module = self.context.module
        func_code = module.code_for_node(chain.base.func)
        device_code = module.code_for_node(final.device)
        message = (
            f"`{func_code}(...)` of layers is built on the CPU and then moved to the device; "
            "build its layers there with `device=`"
        )
        targets = {id(layer) for layer in layers}
        device = final.device

        class _AddDevice(cst.CSTTransformer):
            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
                return set_keyword(updated, "device", device) if id(original) in targets else updated

        visited = chain.base.visit(_AddDevice())
        if not isinstance(visited, cst.Call):
            return
        new: cst.BaseExpression = visited
        for step in chain.steps:
            if step.kind == "pass" and isinstance(step.call, cst.Call) and isinstance(step.call.func, cst.Attribute):
                new = step.call.with_changes(func=step.call.func.with_changes(value=new))
        if isinstance(new, cst.Call) and top.lpar:
            new = new.with_changes(lpar=top.lpar, rpar=top.rpar)
        safe = all(step.device_safe for step in chain.steps if step.kind == "move") and all(
            (self.names.call_name(layer) or "")[len("torch.nn."):] in _CONSTANT_INIT_MODULES for layer in layers
        )
        hint = f"Pass `device={device_code}` to each layer with parameters and drop the move"
        fix = None
        if comments(new) == comments(top):
            fix = self.replace(top, new, Applicability.SAFE if safe else Applicability.UNSAFE,
                               f"Pass `device={device_code}` to the layers and drop the copy")
        self.report(top, message, fix=fix, hint=hint)

    def _check(self, top: cst.Call, chain: _Chain) -> None:
        base = chain.base
        if chain.qualified == _SEQUENTIAL:
            self._check_container(top, chain)
            return
        if chain.qualified in LEGACY_CONSTRUCTORS:
            if not self._legacy_reportable(base):
                return
            arguments = bind(base, apidata.signature("torch.empty"), self.context.torch_version)
        else:
            kind = "module" if chain.is_module else "factory"
            arguments = bind(base, apidata.signature(chain.qualified), self.context.torch_version)
            if any(arguments.may_be_present(word) for word in _NO_REPORT_KEYWORDS[kind]):
                return
            for word in ("device", "dtype"):
                # Passed by position, or maybe passed (an unpacking, a position
                # whose meaning changed between releases): the fix cannot add it.
                if arguments.positional(word) or (
                    arguments.may_be_present(word) and arguments.argument(word) is None
                ):
                    return
        moves = [step for step in chain.steps if step.kind == "move"]
        final = moves[-1]
        if final.to_cpu:
            return
        assert final.device is not None
        module = self.context.module
        device_code = module.code_for_node(final.device)
        existing = arguments.argument("device")
        if existing is not None:
            # Only an explicit CPU is a certain copy.  Another device may be
            # the target already; random numbers drawn on the CPU on purpose
            # (a CPU-seeded stream shared by all ranks) must stay there.
            current = self._device(existing.value)
            if current is None or not current.is_cpu or self._is_random(chain):
                return

        given_input = arguments.argument("input") if chain.qualified.endswith("_like") else None
        like_input = given_input.value if given_input is not None else None
        if existing is None and like_input is not None:
            source = self.facts.values.tensor_device(like_input)
            if source is None or not source.is_cpu:
                # `zeros_like(x)` is made on `x`'s device, most often the one
                # it is then moved to: no copy unless `x` is known to be on the CPU.
                return

        func_code = module.code_for_node(base.func)
        if existing is not None:
            where = f"with `device={module.code_for_node(existing.value)}`"
        elif like_input is not None:
            where = "on its input's device"
        else:
            where = "on the CPU"
        legacy = chain.qualified in LEGACY_CONSTRUCTORS
        if chain.is_module:
            message = (
                f"`{func_code}(...)` is built {where} and then moved to the device; "
                "build it there with `device=`"
            )
        elif legacy:
            message = (
                f"`{func_code}(...)` is created on the CPU and then copied to the device; "
                "create it there with `torch.tensor(...)` or `torch.empty(...)` and `device=`"
            )
        else:
            message = (
                f"`{func_code}(...)` is created {where} and then copied to the device; "
                "create it there with `device=`"
            )
        move_text = f"`.{_method(final.call)}(...)`"
        pin = arguments.argument("pin_memory")
        if pin is not None and literal_bool(pin.value) is not False:
            self.report(
                top,
                message,
                hint="Pinned host memory only helps tensors that stay on the host; "
                f"create this one with `device={device_code}` and drop `pin_memory=`",
            )
            return
        built = self._fixed(top, chain, final)
        if built is None:
            if legacy:
                dtype = LEGACY_CONSTRUCTORS[chain.qualified]
                dtype_code = f"torch.{dtype}" if dtype is not None else "torch.get_default_dtype()"
                hint = (
                    f"Use `torch.tensor(data, dtype={dtype_code}, device={device_code})` if the "
                    f"argument is data, `torch.empty(sizes, dtype={dtype_code}, device={device_code})` "
                    f"if it gives sizes, and drop {move_text}"
                )
            else:
                hint = f"Pass `device={device_code}` to `{func_code}(...)` and drop {move_text}"
            self.report(top, message, hint=hint)
            return
        new_node, keywords, applicability, imports = built
        spelled = ", ".join(f"{key}={module.code_for_node(value)}" for key, value in keywords)
        hint = f"Pass `{spelled}` to `{func_code}(...)` and drop {move_text}"
        if legacy:
            form = self.facts.values.legacy_form(base)
            factory = "torch.tensor" if form is LegacyForm.DATA else "torch.empty"
            hint = f"Call `{factory}(...)` with `{spelled}` instead of `{func_code}(...)` and drop {move_text}"
        self.report(
            top,
            message,
            fix=self.replace(
                top,
                new_node,
                applicability,
                f"Pass `{spelled}` and drop the copy",
                imports=imports,
            ),
            hint=hint,
        )

    def _legacy_reportable(self, base: cst.Call) -> bool:
        """A legacy typed constructor that certainly builds a new CPU tensor:
        no keywords (a `device=` or other keyword is left alone), and not a
        wrapper around a tensor or a storage, which it aliases without copying."""
        if any(arg.keyword is not None for arg in base.args):
            return False
        form = self.facts.values.legacy_form(base)
        if form is LegacyForm.STORAGE:
            return False  # the tensor aliases the storage; the move is the only copy
        if form is LegacyForm.UNKNOWN:
            if any(arg.star for arg in base.args):
                return False
            only = base.args[0].value
            if isinstance(only, cst.Attribute) and only.attr.value == "data":
                return False  # `x.data`: a tensor's data
            if isinstance(only, cst.Call) and _method(only) in _TENSOR_RETURNING:
                return False  # `x.cpu()`: a legacy constructor takes no module, so a tensor
            return self.facts.values.kind(only) is not ValueKind.TENSOR
        return True

    @staticmethod
    def _is_random(chain: _Chain) -> bool:
        if chain.is_module:
            return chain.qualified[len("torch.nn."):] not in _CONSTANT_INIT_MODULES
        return _FACTORIES[chain.qualified] == _RANDOM or any(step.random for step in chain.steps)

    def _fixed(
        self, top: cst.Call, chain: _Chain, final: _Step
    ) -> Optional[
        Tuple[cst.BaseExpression, List[Tuple[str, cst.BaseExpression]], Applicability, Tuple[str, ...]]
    ]:
        base = chain.base
        legacy_imports: Tuple[str, ...] = ()
        if chain.qualified in LEGACY_CONSTRUCTORS:
            replacement = self._legacy_replacement(base, LEGACY_CONSTRUCTORS[chain.qualified])
            if replacement is None:
                return None
            base, behaviour, legacy_imports = replacement
        elif chain.is_module:
            behaviour = _EXACT if chain.qualified[len("torch.nn."):] in _CONSTANT_INIT_MODULES else _RANDOM
        else:
            behaviour = _FACTORIES[chain.qualified]
            if chain.qualified == "torch.arange" and not self._integer_arange(base):
                behaviour = _ROUNDING
        safe = behaviour in (_EXACT, _VALUE)
        requires_grad = keyword_argument(base, "requires_grad")
        if requires_grad is not None and literal_bool(requires_grad.value) is not False:
            safe = False
        if not all(step.device_safe for step in chain.steps if step.kind == "move"):
            safe = False
        last_move = max(i for i, step in enumerate(chain.steps) if step.kind == "move")
        if any(step.random for step in chain.steps[:last_move]):
            safe = False
        if any(step.makes_leaf for step in chain.steps):
            safe = False

        imports: Tuple[str, ...] = ()
        has_dtype = keyword_argument(base, "dtype") is not None
        folded: Optional[cst.BaseExpression] = None
        folded_generated = False
        folds = 0
        blocked = False
        kept: List[Tuple[_Step, Optional[cst.BaseExpression]]] = []  # (step, `.to` dtype to emit)
        for step in chain.steps:
            if step.kind in ("view", "scale", "mask"):
                kept.append((step, None))
                blocked = blocked or not step.keeps_dtype
                continue
            if step.kind in ("pass", "wrap"):
                kept.append((step, None))
                continue
            if step.kind == "fill":
                kept.append((step, None))
                blocked = True
                continue
            if step.kind == "move" and step.dtype is None:
                continue
            # A cast, or a move that also casts.
            dtype_expr = step.dtype
            generated = False
            spelling = None
            if dtype_expr is None and step.dtype_name is not None:
                spelling = spell(self.names, f"torch.{step.dtype_name}")
            if spelling is not None:
                dtype_expr = spelling.expression
                generated = True
            if (
                not blocked
                and dtype_expr is not None
                and self._can_fold(chain.is_module, behaviour, step, folds, has_dtype)
            ):
                folded = dtype_expr
                folded_generated = generated
                imports = spelling.imports if spelling is not None else ()
                folds += 1
                continue
            blocked = True
            if step.kind == "move":
                assert step.dtype is not None
                kept.append((step, step.dtype))
            else:
                kept.append((step, None))
        if folded is None or not folded_generated:
            imports = ()

        assert final.device is not None
        keywords: List[Tuple[str, cst.BaseExpression]] = [("device", final.device)]
        if folded is not None:
            keywords.append(("dtype", folded))
        with_keywords = base
        for keyword, value in keywords:
            with_keywords = set_keyword(with_keywords, keyword, value)
        new: cst.BaseExpression = with_keywords
        for step, to_dtype in kept:
            if to_dtype is not None:
                new = cst.Call(
                    func=cst.Attribute(value=new, attr=cst.Name("to")),
                    args=[cst.Arg(value=to_dtype)],
                )
            elif isinstance(step.call, cst.Subscript):
                new = step.call.with_changes(value=new)
            elif isinstance(step.call, cst.BinaryOperation):
                new = step.call.with_changes(left=new) if step.left else step.call.with_changes(right=new)
            elif step.kind in ("wrap", "mask"):
                first, *rest = step.call.args
                new = step.call.with_changes(args=[first.with_changes(value=new), *rest])
            else:
                func = step.call.func
                assert isinstance(func, cst.Attribute)
                new = step.call.with_changes(func=func.with_changes(value=new))
        if isinstance(new, cst.Call) and (top.lpar or new is not base):
            new = new.with_changes(lpar=top.lpar, rpar=top.rpar)
        if comments(new) != comments(top):
            return None
        applicability = Applicability.SAFE if safe else Applicability.UNSAFE
        return new, keywords, applicability, tuple(dict.fromkeys(legacy_imports + imports))

    def _legacy_replacement(
        self, call: cst.Call, dtype: Optional[str]
    ) -> Optional[Tuple[cst.Call, str, Tuple[str, ...]]]:
        """The factory call a legacy constructor is (the call, its behaviour,
        the imports it needs): ``torch.tensor(data, dtype=...)`` for data,
        ``torch.empty(sizes, dtype=...)`` for sizes; None for the other forms."""
        form = self.facts.values.legacy_form(call)
        if form is LegacyForm.DATA:
            factory, behaviour = "torch.tensor", _VALUE
        elif form is LegacyForm.SIZES:
            factory, behaviour = "torch.empty", _EXACT
        else:
            return None
        func = self._torch_spelling(call, factory)
        if func is None:
            return None
        new = call.with_changes(func=func.expression)
        imports = func.imports
        if dtype is not None:
            dtype_spelling = self._torch_spelling(call, f"torch.{dtype}")
            if dtype_spelling is None:
                return None
            new = set_keyword(new, "dtype", dtype_spelling.expression)
            imports += dtype_spelling.imports
        elif form is LegacyForm.DATA:
            # `torch.Tensor(data)` has the default dtype; `torch.tensor` would infer one.
            default = self._torch_spelling(call, "torch.get_default_dtype")
            if default is None:
                return None
            new = set_keyword(new, "dtype", cst.Call(func=default.expression))
            imports += default.imports
        return new, behaviour, imports

    def _torch_spelling(self, call: cst.Call, qualified: str) -> Optional[Spelling]:
        """``qualified`` (a ``torch.`` name) written through the same module
        reference as ``call``'s callee (``th.FloatTensor`` gives ``th.tensor``)."""
        func = call.func
        if isinstance(func, cst.Attribute) and self.names.qualified_name(func.value) == "torch":
            text = f"{self.context.module.code_for_node(func.value)}.{qualified[len('torch.'):]}"
            return Spelling(dotted_expression(text), text, ())
        return spell(self.names, qualified)

    @staticmethod
    def _can_fold(is_module: bool, behaviour: str, step: _Step, folds: int, has_dtype: bool) -> bool:
        if has_dtype and step.dtype_name is None:
            return False  # an unknown dtype (maybe None) must not replace a given one
        if behaviour == _EXACT and not is_module:
            return True
        if behaviour in (_VALUE, _ROUNDING) or folds:
            return False
        if is_module:
            # `Module.to` accepts only floating-point and complex dtypes.
            return step.dtype_name is None or step.dtype_name in _FLOAT_DTYPES
        return step.dtype_name in _FLOAT_DTYPES  # random factories

    def _integer_arange(self, call: cst.Call) -> bool:
        dtype = keyword_argument(call, "dtype")
        if dtype is not None:
            name = self._dtype_name(dtype.value)
            return name is not None and name.startswith(("int", "uint"))
        return all(self._integer_expr(arg.value) for arg in _positional(call))

    def _integer_expr(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, cst.UnaryOperation):
            return isinstance(expr.operator, cst.Minus) and self._integer_expr(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            return isinstance(
                expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
            ) and self._integer_expr(expr.left) and self._integer_expr(expr.right)
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name) and expr.func.value in ("len", "int"):
                return not self.names.is_bound(expr.func.value)
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("size", "numel", "dim"):
                return bool(expr.args) or expr.func.attr.value != "size"
            return False
        if isinstance(expr, cst.Subscript):
            return isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape"
        return False

