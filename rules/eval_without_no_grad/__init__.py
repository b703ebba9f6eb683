"""TL301 eval-without-no-grad."""

from __future__ import annotations

import builtins
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Mapping, Optional, Pattern, Set, Tuple

import libcst as cst

from torchlint.analysis.gradmode import GRAD_CONTEXTS, INERT_WHEN_DISCARDED, MODULE_RETURNS_ITSELF, is_grad_mode_api
from torchlint.analysis.queries import called_from, callers_of, subclasses_of, summaries
from torchlint.analysis import Analysis
from torchlint.analysis.frameworks import lightning_module_names
from torchlint.analysis.index import CallSite
from torchlint.ruleapi.fixes import add_decorator, spell
from torchlint.model import Applicability
from torchlint.analysis.training import GradMode, grad_mode
from torchlint.analysis.scopes import BindingKind, ScopeKind
from torchlint.analysis.values import literal_bool, ValueKind
from torchlint.data.apidata import (
    compiles, leaves_grad_mode, listed_name, loads_weights, takes_gradients, trainer_methods, trains, wrappers,
)
from torchlint.analysis.names import dotted
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FileContext, FixAvailability, Option, OptionValue, Rule, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, VerificationSpec
from torchlint.source.tree import walk_body

DEFAULT_FUNCTION_PATTERN = ""
"""Off: what is evaluation code comes from training facts, not from names."""

_GRAD_MODE_NAMES: FrozenSet[str] = frozenset({
    *GRAD_CONTEXTS, "torch.is_grad_enabled", "torch.is_inference_mode_enabled",
    "torch.autograd.grad_mode.is_grad_enabled",
})
"""torch's grad-mode API, by qualified name: using any of it (resolved
through the file's imports) shows the author manages autograd's mode."""
_GRAD_MODE_LAST: FrozenSet[str] = frozenset(name.rsplit(".", 1)[-1] for name in _GRAD_MODE_NAMES)
"""Their last parts: only a name or attribute spelled so is worth resolving."""
# Attributes that only make sense when gradients are wanted.
_GRAD_ATTRIBUTES: FrozenSet[str] = frozenset({
    "grad", "requires_grad", "requires_grad_", "grad_fn", "backward", "retain_grad",
    "register_hook",
})
_NO_GRADIENT_PACKAGES: FrozenSet[str] = frozenset({
    "torch", "builtins", "copy", "pickle", "json", "os", "sys", "gc", "time", "logging", "inspect", "pprint",
    "warnings", "functools", "itertools", "collections", "typing", "math", "random", "numpy",
})
"""Packages whose functions, given a model, do not differentiate through it
(torch's own that do are in ``data/autograd.toml``, checked first)."""
_BUILTIN_NAMES: FrozenSet[str] = frozenset(dir(builtins))
"""Python's builtins (``print(model)``, ``len(...)``): known not to differentiate."""
_STANDARD_LIBRARY: FrozenSet[str] = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset({
    "abc", "argparse", "atexit", "builtins", "collections", "contextlib", "copy", "dataclasses", "enum",
    "functools", "gc", "inspect", "io", "itertools", "json", "logging", "math", "multiprocessing", "os",
    "pathlib", "pickle", "random", "shutil", "signal", "subprocess", "sys", "tempfile", "threading", "time",
    "timeit", "typing", "unittest", "warnings",
})
"""Python's own modules (the running interpreter's list, or the common ones
before 3.10): none of their decorators or context managers touches autograd."""
_TEST_CASES: FrozenSet[str] = frozenset({
    "unittest.TestCase", "unittest.case.TestCase", "unittest.IsolatedAsyncioTestCase",
    "unittest.async_case.IsolatedAsyncioTestCase", "absl.testing.absltest.TestCase",
    "absl.testing.parameterized.TestCase", "torch.testing._internal.common_utils.TestCase",
})
"""Test-case base classes, by qualified name: a test runner runs their
subclasses' methods, which are tests, not evaluation code."""
_GRAD_MODE_FREE: FrozenSet[str] = _STANDARD_LIBRARY | {"numpy", "torch"}
"""Packages whose decorators and context managers leave autograd's mode as it
is, once torch's grad-mode API (checked first) is set aside."""
# Model methods that are a forward pass under another name.
_FORWARD_METHODS: FrozenSet[str] = frozenset({
    "forward", "module", "forward_features", "extract_features", "extract_feat",
    "encode_image", "encode_text", "forward_once",
})
_VALUE_READS: FrozenSet[str] = frozenset({
    "item", "numpy", "tolist", "cpu", "argmax", "detach",
})
_OTHER_FRAMEWORKS = ("tensorflow", "keras", "jax", "flax", "paddle", "mindspore", "oneflow",
                     "jittor", "mxnet", "theano", "chainer", "sympy")
_TORCH_LIKE: FrozenSet[str] = frozenset({
    "torch", "torchvision", "lightning", "pytorch_lightning", "transformers", "timm", "monai",
    "ignite", "accelerate",
})
_PREDICTOR_LIBRARIES: FrozenSet[str] = frozenset({
    "ultralytics", "sentence_transformers", "detectron2", "mmdet", "mmseg", "mmpose",
    "yolov5", "paddleocr", "easyocr", "whisper", "diffusers",
})
_LIGHTNING_HOOK = re.compile(
    r"^(?:validation|test|predict)_(?:step|step_end|epoch_end)$|^on_(?:validation|test|predict)_"
)


def _last_name(func: cst.BaseExpression) -> Optional[str]:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


@dataclass
class _Forward:
    callee: str
    guarded: bool
    order: int
    func: cst.BaseExpression
    call: Optional[cst.Call] = None
    nested: bool = False
    """Made in a closure of the function (which may run where its caller chooses)."""


@dataclass
class _Frame:
    """What one function (or the module's own code) does."""

    node: Optional[cst.FunctionDef]
    guard_depth: int = 0
    evals: List[Tuple[str, cst.Call, int]] = field(default_factory=list)
    trains: List[Tuple[str, int]] = field(default_factory=list)
    forwards: List[_Forward] = field(default_factory=list)
    needs_grad: List[int] = field(default_factory=list)
    manages_grad: List[int] = field(default_factory=list)
    guards: int = 0
    has_assert: bool = False
    constructed: Set[str] = field(default_factory=set)
    built_models: Set[str] = field(default_factory=set)
    """Names bound to a model the function builds itself (the value facts say
    the call's result is a module: ``net = VGG()``)."""
    loads_weights: bool = False
    loaded: Set[str] = field(default_factory=set)
    """Objects given trained weights: ``m.load_state_dict(...)``, ``m = torch.load(...)``."""
    loads: List[Tuple[str, cst.Call, int]] = field(default_factory=list)
    trains_model: bool = False
    loops: bool = False
    reads_values: bool = False


@dataclass
class _Reference:
    caller: Optional[cst.FunctionDef]
    guarded: bool


@dataclass
class _Candidate:
    node: cst.FunctionDef
    has_eval: bool
    outside: Tuple[CallSite, ...]
    by_callers: bool = False
    """Evaluation code only because of its callers: every use must be one of them."""


