"""TL401 conv-bias-before-batchnorm."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from torchlint.data import apidata
from torchlint.data.apidata import Signature
from torchlint.ruleapi.fixes import add_keyword, bind, bound_argument, replace_argument
from torchlint.analysis.queries import summaries
from torchlint.analysis.scopes import Binding, BindingKind
from torchlint.analysis.composition import Layer, Member, Use, UseKind, list_elements
from torchlint.model import Applicability
from torchlint.analysis.names import dotted
from torchlint.source.tree import literal_constant, walk
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FileContext, FixAvailability, Option, OptionValue, Rule, Severity, TorchRange
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec
from torchlint.analysis.values import literal_bool


@dataclass(frozen=True)
class _Producer:
    """A layer whose bias a following batch norm makes redundant."""

    short: str
    dim: int
    out_keyword: str
    wrapper: Optional[Signature] = None
    """For a project's module class that wraps such a layer (``ConvNorm``):
    its ``__init__``'s parameters, whose ``bias`` it passes on."""
    bias_default: Optional[bool] = True
    """The bias when a call does not pass one (a wrapper's own default; None: not known)."""

    @property
    def signature(self) -> Signature:
        """The constructor's parameters (positions of `bias` and the output size)."""
        return self.wrapper if self.wrapper is not None else apidata.signature(f"torch.nn.{self.short}")


def _wrapper_producer(wrapper: Layer, layer: _Producer) -> Optional[_Producer]:
    """A module class wrapping ``layer`` seen as that layer, when its bias is
    its own ``bias`` parameter passed on as is (then ``Wrapper(..., bias=False)``
    turns the layer's bias off); its default is the wrapper's."""
    if wrapper.flows_into("bias") != "bias":
        return None
    signature = wrapper.signature()
    assert signature is not None
    return _Producer(wrapper.short, layer.dim, wrapper.flows_into(layer.out_keyword) or "", signature,
                     wrapper.default_of("bias"))


@dataclass(frozen=True)
class _Norm:
    """A batch norm; ``dim`` is None when it accepts any rank (SyncBatchNorm)."""

    short: str
    dim: Optional[int]
    has_features: bool


def _producers() -> Dict[str, _Producer]:
    table: Dict[str, _Producer] = {
        "torch.nn.Linear": _Producer("Linear", 1, "out_features"),
        "torch.nn.LazyLinear": _Producer("LazyLinear", 1, "out_features"),
    }
    for dim in (1, 2, 3):
        table[f"torch.nn.Conv{dim}d"] = _Producer(f"Conv{dim}d", dim, "out_channels")
        table[f"torch.nn.LazyConv{dim}d"] = _Producer(f"LazyConv{dim}d", dim, "out_channels")
    return table


def _transposed() -> Dict[str, _Producer]:
    table: Dict[str, _Producer] = {}
    for dim in (1, 2, 3):
        table[f"torch.nn.ConvTranspose{dim}d"] = _Producer(f"ConvTranspose{dim}d", dim, "out_channels")
        table[f"torch.nn.LazyConvTranspose{dim}d"] = _Producer(
            f"LazyConvTranspose{dim}d", dim, "out_channels"
        )
    return table


def _norms() -> Dict[str, _Norm]:
    table: Dict[str, _Norm] = {"torch.nn.SyncBatchNorm": _Norm("SyncBatchNorm", None, True)}
    for dim in (1, 2, 3):
        table[f"torch.nn.BatchNorm{dim}d"] = _Norm(f"BatchNorm{dim}d", dim, True)
        table[f"torch.nn.LazyBatchNorm{dim}d"] = _Norm(f"LazyBatchNorm{dim}d", dim, False)
    return table


_PRODUCERS = _producers()
_TRANSPOSED = _transposed()
_NORMS = _norms()
_SEQUENTIAL = "torch.nn.Sequential"
_BENIGN_ATTRIBUTES = {"weight", "in_channels", "out_channels", "in_features", "out_features",
                      "kernel_size", "stride", "padding", "dilation", "groups"}

_Bias = str  # "default" (no bias argument), "keyword" or "positional" (literal True)


def _argument(call: cst.Call, signature: Signature, name: str) -> Optional[cst.BaseExpression]:
    arg = bound_argument(call, signature, name)
    return arg.value if arg is not None else None


def _bias_state(call: cst.Call, producer: _Producer) -> Optional[_Bias]:
    """How the bias is left on; None when it is off or cannot be known."""
    arguments = bind(call, producer.signature)
    bias = arguments.argument("bias")
    if bias is not None:
        if literal_bool(bias.value) is not True:
            return None
        return "positional" if arguments.positional("bias") else "keyword"
    if arguments.may_be_present("bias") or not call.args or producer.bias_default is not True:
        return None
    return "default"


_Layer = Tuple[str, Union[_Producer, _Norm], cst.Call, Optional[cst.CSTNode]]
"""("producer" or "norm", what it is, the constructor call, its statement if known)."""


@dataclass(frozen=True)
class _Follower:
    """What comes right after one use of a layer variable in a layer stream:
    a batch norm (``norm`` and its call), another layer (``norm`` None), or,
    when ``known`` is False, nothing known (the stream ends there)."""

    known: bool
    norm: Optional[_Norm] = None
    norm_call: Optional[cst.Call] = None


_UNKNOWN = _Follower(False)


class ConvBiasBeforeBatchNorm(Rule):
    """## What it does
    Reports a `Conv1d`/`Conv2d`/`Conv3d` (or a `Linear` feeding a
    `BatchNorm1d`) that keeps its default `bias=True` although its output
    goes straight into a batch norm of the matching kind (`nn.SyncBatchNorm`
    matches every kind: it takes inputs of any rank and subtracts the
    per-channel mean the same way): the next layer of
    an `nn.Sequential(...)` (also one filled by `seq.add_module(name, layer)`
    calls in order), of a layer list (`[...]`, `append`, `+=`,
    `nn.ModuleList([...])`, an `OrderedDict`), or, inside a module class,
    `self.bn(self.conv(x))` and `x = self.conv(x)` directly followed by
    `x = self.bn(x)` (or by an `if`/`elif`/`else` every branch of which
    starts with `x = self.bn(x)` or `return self.bn(x)`).  A linear layer's
    output may be reshaped on the way, `self.bn(self.fc(x).view(-1, 64))`,
    when the view's last size is a known integer equal to the layer's
    `out_features`: each row is then one row of the output, so the norm's
    channels are the layer's features.  An attribute that `__init__`
    assigns in branches no run takes together (`if`/`elif`/`else`) is
    followed branch by branch: each branch's layer with its bias on is
    reported when the norm attribute it feeds holds, in every assignment
    that can run together with that branch, a batch norm of the matching
    kind (`if fast: self.c = FastConv(...); self.bn = ...` `else: self.c =
    nn.Conv2d(...); self.bn = nn.BatchNorm2d(c)` reports the `else` conv; a
    branch building a layer the rule cannot read, or one without a bias,
    leaves the others alone).  Only the pair matters: an activation, dropout, pooling
    or a residual addition in between keeps the report away, and so do
    channel counts known to differ (literals, or names assigned only
    literals).

    Layer lists built in loops count (grown by a list or a tuple): `layers += [conv2d, nn.BatchNorm2d(v),
    nn.ReLU()]`, `layers.append(conv)` then `layers.append(bn)`; a layer variable is followed to the
    one assignment whose value reaches the read, when no other read sees it (`conv2d = nn.Conv2d(...)`
    in each branch of the loop body, each read once in its branch).  A batch
    norm that follows only under a condition is reported with the fix
    `bias=not <test>`: `layers = [nn.Linear(a, b)]` directly followed by
    `if use_bn: layers.append(nn.BatchNorm1d(b))`; an element
    `nn.BatchNorm2d(c) if use_bn else nn.Identity()`; and a layer variable
    (`conv2d = nn.Conv2d(...)`) every read of which sits in a layer list,
    followed by a batch norm in the body of one `if` and by another layer
    in its `else` (the VGG `batch_norm` idiom).  The test must be a name or
    an attribute of one (or `not` of it, giving `bias=<name>`) that keeps
    its value between the layer and the `if` (a parameter, or a name bound once; no assignment to the
    attribute in the function); `elif` chains are not followed.  Layer classes are resolved
    through imports and single assignments (`BN = nn.BatchNorm2d`); a norm
    passed in as a parameter (`norm_layer(c)`), a conv built by a helper
    function, or a conv shared with a branch that has no batch norm is not
    followed.

    A project's module class that wraps one such layer counts as that layer
    (`nn.Sequential(ConvNorm(c, c, 5), nn.BatchNorm1d(c))`, or
    `self.bn(self.conv(x))` with `self.conv = ConvNorm(...)`; `ConvNorm` in
    this file or another module): its `forward` returns the layer's output
    (`return self.conv(x)`), its `__init__` builds the layer once, passing
    its own `bias` parameter on as the layer's `bias`, and no method touches
    the layer's `.bias`.  The wrapper's own default decides: a call that
    leaves `bias` out is reported when that default is `True`, one that
    passes `bias=True` whatever the default; the fix passes `bias=False` to
    the wrapper.  A wrapper whose bias its callers cannot turn off, or whose
    default is not a literal, is left alone.  A subclass of the layer counts
    the same way (`class Conv1d(nn.Conv1d)` whose `__init__` builds it with
    `super().__init__(..., bias=bias)` and whose `forward`, if it has one,
    returns a `torch.nn.functional` call's result or `super().forward(x)`,
    no method setting `self.bias`).

    Layer containers that `__init__` builds count too (`nn.ModuleList()`
    then `.append(layer)`, in loops or not; `nn.ModuleList([layer for
    ...])`; `nn.ModuleDict({...})`), when every call of one container's
    layers goes straight into the other container's batch norm at the same
    index: `self.bns[i](self.fcs[i](h))`,
    `for fc, bn in zip(self.fcs, self.bns): h = bn(fc(h))` (also under
    `enumerate`), `for i, fc in enumerate(self.fcs): h = self.bns[i](fc(h))`,
    `self.norms[k](self.convs[k](x))` for two `ModuleDict`s, and
    `self.layers["bn"](self.layers["conv"](x))` within one.  An entry may
    be given a local name first (`bn = self.bns[i]`, then `bn(conv(x))`,
    where the name is bound once and given before the call in the same
    block), and containers of containers may be paired two indices deep
    (`self.bn_blocks[i][j]` after `self.conv_blocks[i][j]`, each entry an
    `nn.ModuleList([<layer> for ...])`).  A norm that follows only under `if
    self.<flag>:` (no `else`) is reported with the fix `bias=not
    self.<flag>` when `__init__` assigns the flag once, in its own body,
    before it builds the layers (and nothing else assigns it); a flag that
    `forward` receives, or one set after the layers, keeps the report away.
    The same holds for two layer attributes and a conditional expression,
    `out = self.bn(y) if self.with_bn else y` after `y = self.linear(x)`
    (`y` read there only).
    A loop's names must be bound nowhere else in the function.  A `self.fcs[-1](h)` call is allowed when the last entry is
    appended by its own statement, outside loops and branches the others are
    not in; that entry is then not reported.  A container also iterated on
    its own, passed on or changed elsewhere, or read with different indices
    or keys, is not followed.

    ## Why is this bad?
    In training mode batch norm subtracts the per-channel mean of its input
    over the batch.  A per-channel constant added by the layer before it
    moves that mean by exactly the same amount, so it disappears from the
    output, and its gradient is zero up to rounding.  The batch norm's own
    shift (`beta`) already provides the per-channel offset.  The conv bias is
    therefore dead weight: extra parameters, an extra add in every forward
    pass, an extra reduction in every backward pass and optimizer state that
    never learns anything.

    ## Example
    ```python
    block = nn.Sequential(
        nn.Conv2d(64, 128, kernel_size=3, padding=1),
        nn.BatchNorm2d(128),
        nn.ReLU(inplace=True),
    )
    ```

    Use instead:
    ```python
    block = nn.Sequential(
        nn.Conv2d(64, 128, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(128),
        nn.ReLU(inplace=True),
    )
    ```

    ## Fix safety
    The fix passes `bias=False` (or turns `bias=True` into `bias=False`), or
    `bias=not <test>` when the batch norm follows only under `<test>`, and
    is unsafe.  `bias=not <test>` keeps the bias exactly where no batch norm
    follows, and `not` gives the layer a real `bool`.  Training-mode outputs and gradients stay the same up to
    floating-point rounding, but:
    - the module's `state_dict` loses the conv's `bias` entry, so strictly
      loading an existing checkpoint fails with an unexpected key, and an
      optimizer state saved before the change no longer matches;
    - a trained model's batch norm `running_mean` has absorbed the old bias,
      so eval-mode outputs of a model rebuilt without the bias differ until
      the running statistics re-adapt (or until the bias is folded in with
      `bn.running_mean -= conv.bias`);
    - code that touches `conv.bias` (for example `nn.init.zeros_(m.bias)`
      without an `if m.bias is not None` guard) now gets `None`.
    When a module class itself refers to the conv's `.bias`, the rule stays
    quiet.  A frozen batch norm (kept in eval mode while the conv
    trains) does not cancel the bias; the rule cannot see that.

    ## Options
    - `transposed` (default `false`): also report `ConvTranspose1d/2d/3d`
      before a batch norm.  Their bias cancels the same way; they are off by
      default because the source guide speaks of convolutions only.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide, "No brainer code
    tweaks") lists turning off the bias of a convolution that is directly
    followed by a batch norm among the changes that cost nothing.
    """

    code = "TL401"
    name = "conv-bias-before-batchnorm"
    summary = "A convolution or linear layer directly followed by batch norm keeps a bias that the norm cancels"
    fix_availability = FixAvailability.ALWAYS
    severity = Severity.WARNING  # advice: the right call depends on the project
    fix_summary = "unsafe: `bias=False`"
    torch_range = TorchRange(note="the Lazy* modules exist since 1.8")
    options = {
        "transposed": Option(False, "Also report ConvTranspose layers directly followed by batch norm."),
    }
    trigger_words = ("BatchNorm",)
    project_queries = (summaries(),)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """Every norm it knows is a torch ``*BatchNorm*`` class, named somewhere in the file."""
        return facts.imports_torch and facts.mentions_part("BatchNorm")
    valid = (
        """
        from torch import nn
        block = nn.Sequential(nn.Conv2d(3, 16, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        """,
        """
        from torch import nn
        block = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.BatchNorm2d(16))
        """,
    )
    invalid = (
        Example(
            """
            from torch import nn
            block = nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.ReLU())
            """,
            fixed="""
            from torch import nn
            block = nn.Sequential(nn.Conv2d(3, 16, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU())
            """,
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("batchnorm-pairs", "verify_probe.py"),),
        changes_random_draws=True,
        contract=Contract(
            level="close (train mode); eval mode equal to the original replayed with the absorbed bias",
            promise=(
                "In train mode a batch norm subtracts the per-channel batch mean, so the bias of "
                "the convolution before it cancels: with the other weights the same, outputs and "
                "gradients match up to rounding.  In eval mode the fixed model computes what the "
                "original computes with each removed bias scaled to the part of it the running "
                "means have absorbed."
            ),
            checks=(
                (
                    "the fixed outputs lack only the removed biases (their state-dict entries, "
                    "gradients and optimizer state); nothing else is missing or added"
                ),
                (
                    "every train-mode output, gradient, weight, running variance and printed number "
                    "is close, within a rounding error scaled by the optimizer steps taken, the "
                    "working precision (TF32, autocast) and the cancellation measured at each "
                    "batch norm fed by a biased convolution (1 + |mean| / std of its input)"
                ),
                (
                    "each removed bias's gradient in the original is rounding noise next to its "
                    "weight's gradient (proof that the batch norm cancels it)"
                ),
                (
                    "each following batch norm's running mean differs by the part of the old bias "
                    "it absorbed: `bias * (1 - (1 - momentum) ** steps)`"
                ),
                (
                    "each eval-mode call of the model is replayed in the original run on a copy "
                    "whose biases are scaled by that absorbed share; an output returned by such a "
                    "call must be close to the replay, so a difference beyond the unabsorbed bias "
                    "fails"
                ),
                (
                    "an output that differs but cannot be traced to a replayed call (a metric "
                    "computed from eval-mode results) makes the verdict inconclusive, with the "
                    "cause named, provided the trained weights and optimizer state are close"
                ),
                (
                    "a removed bias draws no random numbers at initialisation, so every later draw "
                    "of the fixed program moves: when the program's own random stream gives "
                    "different outputs, both versions run again with each layer's initialisation "
                    "and each loader drawing from a stream of its own; the verdict is then \"random "
                    "stream changed\" (exit status 0) if the checks above hold"
                ),
            ),
            differences=(
                (
                    "Eval-mode outputs differ until the running means have absorbed the old bias, "
                    "or until it is folded in with `bn.running_mean -= conv.bias`."
                ),
                (
                    "The `state_dict` loses the conv's `bias`: strictly loading an old checkpoint "
                    "fails with an unexpected key, and a saved optimizer state no longer matches "
                    "its parameter groups."
                ),
            ),
            speed=(
                "Removes one bias add in forward and one reduction in backward: a few percent at "
                "most, often within noise."
            ),
        ),
    )


    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._reported: Set[int] = set()
        # Layer variables read more than once: what follows each read.
        self._shared: Dict[Binding, Dict[int, Tuple[cst.Name, _Follower]]] = {}

    # -- what an expression is ---------------------------------------------

    def _producer_table(self) -> Dict[str, _Producer]:
        if self.option("transposed"):
            return {**_PRODUCERS, **_TRANSPOSED}
        return _PRODUCERS

    def _single_assignment(self, name: cst.Name) -> Optional[Binding]:
        return self.facts.composition.single_assignment(name)

    def _reads(self, variable: cst.Name) -> int:
        """How often the variable a binding ``variable`` names is read in its
        scope (nested scopes included); 0 when the scope is not known."""
        scopes = self.facts.scopes
        scope = scopes.name_scope(variable)
        owner = scope.owner_of(variable.value) if scope is not None else None
        return len(scopes.references(owner, variable.value)) if owner is not None else 0

    def _read_once(self, variable: cst.Name) -> bool:
        return self._reads(variable) == 1

    def _read_twice(self, variable: cst.Name) -> bool:
        return self._reads(variable) == 2

    def _layer(self, expr: Optional[cst.BaseExpression], follow_names: bool = True) -> Optional[_Layer]:
        """The producer or batch norm ``expr`` builds (the composition fact says
        what layer it is; this rule knows which ones matter)."""
        return self._classify(self.facts.composition.layer(expr, follow_names))

    def _classify(self, layer: Optional[Layer]) -> Optional[_Layer]:
        if layer is None:
            return None
        if layer.wrapped is None:
            producer = self._producer_table().get(layer.qualified)
            if producer is not None:
                return ("producer", producer, layer.call, layer.statement)
            norm = _NORMS.get(layer.qualified)
            return ("norm", norm, layer.call, layer.statement) if norm is not None else None
        inner = self._producer_table().get(layer.layer)
        wrapper = _wrapper_producer(layer, inner) if inner is not None else None
        return ("producer", wrapper, layer.call, layer.statement) if wrapper is not None else None

    # -- pairs -------------------------------------------------------------

    def _check_stream(self, elements: Sequence[Optional[cst.BaseExpression]]) -> None:
        for index, first in enumerate(elements):
            if first is None:
                continue
            second = elements[index + 1] if index + 1 < len(elements) else None
            producer = self._layer(first)
            if producer is None:
                self._note_shared(first, second)
                continue
            if producer[0] != "producer" or second is None:
                continue
            assert isinstance(producer[1], _Producer)
            conditional = self._conditional_norm(second)
            if conditional is not None:
                test, norm_layer = conditional
                assert isinstance(norm_layer[1], _Norm)
                if self._compatible(producer[1], producer[2], norm_layer[1], norm_layer[2]):
                    self._report(producer[1], producer[2], norm_layer[1], producer[3], test)
                continue
            norm = self._layer(second)
            if norm is None or norm[0] != "norm":
                continue
            assert isinstance(norm[1], _Norm)
            if self._compatible(producer[1], producer[2], norm[1], norm[2]):
                self._report(producer[1], producer[2], norm[1], producer[3])

    def _conditional_norm(self, expr: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, _Layer]]:
        """``nn.BatchNorm2d(c) if use_bn else nn.Identity()``: the test and the norm,
        when the other side is a layer that is no batch norm."""
        if not isinstance(expr, cst.IfExp):
            return None
        norm = self._layer(expr.body, follow_names=False)
        other = expr.orelse
        if norm is None or norm[0] != "norm" or not isinstance(other, cst.Call):
            return None
        if self._layer(other, follow_names=False) is not None or self.names.call_name(other) is None:
            return None
        if not self._stable_test(expr.test):
            return None
        return expr.test, norm

    # -- a layer variable shared by branches: `bias=not use_bn` ---------------

    def _note_shared(self, first: cst.BaseExpression, second: Optional[cst.BaseExpression]) -> None:
        """Record what follows this read of a layer variable that is read more than once."""
        if not isinstance(first, cst.Name):
            return
        binding = self._single_assignment(first)
        if binding is None or self._layer(binding.value, follow_names=False) is None:
            return
        follower = _UNKNOWN
        if second is not None:
            norm = self._layer(second)
            if norm is not None and norm[0] == "norm":
                assert isinstance(norm[1], _Norm)
                follower = _Follower(True, norm[1], norm[2])
            elif isinstance(second, cst.Call) and self.names.call_name(second) is not None:
                follower = _Follower(True)
        reads = self._shared.setdefault(binding, {})
        previous = reads.get(id(first))
        if previous is None or not previous[1].known:
            reads[id(first)] = (first, follower)

    def leave_Module(self, original_node: cst.Module) -> None:
        for binding, reads in self._shared.items():
            self._check_shared(binding, reads)

    def _check_shared(self, binding: Binding, reads: Dict[int, Tuple[cst.Name, _Follower]]) -> None:
        """A layer variable every read of which sits in a layer stream: report it when a
        batch norm follows every read, or every read in the body of one ``if`` whose
        other branch holds the remaining reads (the fix is then ``bias=not <test>``)."""
        layer = self._layer(binding.value, follow_names=False)
        if layer is None or layer[0] != "producer" or binding.scope is None:
            return
        assert isinstance(layer[1], _Producer)
        producer, call = layer[1], layer[2]
        references = self.facts.scopes.references(binding.scope, binding.name)
        if not references or any(id(ref) not in reads for ref in references):
            return
        followers = [reads[id(ref)][1] for ref in references]
        if not all(follower.known for follower in followers):
            return
        with_norm = [ref for ref, follower in zip(references, followers) if follower.norm is not None]
        without = [ref for ref, follower in zip(references, followers) if follower.norm is None]
        for follower in followers:
            if follower.norm is not None:
                assert follower.norm_call is not None
                if not self._compatible(producer, call, follower.norm, follower.norm_call):
                    return
        norm = next((f.norm for f in followers if f.norm is not None), None)
        if norm is None:
            return
        if not without:
            self._report(producer, call, norm, binding.statement)
            return
        branch = _common_branch(with_norm, without, self.facts.flow.branches)
        if branch is not None and self._stable_test(branch.test):
            self._report(producer, call, norm, binding.statement, branch.test)

    def _stable_test(self, test: cst.BaseExpression) -> bool:
        """A test that has the same value where the layer is built as where it is
        tested: a name (or an attribute of one) bound only as a parameter, or
        bound once, and never assigned as an attribute in the function."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test = test.expression
        if test.lpar:
            return False
        root = test
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or literal_constant(root):
            return False
        bindings = self.facts.scopes.resolve(root)
        if not bindings:
            return False
        if len(bindings) > 1 and any(b.kind is not BindingKind.PARAMETER for b in bindings):
            return False
        if bindings[0].kind not in (BindingKind.PARAMETER, BindingKind.ASSIGN, BindingKind.ANN_ASSIGN,
                                    BindingKind.IMPORT):
            return False
        if isinstance(test, cst.Attribute):
            text = dotted(test)
            scope = self.facts.scopes.name_scope(root)
            if text is None or scope is None or scope.node is None:
                return False
            for node, _ in walk(scope.node):
                target = None
                if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
                    target = node.target
                if target is not None and dotted(target) == text:
                    return False
        return True

    def _compatible(self, producer: _Producer, call: cst.Call, norm: _Norm, norm_call: cst.Call) -> bool:
        """Same rank, and the norm's ``num_features`` is not known to differ from the
        layer's output size (literals, or names bound only to literals)."""
        if norm.dim is not None and norm.dim != producer.dim:
            return False
        if norm.has_features and producer.out_keyword:
            out = _argument(call, producer.signature, producer.out_keyword)
            features = _argument(norm_call, apidata.signature(f"torch.nn.{norm.short}"), "num_features")
            values = self.facts.values
            out_value = values.int_constant(out) if out is not None else None
            feature_value = values.int_constant(features) if features is not None else None
            if out_value is not None and feature_value is not None and out_value != feature_value:
                return False
        return _bias_state(call, producer) is not None

    def _report(
        self,
        producer: _Producer,
        call: cst.Call,
        norm: _Norm,
        statement: Optional[cst.CSTNode],
        test: Optional[cst.BaseExpression] = None,
    ) -> None:
        if id(call) in self._reported:
            return
        state = _bias_state(call, producer)
        if state is None:
            return
        self._reported.add(id(call))
        value: cst.BaseExpression = cst.Name("False")
        when = "directly"
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            value = test.expression.deep_clone()  # `if not first_block:` → `bias=first_block`
            when = f"when `{self.context.module.code_for_node(test)}` is true"
        elif test is not None:
            value = cst.UnaryOperation(operator=cst.Not(), expression=test.deep_clone())
            when = f"when `{self.context.module.code_for_node(test)}` is true"
        value_code = self.context.module.code_for_node(value)
        fix = self.replace(
            call,
            _without_bias(call, producer, state, value),
            Applicability.UNSAFE,
            f"Pass `bias={value_code}` to `{producer.short}`",
        )
        message = (
            f"`{producer.short}` feeds `{norm.short}` {when}, and batch norm cancels its bias; "
            f"pass `bias={value_code}`"
        )
        hint = (
            "Batch norm subtracts the per-channel batch mean, so the bias has no effect "
            "in training; the norm's own shift (beta) provides the offset"
        )
        self.report(call, message, fix=fix, hint=hint, statement=statement)

    # -- nn.Sequential(...), lists, OrderedDict ------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "__init__":
            receiver = node.func.value
            if (
                isinstance(receiver, cst.Call)
                and isinstance(receiver.func, cst.Name)
                and receiver.func.value == "super"
                and self._in_sequential_method()
            ):
                self._check_stream(self.facts.composition.sequence(node))
            return
        if self.names.call_name(node) == _SEQUENTIAL:
            self._check_stream(self.facts.composition.sequence(node))

    def visit_List(self, node: cst.List) -> None:
        if any(isinstance(parent, cst.Decorator) for parent in self.parents):
            return  # @pytest.mark.parametrize("layer", [nn.Conv2d(...), nn.BatchNorm2d(...)])
        self._check_stream(list_elements(node))

    # -- layers.append(conv); layers.append(bn) ------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        self._check_block(node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._check_block(node.body)

    def _check_block(self, body: Sequence[cst.BaseStatement]) -> None:
        target: Optional[str] = None
        stream: List[Optional[cst.BaseExpression]] = []
        sequentials: Set[str] = set()
        for statement in body:
            step = self._builder_step(statement, sequentials)
            if step is None:
                if isinstance(statement, cst.If) and target is not None and stream:
                    self._check_conditional_step(target, stream[-1], statement, sequentials)
                self._check_stream(stream)
                target, stream = None, []
                continue
            name, elements, starts = step
            if starts or name != target:
                self._check_stream(stream)
                stream = []
            target = name
            stream.extend(elements)
        self._check_stream(stream)

    def _check_conditional_step(
        self,
        target: str,
        last: Optional[cst.BaseExpression],
        statement: cst.If,
        sequentials: Set[str],
    ) -> None:
        """``layers = [nn.Linear(a, b)]`` then ``if use_bn: layers.append(nn.BatchNorm1d(b))``:
        the bias is cancelled exactly when the test holds, so the fix is ``bias=not use_bn``."""
        producer = self._layer(last) if last is not None else None
        if producer is None or producer[0] != "producer" or not isinstance(statement.body, cst.IndentedBlock):
            return
        assert isinstance(producer[1], _Producer)
        norm = self._first_added(statement.body.body, target, sequentials)
        if norm is None:
            return
        orelse = statement.orelse
        if isinstance(orelse, cst.If):
            return  # an `elif` chain: the norm's condition is more than one test
        if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
            if self._first_added(orelse.body.body, target, sequentials) is not None:
                return
        if not self._stable_test(statement.test):
            return
        if self._compatible(producer[1], producer[2], norm[1], norm[2]):
            self._report(producer[1], producer[2], norm[1], producer[3], statement.test)

    def _first_added(
        self, body: Sequence[cst.BaseStatement], target: str, sequentials: Set[str]
    ) -> Optional[Tuple[str, _Norm, cst.Call, Optional[cst.CSTNode]]]:
        """The batch norm a block adds first to ``target``, if its first statement does."""
        if not body:
            return None
        step = self._builder_step(body[0], set(sequentials))
        if step is None or step[0] != target or step[2] or not step[1] or step[1][0] is None:
            return None
        norm = self._layer(step[1][0])
        if norm is None or norm[0] != "norm":
            return None
        assert isinstance(norm[1], _Norm)
        return (norm[0], norm[1], norm[2], norm[3])

    def _builder_step(
        self, statement: cst.BaseStatement, sequentials: Set[str]
    ) -> Optional[Tuple[str, List[Optional[cst.BaseExpression]], bool]]:
        """(list or Sequential spelled as text, the layers it gains, whether it starts anew)."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        small = statement.body[0]
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            if isinstance(small, cst.Assign):
                if len(small.targets) != 1:
                    return None
                target_expr: cst.BaseExpression = small.targets[0].target
            else:
                target_expr = small.target
            name = dotted(target_expr)
            value = small.value
            if name is None or value is None:
                return None
            if isinstance(value, cst.List):
                return name, list_elements(value), True
            if isinstance(value, cst.Call) and self.names.call_name(value) == _SEQUENTIAL:
                sequentials.add(name)
                return name, self.facts.composition.sequence(value), True
            return None
        if isinstance(small, cst.AugAssign):
            name = dotted(small.target)
            if name is not None and isinstance(small.operator, cst.AddAssign):
                if isinstance(small.value, (cst.List, cst.Tuple)):  # `layers += (conv2d, nn.BatchNorm2d(v))` too
                    return name, list_elements(small.value), False
            return None
        if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
            return None
        call = small.value
        if not isinstance(call.func, cst.Attribute):
            return None
        name = dotted(call.func.value)
        method = call.func.attr.value
        args = call.args
        if name is None or any(arg.star or arg.keyword is not None for arg in args):
            return None
        if method == "append" and len(args) == 1:
            return name, [args[0].value], False
        if method == "extend" and len(args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple)):
            return name, list_elements(args[0].value), False
        if method == "add_module" and len(args) == 2:
            if name in sequentials or (name == "self" and self._in_sequential_method()):
                return name, [args[1].value], False
        return None

    def _in_sequential_method(self) -> bool:
        """Whether the code being visited is in a method of an ``nn.Sequential`` subclass."""
        parents = self.parents
        for index in range(len(parents) - 1, -1, -1):
            if isinstance(parents[index], cst.FunctionDef):
                if index >= 2 and isinstance(parents[index - 2], cst.ClassDef):
                    owner = parents[index - 2]
                    assert isinstance(owner, cst.ClassDef)
                    return any(
                        self.names.qualified_name(base.value) == _SEQUENTIAL for base in owner.bases
                    )
                return False
        return False

    # -- self.bn(self.conv(x)) in a module class ------------------------------

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        members = self.facts.composition.members(original_node)
        for member in members.values():
            producers = self._member_producers(member)
            if not producers:
                continue
            tests: List[cst.BaseExpression] = []
            norms = self._flows(member.uses, [(p[1], p[2]) for p in producers], tests)
            if not norms:
                continue
            test = self._class_test(tests, members, producers, original_node)
            if tests and test is None:
                continue  # a condition that cannot be moved to the constructor
            for producer in producers:  # each branch's layer on its own
                kind = self._norm_after(producer, norms, members)
                if kind is not None:
                    assert isinstance(producer[1], _Producer)
                    self._report(producer[1], producer[2], kind, producer[3], test)
        self._paired_lists(members, original_node)
        self._keyed_layers(members)

    def _member_producers(self, member: Member) -> List[_Layer]:
        """The layers a ``self`` attribute holds: its one assignment, or, when
        it is assigned in branches no run takes together (``if``/``elif``/
        ``else`` in ``__init__``), every one of them, each a producer."""
        if member.value is not None:
            producer = self._layer(member.value, follow_names=False)
            if producer is None or producer[0] != "producer":
                return []
            return [("producer", producer[1], producer[2], member.statement)]
        entries = self._exclusive_entries(member)
        if entries is None:
            return []
        found: List[_Layer] = []
        for value, statement in entries:
            producer = self._layer(value, follow_names=False)
            if producer is not None and producer[0] == "producer":
                found.append(("producer", producer[1], producer[2], statement))
        return found

    def _exclusive_entries(self, member: Member) -> Optional[List[Tuple[cst.BaseExpression, cst.CSTNode]]]:
        """The assignments of an attribute that ``__init__`` makes in branches
        no run takes together, each a plain one; None otherwise.  Each stands
        alone: a branch that builds a layer the rule cannot read (a project's
        own ``Conv2d`` subclass) does not hide what another branch builds."""
        entries = member.entries
        if len(entries) < 2:
            return None
        plain: List[Tuple[cst.BaseExpression, cst.CSTNode]] = []
        for value, statement in entries:
            if value is None or statement is None:
                return None
            plain.append((value, statement))
        flow = self.facts.flow
        for index, (_, first) in enumerate(plain):
            for _, second in plain[index + 1:]:
                if not flow.exclusive(first, second):
                    return None
        return plain

    def _norm_after(self, producer: _Layer, norms: Sequence[str], members: Mapping[str, Member]) -> Optional[_Norm]:
        """The batch norm the producer's output goes into: every attribute it
        flows into holds, in each assignment that can run together with the
        producer's own, a batch norm compatible with it (the ``else`` branch's
        ``nn.BatchNorm2d`` for the ``else`` branch's ``nn.Conv2d``); None when
        any of them holds something else or nothing is known."""
        found: Optional[_Norm] = None
        flow = self.facts.flow
        built = producer[3]
        for norm_attr in norms:
            norm_member = members.get(norm_attr)
            if norm_member is None:
                return None
            if norm_member.value is not None:
                values: List[cst.BaseExpression] = [norm_member.value]
            else:
                entries = self._exclusive_entries(norm_member)
                if entries is None or built is None:
                    return None
                values = [value for value, statement in entries if not flow.exclusive(statement, built)]
            if not values:
                return None
            for value in values:
                norm = self._layer(value, follow_names=False)
                if norm is None or norm[0] != "norm":
                    return None
                assert isinstance(norm[1], _Norm) and isinstance(producer[1], _Producer)
                if not self._compatible(producer[1], producer[2], norm[1], norm[2]):
                    return None
                found = norm[1]
        return found

    def _paired_lists(self, members: Mapping[str, Member], node: cst.ClassDef) -> None:
        """``self.bns[i](self.fcs[i](h))`` and ``for fc, bn in zip(self.fcs,
        self.bns): h = bn(fc(h))``: two layer containers that ``__init__``
        builds, every call of one's layers going straight into the other's
        layer at the same index (a ``[-1]`` call reads only the entry known to
        be appended last, which is then left alone).  An entry may be read
        through a local name (``bn = self.bns[i]``), two levels deep when
        both containers hold containers (``self.convs[i][j]``), and the norm
        may follow under ``if self.<flag>:`` only (the fix is then ``bias=not self.<flag>``)."""
        lists: Dict[str, List[Optional[_Layer]]] = {}
        for name, member in members.items():
            if member.elements is None or not member.elements:
                continue
            if any(use.kind not in _LIST_USES for use in member.uses):
                continue  # iterated, passed on, changed: what its layers meet is not known
            depths = {use.depth for use in member.uses
                      if use.kind in (UseKind.INDEXED_CALL, UseKind.INDEXED_ALIAS)}
            if depths == {2}:
                if any(use.kind in (UseKind.ZIP, UseKind.ENUMERATE) for use in member.uses):
                    continue
                inner = [element.inner for element in member.elements]
                if any(entries is None for entries in inner):
                    continue
                lists[name] = [self._classify(entry.layer) for entries in inner if entries is not None
                               for entry in entries]
            elif depths <= {1}:
                lists[name] = [self._classify(element.layer) for element in member.elements]
        aliases = self._aliases(members)
        for name, layers in lists.items():
            member = members[name]
            elements = member.elements
            assert elements is not None
            targets: Set[Optional[str]] = set()
            tests: List[cst.BaseExpression] = []
            skip_last = False
            for use in member.uses:
                if use.kind is UseKind.INDEXED_CALL:
                    if use.index == "-1" and use.depth == 1 and elements[-1].last:
                        skip_last = True
                        continue
                    targets.add(self._indexed_target(use, aliases, tests))
                elif use.kind is UseKind.INDEXED_ALIAS:
                    targets.add(self._alias_target(use, aliases, tests))
                elif use.kind is UseKind.ZIP:
                    partners = {variable: attr for attr, variable in use.partners}
                    targets.add(self._loop_target(
                        use, partners, lambda func: partners.get(func.value) if isinstance(func, cst.Name) else None))
                elif use.kind is UseKind.ENUMERATE:
                    assert use.index is not None and isinstance(use.node.value, cst.Name)
                    targets.add(self._loop_target(use, {use.index: ""}, functools.partial(
                        self._entry_of, receiver=use.node.value.value, index=use.index, aliases=aliases),
                        tests))
            norm_attr = targets.pop() if len(targets) == 1 else None
            norms = lists.get(norm_attr) if norm_attr is not None else None
            if not norms or any(norm is None or norm[0] != "norm" for norm in norms):
                continue
            test = self._class_test(tests, members, layers, node)
            if tests and test is None:
                continue
            paired = layers[:-1] if skip_last else layers
            if not paired or any(layer is None or layer[0] != "producer" for layer in paired):
                continue
            for producer in paired:
                assert producer is not None and isinstance(producer[1], _Producer)
                kinds = []
                for norm in norms:
                    assert norm is not None and isinstance(norm[1], _Norm)
                    if self._compatible(producer[1], producer[2], norm[1], norm[2]):
                        kinds.append(norm[1])
                if len(kinds) == len(norms):
                    self._report(producer[1], producer[2], kinds[0], producer[3], test)

    def _class_test(self, tests: Sequence[cst.BaseExpression], members: Mapping[str, Member],
                    layers: Sequence[Optional[_Layer]], node: cst.ClassDef) -> Optional[cst.BaseExpression]:
        """The one test under which the norm follows, when it can be moved to the
        layers' constructors: ``self.<flag>`` (or ``not self.<flag>``) in every
        use, the attribute assigned once, by a statement of ``__init__``'s own
        body (no branch, no loop) written before every layer is built."""
        if not tests:
            return None
        code = self.context.module.code_for_node
        texts = {code(test) for test in tests}
        if len(texts) != 1:
            return None
        test = tests[0]
        attribute = test.expression if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) \
            else test
        if not isinstance(attribute, cst.Attribute) or not isinstance(attribute.value, cst.Name) or attribute.lpar:
            return None
        member = members.get(attribute.attr.value)
        if member is None or member.value is None or len(member.entries) != 1 or member.statement is None:
            return None
        init = next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
                    None)
        if init is None or not isinstance(init.body, cst.IndentedBlock) \
                or not any(statement is member.statement for statement in init.body.body):
            return None
        positions = self.facts.positions
        assigned = positions[member.statement].end.line
        end = positions[init].end.line
        for layer in layers:
            if layer is None or not assigned < positions[layer[2]].start.line <= end:
                return None
        return test

    def _aliases(self, members: Mapping[str, Member]) -> "Dict[int, _Alias]":
        """The local names given one entry of a layer container
        (``bn = self.bns[i]``), by their assignment; only where the
        index's names are bound once in the function (the index the entry
        was read with is the one they hold later)."""
        found: Dict[int, _Alias] = {}
        scopes = self.facts.scopes
        for name, member in members.items():
            for use in member.uses:
                if use.kind is not UseKind.INDEXED_ALIAS:
                    continue
                subscript: Optional[cst.CSTNode] = use.parent_of.get(id(use.node))
                while isinstance(subscript, cst.Subscript) and isinstance(use.parent_of.get(id(subscript)), cst.Subscript):
                    subscript = use.parent_of.get(id(subscript))
                assign = use.parent_of.get(id(subscript)) if subscript is not None else None
                statement = use.parent_of.get(id(assign)) if assign is not None else None
                if not isinstance(assign, cst.Assign) or not isinstance(statement, cst.SimpleStatementLine) \
                        or not isinstance(assign.targets[0].target, cst.Name):
                    continue
                target = assign.targets[0].target
                if len(scopes.resolve(target)) != 1:
                    continue
                stable = all(len(scopes.resolve(n)) == 1 for n, _ in walk(assign.value)
                             if isinstance(n, cst.Name) and n is not use.node.value
                             and not isinstance(use.parent_of.get(id(n)), cst.Attribute))
                if stable:
                    found[id(assign)] = _Alias(name, use, statement, target)
        return found

    def _entry_of(self, func: cst.BaseExpression, receiver: str, index: str,
                  aliases: "Mapping[int, _Alias]") -> Optional[str]:
        """``B`` when ``func`` is ``self.B[<index>]`` (the same index text, ``i][j``
        two levels deep), or a local name given that entry (``bn = self.B[i]``)
        by a statement that runs before ``func``'s in the same block."""
        if isinstance(func, cst.Name):
            bindings = self.facts.scopes.resolve(func)
            alias = aliases.get(id(bindings[0].node)) if len(bindings) == 1 else None
            if alias is None or alias.use.index != index or not _runs_before(alias.statement, func, alias.use.parent_of):
                return None
            return alias.attribute
        levels: List[str] = []
        code = self.context.module.code_for_node
        while isinstance(func, cst.Subscript) and len(levels) < 2:
            levels.insert(0, "".join(code(e) for e in func.slice))
            func = func.value
        if "][".join(levels) != index:
            return None
        return _self_attribute(func, receiver)

    def _indexed_target(self, use: Use, aliases: "Mapping[int, _Alias]",
                        tests: Optional[List[cst.BaseExpression]] = None) -> Optional[str]:
        """``B`` when the call ``self.A[i](...)`` goes straight into ``self.B[i]``."""
        assert use.call is not None and use.index is not None and isinstance(use.node.value, cst.Name)
        receiver = use.node.value.value
        return _flow_target(use.call, receiver, use.parent_of, self._read_once,
                            functools.partial(self._entry_of, receiver=receiver, index=use.index, aliases=aliases),
                            tests=tests)

    def _alias_target(self, use: Use, aliases: "Mapping[int, _Alias]",
                      tests: List[cst.BaseExpression]) -> Optional[str]:
        """``B`` when every call of the local name ``a = self.A[i]`` goes straight into ``self.B[i]``."""
        assert use.variable is not None and use.index is not None and isinstance(use.node.value, cst.Name)
        alias = next((a for a in aliases.values() if a.use is use), None)
        if alias is None:
            return None
        receiver = use.node.value.value
        scopes = self.facts.scopes
        scope = scopes.name_scope(alias.target)
        references = scopes.references(scope, use.variable) if scope is not None else ()
        found: Set[Optional[str]] = set()
        for reference in references:
            parent = use.parent_of.get(id(reference))
            if not isinstance(parent, cst.Call) or parent.func is not reference \
                    or not _runs_before(alias.statement, reference, use.parent_of):
                return None
            found.add(_flow_target(parent, receiver, use.parent_of, self._read_once, functools.partial(
                self._entry_of, receiver=receiver, index=use.index, aliases=aliases), tests=tests))
        return found.pop() if len(found) == 1 else None

    def _loop_target(self, use: Use, partners: Mapping[str, str],
                     target_of: Callable[[cst.BaseExpression], Optional[str]],
                     tests: Optional[List[cst.BaseExpression]] = None) -> Optional[str]:
        """``B`` when every read of the loop's name for this list's items is a
        call going straight into the layer ``target_of`` names: ``b`` in ``for
        a, b in zip(self.A, self.B)``, ``self.B[i]`` in ``for i, a in
        enumerate(self.A)``; ``partners`` (the loop's other names) must not be
        rebound in the loop."""
        loop, variable = use.loop, use.variable
        assert loop is not None and variable is not None
        if variable in partners:
            return None
        for name in (variable, *partners):
            bound = _target_name(loop, name)
            if bound is None or len(self.facts.scopes.resolve(bound)) != 1:
                return None  # bound elsewhere in the function too (`i += 1`)
        found: Set[Optional[str]] = set()
        for node, parent in walk(use.method.body):
            if not isinstance(node, cst.Name) or node.value not in (variable, *partners):
                continue
            if isinstance(parent, cst.Attribute) and parent.attr is node:
                continue
            if node is _target_name(loop, node.value):
                continue
            if not _inside(node, loop.body, use.parent_of) or isinstance(parent, (cst.AssignTarget, cst.For)):
                if node.value == variable or isinstance(parent, (cst.AssignTarget, cst.For)):
                    return None  # read after the loop, or rebound
                continue
            if node.value != variable:
                continue
            if not (isinstance(parent, cst.Call) and parent.func is node):
                return None
            found.add(_flow_target(parent, "", use.parent_of, self._read_once, target_of, tests=tests))
        return found.pop() if len(found) == 1 else None

    def _keyed_layers(self, members: Mapping[str, Member]) -> None:
        """``self.layers = nn.ModuleDict({"conv": ..., "bn": ...})`` and
        ``self.layers["bn"](self.layers["conv"](x))``: an entry every call of
        which goes straight into the same container's batch norm entry."""
        for name, member in members.items():
            elements = member.elements
            if not elements or any(element.key is None for element in elements):
                continue
            if any(use.kind not in (UseKind.INDEXED_CALL, UseKind.LEN) for use in member.uses):
                continue
            by_key = {element.key: element for element in elements}
            calls: Dict[str, List[Use]] = {}
            known = True
            for use in member.uses:
                if use.kind is UseKind.INDEXED_CALL:
                    key = _string_key(use.index)
                    if key is None or key not in by_key:
                        known = False
                        break
                    calls.setdefault(key, []).append(use)
            if not known:
                continue
            for key, uses in calls.items():
                producer = self._classify(by_key[key].layer)
                if producer is None or producer[0] != "producer":
                    continue
                assert isinstance(producer[1], _Producer)
                followers = {self._indexed_key_target(use, name) for use in uses}
                follower = followers.pop() if len(followers) == 1 else None
                norm = self._classify(by_key[follower].layer) if follower in by_key else None
                if norm is None or norm[0] != "norm":
                    continue
                assert isinstance(norm[1], _Norm)
                if self._compatible(producer[1], producer[2], norm[1], norm[2]):
                    self._report(producer[1], producer[2], norm[1], None)

    def _indexed_key_target(self, use: Use, attr: str) -> Optional[str]:
        """The key ``k`` when the call ``self.D["a"](...)`` goes straight into ``self.D["k"]``."""
        assert use.call is not None and isinstance(use.node.value, cst.Name)
        receiver = use.node.value.value
        code = self.context.module.code_for_node

        def key_of(func: cst.BaseExpression) -> Optional[str]:
            if isinstance(func, cst.Subscript) and _self_attribute(func.value, receiver) == attr:
                return _string_key("".join(code(e) for e in func.slice))
            return None

        return _flow_target(use.call, receiver, use.parent_of, self._read_once, key_of)

    def _flows(self, uses: Sequence[Use], producers: Sequence[Tuple[Union[_Producer, _Norm], cst.Call]],
               tests: Optional[List[cst.BaseExpression]] = None) -> List[str]:
        """The norm attributes every use of a layer attribute feeds; [] if some use does not.
        With ``tests``, a norm applied under a condition counts (its test is added)."""
        targets: List[str] = []
        for use in uses:
            if use.kind is UseKind.ATTRIBUTE and use.attribute in _BENIGN_ATTRIBUTES:
                continue
            if use.kind is not UseKind.CALL:
                return []
            assert use.call is not None and isinstance(use.node.value, cst.Name)
            target = _flow_target(use.call, use.node.value.value, use.parent_of, self._read_once,
                                  keeps_features=lambda view: all(self._keeps_features(view, p, c) for p, c in producers),
                                  tests=tests, read_twice=self._read_twice)
            if target is None:
                return []
            targets.append(target)
        return targets

    def _keeps_features(self, view: cst.Call, producer: Union[_Producer, _Norm], call: cst.Call) -> bool:
        """``.view(n, F)``/``.reshape(n, F)`` of a linear layer's output whose
        ``out_features`` is ``F`` (both known integers): each row of the result is one
        row of the output, so the batch norm's channels are the layer's output features."""
        if not isinstance(producer, _Producer) or producer.dim != 1 or not producer.out_keyword:
            return False
        if len(view.args) != 2 or any(arg.keyword is not None or arg.star for arg in view.args):
            return False
        out = _argument(call, producer.signature, producer.out_keyword)
        values = self.facts.values
        size = values.int_constant(out) if out is not None else None
        return size is not None and values.int_constant(view.args[1].value) == size