class EvalWithoutNoGrad(Rule):
    """## What it does
    Reports evaluation code that runs a model with autograd switched on.
    What is evaluation comes from training facts, never from names: a
    function that calls `.eval()` (or `.train(False)`) on an object and then
    runs that object (also through another name every binding of which is
    that object moved, cast or wrapped for data parallelism:
    `parallel_model = nn.DataParallel(model).cuda()` then `model.eval();
    parallel_model(x)`), or calls a method of a project class, in any module,
    whose code calls that object with gradients on and trains nothing:
    `agent.policy.eval()`, then `agent.act(obs)` where `act` runs
    `self.policy(...)`, also behind the class's other methods, such as
    `self._forward(x)`, and behind methods of a project class held in an
    attribute, such as `self.policy.act(obs)`; a method that puts
    `self.model` in eval mode and runs it through another method of its own
    class counts the same way, the class in this file or another module
    (`pred = self._process_one_batch(batch)`, where `_process_one_batch`
    calls `self.model(...)` with gradients on); `agent.eval()` counts as well
    when the class's own `eval` puts those attributes in eval mode, such as
    `def eval(self): self.policy.eval()`); a function that loads trained weights into the model
    it runs (`m.load_state_dict(...)`, `m = torch.load(...)`, or a whole model kept
    in a checkpoint, `m = torch.load(...)["model"]`) and iterates
    or turns outputs into plain values; or a function that every caller, in
    the file or in the project's other modules, hands an object it has put
    in eval mode and not switched back (`model.eval(); decode(model, x)`
    makes `decode` evaluation code; so does `model.eval()` then
    `metrics.hit_rate(model, test_loader, 10)` between the epochs of a
    training script, the helper in `metrics.py` calling no `.eval()` itself,
    imported by name, as a module or with `from metrics import *`; and a
    name assigned the module a chain of its methods returns, `net =
    load(path).cuda().eval()`), when
    no such call sits in a training step (see below); or, in a script that
    trains nothing (no backward, gradient read, optimizer step or `.train()`
    anywhere in the file), a function that runs a module-level model the
    script put in eval mode.  It is reported when
    it never needs gradients (no `backward()`, `torch.autograd.grad`, a
    `.step()` of an optimizer or `GradScaler`, `.grad` or `requires_grad`,
    no call of a function or method whose summary runs a backward pass or an
    optimizer step, such as `self._train_epoch(loader)` with the backward two
    calls down, and no call into a library that differentiates through the
    model it is given: attribution methods, adversarial attacks, explainers,
    `torch.func` transforms and differentiable optimisers, listed by module
    in `torchlint/data/autograd.toml` (Captum, torchattacks, Foolbox,
    AdverTorch, ART, PyG's explainers and attacks, pytorch-grad-cam,
    TorchCAM, SHAP, higher, learn2learn), itself or through a project
    function whose summary calls one; and no call that hands the model
    object itself to code the linter cannot see (a name the file does not
    define or import, a package other than torch, the standard library's
    common modules and NumPy: `pgd_attack(model, x)` may differentiate
    through it); what a callee is called decides nothing), and neither it nor its
    code touches `torch.no_grad`, `torch.inference_mode` or
    `torch.set_grad_enabled`; the one exception is a method or function that
    puts a model in eval mode and whose `with torch.no_grad():` blocks hold
    none of that model's forward passes (the block wraps the input copies,
    the forward runs after it), which is reported.

    Its callers count, in the file and in the project's other modules (the
    project index): a function every call of which runs with gradients off
    (inside `with torch.no_grad():`, or in a function decorated with it, or
    in a function every call of which does, in this file or, for a
    module-level function, from other modules; a method too, where the
    project's calls of it resolve to it: `self.val_eval.accuracy(model)`
    under `no_grad` in a trainer of another module, `val_eval` an instance
    of the class) is left alone, and so is a function called in the same training step as a
    `backward()` (the innermost loop around the call, or its function, calls
    backward): its outputs may feed that backward pass, which cannot be
    known.  The exception is a helper that itself puts the model in eval
    mode, returns no value and is only ever called there as a statement of
    its own (`sample_images(step)` every few hundred steps): nothing it
    computes can reach the backward pass, so it is reported.  Also left
    alone: methods of a `LightningModule` subclass, decided from the
    imports (`lightning.LightningModule`, `lightning.pytorch.LightningModule`,
    `pytorch_lightning.LightningModule`, directly or through a class of the
    file or of another project module), since Lightning (every release)
    runs `validation_step`, `test_step`, `predict_step`, their
    `*_step_end`/`*_epoch_end` and `on_validation_*`/`on_test_*`/
    `on_predict_*` hooks with gradients off (`torch.no_grad()`, or
    `torch.inference_mode()` for `trainer.validate`/`test`/`predict` from
    1.7) and the module in eval mode; the same hooks of a class whose base
    cannot be seen (a Lightning `Callback`, a base from another package);
    methods called
    `forward`, pytest tests (functions named `test*`, and methods of
    classes named `Test*`, in the files pytest collects by default:
    `test_*.py`, `*_test.py`, `conftest.py`: how pytest runs them; a `test()`
    of a training script is evaluation code like any other), methods of
    subclasses of a test case class resolved through the imports
    (`unittest.TestCase` under any local name, absltest's, torch's own)
    and shape smoke tests, whatever they are called: a function that takes
    nothing and runs only models it builds itself (the value facts say the
    call builds a module: `net = VGG()`, not `get_model(...)` of another
    package), loading no trained weights and training nothing (trained
    weights are:
    `load_state_dict`, a `[[weights]]` callable of
    `torchlint/data/autograd.toml` such as `torch.load`, `torch.jit.load`,
    a Transformers class's `from_pretrained` or `timm.create_model(...,
    pretrained=True)`, or a project function whose summary does, itself or
    through its callees, such as `restore(model, path)`; not the words in
    the callees' names), and files that import another array framework
    but not torch.

    Decorators and `with` blocks are judged by what they are, never by
    their names.  A function is left alone when a decorator sets the grad
    mode (torch's `no_grad`, `inference_mode`, `enable_grad`,
    `set_grad_enabled`, resolved through the file's imports, in any mode;
    a library's listed as `[[grad_mode]]` in the data file), compiles it
    (`[[compiler]]`: `torch.jit.script`, `torch.jit.trace`, `torch.compile`,
    `torch.export.export`, `torch.onnx.export`, ...), or is a project
    decorator whose wrapper runs it with gradients off (the summaries'
    grad-mode fact: `with torch.no_grad(): return fn(*args)` inside the
    wrapper, also a decorator factory, or `torch.no_grad()(fn)`).  A
    decorator whose code cannot be known (another package's, or a name the
    file does not define or import) could switch gradients off itself, so
    the rule stays quiet there; a project decorator the summaries know to
    leave gradients on (`@log_calls`), Python's builtins and standard
    library (`@functools.lru_cache`), NumPy's and torch's other decorators
    (`@torch.jit.unused`) do not stop a finding.  A `with` block runs with
    gradients off when its context manager is torch's grad-off API, a
    library's listed as `[[grad_mode]]` (MONAI's `eval_mode`, which yields
    inside `torch.no_grad()`), a project `@contextmanager` every `yield` of
    which runs with gradients off, or a project class whose `__enter__`
    switches them off (`torch.set_grad_enabled(False)`) or that derives
    from `torch.no_grad`; its forward passes are then guarded.  A project
    context manager that only puts the model in eval mode
    (`with evaluating(model):`) leaves gradients on and is no guard.  A
    `with` that enables gradients or sets them from a run-time value counts
    as the author managing gradients, and the function is left alone.  A
    `with` whose context manager cannot be known (another package's, such
    as an EMA's `average_parameters()`, or an object the file cannot name)
    may run its block with gradients off: the forward passes inside it are
    not reported, those outside it still are.  Known not
    to touch autograd: Python's builtins and standard library, NumPy,
    torch outside its grad-mode API (`torch.autocast`), and the library
    wrappers of `torchlint/data/wrappers.toml` (`tqdm`) and the libraries
    listed as `[[grad_free]]` in `torchlint/data/autograd.toml` (tqdm,
    Click, Typer, Hydra, OmegaConf, Rich, h5py, Fire).  Reading torch's
    grad-mode state (`torch.is_grad_enabled()`) counts as managing it; a
    command-line flag called `args.no_grad` does not.

    In a script, a `model.eval()`
    (or weights loaded into a model) followed by a forward pass of that
    model outside `torch.no_grad()`, with no gradient work before the model
    goes back to `.train()`, is reported on the `.eval()` (or loading) line
    (also `model.eval()` of a plain project object whose `eval` method puts
    its network in eval mode, then a method of it that runs that network);
    not when the script switches gradients off by hand before that point
    (`torch.set_grad_enabled(False)` as a statement at the top of its
    `__main__` block holds for everything after it; a bare `torch.no_grad()`
    statement builds a context manager and drops it, and switches nothing).  Each such `.eval()`
    is reported for the forward passes before the model's next `.eval()`:
    an evaluation every few steps inside the training loop and the test loop
    after it are two places to fix.
    The same holds inside a function or method that also trains (a
    `backward()`, an optimizer step) and then evaluates, each epoch: a
    `model.eval()` followed by a forward pass of that model outside
    `torch.no_grad()`, with no gradient work before the model goes back to
    `.train()` (or the function ends), is reported on that `.eval()` line,
    without a fix (decorating the function would switch gradients off for
    its training too).  A forward pass counts when it runs through a
    project helper that is given the model (`targets, scores =
    forward(model, batch)`, the helper in the file or another module calling
    `model(...)` with gradients on and training nothing itself), when the
    file's training steps call the same helper: the helper cannot turn
    gradients off for everyone, so the evaluation is the place to.  (A
    helper that only evaluation calls is reported itself, as above.)

    Where it is reported: a function that is evaluation code is reported on
    its `def` line (the fix decorates it); module-level code, and a function
    that trains and then evaluates, on the `.eval()` (or weight-loading)
    line.

    ## Why is this bad?
    `model.eval()` only switches layers such as dropout and batch norm to
    inference behaviour; it does not stop autograd.  Every forward pass still
    records the graph and keeps the activations it would need for a backward
    pass that never comes.  That costs memory (often several times the
    memory of the outputs, which limits the evaluation batch size) and time.
    When the loop accumulates a loss tensor (`total += loss`), the graphs of
    all batches stay alive until the loop ends.

    ## Example
    ```python
    def evaluate(model, loader):
        model.eval()
        correct = 0
        for images, labels in loader:
            logits = model(images.cuda())
            correct += (logits.argmax(1) == labels.cuda()).sum().item()
        return correct / len(loader.dataset)
    ```

    Use instead:
    ```python
    @torch.no_grad()
    def evaluate(model, loader):
        model.eval()
        correct = 0
        for images, labels in loader:
            logits = model(images.cuda())
            correct += (logits.argmax(1) == labels.cuda()).sum().item()
        return correct / len(loader.dataset)
    ```
    `torch.inference_mode()` is a stricter alternative with a little less
    overhead; its results cannot be used in autograd later.

    ## Fix safety
    The fix decorates the function with `@torch.no_grad()` (adding
    `import torch` when the module has no import of it) and is unsafe.  The
    values the function computes stay the same, but tensors it returns no
    longer require gradients and have no `grad_fn`: a caller that calls
    `backward()` on a result, or trains on it, breaks.  Memory use drops.
    Module-level findings have no fix; wrap the loop in
    `with torch.no_grad():` yourself.

    ## Options
    - `function-pattern` (default: empty, off): a regular expression
      searched in function names; a match also makes the function an
      evaluation function without any of the facts above (it still has to
      run something the value facts show is a model, and iterate or read
      plain values, and it must not train: a backward pass, an optimizer
      step, a project function that runs one, or a library trainer such as
      Lightning's `Trainer.fit` leaves it alone, whatever its name).  Names
      are a guess, so this is opt-in; setting it turns off the engine's
      quick text check for this rule, so it can match any name.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide, "No brainer code
    tweaks") says to turn off gradient tracking for validation and inference
    and shows the decorator form for whole evaluation functions; *GPU
    Computing Guide* (Ohio Supercomputer Center, "Memory-Efficient
    Practices") lists `torch.no_grad()` around inference as a memory saver.
    """

    code = "TL301"
    name = "eval-without-no-grad"
    summary = "An evaluation function runs the model without `torch.no_grad()`"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: `@torch.no_grad()` on the function (scripts: no fix)"
    torch_range = TorchRange(
        min=TorchVersion(0, 4),
        note="`@torch.no_grad()` as a decorator since 0.4.1; `torch.inference_mode` since 1.9, "
        "`@torch.no_grad` without parentheses since 2.1",
    )
    options = {
        "function-pattern": Option(
            DEFAULT_FUNCTION_PATTERN,
            "Regex searched in function names that also marks evaluation functions (empty: off).",
        ),
    }
    trigger_words = ("eval", "train(False)", "train(mode=False)", "load_state_dict", "load(")
    requires = frozenset({Analysis.PROJECT})
    # Functions that may be reported: their callers in other modules (under
    # no_grad, or in a training step) are indexed.  Every function of a file
    # that calls .eval() (evaluation helpers sit beside it); only the
    # functions that load weights themselves otherwise.
    project_queries = (callers_of(
        module_words=(".eval(", ".train(False", ".train(mode=False"),
        function_words=("load_state_dict(", "torch.load("),
    ), called_from(".eval(", ".train(False", ".train(mode=False"), summaries(),
        subclasses_of(*sorted(lightning_module_names())))

    @classmethod
    def triggers(cls, options: Mapping[str, OptionValue]) -> Tuple[str, ...]:
        """A custom function pattern may match any name: no shortcut then."""
        pattern = options.get("function-pattern", DEFAULT_FUNCTION_PATTERN)
        return cls.trigger_words if pattern == DEFAULT_FUNCTION_PATTERN else ()

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A finding needs an ``.eval()``/``.train(...)`` call, weights loaded
        (``load_state_dict``, ``torch.load``), a function another module calls
        with a model in eval mode, or a function whose name a configured
        pattern marks as evaluation."""
        if not facts.called_attributes.isdisjoint(("eval", "train", "load_state_dict", "load")):
            return True
        project = facts.project
        module = project.module_of(facts.path) if project is not None and facts.path else None
        if project is not None and module is not None and any(
                site.evaled for name in sorted(facts.functions) for site in project.callers_of(f"{module}.{name}")):
            return True  # another module calls one of its functions with a model in eval mode
        pattern = str(options.get("function-pattern", DEFAULT_FUNCTION_PATTERN))
        return bool(pattern) and any(re.search(pattern, name) for name in facts.functions)

    valid = (
        """
        import torch

        def evaluate(model, loader):
            model.eval()
            with torch.no_grad():
                return [model(x) for x in loader]
        """,
    )
    invalid = (
        Example(
            """
            import torch

            def evaluate(model, loader):
                model.eval()
                return [model(x) for x in loader]
            """,
            fixed="""
            import torch

            @torch.no_grad()
            def evaluate(model, loader):
                model.eval()
                return [model(x) for x in loader]
            """,
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        contract=Contract(
            level="identical on CPU; close on CUDA",
            promise=(
                "An evaluation function decorated with `@torch.no_grad()` computes the same "
                "values; its results just no longer require gradients."
            ),
            checks=(
                (
                    "every output has the same value (identical on CPU; close on CUDA, where the "
                    "attention kernel chosen may depend on `requires_grad`)"
                ),
                (
                    "every output has the same shape, dtype and device; outputs that required "
                    "grad may stop requiring it, and at least one should"
                ),
                "peak memory of both runs is reported",
            ),
            differences=(
                (
                    "Results no longer require grad and have no `grad_fn`: a caller that calls "
                    "`backward()` on them breaks."
                ),
                (
                    "`nn.TransformerEncoder` with a padding mask takes its fast path under "
                    "`no_grad` and returns zeros at padded positions."
                ),
            ),
            speed=(
                "No autograd graph is recorded: lower peak memory (the saved activations) and "
                "somewhat less time per batch."
            ),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._frames: List[_Frame] = [_Frame(None)]
        self._classes: List[str] = []
        self._local_classes: Dict[str, str] = {}
        self._candidates: List[_Candidate] = []
        self._script_models: Optional[Set[str]] = None
        self._references: Dict[str, List[_Reference]] = {}
        self._guarded_withs: Set[int] = set()
        self._order = 0
        self._pattern: Optional[Pattern[str]] = None
        self._step_calls: Optional[Dict[str, List[cst.Call]]] = None
        """The file's calls made in a training step, by what they run (on first use)."""
        # pytest's files; a script called test.py is an evaluation script.
        self._test_file = context.is_test_file
        roots = self._imported_roots(context.module)
        self._other_framework = bool(roots & set(_OTHER_FRAMEWORKS)) and not roots & _TORCH_LIKE
        # High-level predictors (YOLO(...)(img), pipeline(...)(text)) switch
        # gradients off themselves: a name alone is not enough there.
        self._wrapped_predictors = bool(roots & _PREDICTOR_LIBRARIES)
        self._functions = self._module_functions(context.module)

    # -- helpers --------------------------------------------------------------

    @property
    def _frame(self) -> _Frame:
        return self._frames[-1]

    def _tick(self) -> int:
        self._order += 1
        return self._order

    def _function_pattern(self) -> Optional[Pattern[str]]:
        """The configured name pattern, or None (the default: names decide nothing)."""
        text = str(self.option("function-pattern"))
        if self._pattern is None and text:
            self._pattern = re.compile(text)
        return self._pattern

    @staticmethod
    def _imported_roots(module: cst.Module) -> Set[str]:
        """The top-level packages a module imports at module level."""
        roots: Set[str] = set()
        for statement in module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        name = dotted(alias.name)
                        if name:
                            roots.add(name.split(".")[0])
                elif isinstance(small, cst.ImportFrom) and small.module is not None:
                    name = dotted(small.module)
                    if name and not small.relative:
                        roots.add(name.split(".")[0])
        return roots

    @staticmethod
    def _module_functions(module: cst.Module) -> Set[str]:
        """Names of module-level functions, classes and imports: calling one is
        not calling a model held in a variable."""
        found: Set[str] = set()
        for statement in module.body:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                found.add(statement.name.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                        small.names, cst.ImportStar
                    ):
                        for alias in small.names:
                            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                                found.add(alias.asname.name.value)
                            else:
                                name = dotted(alias.name)
                                if name:
                                    found.add(name.split(".")[0])
        return found

    def _assigned_from(self, call: cst.Call) -> Optional[str]:
        """The name a mode switch's chain is assigned to (``net =
        load_model(...).eval()``), None when it is not a plain assignment."""
        parents = self.facts.parents
        chain = _outermost_chain(call, parents)
        statement = parents.get(chain)
        if (isinstance(statement, cst.Assign) and statement.value is chain and len(statement.targets) == 1
                and isinstance(statement.targets[0].target, cst.Name)):
            return statement.targets[0].target.value
        return None

    def _eval_given_parameters(self, node: cst.FunctionDef, frame: _Frame) -> Set[str]:
        """Parameters that every call of ``node`` fills with an object the
        caller put in eval mode before the call, when every call is such
        evaluation code: outside the caller's training step (the innermost
        loop around the call, or its function, runs no backward itself).
        Calls from the project's other modules count the same way
        (:attr:`CallSite.evaled`).  Empty when any use of the function is
        something else (passed as a callback, a call in a training step) or
        nothing calls it."""
        params = {p.name.value for p in (*node.params.posonly_params, *node.params.params)}
        if not any(f.callee.split(".")[0] in params and not f.guarded for f in frame.forwards):
            return set()  # it runs no parameter: no need for the file's training facts
        training = self.facts.training
        edges = training.callers(node)
        outside = self._outside_sites(node)
        if not edges and not outside:
            return set()
        positional = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        found: Optional[Set[str]] = None
        for site in outside:
            if site.training_step:
                return set()
            if site.grad_disabled:
                continue
            given = {
                parameter for position, parameter in enumerate(positional)
                if str(position) in site.evaled or parameter in site.evaled
            }
            found = given if found is None else found & given
            if not found:
                return set()
        for edge in edges:
            if edge.grad_disabled:
                continue  # covered by the caller already; it neither helps nor hurts
            if training.in_training_step(edge.call):
                return set()  # its outputs may feed the step's backward pass
            caller = training.function(edge.caller)
            order = {id(fact.call): i for i, fact in enumerate(caller.calls)}
            at = order.get(id(edge.call), -1)
            last: Dict[Optional[str], bool] = {}  # each object's mode at the call
            for mode in sorted((m for m in caller.mode_calls if order.get(id(m.call), at) < at),
                               key=lambda m: order.get(id(m.call), at)):
                last[dotted(_module_itself(mode.receiver))] = not mode.train
                kept = self._assigned_from(mode.call)
                if kept is not None:
                    last[kept] = not mode.train  # `net = load_model(...).eval()`: `net` is in eval mode
            evaled = {name for name, in_eval in last.items() if in_eval}
            names = positional[1:] if isinstance(edge.call.func, cst.Attribute) else positional
            given = set()
            for parameter in names:
                argument = _argument(edge.call, parameter, names)
                if argument is not None and dotted(argument) in evaled:
                    given.add(parameter)
            found = given if found is None else found & given
            if not found:
                return set()
        return found or set()

    def _calls_model(self, func: cst.BaseExpression) -> bool:
        """``model(x)`` or ``model.forward(x)`` where the value facts say
        ``model`` is an ``nn.Module`` (never a guess from its name)."""
        values = self.facts.values
        if values.kind(func) is ValueKind.MODEL or self._parameter_given_models(func):
            return True
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value in _FORWARD_METHODS
            and values.kind(func.value) is ValueKind.MODEL
        )

    def _parameter_given_models(self, func: cst.BaseExpression) -> bool:
        """A parameter that every call of its function in this file fills with
        a model (``evaluate(Net(), loader)``): the callers' facts speak for it."""
        if not isinstance(func, cst.Name):
            return False
        bindings = self.facts.scopes.resolve(func)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAMETER:
            return False
        scope = bindings[0].scope
        function = scope.node if scope is not None else None
        if not isinstance(function, cst.FunctionDef):
            return False
        positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        edges = self.facts.training.callers(function)
        if not edges:
            return False
        for edge in edges:
            # ``self.evaluate(net)`` fills the parameters after ``self``.
            names = positional[1:] if isinstance(edge.call.func, cst.Attribute) else positional
            argument = _argument(edge.call, func.value, names)
            if argument is None or self.facts.values.kind(argument) is not ValueKind.MODEL:
                return False
        return True

    def _runs_evaled(self, forward: _Forward, evaled: Set[str]) -> bool:
        """Whether a call runs an object put in eval mode (or one of its
        submodules, or a forward-like method of it)."""
        callee = forward.callee
        parts = callee.split(".")
        prefix = ".".join(parts[:-1])
        if callee in evaled:
            return True
        if isinstance(forward.func, cst.Name) and self.facts.training.model_alias(forward.func) in evaled:
            return True  # `parallel_model(x)`, `parallel_model = nn.DataParallel(model).cuda()`, after `model.eval()`
        if callee != "self" and any(obj.startswith(callee + ".") for obj in evaled):
            return True  # model(x) after model.module.eval()
        if callee != "self" and any(
            obj.split(".")[-1] == parts[-1] and obj.split(".")[0] in ("self", parts[0])
            or parts[0] == "self" and obj == parts[-1]
            for obj in evaled
        ):
            return True  # model(x) after self.model.eval(), and the other way round
        if prefix and prefix in evaled:
            if parts[-1] in _FORWARD_METHODS:
                return True
            # self.eval(); self.body(x): a submodule, when the facts say so.
            if self._calls_model(forward.func):
                return True
        return False

    def _method_runs_evaled(self, forward: _Forward, evaled: Set[str], function: Optional[cst.FunctionDef]) -> bool:
        """``agent.act(obs)`` after ``agent.policy.eval()``, where ``act`` is a
        method of a project class (in any module) that calls
        ``self.policy(...)`` with gradients on and trains nothing (its
        summary): the call runs the model put in eval mode."""
        func = forward.func
        if forward.call is None or not isinstance(func, cst.Attribute):
            return False
        receiver = dotted(func.value)
        if receiver is None:
            return False
        if receiver == "self":  # another method of the same class: `self._process_one_batch(x)`
            found = self.facts.callees.sibling(function, func.attr.value) if function is not None else None
            if found is None or not found.method or found.wrapper:
                return False
            summary = found
        else:
            target = self.facts.callees.target(forward.call)
            if target is None or not target.bound or not target.summary.method or target.summary.wrapper:
                return False
            summary = target.summary
        if summary.runs or summary.loop_runs:
            return False  # it trains: gradients are wanted
        for attribute in sorted(summary.forwards):
            held = f"{receiver}.{attribute}"
            if held in evaled or any(obj.startswith(held + ".") for obj in evaled):
                return True
        return False

    def _hands_model_to_unknown(self, call: cst.Call, frame: _Frame) -> bool:
        """``pgd_attack(model, x)``: the model object itself (one this function
        put in eval mode, or a value the facts say is a module) handed to a
        callable whose code the linter cannot see (not torch's, not a
        builtin, not a project function with a summary, not in the data
        table): it may differentiate through the model, so the rule cannot
        know that gradients are unwanted and stays quiet."""
        if not call.args:
            return False
        evaled = {obj for obj, _, _ in frame.evals}
        if not any((dotted(arg.value) or "") in evaled or self.facts.values.kind(arg.value) is ValueKind.MODEL
                   for arg in call.args):
            return False
        if self.facts.callees.target(call) is not None:
            return False  # a project function (or a library wrapper): its summary says what it does
        qualified = self.names.call_name(call)
        if qualified is not None:
            return qualified.split(".", 1)[0] not in _NO_GRADIENT_PACKAGES
        func = call.func
        return not (isinstance(func, cst.Name) and func.value in _BUILTIN_NAMES
                    and not self.facts.scopes.resolve(func))

    def _helper_runs_evaled(self, forward: _Forward, evaled: Set[str]) -> bool:
        """``forward(model, batch)`` after ``model.eval()``, where ``forward``
        is a project function (in any module) that runs a forward pass of the
        argument with gradients on and trains nothing (its summary), and that
        this file's training steps call too: a helper shared with training
        cannot turn gradients off itself, so the evaluation that calls it is
        the place to.  (A helper only evaluation calls is reported itself.)"""
        if forward.call is None:
            return False
        callees = self.facts.callees
        target = callees.target(forward.call)
        if target is None or target.summary.wrapper or target.summary.runs or target.summary.loop_runs:
            return False
        if not any(self._runs_evaled(_Forward(name, forward.guarded, forward.order, argument), evaled)
                   for argument in callees.forward_arguments(forward.call)
                   for name in [dotted(argument)] if name is not None):
            return False
        return any(call is not forward.call for call in self._training_step_calls().get(target.summary.qualified, ()))

    def _training_step_calls(self) -> Dict[str, List[cst.Call]]:
        """The calls of this file made in a training step (the innermost loop
        around them, or their function, runs backward), by the qualified name
        of what they run: made once per file."""
        if self._step_calls is None:
            found: Dict[str, List[cst.Call]] = {}
            training, callees = self.facts.training, self.facts.callees
            for facts in training.functions.values():
                for fact in facts.calls:
                    if training.in_training_step(fact.call):
                        runs = callees.target(fact.call)
                        if runs is not None:
                            found.setdefault(runs.summary.qualified, []).append(fact.call)
            self._step_calls = found
        return self._step_calls

    def _gives_weights(self, call: cst.Call, last: Optional[str]) -> bool:
        """The call gives a model trained weights: ``m.load_state_dict(...)``
        (``nn.Module``'s method), a library callable listed as ``[[weights]]``
        in ``data/autograd.toml`` (``torch.load``, a Transformers class's
        ``from_pretrained``, ``timm.create_model(..., pretrained=True)``), or a
        project function whose summary does so, itself or through its callees
        (``load_checkpoint(model, path)``).  What the callee is called decides
        nothing."""
        if last == "load_state_dict" and isinstance(call.func, cst.Attribute):
            return True

        def passes_true(keyword: str) -> bool:
            return any(arg.keyword is not None and arg.keyword.value == keyword and literal_bool(arg.value) is True
                       for arg in call.args)

        if loads_weights(self.names.call_name(call), passes_true):
            return True
        target = self.facts.callees.target(call)
        return target is not None and not target.summary.wrapper and target.summary.loads_weights

    def _library_trains(self, call: cst.Call) -> bool:
        """``trainer.fit(model)`` where ``trainer`` is built by a library class
        whose method trains what it is given (``[[trainer]]`` in
        ``data/autograd.toml``: Lightning's ``Trainer.fit``), named through the
        file's imports or through the construction the receiver holds."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in trainer_methods():
            return False  # no listed trainer has a method of that name: nothing to resolve
        if trains(self.names.call_name(call)):
            return True
        built = self.facts.instances.construction(func.value)
        owner = self.names.call_name(built) if built is not None else None
        return owner is not None and trains(f"{owner}.{func.attr.value}")

    def _trains_through(self, call: cst.Call, frame: _Frame) -> bool:
        """The call runs a training step or loop (``backward()``, an optimizer
        step) or differentiates through a library (``data/autograd.toml``), as
        the project's summaries say: another method of the same
        class (``self._train_epoch(loader)``), or a function or method the
        call resolves to."""
        func = call.func
        if isinstance(func, cst.Attribute) and dotted(func.value) == "self":
            function = frame.node if isinstance(frame.node, cst.FunctionDef) else None
            found = self.facts.callees.sibling(function, func.attr.value) if function is not None else None
            return found is not None and not found.wrapper and bool(
                found.runs or found.loop_runs or self.facts.callees.grad_facts(found)[1])
        runs, loop_runs, _wrapper = self.facts.callees.runs(call)
        if runs or loop_runs:
            return True
        # A project function that calls a library differentiating through the model
        # (`explain(model, x)` calling Captum): gradients are wanted too.
        target = self.facts.callees.target(call)
        return target is not None and not target.summary.wrapper and self.facts.callees.grad_facts(target.summary)[1]

    def _switched_through_methods(self, frame: _Frame) -> Set[str]:
        """``agent.eval()`` where ``eval`` is a method of a project class (in
        any module) that puts attributes of its instance in eval mode
        (``self.net.eval()``, itself or through its other methods and its
        attributes' classes: its summary): ``agent.net`` is in eval mode."""
        found: Set[str] = set()
        for receiver, call, _ in frame.evals:
            found |= self._evaled_through(receiver, call)
        return found

    def _evaled_through(self, receiver: str, call: cst.Call) -> Set[str]:
        """What ``receiver.eval()`` puts in eval mode through a project method
        named ``eval`` (``model.eval()`` whose body is ``self.net_G.eval()``):
        ``model.net_G``; empty for a module's own ``eval``."""
        if receiver == "self":
            return set()
        target = self.facts.callees.target(call)
        if target is None or not target.bound or not target.summary.method or target.summary.wrapper:
            return set()
        return {f"{receiver}.{path}" for path in target.summary.evals}

    def _grad_off(self, expr: cst.BaseExpression) -> bool:
        """``torch.no_grad()``, ``torch.inference_mode()``, ``torch.set_grad_enabled(False)``
        (also ``@torch.no_grad`` without parentheses)."""
        return grad_mode(expr, self.names) is GradMode.DISABLED

    def _mode_free(self, func: cst.BaseExpression, qualified: Optional[str]) -> bool:
        """A decorator or context manager known to leave autograd's mode as it
        is: Python's builtins and standard library, NumPy, torch outside its
        grad-mode API, the library wrappers of ``data/wrappers.toml``
        (``with tqdm(...) as bar``) and the libraries listed as
        ``[[grad_free]]`` in ``data/autograd.toml`` (``tqdm.trange``,
        ``@click.command()``, ``@hydra.main(...)``)."""
        if qualified is not None:
            return (qualified.split(".", 1)[0] in _GRAD_MODE_FREE or listed_name(qualified) in wrappers()
                    or leaves_grad_mode(qualified))
        return (isinstance(func, cst.Name) and func.value in _BUILTIN_NAMES
                and not self.facts.scopes.resolve(func))

    def _decorator_settles(self, decorator: cst.BaseExpression) -> bool:
        """Whether a decorator makes the function one this rule leaves alone.
        Decided by what the decorator is, never by its name: torch's grad-mode
        API in any mode (``@torch.no_grad()``, ``@torch.enable_grad()``,
        ``@torch.set_grad_enabled(flag)``: the author manages gradients), a
        library's grad-mode decorator (``[[grad_mode]]``), a compiler
        (``[[compiler]]``: ``@torch.jit.script``, ``@torch.compile``), or a
        project decorator whose wrapper runs the function with gradients off
        (its summary).  A decorator whose code cannot be known (another
        package's, or nothing the file names) could switch gradients off
        itself, so the rule stays quiet; a project decorator the summaries
        know to leave gradients on, and those of :meth:`_mode_free`, do not
        stop a finding."""
        func = decorator.func if isinstance(decorator, cst.Call) else decorator
        qualified = self.names.qualified_name(func)
        if grad_mode(decorator, self.names) is not None or is_grad_mode_api(qualified) or compiles(qualified):
            return True
        project = self.facts.callees.grad_off_use(decorator, decorator=True)
        if project is not None:
            return project
        return not self._mode_free(func, qualified)

    def _context_effect(self, item: cst.BaseExpression) -> str:
        """What a ``with`` item does to autograd for its block, from what it
        is: ``off`` when the block runs with gradients off (torch's
        ``no_grad``/``inference_mode``/``set_grad_enabled(False)``, a library
        context manager of ``[[grad_mode]]`` such as MONAI's ``eval_mode``, a
        project ``@contextmanager`` that yields inside ``no_grad``, a project
        class whose ``__enter__`` switches gradients off); ``free`` when it
        leaves the mode alone (a project context manager the summaries know
        does, or one of :meth:`_mode_free`); ``manages`` when it sets another
        mode or one decided at run time (``torch.enable_grad()``,
        ``torch.set_grad_enabled(is_train)``): the author manages gradients;
        ``unknown`` when what it does cannot be known (a context manager of
        another package, or an object the file cannot name): its block may
        run with gradients off."""
        mode = grad_mode(item, self.names)
        if mode is not None:
            return "off" if mode is GradMode.DISABLED else "manages"
        func = item.func if isinstance(item, cst.Call) else item
        qualified = self.names.qualified_name(func)
        if is_grad_mode_api(qualified):
            return "manages"  # `torch.set_grad_enabled(is_train)`
        project = self.facts.callees.grad_off_use(item, decorator=False)
        if project is not None:
            return "off" if project else "free"
        return "free" if self._mode_free(func, qualified) else "unknown"

    # -- classes --------------------------------------------------------------

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        kind = self._class_kind(node)
        self._classes.append(kind)
        self._local_classes[node.name.value] = kind

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def _class_kind(self, node: cst.ClassDef) -> str:
        """"lightning", "test", "model", "framework" (unknown base) or "plain"."""
        if self._test_file and node.name.value.startswith("Test"):
            return "test"  # pytest collects `Test*` classes of its files
        if self.facts.frameworks.is_lightning_module(node):
            # By the imports: Lightning's LightningModule, through the file's
            # classes or the project's other modules.
            return "lightning"
        kinds: List[str] = []
        foreign = False
        for base in node.bases:
            if base.keyword is not None:
                continue
            text = dotted(base.value) or ""
            qualified = self.names.qualified_name(base.value) or ""
            last = text.split(".")[-1]
            if last not in self._local_classes and last not in ("object", "ABC", "") and not (
                qualified.startswith("torch.")
            ):
                foreign = True
            if qualified in _TEST_CASES:
                kinds.append("test")
            elif last in self._local_classes:
                kinds.append(self._local_classes[last])
            elif qualified.startswith("torch.") and self.facts.values.is_model_class(node):
                kinds.append("model")  # nn.Module and its subclasses, by the value facts
            elif last in ("object", "ABC", "") or qualified.startswith("torch."):
                kinds.append("plain")
            else:
                kinds.append("framework")
        methods = {
            statement.name.value for statement in node.body.body
            if isinstance(statement, cst.FunctionDef)
        }
        if methods & {"training_step", "validation_step", "test_step", "predict_step"} and foreign:
            # Lightning's hooks on a class whose LightningModule base lives elsewhere.
            return "lightning"
        for kind in ("lightning", "test", "model", "framework"):
            if kind in kinds:
                return kind
        return "plain"

    # -- functions ------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        frame = _Frame(node)
        for decorator in node.decorators:
            if self._grad_off(decorator.decorator):
                frame.guard_depth += 1
        self._frames.append(frame)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        frame = self._frames.pop()
        parent = self._frame
        if parent.node is not None:
            # A closure that needs gradients (an LBFGS closure, say) speaks for
            # its enclosing function too.
            parent.needs_grad.extend(frame.needs_grad)
            parent.manages_grad.extend(frame.manages_grad)
            parent.guards += frame.guards
            # A closure usually runs while its enclosing function runs.
            parent.forwards.extend(
                _Forward(f.callee, f.guarded or parent.guard_depth > 0, f.order, f.func, f.call, True)
                for f in frame.forwards
            )
        verdict = self._reportable(original_node, frame)
        if verdict is not None:
            outside = self._outside_sites(original_node)
            self._candidates.append(_Candidate(original_node, bool(frame.evals), outside, verdict))
        elif frame.needs_grad and frame.evals and frame.guard_depth == 0 and self._kind(original_node) is not None:
            # It trains, then evaluates (each epoch): the stretch after `.eval()`, as in a script.
            self._report_stretches(frame, "in a function that also trains, ")

    def _kind(self, node: cst.FunctionDef) -> Optional[str]:
        """The kind of class the function is a method of (``function`` for a
        plain function); None for a function this rule never reports
        (``forward``, special methods, async, compiled or grad-mode
        decorated, Lightning's and tests' methods, another framework's file)."""
        name = node.name.value
        if name == "forward" or (name.startswith("__") and name != "__call__"):
            return None
        if node.asynchronous is not None or self._other_framework:
            return None
        if any(self._decorator_settles(d.decorator) for d in node.decorators):
            return None
        in_class = len(self.parents) >= 2 and isinstance(self.parents[-2], cst.ClassDef)
        kind = self._classes[-1] if in_class and self._classes else "function"
        return None if kind in ("lightning", "test") else kind

    def _reportable(self, node: cst.FunctionDef, frame: _Frame) -> Optional[bool]:
        """None when the function is not evaluation code to report; else
        whether that rests on its callers alone (checked again once every
        use in the file is known)."""
        name = node.name.value
        if frame.needs_grad or frame.manages_grad:
            return None  # gradients are wanted, or the author switches them by hand
        kind = self._kind(node)
        if kind is None:
            return None
        if kind == "framework" and _LIGHTNING_HOOK.match(name):
            # A class whose base the linter cannot see (a Lightning callback,
            # a base from another package): Lightning may run this hook
            # with gradients off; a torch `nn.Module`'s method is just a method.
            return None
        is_test_name = name.startswith("test")
        if is_test_name and self._test_file:
            return None
        has_eval = bool(frame.evals)
        given: Set[str] = set()
        if not has_eval:
            if kind == "model" or self._wrapped_predictors or frame.trains_model:
                return None
            # Evaluation without an ``.eval()`` here: weights loaded into the
            # model it runs, or every caller passes a model it put in eval mode.
            given = self._eval_given_parameters(node, frame)
            pattern = self._function_pattern()
            # A configured pattern is the user's choice; a function it matches that
            # trains (backward, an optimizer step, a trainer: the facts above) is
            # already left alone, so no word of the name is read here.
            named = pattern is not None and bool(pattern.search(name))
            params = {p.name.value for p in (*node.params.posonly_params, *node.params.params,
                                             *node.params.kwonly_params)}
            scripted = {model for model in self._evaluated_by_the_script() if model not in params}
            if not (frame.loaded or given or named or scripted):
                return None
            if kind == "framework" and name.startswith("_") and not given:
                # A private step of a framework class (a predictor, an
                # inferer): its public caller, often elsewhere, sets the mode.
                return None
        evaled = {obj for obj, _, _ in frame.evals} | self._switched_through_methods(frame)
        if has_eval:
            forwards = [f for f in frame.forwards if self._runs_evaled(f, evaled) or self._method_runs_evaled(f, evaled, node)
                        or self._helper_runs_evaled(f, evaled)]
        else:
            forwards = [
                f for f in frame.forwards
                if f.callee.split(".")[0] in given or self._runs_evaled(f, frame.loaded)
                or (self._runs_evaled(f, scripted) and self._module_global(f.func))
                or (named and self._calls_model(f.func))
            ]
        if not forwards or all(f.guarded for f in forwards):
            return None
        if frame.guards and (not has_eval or any(f.guarded or f.nested for f in forwards)):
            # The author chose where gradients are off; reported only when no
            # forward pass of the model put in eval mode is inside those blocks
            # (`with torch.no_grad():` around the input copies, the forward after it).
            return None
        if not has_eval and not given and not (frame.loops or frame.reads_values):
            # A one-line helper may serve training too; an evaluation loop
            # iterates or turns outputs into plain values.
            return None
        if self._smoke_test(node, frame, forwards):
            return None
        return not has_eval and not frame.loaded and bool(given)

    @staticmethod
    def _smoke_test(node: cst.FunctionDef, frame: _Frame, forwards: List[_Forward]) -> bool:
        """``def test(): net = Net(); print(net(torch.randn(2, 3, 32, 32)).shape)``:
        every model it runs is one it builds itself, from nothing it is
        given, and it loads no trained weights and trains nothing: a shape
        check of untrained layers, not an evaluation.  Its name decides
        nothing."""
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        if any(p.name.value not in ("self", "cls") for p in params):
            return False
        if frame.loads_weights or frame.trains_model:
            return False
        roots = {f.callee.split(".")[0] for f in forwards}
        return roots <= frame.built_models

    # -- what the code does ------------------------------------------------------

    def visit_With(self, node: cst.With) -> None:
        effects = {self._context_effect(item.item) for item in node.items}
        if "off" in effects or "unknown" in effects:
            # Its block runs with gradients off, or may: a forward pass in it
            # is not one to report (the rule cannot know it runs with them on).
            self._frame.guard_depth += 1
            self._guarded_withs.add(id(node))
            if "off" in effects:
                self._frame.guards += 1  # the author chose where gradients are off
        if "manages" in effects:
            # Another grad mode, or one set at run time: the author manages gradients here.
            self._frame.manages_grad.append(self._tick())

    def visit_For(self, node: cst.For) -> None:
        self._frame.loops = True

    def visit_While(self, node: cst.While) -> None:
        self._frame.loops = True

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._frame.loops = True

    def leave_With(self, original_node: cst.With) -> None:
        if id(original_node) in self._guarded_withs:
            self._frame.guard_depth -= 1

    def visit_Assert(self, node: cst.Assert) -> None:
        self._frame.has_assert = True

    def _grad_mode_reference(self, node: cst.BaseExpression) -> None:
        """A grad-mode name: the head of a ``with`` guard counts as that guard,
        anything else (``set_grad_enabled(False)`` as a statement, a stored
        context manager) as the author managing gradients by hand."""
        for parent in self.parents[-3:]:
            if isinstance(parent, cst.WithItem):
                return  # the head of a `with`: `visit_With` counts what it does
        chain = self.parents[-2:]  # (the visited node itself is not among its parents)
        if (len(chain) == 2 and isinstance(chain[-1], cst.Call) and chain[-1].func is node
                and isinstance(chain[-2], cst.Expr) and self.names.call_name(chain[-1]) in INERT_WHEN_DISCARDED):
            return  # `torch.no_grad()` as a statement builds a context manager and drops it: nothing changes
        self._frame.manages_grad.append(self._tick())

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.parents[-1] if self.parents else None
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return  # `torch.no_grad`: the attribute itself is looked at (`visit_Attribute`)
        if any(isinstance(p, (cst.Import, cst.ImportFrom)) for p in self.parents[-4:]):
            return  # `from torch import no_grad` names it; only using it switches anything
        if node.value in _GRAD_MODE_LAST and self.names.qualified_name(node) in _GRAD_MODE_NAMES:
            self._grad_mode_reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        attr = node.attr.value
        if attr in _GRAD_MODE_LAST and self.names.qualified_name(node) in _GRAD_MODE_NAMES:
            self._grad_mode_reference(node)
        elif attr in _GRAD_ATTRIBUTES:
            self._frame.needs_grad.append(self._tick())

    def visit_Arg(self, node: cst.Arg) -> None:
        frame = self._frame
        if node.keyword is not None and node.keyword.value == "requires_grad":
            if literal_bool(node.value) is not False:
                frame.needs_grad.append(self._tick())
        if isinstance(node.value, cst.Name):
            self._reference(node.value.value)
        elif isinstance(node.value, cst.Attribute):
            self._reference(node.value.attr.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = dotted(node.targets[0].target)
        if target is None:
            return
        value = node.value
        if isinstance(value, cst.Call):
            self._frame.constructed.add(target)
            if self.facts.values.kind(value) is ValueKind.MODEL:
                self._frame.built_models.add(target)
        # `model = torch.load(path)`, or a whole model kept in a checkpoint: `torch.load(path)["model"]`
        loading = value.value if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(
            value.slice[0].slice, cst.Index) and isinstance(value.slice[0].slice.value, cst.SimpleString) else value
        if isinstance(loading, cst.Call) and self.names.call_name(loading) == "torch.load":
            self._frame.loaded.add(target)
            self._frame.loads.append((target, loading, self._tick()))
        # model = Net().to(device).eval()
        eval_call = _eval_in_chain(value)
        if eval_call is not None:
            self._frame.evals.append((target, eval_call, self._tick()))

    def _reference(self, name: str) -> None:
        frame = self._frame
        self._references.setdefault(name, []).append(_Reference(frame.node, frame.guard_depth > 0))

    def visit_Call(self, node: cst.Call) -> None:
        frame = self._frame
        func = node.func
        last = _last_name(func)
        if last is not None:
            self._reference(last)
        callee = dotted(func)
        order = self._tick()
        if isinstance(func, cst.Attribute):
            receiver = dotted(func.value)
            if _is_eval_call(node):
                if receiver is not None:
                    frame.evals.append((receiver, node, order))
                return
            if last == "train" and receiver is not None:
                frame.trains.append((receiver, order))
            if last == "load_state_dict" and receiver is not None:
                frame.loaded.add(receiver)
                frame.loads.append((receiver, node, order))
            if last == "step" and receiver is not None:
                if self.facts.values.kind(func.value) in (ValueKind.OPTIMIZER, ValueKind.GRAD_SCALER):
                    frame.needs_grad.append(order)
        if last is not None and last in _VALUE_READS:
            frame.reads_values = True
        if self._gives_weights(node, last):
            frame.loads_weights = True
        if self._trains_through(node, frame):
            frame.needs_grad.append(order)  # `self._train_epoch(loader)`, whose step runs backward
            frame.trains_model = True
        elif self._library_trains(node):
            frame.trains_model = True  # `trainer.fit(model)`: Lightning runs the training loop
        elif self._hands_model_to_unknown(node, frame):
            frame.needs_grad.append(order)  # `pgd_attack(model, x)`: what it does cannot be known
        qualified = self.names.call_name(node)
        if qualified is not None and takes_gradients(qualified):
            # `torch.autograd.grad(...)`, `IntegratedGradients(model)`, `torchattacks.PGD(model)`: the
            # data table of libraries that differentiate through what they are given
            frame.needs_grad.append(order)
        if callee is not None and node.args:
            frame.forwards.append(_Forward(callee, frame.guard_depth > 0, order, func, node))

    # -- the verdict ------------------------------------------------------------

    def leave_Module(self, original_node: cst.Module) -> None:
        for candidate in self._candidates:
            self._report_function(candidate)
        if not self._other_framework:
            self._report_stretches(self._frames[0], "")

    def _always_guarded(self, name: str, seen: Set[str], node: Optional[cst.FunctionDef] = None) -> bool:
        """Whether every use of ``name`` in this file runs with gradients off:
        inside ``with torch.no_grad():``, inside a decorated function, or inside
        a function that is itself only used that way (in this file, and, for
        a module-level function, by every call from the project's other
        modules: ``validate(...)`` only ever called under ``no_grad`` by test.py)."""
        references = self._references.get(name, [])
        if name in seen:
            return False
        outside = self._outside_sites(node) if node is not None else ()
        if not references and not outside:
            return False
        if not all(site.grad_disabled and not site.training_step for site in outside):
            return False
        seen = seen | {name}
        return all(
            ref.guarded
            or (ref.caller is not None and self._always_guarded(ref.caller.name.value, seen, ref.caller))
            for ref in references
        )

    def _outside_sites(self, node: cst.FunctionDef) -> Tuple[CallSite, ...]:
        """Calls of a module-level function of this file from the project's other modules."""
        if node not in self.context.module.body:
            return ()
        module = self.facts.project.module_of(self.context.path)
        return self.facts.project.callers_of(f"{module}.{node.name.value}") if module is not None else ()

    def _report_function(self, candidate: _Candidate) -> None:
        node = candidate.node
        name = node.name.value
        outside = candidate.outside
        if candidate.by_callers and len(self._references.get(name, ())) > len(self.facts.training.callers(node)):
            return  # also used some other way (a callback, say): not only evaluation code
        in_step = [edge.call for edge in self.facts.training.callers(node)
                   if self.facts.training.in_training_step(edge.call)]
        if any(site.training_step for site in outside) or (in_step and not (
            candidate.has_eval and self._result_dropped(node, in_step)
        )):
            return  # its outputs may feed a backward pass: it cannot be known
        in_file_guarded = self._always_guarded(name, set())
        if self.facts.callees.called_without_grad(node) and (in_file_guarded or not self._references.get(name)):
            return  # every project call runs it with gradients off (`self.val_eval.get_metrics(model)` under no_grad)
        if outside and all(site.grad_disabled for site in outside):
            # Another module runs it with gradients off: quiet when every
            # call here does too (or there is none).
            if in_file_guarded or not self._references.get(name):
                return
        elif in_file_guarded and not outside:
            return
        spelling = spell(self.names, "torch.no_grad")
        fix = None
        if spelling is not None:
            decorated = add_decorator(node, cst.Call(func=spelling.expression))
            fix = self.replace(
                node, decorated, Applicability.UNSAFE, f"Decorate `{name}` with `@{spelling.text}()`",
                imports=spelling.imports,
            )
        what = "runs the model in eval mode" if candidate.has_eval else "runs the model for evaluation"
        self.report(
            node.name,
            f"`{name}` {what} without `torch.no_grad()`; autograd keeps a graph "
            "and activations for a backward pass that never comes",
            fix=fix,
            hint="Decorate it with `@torch.no_grad()` (or `@torch.inference_mode()`), "
            "or wrap its forward passes in `with torch.no_grad():`",
            statement=node,
        )

    def _evaluated_by_the_script(self) -> Set[str]:
        """Models the module body puts in eval mode when nothing in the file
        trains (no backward, ``autograd.grad``, ``.grad`` read, optimizer or
        scaler step, and no ``.train()`` call anywhere): an evaluation script
        whose functions run those models for evaluation."""
        if self._script_models is None:
            training = self.facts.training
            functions = training.functions.values()
            if any(f.computes_gradients or f.optimizer_steps or f.scaler_steps
                   or any(mode.train for mode in f.mode_calls) for f in functions):
                self._script_models = set()
            else:
                body = training.function(self.context.module)
                self._script_models = {
                    name for name in (dotted(mode.receiver) for mode in body.mode_calls if not mode.train)
                    if name is not None
                }
        return self._script_models

    def _module_global(self, func: cst.BaseExpression) -> bool:
        """Whether the object a call runs (the root name of ``encoder(x)`` or
        ``decoder.step(x)``) is the module's own global where the call is."""
        root = func
        while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
            root = root.func if isinstance(root, cst.Call) else root.value
        if not isinstance(root, cst.Name):
            return False
        bindings = self.facts.scopes.resolve(root)
        return bool(bindings) and all(
            binding.scope is not None and binding.scope.kind is ScopeKind.MODULE for binding in bindings
        )

    def _result_dropped(self, node: cst.FunctionDef, calls: List[cst.Call]) -> bool:
        """Whether nothing the function computes can reach the caller's
        backward pass: it returns no value and every call is a statement of
        its own (``sample_images(step)`` in a training loop)."""
        if any(isinstance(inner, cst.Return) and inner.value is not None for inner in walk_body(node.body)):
            return False
        parents = self.facts.parents
        return all(isinstance(parents.get(call), cst.Expr) for call in calls)

    def _report_stretches(self, frame: _Frame, where: str) -> None:
        """A script (or a function that also trains: ``where`` says so) that
        puts a model in eval mode (or loads trained weights into it, in a
        script) and then runs it outside ``torch.no_grad()``, with no gradient
        work before the model goes back to ``.train()`` (or the code ends)."""
        evaled = {obj for obj, _, _ in frame.evals}
        loads = [entry for entry in frame.loads if entry[0] not in evaled] if frame.node is None else []
        for (obj, call, start), by_eval in [*((e, True) for e in frame.evals), *((e, False) for e in loads)]:
            # The stretch until the same model goes back to training.
            end = min([order for o, order in frame.trains if o == obj and order > start],
                      default=self._order + 1)
            # Its own forward passes: those before the model's next `.eval()` (which
            # is reported for what follows it): each evaluation is a place to fix.
            own = min([order for o, _, order in frame.evals if o == obj and order > start], default=end)
            # Gradient work in the stretch, or grad mode managed by hand before its end
            # (`torch.set_grad_enabled(False)` at the top of `__main__` holds for the rest).
            if any(start < order < end for order in frame.needs_grad) or any(
                    order < end for order in frame.manages_grad):
                continue
            models = {obj} | self._evaled_through(obj, call)  # `model.eval()` of a plain object's method
            if not any(
                start < f.order < min(end, own) and not f.guarded
                and (self._runs_evaled(f, models) or self._helper_runs_evaled(f, models)
                     or self._method_runs_evaled(f, models, frame.node))
                for f in frame.forwards
            ):
                continue
            what = "is put in eval mode and" if by_eval else "gets trained weights and is"
            self.report(
                call,
                f"{where}`{obj}` {what} then run without `torch.no_grad()`; "
                "autograd keeps a graph and activations for a backward pass that never comes",
                hint="Wrap the forward passes that follow in `with torch.no_grad():` "
                "(or `torch.inference_mode()`)",
            )


def _outermost_chain(call: cst.Call, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> cst.BaseExpression:
    """The whole chain of module methods that return the module a mode
    switch sits in (``load(...).eval().cuda()`` for its ``.eval()``)."""
    node: cst.BaseExpression = call
    while True:
        attribute = parents.get(node)
        outer = parents.get(attribute) if isinstance(attribute, cst.Attribute) and attribute.value is node else None
        if not (isinstance(outer, cst.Call) and outer.func is attribute
                and isinstance(attribute, cst.Attribute) and attribute.attr.value in MODULE_RETURNS_ITSELF):
            return node
        node = outer


def _module_itself(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The object a chain of ``nn.Module`` methods that return the module acts on."""
    while (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
           and expr.func.attr.value in MODULE_RETURNS_ITSELF):
        expr = expr.func.value
    return expr


def _argument(call: cst.Call, name: str, positional: List[str]) -> Optional[cst.BaseExpression]:
    """The expression a call passes for parameter ``name`` (None when it
    cannot be told: ``*args``, ``**kwargs`` or a default)."""
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg.value
            continue
        if index < len(positional) and positional[index] == name:
            return arg.value
        index += 1
    return None


def _is_eval_call(node: cst.Call) -> bool:
    """``x.eval()``, ``x.train(False)`` or ``x.train(mode=False)``."""
    if not isinstance(node.func, cst.Attribute):
        return False
    method = node.func.attr.value
    if method == "eval":
        return not node.args
    if method == "train" and len(node.args) == 1:
        arg = node.args[0]
        return (arg.keyword is None or arg.keyword.value == "mode") and literal_bool(arg.value) is False
    return False


def _eval_in_chain(expr: cst.BaseExpression) -> Optional[cst.Call]:
    """The ``.eval()`` call in ``Net().to(device).eval()``, if any."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if _is_eval_call(expr):
            return expr
        if expr.func.attr.value not in ("to", "cuda", "cpu", "half", "float", "double",
                                        "bfloat16", "eval", "train"):
            return None
        expr = expr.func.value
    return None