_LIST_USES = (UseKind.APPEND, UseKind.INDEXED_CALL, UseKind.INDEXED_ALIAS, UseKind.LEN, UseKind.ZIP,
              UseKind.ENUMERATE)


@dataclass(frozen=True)
class _Alias:
    """``bn = self.bns[i]``: a local name for one entry of a layer container."""

    attribute: str
    use: Use
    statement: cst.SimpleStatementLine
    target: cst.Name


def _runs_before(statement: cst.SimpleStatementLine, node: cst.CSTNode, parent_of: Mapping[int, cst.CSTNode]) -> bool:
    """``statement`` sits in a block that also holds ``node``, in a later statement of it."""
    block = parent_of.get(id(statement))
    if not isinstance(block, cst.IndentedBlock):
        return False
    current: Optional[cst.CSTNode] = node
    while current is not None and parent_of.get(id(current)) is not block:
        current = parent_of.get(id(current))
    if current is None:
        return False
    body = list(block.body)
    return any(s is statement for s in body[:next(i for i, s in enumerate(body) if s is current)])


def _string_key(index: Optional[str]) -> Optional[str]:
    """The text of a plain string literal index (``"conv"``), else None."""
    if index is None:
        return None
    try:
        node = cst.parse_expression(index)
    except cst.ParserSyntaxError:
        return None
    value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    return value if isinstance(value, str) else None


def _target_name(loop: cst.For, name: str) -> Optional[cst.Name]:
    """The loop target's ``Name`` node called ``name``."""
    for node, _ in walk(loop.target):
        if isinstance(node, cst.Name) and node.value == name:
            return node
    return None


def _inside(node: cst.CSTNode, block: cst.CSTNode, parent_of: Mapping[int, cst.CSTNode]) -> bool:
    current: Optional[cst.CSTNode] = node
    while current is not None:
        if current is block:
            return True
        current = parent_of.get(id(current))
    return False


def _flow_target(
    call: cst.Call, receiver: str, parent_of: Mapping[int, cst.CSTNode], read_once: Callable[[cst.Name], bool],
    target_of: Optional[Callable[[cst.BaseExpression], Optional[str]]] = None,
    keeps_features: Optional[Callable[[cst.Call], bool]] = None,
    tests: Optional[List[cst.BaseExpression]] = None,
    read_twice: Optional[Callable[[cst.Name], bool]] = None,
) -> Optional[str]:
    """The attribute ``B`` when the output of ``call`` goes straight into
    ``self.B(...)`` (``target_of``: what else counts, ``self.B[i]``): as its
    argument, or through a variable the next statement passes to it (in
    every branch of an ``if``/``elif``/``else`` that starts with it).  With
    ``keeps_features``, a ``.view(...)``/``.reshape(...)`` of the output it
    accepts may sit in between; with ``tests``, the next statement may be an
    ``if`` without ``else`` whose body starts with the call of ``B``: its test is
    added to ``tests`` (the norm follows only when it holds)."""
    def target(func: cst.BaseExpression) -> Optional[str]:
        return target_of(func) if target_of is not None else _self_attribute(func, receiver)

    parent = parent_of.get(id(call))
    if keeps_features is not None and isinstance(parent, cst.Attribute) and parent.value is call \
            and parent.attr.value in ("view", "reshape"):
        view = parent_of.get(id(parent))
        if not (isinstance(view, cst.Call) and view.func is parent and keeps_features(view)):
            return None
        call, parent = view, parent_of.get(id(view))
    if isinstance(parent, cst.Arg):
        outer = parent_of.get(id(parent))
        if isinstance(outer, cst.Call) and len(outer.args) == 1 and parent.keyword is None:
            return target(outer.func)
        return None
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and parent.value is call):
        return None
    variable = parent.targets[0].target
    if not isinstance(variable, cst.Name):
        return None
    line = parent_of.get(id(parent))
    block = parent_of.get(id(line)) if line is not None else None
    if not isinstance(line, cst.SimpleStatementLine) or not isinstance(block, cst.IndentedBlock):
        return None
    body = list(block.body)
    index = next(i for i, statement in enumerate(body) if statement is line)
    if index + 1 >= len(body):
        return None
    if tests is not None and read_twice is not None and read_twice(variable):
        guarded = _guarded_consumer(body[index + 1], variable.value, target)
        if guarded is not None:  # `y = self.bn(x) if self.use_bn else x`: x is read there only
            tests.append(guarded[1])
            return guarded[0]
    consumed = _consumer(body[index + 1], variable.value, target, tests is not None)
    if consumed is None:
        return None
    found, dead, test = consumed
    if test is not None:
        assert tests is not None
        tests.append(test)
    if dead or read_once(variable):
        return found
    return None


def _guarded_consumer(
    statement: cst.BaseStatement, variable: str, target: Callable[[cst.BaseExpression], Optional[str]],
) -> Optional[Tuple[str, cst.BaseExpression]]:
    """``y = self.B(variable) if <test> else variable`` (or ``return ...``): the
    target ``B`` and the test under which the output goes through it."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Assign, cst.Return)) else None
    if not isinstance(value, cst.IfExp):
        return None
    body, orelse = value.body, value.orelse
    if not (isinstance(orelse, cst.Name) and orelse.value == variable and isinstance(body, cst.Call)
            and len(body.args) == 1 and body.args[0].keyword is None and not body.args[0].star
            and isinstance(body.args[0].value, cst.Name) and body.args[0].value.value == variable):
        return None
    if any(isinstance(node, cst.Name) and node.value == variable for node, _ in walk(value.test)):
        return None
    found = target(body.func)
    return (found, value.test) if found is not None else None


def _consumer(
    statement: cst.BaseStatement, variable: str, target: Callable[[cst.BaseExpression], Optional[str]],
    conditional: bool,
) -> Optional[Tuple[str, bool, Optional[cst.BaseExpression]]]:
    """What ``statement`` passes ``variable`` (read there once, as the only
    argument of a call) to: the target, whether the variable's value is dead
    afterwards (reassigned, or returned, on every branch), and, for an ``if``
    without ``else`` (when ``conditional``), its test."""
    if isinstance(statement, cst.If):
        found: Set[str] = set()
        current: Optional[Union[cst.If, cst.Else]] = statement
        while current is not None:
            if isinstance(current, cst.If) and any(
                    isinstance(node, cst.Name) and node.value == variable for node, _ in walk(current.test)):
                return None
            body = current.body
            if not isinstance(body, cst.IndentedBlock) or not body.body:
                return None
            inner = _consumer(body.body[0], variable, target, False)
            if inner is None or not inner[1]:
                return None
            found.add(inner[0])
            if isinstance(current, cst.Else) or current.orelse is None:
                break
            current = current.orelse
        if len(found) != 1:
            return None
        if isinstance(current, cst.If):  # no `else`: the norm follows only when the test holds
            if not conditional or current is not statement:
                return None  # an `elif` chain: more than one test
            return found.pop(), True, statement.test
        return found.pop(), True, None
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    result: Optional[str] = None
    loads = 0
    for node, node_parent in walk(small):
        if isinstance(node, cst.Name) and node.value == variable:
            if isinstance(node_parent, cst.Attribute) and node_parent.attr is node:
                continue
            if isinstance(node_parent, cst.AssignTarget):
                continue
            loads += 1
        if (
            isinstance(node, cst.Call)
            and len(node.args) == 1
            and node.args[0].keyword is None
            and not node.args[0].star
            and isinstance(node.args[0].value, cst.Name)
            and node.args[0].value.value == variable
        ):
            result = target(node.func) or result
    if result is None or loads != 1:
        return None
    reassigned = isinstance(small, cst.Assign) and any(
        isinstance(t.target, cst.Name) and t.target.value == variable for t in small.targets
    )
    return result, reassigned or isinstance(small, cst.Return), None


def _self_attribute(expr: cst.BaseExpression, receiver: str) -> Optional[str]:
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        if expr.value.value == receiver:
            return expr.attr.value
    return None


def _without_bias(call: cst.Call, producer: _Producer, state: _Bias, value: cst.BaseExpression) -> cst.Call:
    """``call`` with its bias set to ``value`` (``False``, ``not use_bn``), keeping the layout."""
    if state == "default":
        return add_keyword(call, "bias", value)
    bias = bound_argument(call, producer.signature, "bias")
    assert bias is not None
    return replace_argument(call, bias, value)


def _common_branch(
    inside: Sequence[cst.CSTNode], outside: Sequence[cst.CSTNode],
    branch_of: Callable[[cst.CSTNode], Sequence[Tuple[cst.If, bool]]],
) -> Optional[cst.If]:
    """The ``if`` whose body holds every node of ``inside`` and whose ``else``
    (not an ``elif``) holds every node of ``outside`` (``branch_of``: the
    flow fact's :meth:`~torchlint.analysis.flow.Flow.branches`)."""
    candidates: Optional[Set[int]] = None
    by_id: Dict[int, cst.If] = {}
    for node in inside:
        ids = set()
        for statement, in_body in branch_of(node):
            if in_body:
                ids.add(id(statement))
                by_id[id(statement)] = statement
        candidates = ids if candidates is None else candidates & ids
    for node in outside:
        ids = {id(statement) for statement, in_body in branch_of(node) if not in_body}
        candidates = (candidates or set()) & ids
    if not candidates or len(candidates) != 1:
        return None
    statement = by_id[candidates.pop()]
    return statement if isinstance(statement.orelse, cst.Else) else None
