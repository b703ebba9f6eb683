"""What the project's functions and methods do, across files.

A rule asks "does this call run a training step, iterate this loader, build
a ``DistributedSampler``?" and should get the same answer whether the code is
inline, in a helper, a method, a wrapper class in another module, or a known
library wrapper (``torchlint/data/wrappers.toml``).  Each file of the project
that matters (a module some file imports, or a file that calls into one) is
summarised once, with CPython's ``ast``, into plain data
(:class:`FileSummary`, JSON in the run's cache, keyed by the file's bytes):
for every function and method, which of its parameters it iterates, which it
yields the items of, whether it calls ``backward()`` or steps an optimizer,
what it returns (a parameter, or a new instance of a named class, perhaps
under ``if <parameter>:``), and the calls it makes with the parameters it
passes on.  :func:`link` then propagates those facts through the calls, file
to file, to a fixed point: every function's facts only grow, and a function
is revisited only when a callee's facts grew, so the cost is linear in the
calls.  Calls between the project's modules also record which class built
each argument (``train(model, loader, NativeScaler())``), so that a
parameter called in another module (``loss_scaler(loss, optimizer)``) is
known when every call agrees.
"""

from __future__ import annotations

import ast
import builtins
import collections
import dataclasses
import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    AbstractSet, Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union,
    cast,
)

from torchlint.analysis.gradmode import GradMode, grad_mode_of
from torchlint.analysis.imports import (
    add_import, dotted, is_torch_module, module_level,
    module_imports, parse_quietly, project_star_modules, python_grad_mode, resolve,
)
from torchlint.analysis.store import Store, all_of, count, store_key
from torchlint.source.tree import python_literal_bool
from torchlint.data.apidata import (
    EVERY_POSITIONAL, VARIABLE_WRAPPERS, Effect, Wrapper, loader_signature, loads_weights, star_exports,
    takes_gradients, wrappers,
)
from torchlint.data.versions import TorchVersion


_FORMAT = b"callable-summaries-48"
BACKWARD = Effect.BACKWARD.value
STEP = Effect.STEP.value
_AUTOGRAD = ("torch.autograd.backward", "torch.autograd.grad")

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef]
Move = Tuple[str, str, bool]
"""``(parameter, device, settled)``: a copy of the parameter (or of the items
a loop draws from it) to ``device`` -- ``cuda``, ``param:<name>`` (the
device a parameter holds), ``attr:<name>`` (the instance's attribute), or
``?`` -- and whether ``non_blocking`` is passed (or may be)."""
MODULE_BODY = "<module>"
GRAD_FACT = {"read": "grad"}
GRAD_OFF_YIELDS = "yields"
"""In :attr:`Summary.grad_off`: a ``@contextlib.contextmanager`` generator
every ``yield`` of which runs with gradients off: ``with f(...):`` runs its
body so."""
GRAD_OFF_ENTERS = "enters"
"""In :attr:`Summary.grad_off`: its own statements switch gradients off and
leave them so (``torch.set_grad_enabled(False)``, ``torch.no_grad().__enter__()``):
a class's ``__enter__`` that does makes ``with Cls(...):`` a grad-off block."""
GRAD_OFF_WRAPS = "wraps"
"""In :attr:`Summary.grad_off`: a function it defines calls a parameter of an
enclosing function (the function a decorator is given) only with gradients
off, or it hands a parameter to a grad-off decorator
(``torch.no_grad()(fn)``): used as a decorator, or as a decorator factory,
it runs the decorated function without gradients."""
"""Metadata of the :class:`Summary` facts that change with grad mode (a
decorator or ``with torch.no_grad()`` added or removed): the digest of the
index's ``summaries`` leaves them out, and a lint that asks one records the
read ``summaries-grad:<function>`` instead (:meth:`Summaries.grad_facts`), so
such an edit re-lints only the files that asked about that function."""
"""The name a module's top-level code is summarised under (nothing calls it)."""
VIEW_METHODS = frozenset({
    "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t",
    "narrow", "view_as", "reshape_as", "expand", "expand_as", "contiguous",
})
"""Tensor methods that return a view of the same memory (a pinned batch stays
pinned); a cast such as ``.float()`` makes a new tensor."""
RESULT = "@"
_PERSISTENT = RESULT + "g:"
"""How the name of a *returned value* starts: what a call's result (or one
element of the tuple it returns) becomes, tracked like a parameter so that
the same facts (iterated, iterated again and again, its items copied to a
device) are recorded for it: ``@<kind>:<callee>|<position>``, the kind
``g`` for a value that outlives a call of the function (a module global, a
``self`` attribute), ``l`` for a local, ``r`` for a local assigned inside a
loop (built anew for every pass); the position empty for the whole value,
else the index of the tuple element.  :func:`link` takes them out of the
summaries and joins them by callee (:class:`ReturnUse`).  A local bound in
branches to what different calls return names each ``<callee>|<position>``,
joined by :data:`RESULT_SEPARATOR` (:func:`results_of` reads them)."""
RESULT_SEPARATOR = "&"
_MAX_WRAPPED = 8
"""How many wrappers deep a loop's source is followed (``tqdm(enumerate(loader))``)."""
HELD = "self."
"""How an attribute of a method's own instance is named where a parameter
would be (``self.<attr>``: ``for batch in self.train_loader``): tracked
like a parameter through the class's methods, then, for a class built by a
call of the project, put in terms of the ``__init__`` parameter the class
stores in that attribute (:func:`link`'s construction summaries)."""
OBJECT = "^"
"""Between a parameter's name and an attribute: ``<param>^<attr>`` is
``session.train_set`` where ``session`` is a parameter holding a plain
object of the project (tracked like a parameter); :func:`_pinned` fills it
for an object built by a construction that kept a pinned loader there."""
BATCH = "="
"""Before a parameter's name: the parameter is a batch (or holds one), not a loader."""
PINNED_EACH = "*"
"""In :attr:`Function.pinned_returns`: the function returns a list every
element of which is a loader built with ``pin_memory=True`` (filled by
``append`` in a loop): whatever position a caller unpacks is pinned."""
DEFAULT_PIN = "?"
"""In :attr:`Function.pinned_returns`: ``<position>?<parameter>``, the loader
at that position is built with ``pin_memory=<parameter>`` whose default is
``True``: pinned where a call leaves the parameter to its default."""
PINNED_LOCAL = "!pinned"
"""What a loop draws from a local loader every binding of which so far is a
construction with a literal ``pin_memory=True``: its items, handed to a
project callable (``model.feed_data(batch)``), are pinned batches there
(:attr:`Call.items`; :func:`_pinned`).  Never a fact of the function itself."""
VALUES = "[]"
"""After a parameter's name: the values the parameter holds (a dict or list of
loaders: ``for x, y in dataloaders[phase]``), not the parameter itself, which
a loop over it would draw keys or elements from.  Callers put in
``argument[...]`` for it (:meth:`~torchlint.analysis.callees.Callees.iterated`)."""


# -- one file's facts, as written -------------------------------------------------------


@dataclass(frozen=True)
class Return:
    """One ``return`` of a function: a new instance of ``builds``, the
    parameter ``parameter`` as is, or what ``call`` returns (an index into
    the function's calls); ``guard`` is ``(parameter, truth)`` when it sits
    directly under ``if <parameter>:`` (True) or its ``else`` (False)."""

    builds: Optional[str] = None
    parameter: Optional[str] = None
    call: Optional[int] = None
    guard: Optional[Tuple[str, bool]] = None
    one_of: Tuple[str, ...] = ()
    """What the returned call may run, one of several, as written: a name
    the function imports in several branches (``from models.plain import
    Plain as M`` / ``from models.gan import GAN as M``; ``return M(opt)``),
    a value of a module-level registry dict (``return MODELS[name](args)``),
    or one class (``m = Plain(opt); return m``)."""


@dataclass(frozen=True)
class Call:
    """A call a function makes: the dotted name of what it calls (a method of
    the function's own class as ``<module>.<Class>.<method>``), whether the
    instance is bound (``self.m(...)``, ``obj(...)``), the function's
    parameters it passes (slot: position as a digit string, or keyword),
    and how the result is used: ``iter`` (a loop draws from it) or ``call``."""

    callee: str
    bound: bool
    slots: Tuple[Tuple[str, str], ...]
    role: str = "call"
    disabled: bool = False
    makers: Tuple[Tuple[str, str], ...] = ()
    """For each slot whose argument a named class certainly built (a local
    assigned once from ``Cls(...)``, or ``Cls(...)`` itself): that class."""
    in_loop: bool = False
    """Made inside a ``for``/``while`` loop of the function."""
    items: Tuple[Tuple[str, str], ...] = ()
    """Slots filled with an item a loop of the function draws from one of
    its parameters (or a part of it): slot -> that parameter."""
    devices: Tuple[Tuple[str, str], ...] = ()
    """Slots filled with a device the function knows: ``cuda``, ``cpu``,
    ``param:<name>`` or ``attr:<name>`` (``self.device``)."""
    parts: Tuple[Tuple[str, str], ...] = ()
    """Slots filled with a part of one of the function's parameters
    (``to_gpu(x)`` after ``x, y = batch``): slot -> that parameter."""
    on_self: Optional[str] = None
    """For a method's call on its own instance: ``""`` for ``self.m(...)``,
    the attribute for ``self.<attr>.m(...)``; None for any other call."""
    pins: Tuple[Tuple[str, str], ...] = ()
    """For each slot whose argument a call built (a local assigned once from
    ``f(...)``, or ``f(...)`` itself; :attr:`makers` names ``f``): what that
    call passes for ``pin_memory``: ``lit`` a literal ``True``, ``no``
    anything else, ``""`` nothing (``**`` unpacked: not recorded)."""
    choice: int = 0
    """Not 0: one of several callables the call may run (a registry's value,
    a name imported in several branches), one such call each, all with the
    same number: the call does what every one of them does (:func:`meet`),
    and a pinned loader given to it reaches whichever runs."""
    passed: Tuple[str, ...] = ()
    """Every slot the call fills (``*`` when it unpacks ``*args`` or
    ``**kwargs``, which may fill any): what :attr:`makers` and :attr:`built`
    leave out holds something else (:func:`_passed_classes`)."""
    built: Tuple[Tuple[str, str], ...] = ()
    """For each slot whose argument one of several named classes built (``A()
    if c else B()``, or a local bound to ``A()`` in one branch and ``B()`` in
    another) where :attr:`makers` knows no one class: each such class, one
    pair per class."""


@dataclass(frozen=True)
class Function:
    """One ``def`` of the file (module level, or a method of a module-level class)."""

    qualified: str
    parameters: Tuple[str, ...]
    keyword_only: Tuple[str, ...] = ()
    method: bool = False
    runs: FrozenSet[str] = frozenset()
    iterates: FrozenSet[str] = frozenset()
    yields_from: FrozenSet[str] = frozenset()
    returns: Tuple[Return, ...] = ()
    calls: Tuple[Call, ...] = ()
    called_parameters: Tuple[Tuple[str, bool], ...] = ()
    """Parameters the function calls (``loss_scaler(loss, opt)``), and whether
    inside a loop: their effect depends on what callers pass."""
    loop_runs: FrozenSet[str] = frozenset()
    """What it runs inside its loops (a training loop's backward), where
    ``runs`` is what it runs once per call (a training step's)."""
    repeats: FrozenSet[str] = frozenset()
    """Parameters it iterates inside another loop (``while True: for b in loader``)."""
    moves_items: FrozenSet[Move] = frozenset()
    """Parameters whose items (a loop's batches, or parts of them) it copies to a device."""
    moves: FrozenSet[Move] = frozenset()
    """Parameters it copies (or a part of) to a device (``x.cuda()``)."""
    forwards: FrozenSet[str] = frozenset()
    """For a method: the instance's attributes it calls (``self.policy(x)``,
    ``self.policy.forward(x)``) with gradients on (outside ``no_grad``)."""
    evals: FrozenSet[str] = frozenset()
    """For a method: the instance's attributes it puts in eval mode
    (``self.net.eval()``, ``self.net.train(False)``) and never back in
    training mode (``self.net.train()``)."""
    relays: Tuple[Tuple[str, str], ...] = ()
    """What it returns that a call of another function returned: its
    position (``""`` for the whole value, else the tuple element) -> that
    returned value's name (:data:`RESULT`): ``data_set, data_loader =
    data_provider(args, flag); return data_set, data_loader``."""
    pinned_returns: FrozenSet[str] = frozenset()
    """Where it returns a loader it builds with a literal ``pin_memory=True``
    (a local assigned once from the construction, or the construction):
    ``""`` for the whole value, else the tuple element's position
    (``return train_loader, val_loader``)."""
    pinned_attributes: FrozenSet[str] = frozenset()
    """For a method: the ``self.<attr>`` it assigns a loader built with a
    literal ``pin_memory=True`` (``self.train_loader = DataLoader(...)``)."""
    device_defaults: Tuple[Tuple[str, str], ...] = ()
    """Parameters whose default is a device it can name: ``cuda`` or ``cpu``
    (``device="cuda"``): what a call that leaves them out copies to."""
    yields_items: FrozenSet[str] = frozenset()
    """Of :attr:`yields_from`, the parameters whose items it yields as they
    come (``for x in loader: yield x``, not ``yield x.cuda()``): a caller's
    copy of what it yields copies the parameter's items."""
    copies: Tuple[Tuple[str, int, int], ...] = ()
    """Its own copies to a device without ``non_blocking`` of items drawn
    from a parameter (or from ``self.<attr>``, :data:`HELD`), or of a
    parameter itself or a part of it (:data:`BATCH` and its name): (that
    source, the copy call's line and UTF-8 column).  Where the project's callers pin what they pass for
    it, the copy is a blocking copy of pinned memory (:attr:`Summaries.pinned_copies`)."""
    stub: bool = False
    """Its body only says it is not implemented (:func:`_stub`): subclasses define it."""
    runs_parameters: FrozenSet[str] = frozenset()
    """Parameters it calls as a module (``model(x)``, ``model.forward(x)``)
    with gradients on (outside ``no_grad``): a forward pass of what callers pass."""
    gradients: bool = False
    """It calls a library that differentiates through what it is given
    (``IntegratedGradients(model).attribute(x)``: ``data/autograd.toml``)."""
    loads_weights: bool = False
    """It gives a model trained weights: ``x.load_state_dict(...)``, or a call
    of a ``[[weights]]`` callable of ``data/autograd.toml`` (``torch.load``,
    ``from_pretrained``)."""
    grad_off: FrozenSet[str] = frozenset()
    """What it does to the grad mode of code it runs for its caller
    (:data:`GRAD_OFF_YIELDS`, :data:`GRAD_OFF_ENTERS`, :data:`GRAD_OFF_WRAPS`)."""
    annotated: Tuple[Tuple[str, str], ...] = ()
    """Parameters annotated with a named class (``scaler: GradScaler``,
    ``Optional[GradScaler]``): parameter -> that class, as the file's imports
    name it; what the function hands on from them is of that class."""
    kept_results: Tuple[Tuple[str, str], ...] = ()
    """For a method: each ``self.<attr>`` it assigns what a project call
    returns, whole or as one element of a returned tuple (``self.train_loader,
    self.val_loader = get_dataloader(args)``): attr -> that value's name
    (:data:`RESULT`), for :func:`_pinned` to read once the callee is known."""


@dataclass(frozen=True)
class WrappedLayer:
    """A module class whose ``forward`` returns what one layer it builds
    returns (``return self.conv(x)``, ``self.conv = nn.Conv1d(...)`` in
    ``__init__``): to what follows it, an instance is that layer."""

    qualified: str
    """The class."""
    layer: str
    """What builds the layer (``torch.nn.Conv1d``)."""
    parameters: Tuple[str, ...]
    """``__init__``'s parameters after the instance, in order."""
    keyword_only: Tuple[str, ...] = ()
    arguments: Tuple[Tuple[str, str], ...] = ()
    """How the layer is built: its keyword -> ``param:<name>`` (one of
    ``__init__``'s parameters, passed on), ``True``/``False`` (a literal), or
    ``?`` (anything else)."""
    positional: Tuple[str, ...] = ()
    """The layer's positional arguments, the same way."""
    defaults: Tuple[Tuple[str, str], ...] = ()
    """``__init__``'s parameters whose default is a literal ``True``/``False``."""
    open_keywords: bool = False
    """The layer also gets ``**kwargs``, or ``__init__`` takes them."""

    def default_of(self, parameter: str) -> Optional[bool]:
        """The literal truth value ``__init__`` gives ``parameter`` by default, if any."""
        return {str(True): True, str(False): False}.get(dict(self.defaults).get(parameter, ""))

    def passes(self, keyword: str, position: Optional[int]) -> Optional[str]:
        """What the layer gets as ``keyword`` (or at ``position``): see :attr:`arguments`."""
        found = dict(self.arguments).get(keyword)
        if found is None and position is not None and position < len(self.positional):
            found = self.positional[position]
        return found


UNKNOWN = "?"
VARARG = "vararg:"
"""In :attr:`BuiltLoader.arguments`: ``vararg:<i>``, the ``i``-th positional
argument a call gives beyond the function's own parameters (its ``*args``,
passed on whole: ``return DataLoader(self, *args, **kwargs)``)."""
"""A loader keyword's value the summary cannot know."""


@dataclass(frozen=True)
class BuiltLoader:
    """A function (or method) every ``return`` of which builds a loader:
    ``return DataLoader(ds, batch_size=bs, **kwargs)``, or a local assigned
    once from such a call and returned.  A caller's call of it is that
    loader, with the keywords its arguments decide."""

    qualified: str
    """The function."""
    loader: str
    """The loader class (``torch.utils.data.DataLoader``)."""
    arguments: Tuple[Tuple[str, str], ...] = ()
    """What the loader gets, by its keyword (positions mapped to names):
    ``param:<name>`` (one of the function's parameters, passed on),
    ``lit:<source>`` (a literal number, ``True``/``False``/``None``), or
    :data:`UNKNOWN`; a ``**`` of a dict display or ``dict(...)`` assigned
    once and never changed counts as its keywords."""
    defaults: Tuple[Tuple[str, str], ...] = ()
    """The function's parameters whose default is a literal: ``lit:<source>``."""
    forwards: Optional[str] = None
    """The function's ``**`` parameter, passed on whole to the loader as
    ``**<name>`` and used for nothing else: a caller's extra keywords reach
    the loader."""
    open_keywords: bool = False
    """The loader also gets a ``*``/``**`` whose contents are not known:
    keywords not in :attr:`arguments` may be passed too."""
    through: bool = False
    """Read from one file, not yet linked: every ``return`` gives what a call
    of the callable :attr:`loader` (a project function, perhaps) returns;
    :attr:`arguments` are that call's, by slot (a position as a digit
    string, or a keyword), :attr:`forwards` the function's ``**`` passed on
    whole to it.  :func:`link` puts the loader the callee builds in its
    place, or drops it."""
    bound: bool = False
    """With :attr:`through`: the call is a method of the function's own instance (``self.build(...)``)."""
    parts: Tuple[int, ...] = ()
    """Empty: a call gives the loader itself.  Else every ``return`` gives a
    tuple display of :attr:`arity` elements, and these positions hold
    loaders (``return train_loader, val_loader, n_classes``): a caller's
    unpacking of the call gets a loader at each of them, with what the
    loaders there agree on (a keyword they pass differently is not known)."""
    arity: int = 0
    """With :attr:`parts`: the length of the tuple every ``return`` gives."""


_MAX_CHAIN = 8
"""How many project functions deep a loader is followed through functions that return another's."""
_MAX_PATH = 3
"""How many attributes deep a method's forwards and eval switches are followed (``self.a.b.c``)."""


@dataclass(frozen=True)
class FileSummary:
    """The facts of one file: its functions, its classes' bases, and the
    module classes that wrap one layer."""

    module: str
    functions: Tuple[Function, ...] = ()
    bases: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    layers: Tuple[WrappedLayer, ...] = ()
    attributes: Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...] = ()
    """For each class: ``self.<attr>`` set once, in ``__init__``, to one of its parameters (attr -> parameter)."""
    loaders: Tuple[BuiltLoader, ...] = ()
    """The functions and methods that build and return a loader."""
    cuda: bool = False
    """The file names CUDA: ``.cuda()``, a ``"cuda..."`` string, ``torch.cuda``
    (a device it only knows at run time is then taken to be an accelerator)."""
    accelerators: Tuple[str, ...] = ()
    """Its functions some ``return`` of which gives a CUDA device (``define_device("auto")``)."""
    epochs: bool = False
    """The file calls a ``set_epoch`` method somewhere."""
    devices: Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...] = ()
    """For each class, each ``self.<attr>`` it writes: ``?``, unless it sets
    it once, to a device that may be CUDA
    (``cuda``: ``torch.device("cuda" if ... else "cpu")``), to the CPU (``cpu``), or to what a call
    returns (``call:<dotted name>``; ``self._acquire_device()`` as
    ``<module>.<Class>._acquire_device``): attr -> that."""
    registries: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    """Its module-level registry dicts (``trainer_dict = {"base": BaseTrainer,
    ...}``, nothing writing to them later), by dotted name: the callables
    their values name.  Another module's ``trainer_dict[key](...)`` is a call
    of one of them (:data:`REGISTRY_CALL`)."""


REGISTRY_CALL = "[]"
"""The end of a callee read from one file: ``<module>.<name>[]`` is a value of
the registry dict ``<module>.<name>`` another module defines; :func:`link`
puts the registry's values in its place (:attr:`FileSummary.registries`)."""


# -- after linking ------------------------------------------------------------------------


@dataclass(frozen=True)
class ReturnUse:
    """What the project's callers do with the value a function returns (or
    one element of the tuple it returns), joined over every call whose result
    is kept in a name, a module global or a ``self`` attribute, or looped
    over directly: the reverse of a summary."""

    iterated: bool = False
    """Some caller loops over it (directly, through ``enumerate``/``tqdm``, or
    by handing it to a function that does)."""
    repeated: bool = False
    """Some caller iterates the same value again and again: inside an epoch
    loop, or in a function called in one (a value built anew inside the loop
    does not count)."""
    to_cuda: bool = False
    """Some caller copies its items to a device that is not the CPU: CUDA by
    name, or a device known only at run time in a file that uses CUDA."""
    blocking: bool = False
    """Some such copy passes no ``non_blocking`` (and cannot through ``*``/``**``)."""
    callers: Tuple[str, ...] = ()
    """The callers (functions, methods or ``<module>`` bodies) that use it, sorted."""
    kept: bool = False
    """Not returned but kept in a ``self`` attribute, and used by the methods
    of the class's subclasses (:meth:`Summaries.kept_use`)."""
    yielded: bool = False
    """Not returned but handed out batch by batch by a generator (``yield
    from loader``): the callers' uses are of the items they draw."""

    def merged(self, other: "ReturnUse") -> "ReturnUse":
        """Both uses at once (a loader returned at two positions)."""
        return ReturnUse(self.iterated or other.iterated, self.repeated or other.repeated,
                         self.to_cuda or other.to_cuda, self.blocking or other.blocking,
                         tuple(sorted({*self.callers, *other.callers})), self.kept and other.kept,
                         self.yielded and other.yielded)


@dataclass(frozen=True)
class Summary:
    """What calling a project function (or a library wrapper) does, with the
    effects of everything it calls: ``parameters`` in order (the instance
    first for a method), ``runs`` (``backward``, ``step``: once per call, as
    a training step does; ``loop_runs``: in a loop, as a training loop does), the parameters
    it ``iterates`` and those it ``yields_from``, and its ``returns``."""

    qualified: str
    parameters: Tuple[str, ...]
    keyword_only: Tuple[str, ...] = ()
    method: bool = False
    runs: FrozenSet[str] = frozenset()
    iterates: FrozenSet[str] = frozenset()
    yields_from: FrozenSet[str] = frozenset()
    returns: Tuple[Return, ...] = ()
    wrapper: bool = False
    """From the library table, not from code."""
    loop_runs: FrozenSet[str] = frozenset()
    """What it runs inside loops, its own or its callees' (a training loop's
    backward): calling it runs a whole loop, not one step."""
    repeats: FrozenSet[str] = frozenset()
    """Parameters it iterates again and again (inside another loop, its own
    or a caller's within it): one call starts several passes over them."""
    moves_items: FrozenSet[Move] = frozenset()
    """Parameters whose items it copies to a device, itself or through its callees."""
    moves: FrozenSet[Move] = frozenset()
    """Parameters it copies to a device, itself or through its callees."""
    forwards: FrozenSet[str] = frozenset()
    """For a method: the instance's attributes it calls with gradients on
    (``self.policy(obs)``): a module's forward pass, when the attribute is a
    module; also through the instance's other methods (``self._forward(x)``)
    and through methods of its attributes' project classes, as dotted paths
    (``self.model.predict(x)`` whose ``predict`` calls ``self.net(x)``:
    ``model.net``), at most :data:`_MAX_PATH` attributes long."""
    evals: FrozenSet[str] = frozenset()
    """For a method: the instance's attributes it leaves in eval mode, itself
    or through the instance's methods and its attributes' project classes'
    methods (``def eval(self): self.policy.eval()`` where ``policy``'s own
    ``eval`` switches ``self.net``: ``policy``, ``policy.net``)."""
    constructs: bool = False
    """What building an instance of a project class (``Solver(cfg, loader)``)
    commits its arguments to: ``__init__``'s own facts, and, for each
    parameter ``__init__`` stores on ``self``, what the class's methods do
    to that attribute (iterate it, every epoch, copy its batches); the
    parameters are ``__init__``'s after the instance.  Named after the class."""
    device_defaults: Tuple[Tuple[str, str], ...] = ()
    """Parameters whose default is a device (:attr:`Function.device_defaults`;
    for a construction, ``__init__``'s)."""
    held_iterates: FrozenSet[str] = frozenset()
    """For a method: the instance's attributes (:data:`HELD`, ``self.loader``)
    it iterates, itself or through the instance's other methods; a caller
    that knows the instance's construction sees which argument that is."""
    held_repeats: FrozenSet[str] = frozenset()
    """Those of :attr:`held_iterates` one call iterates again and again."""
    epochs: FrozenSet[str] = frozenset()
    """For a construction: the parameters a method of the instance iterates
    again and again in a loop that trains (runs ``backward()``), in a class
    whose methods' modules call ``set_epoch`` nowhere; for a function or
    method, those it iterates so itself (``train(model, loader, epochs)``
    running the epoch loop), in a module that calls ``set_epoch`` nowhere, nor
    do the functions it calls: a ``DistributedSampler`` they draw from
    shuffles every epoch the same way."""
    runs_parameters: FrozenSet[str] = field(default=frozenset(), metadata=GRAD_FACT)
    """Parameters it runs forward passes of with gradients on, itself or
    through its callees (``def forward(model, batch): return model(batch)``)."""
    gradients: bool = field(default=False, metadata=GRAD_FACT)
    """It, or a callee, calls a library that differentiates through what it
    is given (:attr:`Function.gradients`): it needs autograd on."""
    grad_off: FrozenSet[str] = field(default=frozenset(), metadata=GRAD_FACT)
    """Used as a context manager or a decorator, it runs the code it is given
    with gradients off (:attr:`Function.grad_off`, its own code's fact)."""
    loads_weights: bool = False
    """It, or a callee, gives a model trained weights (:attr:`Function.loads_weights`)."""

    def parameter_for(self, position: Optional[int], keyword: Optional[str], bound: bool) -> Optional[str]:
        """The parameter an argument fills: at ``position`` (counting after the
        instance when ``bound``), or passed as ``keyword``."""
        if keyword is not None:
            return keyword if keyword in self.parameters or keyword in self.keyword_only else None
        if position is None:
            return None
        if self.wrapper and self.yields_from == frozenset({EVERY_POSITIONAL}):
            return EVERY_POSITIONAL
        index = position + (1 if bound and self.method and not self.wrapper else 0)
        return self.parameters[index] if 0 <= index < len(self.parameters) else None

    def builds(self, truths: Mapping[str, bool]) -> Optional[str]:
        """The class every ``return`` that can run builds, given the literal
        truth values a call passes (``distributed=True``); None when they
        differ or one returns something else."""
        found: Set[str] = set()
        for ret in self.returns:
            if ret.guard is not None and ret.guard[0] in truths and truths[ret.guard[0]] != ret.guard[1]:
                continue
            if ret.builds is None:
                return None
            found.add(ret.builds)
        return found.pop() if len(found) == 1 else None


_MEET_SETS = ("runs", "iterates", "yields_from", "loop_runs", "repeats", "forwards", "evals", "held_iterates",
              "held_repeats", "epochs", "runs_parameters", "grad_off")


def meet(summaries: Sequence[Summary]) -> Optional[Summary]:
    """What a call does whichever of ``summaries`` it runs (a name imported
    from one module or another in two branches, an instance one of several
    classes built): each fact all of them have, their parameters matched by
    position; None when their parameters differ in number or kind.  Named
    after all of them (``a.train|b.train``), so nothing is looked up by it."""
    if not summaries:
        return None
    first = summaries[0]
    found: Dict[str, Set[Any]] = {name: set(getattr(first, name)) for name in _MEET_SETS}
    moves_items, moves = set(first.moves_items), set(first.moves)
    for other in summaries[1:]:
        if (len(other.parameters) != len(first.parameters) or other.keyword_only != first.keyword_only
                or other.method != first.method or other.wrapper or first.wrapper):
            return None
        renamed = dict(zip(other.parameters, first.parameters))

        def rename(value: str) -> str:
            return renamed.get(value, value)

        def rename_move(move: Move) -> Move:
            device = move[1]
            if device.startswith("param:"):
                device = "param:" + rename(device[len("param:"):])
            return (rename(move[0]), device, move[2])

        for name in _MEET_SETS:
            found[name] &= {rename(value) for value in getattr(other, name)}
        moves_items &= {rename_move(m) for m in other.moves_items}
        moves &= {rename_move(m) for m in other.moves}
    same = all(other.returns == first.returns for other in summaries[1:])
    defaults = all(other.device_defaults == first.device_defaults for other in summaries[1:])
    kept = {name: frozenset(values) for name, values in found.items()}
    return dataclasses.replace(
        first, qualified="|".join(sorted({summary.qualified for summary in summaries})),
        returns=first.returns if same else (), device_defaults=first.device_defaults if defaults else (),
        moves_items=frozenset(moves_items), moves=frozenset(moves), constructs=False,
        runs=kept["runs"], iterates=kept["iterates"], yields_from=kept["yields_from"], loop_runs=kept["loop_runs"],
        repeats=kept["repeats"], forwards=kept["forwards"], evals=kept["evals"],
        held_iterates=kept["held_iterates"], held_repeats=kept["held_repeats"], epochs=kept["epochs"],
        runs_parameters=kept["runs_parameters"], gradients=all(summary.gradients for summary in summaries),
        grad_off=kept["grad_off"], loads_weights=all(summary.loads_weights for summary in summaries),
    )


@functools.lru_cache(maxsize=None)
def _wrapper_summary(wrapper: Wrapper) -> Summary:
    yields = frozenset({wrapper.yields}) if wrapper.yields is not None else frozenset()
    returns = (Return(parameter=wrapper.returns),) if wrapper.returns is not None else ()
    return Summary(wrapper.name, wrapper.parameters, (), False, frozenset(e.value for e in wrapper.runs),
                   frozenset(), yields, returns, wrapper=True)


@dataclass(frozen=True)
class Summaries:
    """The linked summaries of a project's functions, and the classes built
    for the parameters other modules' calls pass (when they all agree)."""

    functions: Mapping[str, Summary] = field(default_factory=dict)
    bases: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    parameter_makers: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """``module.function`` -> parameter -> the class every call of it from
    the project builds that argument with."""
    layers: Mapping[str, WrappedLayer] = field(default_factory=dict)
    """The project's module classes that wrap one layer, by qualified name."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Other dotted names of the project's functions and classes: where a
    package re-exports them (``pkg.train`` -> ``pkg.engine.train``)."""
    paths: Mapping[str, str] = field(default_factory=dict)
    """The module name of each summarised file, by absolute path."""
    attributes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Each project class's ``self.<attr>`` that ``__init__`` sets to one of its parameters."""
    loaders: Mapping[str, BuiltLoader] = field(default_factory=dict)
    """The project's functions and methods that build and return a loader, by qualified name."""
    returned: Mapping[str, Mapping[str, ReturnUse]] = field(default_factory=dict)
    """For each project function or method whose result some caller keeps
    and uses: position (``""`` for the whole value) -> what callers do with it."""
    held: Mapping[str, Mapping[str, ReturnUse]] = field(default_factory=dict)
    """For each project class whose methods use ``self.<attr>``: attr -> what
    they do with it (the :class:`ReturnUse` facts, the methods as callers)."""
    placed: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """For each project class that sets ``self.<attr>`` once to a device:
    attr -> ``cuda`` (a device that may be CUDA, also through a project
    helper some ``return`` of which gives one) or ``cpu``; ``?`` where it
    writes something else to an attribute another class keeps a device in."""
    pinned: Mapping[str, FrozenSet[str]] = field(default_factory=dict)
    """For each project function or method: the parameters (and, for a
    method, the ``self.<attr>`` values, :data:`HELD`) some project call
    fills with a loader built with a literal ``pin_memory=True``, directly or
    handed on through other functions and constructions."""
    pinned_copies: Mapping[str, FrozenSet[Tuple[int, int]]] = field(default_factory=dict)
    """By module: the line and UTF-8 column of its functions' copy calls without
    ``non_blocking`` of batches drawn from what :attr:`pinned` holds (or from
    what a project function returns pinned)."""
    copying: FrozenSet[str] = frozenset()
    """The functions and methods those copies are made in."""
    without_grad: FrozenSet[str] = field(default=frozenset(), metadata=GRAD_FACT)
    """The project functions and methods that project calls run, every one of
    those calls with gradients off (inside ``with torch.no_grad():``, or in a
    function decorated so): an evaluation method a trainer in another module
    only ever calls under ``no_grad``.  Read one function at a time, with its
    grad-mode facts (:meth:`grad_facts`)."""
    accelerators: FrozenSet[str] = frozenset()
    """The project functions that return a device that may be CUDA
    (``return "cuda" if torch.cuda.is_available() else "cpu"``): a file that
    calls one runs on the GPU as much as one that spells ``"cuda"``."""
    factories: Mapping[str, FrozenSet[str]] = field(default_factory=dict)
    """The project functions every ``return`` of which builds an instance of
    a project class: those classes (one of them, chosen at run time)."""
    passed: Mapping[str, Mapping[str, FrozenSet[str]]] = field(default_factory=dict)
    """For each project function or method (a class's ``__init__`` for its
    construction): parameter -> the classes whose instances some project
    call passes for it, built at the call or handed on through callers'
    own parameters (:func:`_passed_classes`)."""
    _memo: Dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)
    """Answers that depend on the summaries alone, computed once per index."""

    def grad_facts(self, qualified: str) -> Tuple[FrozenSet[str], bool, FrozenSet[str]]:
        """The grad-mode facts of ``qualified`` (a function, or several joined
        by ``|`` as :func:`meet` names them): its ``runs_parameters``,
        ``gradients`` and ``grad_off``, as the digest of the read
        ``summaries-grad:<qualified>`` sees them."""
        summary = self.functions.get(qualified)
        if summary is None:
            return frozenset(), False, frozenset()
        return summary.runs_parameters, summary.gradients, summary.grad_off

    def grad_off_class(self, qualified: str) -> bool:
        """The project class ``qualified`` derives, itself or through its
        bases, from a context manager that switches gradients off
        (``class evaluating(torch.no_grad)``)."""
        found = first_in_bases(self.canonical(qualified), self.bases,
                               lambda name: name if grad_mode_of(name, True, None) is GradMode.DISABLED else None)
        return found is not None

    def spelled(self, fact: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
        """How a call of a callable with ``fact`` (``runs``, ``yields``,
        ``iterates``, ``builds``) can be spelled: the last parts of such
        functions' and methods' names, and of the classes whose instances'
        call has it (library wrappers included)."""
        key = ("spelled", fact)
        if key not in self._memo:
            has = _FACTS[fact]
            names: Set[str] = set()
            classes: Set[str] = set()
            every = [(name, _wrapper_summary(w)) for name, w in wrappers().items()]
            every += list(self.functions.items())
            for name, summary in every:
                if has(summary):
                    owner, _, last = name.rpartition(".")
                    if last == "__call__":
                        classes.add(owner.rsplit(".", 1)[-1])
                    else:
                        names.add(last)
            self._memo[key] = (frozenset(names), frozenset(classes))
        found: Tuple[FrozenSet[str], FrozenSet[str]] = self._memo[key]
        return found

    def canonical(self, name: str) -> str:
        """The name a function, class or method is defined under."""
        return canonical_name(name, self.aliases)

    def of(self, qualified: str) -> Optional[Summary]:
        """The summary of a function or method (a method found through the
        project class's bases, as Python finds it), or of a library wrapper;
        None when nothing is known."""
        return find(self.canonical(qualified), self.functions, self.bases)

    def passed_classes(self, function: str, parameter: str) -> FrozenSet[str]:
        """The classes whose instances project calls pass for ``parameter`` of
        ``function`` (its qualified name; a class's ``__init__`` for what its
        constructions pass); empty when none is known."""
        return self.passed.get(function, {}).get(parameter, frozenset())

    def maker_of(self, function: str, parameter: str) -> Optional[str]:
        """The class that built what every project call of ``function``
        passes for ``parameter``; None when unknown or they differ."""
        return self.parameter_makers.get(function, {}).get(parameter)

    @property
    def fingerprint(self) -> str:
        """Changes whenever a fact changes."""
        digest = hashlib.sha256()
        for name in sorted(self.functions):
            digest.update(f"{_canonical(self.functions[name])!r}\n".encode())
        for name in sorted(self.parameter_makers):
            digest.update(f"{name}\0{sorted(self.parameter_makers[name].items())!r}\n".encode())
        for name in sorted(self.layers):
            digest.update(f"{self.layers[name]!r}\n".encode())
        for name in sorted(self.attributes):
            digest.update(f"{name}\0{sorted(self.attributes[name].items())!r}\n".encode())
        for name in sorted(self.loaders):
            digest.update(f"{self.loaders[name]!r}\n".encode())
        for name in sorted(self.returned):
            digest.update(f"{name}\0{sorted(self.returned[name].items())!r}\n".encode())
        for name in sorted(self.held):
            digest.update(f"{name}\0{sorted(self.held[name].items())!r}\n".encode())
        for name in sorted(self.placed):
            digest.update(f"{name}\0{sorted(self.placed[name].items())!r}\n".encode())
        for name in sorted(self.pinned):
            digest.update(f"{name}\0{sorted(self.pinned[name])!r}\n".encode())
        for name in sorted(self.pinned_copies):
            digest.update(f"{name}\0{sorted(self.pinned_copies[name])!r}\n".encode())
        digest.update(f"{sorted(self.copying)!r}\n".encode())
        digest.update(f"{sorted(self.accelerators)!r}\n".encode())
        digest.update(f"{sorted(self.without_grad)!r}\n".encode())
        for name in sorted(self.factories):
            digest.update(f"{name}\0{sorted(self.factories[name])!r}\n".encode())
        for name in sorted(self.passed):
            digest.update(f"{name}\0{sorted((p, sorted(c)) for p, c in self.passed[name].items())!r}\n".encode())
        return digest.hexdigest()

    def loader_of(self, qualified: str) -> Optional[BuiltLoader]:
        """The loader a call of the project function or method ``qualified``
        builds (a method found through its class's bases); None when it
        builds none, or nothing is known."""
        summary = self.of(qualified)
        return self.loaders.get(summary.qualified) if summary is not None and not summary.wrapper else None

    def init_parameter(self, qualified: str, attribute: str) -> Optional[str]:
        """The ``__init__`` parameter a class (or its first base that sets it)
        stores as ``self.<attribute>``; None when unknown."""
        return first_in_bases(self.canonical(qualified), self.bases,
                              lambda name: self.attributes.get(name, {}).get(attribute))

    def attribute_device(self, qualified: str, attribute: str) -> Optional[str]:
        """``cuda`` or ``cpu``: the device the project class ``qualified`` (or
        the first of its bases that sets it) keeps in ``self.<attribute>``
        (:attr:`placed`); None when unknown."""
        found = first_in_bases(self.canonical(qualified), self.bases,
                               lambda name: self.placed.get(name, {}).get(attribute))
        return found if found != UNKNOWN else None

    def kept_use(self, qualified: str, attribute: str) -> Optional[ReturnUse]:
        """What the methods of the project class ``qualified``'s subclasses (in
        any module) do with ``self.<attribute>``, a value the class keeps
        there (``self.tr_set = DataLoader(...)`` in a base class, iterated by
        a subclass's training loop); None when no subclass uses it."""
        key = ("subclasses", self.canonical(qualified))
        if key not in self._memo:
            found: List[str] = []
            for name in sorted(self.bases):
                pending, seen = list(self.bases[name]), set()
                while pending:
                    base = self.canonical(pending.pop())
                    if base == key[1]:
                        found.append(name)
                        break
                    if base not in seen:
                        seen.add(base)
                        pending.extend(self.bases.get(base, ()))
            self._memo[key] = tuple(found)
        use: Optional[ReturnUse] = None
        for subclass in self._memo[key]:
            one = self.held.get(subclass, {}).get(attribute)
            if one is not None:
                use = one if use is None else use.merged(one)
        return dataclasses.replace(use, kept=True) if use is not None else None

    def wrapped(self, qualified: str) -> Optional[WrappedLayer]:
        """The one layer the project's module class ``qualified`` wraps, if it wraps one."""
        return self.layers.get(self.canonical(qualified))

    def returned_use(self, qualified: str, position: str) -> Optional[ReturnUse]:
        """What the project's callers do with what the function or method
        ``qualified`` returns at ``position`` (``""``: the whole value; a
        digit: that element of a returned tuple); None when no caller keeps it."""
        return self.returned.get(self.canonical(qualified), {}).get(position)


def _canonical(summary: Summary) -> Tuple[Any, ...]:
    """A summary with its sets sorted: the same text in every process (a
    set's order follows string hashing, which differs between processes)."""
    return tuple(sorted(value) if isinstance(value, frozenset) else value
                 for value in (getattr(summary, f.name) for f in dataclasses.fields(summary)))


def first_in_bases(start: str, bases: Mapping[str, Tuple[str, ...]],
                   look: Callable[[str], Optional[str]]) -> Optional[str]:
    """What ``look`` finds first for the class ``start`` or its bases,
    nearest first, each class once (linear in the classes reached)."""
    pending = collections.deque([start])
    seen: Set[str] = set()
    while pending:
        name = pending.popleft()
        if name in seen:
            continue
        seen.add(name)
        found = look(name)
        if found is not None:
            return found
        pending.extend(bases.get(name, ()))
    return None


def canonical_name(name: str, aliases: Mapping[str, str]) -> str:
    """``name`` as defined: through a re-export of itself, of its class, or
    of the module it is in (the longest such prefix: ``learner.Learner.infer``
    where a script's sibling ``learner`` is the package's ``pkg.learner``).
    A package that re-exports a function of its own submodule under the
    submodule's name (``from .build import build``: ``pkg.build`` is then the
    function) leaves names inside that submodule as they are
    (``pkg.build.build`` is the definition, not ``pkg.build.build.build``)."""
    found = aliases.get(name)
    if found is not None:
        return found
    prefix, rest = name, ""
    while "." in prefix:
        prefix, _, last = prefix.rpartition(".")
        rest = f"{last}.{rest}" if rest else last
        target = aliases.get(prefix)
        if target is not None and not target.startswith(prefix + "."):
            return f"{target}.{rest}"
    return name


def find(qualified: str, functions: Mapping[str, Summary], bases: Mapping[str, Tuple[str, ...]]) -> Optional[Summary]:
    """``qualified`` among ``functions``, a method through its class's bases
    (first base first, each class once), else the library table."""
    found = functions.get(qualified)
    if found is not None:
        return found
    owner, _, method = qualified.rpartition(".")
    if owner in bases:
        seen: Set[str] = set()
        pending = list(reversed(bases[owner]))
        while pending:
            base = pending.pop()
            if base in seen:
                continue
            seen.add(base)
            found = functions.get(f"{base}.{method}")
            if found is not None:
                return found
            wrapper = wrappers().get(f"{base}.{method}")
            if wrapper is not None:
                return _wrapper_summary(wrapper)
            pending.extend(reversed(bases.get(base, ())))
    wrapper = wrappers().get(qualified)
    return _wrapper_summary(wrapper) if wrapper is not None else None


EMPTY_SUMMARIES = Summaries()


_FACTS: Dict[str, Callable[[Summary], bool]] = {
    "runs": lambda summary: bool(summary.runs or summary.loop_runs),
    "yields": lambda summary: bool(summary.yields_from),
    "iterates": lambda summary: bool(summary.iterates or summary.held_iterates),
    "builds": lambda summary: any(r.builds is not None for r in summary.returns),
    "moves": lambda summary: bool(summary.moves_items or summary.moves),
}


def building_words(summaries: Optional[Summaries], classes: FrozenSet[str]) -> FrozenSet[str]:
    """The names of the project's functions some ``return`` of which builds
    one of ``classes`` (a pre-check's test for ``make_sampler(...)``)."""
    if summaries is None:
        return frozenset()
    return _memoised_words(summaries, ("building", classes), (
        name for name, summary in summaries.functions.items() if any(r.builds in classes for r in summary.returns)))


def _memoised_words(summaries: Summaries, key: Tuple[str, Any], names: Iterable[str]) -> FrozenSet[str]:
    """The last dotted part of ``names``, computed once per index under ``key``
    (``names`` is a generator: not run when the answer is already kept)."""
    if key not in summaries._memo:
        summaries._memo[key] = frozenset(name.rsplit(".", 1)[-1] for name in names)
    found: FrozenSet[str] = summaries._memo[key]
    return found


def loading_words(summaries: Optional[Summaries]) -> FrozenSet[str]:
    """The names of the project's functions and methods that build and
    return a loader (a pre-check's test for ``get_dataloader(...)``)."""
    if summaries is None:
        return frozenset()
    return frozenset(name.rsplit(".", 1)[-1] for name in summaries.loaders)


def returning_words(summaries: Optional[Summaries], fact: str) -> FrozenSet[str]:
    """The names of the project's functions and methods whose returned value
    some caller uses as ``fact`` says (a field of :class:`ReturnUse`:
    ``to_cuda``, ``repeated``), and of the ``self`` attributes some class's
    methods use so (:attr:`Summaries.held`): a pre-check's test for the file
    that defines one."""
    if summaries is None:
        return frozenset()
    return _memoised_words(summaries, ("returning", fact), (
        *(name for name, uses in summaries.returned.items() if any(getattr(use, fact) for use in uses.values())),
        *(f"x.{attribute}" for uses in summaries.held.values() for attribute, use in uses.items()
          if getattr(use, fact))))


def pinned_words(summaries: Optional[Summaries]) -> FrozenSet[str]:
    """The names of the project's functions and methods some of whose inputs
    the project's callers pin (:attr:`Summaries.pinned`): a pre-check's test
    for the file that defines one."""
    if summaries is None or not summaries.pinned_copies:
        return frozenset()
    return _memoised_words(summaries, ("pinned", ""), (*summaries.pinned, *summaries.copying))


def moving_words(summaries: Optional[Summaries]) -> FrozenSet[str]:
    """Words a file must mention to call a project function that copies
    data to a device (its name, or its class's): a pre-check's test."""
    if summaries is None:
        return frozenset()
    names, classes = summaries.spelled("moves")
    return names | classes


def training_words(summaries: Optional[Summaries]) -> FrozenSet[str]:
    """Words a file must mention to call something that runs ``backward()``:
    the names of the library wrappers that do (``NativeScaler``), and of the
    project's functions and methods that do, themselves or through their
    callees (a pre-check's test: a file mentioning none of them, nor
    ``backward``, trains nothing)."""
    if summaries is None:
        return _wrapper_training_words()
    if "training" not in summaries._memo:
        found = set(_wrapper_training_words())
        for name, summary in summaries.functions.items():
            if BACKWARD in summary.runs or BACKWARD in summary.loop_runs:
                found.add(name.rsplit(".", 1)[-1])
        found.discard("__call__")
        summaries._memo["training"] = frozenset(found)
    words: FrozenSet[str] = summaries._memo["training"]
    return words


@functools.lru_cache(maxsize=1)
def _wrapper_training_words() -> FrozenSet[str]:
    """The names of the library wrappers that run backward (the table's classes and functions)."""
    found: Set[str] = set()
    for name, wrapper in wrappers().items():
        if Effect.BACKWARD in wrapper.runs:
            found.update(part for part in name.split(".") if part[:1].isupper() or part == name.rsplit(".", 1)[-1])
    found.discard("__call__")
    return frozenset(found)


# -- reading one file -----------------------------------------------------------------------


class _FunctionScan:
    """One walk of one function's body (nested functions and classes left out)."""

    def __init__(self, reader: "_FileReader", node: Union[FunctionNode, ast.Module], qualified: str,
                 owner: Optional[str]) -> None:
        self.reader = reader
        self.qualified = qualified
        self.owner = owner
        self.statements: Sequence[ast.stmt] = node.body
        self._loads: Optional[Dict[str, int]] = None
        arguments = node.args if not isinstance(node, ast.Module) else None
        decorators = node.decorator_list if not isinstance(node, ast.Module) else []
        self.positional = tuple(a.arg for a in (*arguments.posonlyargs, *arguments.args)) if arguments else ()
        self.keyword_only = tuple(a.arg for a in arguments.kwonlyargs) if arguments else ()
        self.parameters = frozenset((*self.positional, *self.keyword_only))
        self.defaults: List[Tuple[str, ast.expr]] = []
        """Each parameter that has a default, with it."""
        if arguments is not None:
            self.defaults.extend(zip(self.positional[len(self.positional) - len(arguments.defaults):],
                                     arguments.defaults))
            self.defaults.extend((name, default) for name, default in zip(self.keyword_only, arguments.kw_defaults)
                                 if default is not None)
        self.method = owner is not None and not any(
            isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in decorators
        )
        self.annotated: List[Tuple[str, str]] = []
        self.kept_results: List[Tuple[str, str]] = []
        if arguments is not None:
            for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
                cls = reader.annotation_class(argument.annotation) if argument.annotation is not None else None
                if cls is not None:
                    self.annotated.append((argument.arg, cls))
        self.instance = self.positional[0] if self.method and self.positional else None
        self.runs: Set[str] = set()
        self.loop_runs: Set[str] = set()
        self.repeats: Set[str] = set()
        self.loops = 0
        self.iterates: Set[str] = set()
        self.yields_from: Set[str] = set()
        self.returns: List[Return] = []
        self.calls: List[Call] = []
        self.called: Dict[str, bool] = {}
        self.items: Dict[str, str] = {}
        """Local names holding an item a loop draws from a parameter (or a part of one)."""
        self.parts: Dict[str, str] = {}
        """Local names holding a part of a parameter (``x, y = batch``)."""
        self.moves_items: Set[Move] = set()
        self.moves: Set[Move] = set()
        self.copies: Set[Tuple[str, int, int]] = set()
        self.yields_items: Set[str] = set()
        self.altered_yields: Set[str] = set()
        self.pinned_returns: Set[str] = set()
        self.pinned_attributes: Set[str] = set()
        self.iterators: Dict[str, Optional[str]] = {}
        """Local names every assignment so far binds to ``iter(x)`` of one
        tracked value (a parameter, a returned value, ``self.<attr>``): that
        value, which ``next(name)`` draws from; None after any other binding."""
        self.pinned_lists: Dict[str, Optional[bool]] = {}
        """Local lists made empty (``loaders = []``): True once every ``append``
        so far added a loader built with ``pin_memory=True``, None before any,
        False after anything else (another append, another binding)."""
        self.assigned: Dict[str, List[ast.expr]] = {}
        """Each plain ``name = value`` assignment so far, by name, in order: read
        only for a loop over a name bound more than once (:meth:`agreed_source`)."""
        self._agreeing: Set[str] = set()
        self.pinned_names: Dict[str, Optional[str]] = {}
        """Local names every assignment so far binds to a construction of one
        loader class with a literal ``pin_memory=True`` (that class), or None."""
        self.entered: Dict[str, ast.Call] = {}
        """Names a ``with`` binds to a library wrapper whose ``__enter__`` returns
        itself (``with tqdm(loader) as bar``): the wrapper call."""
        self.forwards: Set[str] = set()
        self.runs_parameters: Set[str] = set()
        self.gradients = False
        self.evals: Set[str] = set()
        self.trains: Set[str] = set()
        unpacked: Dict[str, Tuple[ast.Call, int]] = {}
        self.filled: Set[str] = set()
        """Parameters bound only where they are None (``if device is None: device = ...``)."""
        self._depth = 0
        self._walrus: Optional[FrozenSet[str]] = None
        self.current: Dict[str, Optional[ast.expr]] = {}
        """What each name holds at this point of the walk, where the function's
        own statements (not a branch, loop or ``with`` body) last bound it
        with a plain assignment; None once a nested statement binds it."""
        self._bound_calls: Dict[str, Optional[List[Tuple[Optional[ast.Call], str]]]] = {}
        """Each local's values when every binding of it is ``name = call(...)`` (:meth:`assigned_calls`)."""
        own_imports: List[Union[ast.Import, ast.ImportFrom]] = []
        if arguments is None and reader.module_assignments is not None:
            self.locals, self.generator, self.derived, unpacked = reader.module_assignments
            self._bound_calls = reader.module_calls
        else:
            self.locals, self.generator, self.derived = _single_assignments(
                node.body, self.parameters if arguments else None, unpacked, reader.own_nodes, self._bound_calls,
                own_imports if arguments is not None else None, self.filled)
        """Parameters every rebinding of which computes from themselves (``x = x.cuda()``)."""
        self.choices_made = 0
        """Call sites so far that run one of several callables (:attr:`Call.choice`)."""
        self.imported: Dict[str, Tuple[str, ...]] = {}
        """Names the function's own import statements bind, not otherwise
        bound here: the dotted names each may be (several when branches
        import different things under one name)."""
        if own_imports:  # found by the walk of `_single_assignments`
            bound: Dict[str, Set[str]] = {}
            for statement in own_imports:
                table: Dict[str, str] = {}
                add_import(table, statement, reader.module, reader.is_package)
                for name, target in table.items():
                    bound.setdefault(name, set()).add(target)
            self.imported = {name: tuple(sorted(targets)) for name, targets in bound.items()
                             if name not in self.locals and name not in self.parameters}
        self.disabled = any(_grad_off(d, reader.imports) for d in decorators)
        self.is_def = arguments is not None
        """A ``def`` (not a module's top-level code)."""
        self.context_manager = any(resolve(d, reader.imports, {}) == "contextlib.contextmanager" for d in decorators)
        self.grad_yields: List[bool] = []
        """Each ``yield`` of its own, in order: whether it runs with gradients off."""
        self.switched_off = False
        """Its own statements switched gradients off (``torch.set_grad_enabled(False)``)."""
        self.grad_off: Set[str] = set()
        self.loads_weights = False
        self.accelerator = False
        self.cuda_locals: Set[str] = set()
        self.relays: List[Tuple[str, str]] = []
        """Locals some assignment of which names a CUDA device."""
        """Some ``return`` gives a CUDA device (``"cuda"``, ``torch.device("cuda" if ... else "cpu")``)."""
        self.results: Dict[str, str] = {}
        """Local names bound once to what a call returns (or one element of it): their returned-value names."""
        kind = "g" if arguments is None else "l"
        for name, value in self.locals.items():
            if isinstance(value, ast.Call) and name not in self.parameters:
                found = reader.result_name(value, self, kind, "")
                if found is not None:
                    self.results[name] = found
        for name, (value, position) in unpacked.items():
            if name not in self.parameters:
                found = reader.result_name(value, self, kind, str(position))
                if found is not None:
                    self.results[name] = found
        for name, bindings in self._bound_calls.items():  # `a, b = f()` in one branch, `a, b = g()` in another
            if not bindings or name in self.results or name in self.parameters:
                continue
            each = [reader.result_name(call, self, kind, position) for call, position in bindings if call is not None]
            joined = _joined_results(each)
            if joined is not None:
                self.results[name] = joined

    def function(self) -> Function:
        return Function(self.qualified, self.positional, self.keyword_only, self.method, frozenset(self.runs),
                        frozenset(self.iterates), frozenset(self.yields_from), tuple(self.returns), tuple(self.calls),
                        tuple(sorted(self.called.items())), frozenset(self.loop_runs), frozenset(self.repeats),
                        frozenset(self.moves_items), frozenset(self.moves), frozenset(self.forwards),
                        frozenset(self.evals - self.trains), tuple(sorted(set(self.relays))),
                        frozenset(self.pinned_returns), frozenset(self.pinned_attributes),
                        tuple(sorted(self._device_defaults())),
                        frozenset(self.yields_items - self.altered_yields), tuple(sorted(self.copies)),
                        runs_parameters=frozenset(self.runs_parameters), gradients=self.gradients,
                        loads_weights=self.loads_weights, grad_off=frozenset(self._grad_off()),
                        annotated=tuple(sorted(self.annotated)), kept_results=tuple(sorted(set(self.kept_results))))

    def _grad_off(self) -> Set[str]:
        """:attr:`Function.grad_off`, once the walk is done."""
        found = set(self.grad_off)
        if self.context_manager and self.grad_yields and all(self.grad_yields):
            found.add(GRAD_OFF_YIELDS)
        if self.switched_off:
            found.add(GRAD_OFF_ENTERS)
        return found

    def _device_defaults(self) -> List[Tuple[str, str]]:
        """Parameters whose default is a device, or ``None`` filled in with
        one where the caller leaves it (``device=None`` then ``if device is
        None: device = torch.device("cuda:0" if ... else "cpu")``)."""
        found: List[Tuple[str, str]] = []
        for name, default in self.defaults:
            if (isinstance(default, ast.Constant) and default.value is None and name in self.filled
                    and self.locals.get(name) is not None):
                default = cast(ast.expr, self.locals[name])
            spec = self.device_spec(default)
            if spec in ("cuda", "cpu"):
                found.append((name, spec))
        return found

    def item_targets(self, target: ast.expr, iterated: ast.expr, drawn: Set[str],
                     depth: int = 0) -> List[Tuple[ast.expr, str]]:
        """The parts of a loop's target that hold an item of a parameter:
        ``(i, batch)`` of ``enumerate(loader)`` -> ``batch``; ``(a, b)`` of
        ``zip(loader, other)`` -> ``a``; ``(i, (a, b))`` of
        ``enumerate(zip(loader, other))`` -> ``a``; the whole target otherwise."""
        if isinstance(iterated, ast.Call) and isinstance(target, (ast.Tuple, ast.List)) and isinstance(
                iterated.func, ast.Name) and not self.reader.shadowed(iterated.func.id, self):
            elements = target.elts
            if iterated.func.id == "enumerate" and len(elements) == 2 and iterated.args:
                paired = iterated.args[0]
                if (isinstance(elements[1], (ast.Tuple, ast.List)) and isinstance(paired, ast.Call)
                        and isinstance(paired.func, ast.Name) and paired.func.id == "zip" and depth < 2):
                    return self.item_targets(elements[1], paired, drawn, depth + 1)
                inner = self.drawn_quietly(iterated.args[0])
                if inner is None and len(drawn) == 1 and isinstance(iterated.args[0], ast.Call):
                    inner = next(iter(drawn))  # `enumerate(logger.log_every(loader))`: what the call yields
                return [(elements[1], inner)] if inner is not None else []
            if iterated.func.id == "zip" and len(elements) == len(iterated.args):
                found = []
                for element, argument in zip(elements, iterated.args):
                    inner = self.drawn_quietly(argument)
                    if inner is not None:
                        found.append((element, inner))
                return found
        return [(target, next(iter(drawn)))] if len(drawn) == 1 else []

    def unpacked_parts(self, target: ast.expr, iterated: ast.expr) -> None:
        """``for k, v in batch.items()`` (or ``.values()``, in a comprehension
        too): the names the loop binds hold parts of the parameter ``batch``
        (a dict of tensors), so copying them copies the parameter's data; of a
        drawn item (a dict batch), they are parts of that item."""
        if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute)
                and iterated.func.attr in ("items", "values") and not iterated.args and not iterated.keywords):
            return
        item = self.item_of(iterated.func.value)
        if item is not None:  # `{k: v.to(device) for k, v in data.items()}`, `data` drawn from a loader
            for leaf in _stored(target):
                self.items[leaf.id] = item
            return
        parameter = self.part_of(iterated.func.value)
        if parameter is None or parameter == self.instance:
            return
        for leaf in _stored(target):
            if leaf.id not in self.parameters:
                self.parts[leaf.id] = parameter

    def drawn_quietly(self, expr: ast.expr, depth: int = 0) -> Optional[str]:
        """The one parameter a loop over ``expr`` draws from (a parameter, or a
        wrapper of one), without recording anything; None otherwise.  A
        parameter rebound to a wrapper of itself (``loader = tqdm(loader)``)
        is still that parameter's items."""
        parameter = self.tracked(expr)
        if parameter is not None:
            return parameter
        if isinstance(expr, ast.Name):
            agreed = self.agreed_source(expr.id)
            if agreed is not None:
                return agreed  # bound in branches, each to the same loader or a wrapper of it
        if isinstance(expr, ast.Name) and self.pinned_names.get(expr.id) is not None:
            return PINNED_LOCAL
        bound = self.bound_call(expr.id) if isinstance(expr, ast.Name) else expr
        if isinstance(bound, ast.Call) and depth < _MAX_WRAPPED:
            target = self.reader.callee(bound.func, self)
            wrapper = wrappers().get(target[0]) if target is not None else None
            if (wrapper is not None and wrapper.parameters and wrapper.yields == wrapper.parameters[0]
                    and bound.args and not isinstance(bound.args[0], ast.Starred)):
                inner = bound.args[0]
                if isinstance(expr, ast.Name) and isinstance(inner, ast.Name) and inner.id == expr.id:
                    return expr.id if expr.id in self.parameters else None
                return self.drawn_quietly(inner, depth + 1)
        return None

    def agreed_source(self, name: str) -> Optional[str]:
        """For a local bound more than once by plain assignments so far, each
        to something a loop draws the same items from (``batch_iter =
        tqdm(self.loader)`` in one branch, ``batch_iter = self.loader`` in the
        other), or bound once to ``a if c else b`` of two such: that source;
        None otherwise.  Worked out only when a loop asks."""
        values = self.assigned.get(name)
        one = self.locals.get(name)
        if isinstance(one, ast.IfExp) and name not in self.parameters:
            values = [one.body, one.orelse]  # `it = tqdm(loader) if verbose else loader`: either side
        elif (not values or len(values) < 2 or name in self.parameters or one is not None):
            return None
        if name in self._agreeing:
            return None
        self._agreeing.add(name)  # (`x = tqdm(x)`: a value that reads the name itself stops here)
        try:
            sources = {self.drawn_quietly(value) for value in values}
        finally:
            self._agreeing.discard(name)
        return sources.pop() if len(sources) == 1 else None

    def bound_call(self, name: str) -> Optional[ast.expr]:
        """What a local stands for: its one value, or the library wrapper a
        ``with`` entered under it (``with tqdm(loader) as bar``)."""
        return self.locals.get(name) or self.entered.get(name)

    def part_of(self, expr: ast.expr) -> Optional[str]:
        """The parameter ``expr`` is, or is a part of (``x`` after ``x, y = batch``,
        ``batch[0]``, ``batch.x``), counting a parameter rebound only from itself."""
        while isinstance(expr, (ast.Subscript, ast.Attribute)):
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        if expr.id in self.parts:
            return self.parts[expr.id]
        if expr.id in self.parameters and (expr.id not in self.locals or expr.id in self.derived):
            return expr.id
        return None

    def item_of(self, expr: ast.expr) -> Optional[str]:
        """The parameter whose drawn item (or a part of it: ``batch[0]``,
        ``batch["x"]``, ``graph.ndata``, a view ``batch.view(n, -1)``) ``expr`` is;
        ``x[0] if len(x) > 1 else x``: the item either way."""
        if isinstance(expr, ast.IfExp):
            first = self.item_of(expr.body)
            return first if first is not None and self.item_of(expr.orelse) == first else None
        while True:
            if isinstance(expr, (ast.Subscript, ast.Attribute)):
                expr = expr.value
            elif (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
                  and expr.func.attr in VIEW_METHODS):
                expr = expr.func.value
            elif (isinstance(expr, ast.Call) and expr.args and not isinstance(expr.args[0], ast.Starred)
                  and resolve(expr.func, self.reader.imports, {}) in VARIABLE_WRAPPERS):
                expr = expr.args[0]  # `Variable(v)`: the tensor itself (torch >= 0.4)
            else:
                break
        return self.items.get(expr.id) if isinstance(expr, ast.Name) else None

    def device_spec(self, expr: ast.expr, depth: int = 0) -> Optional[str]:
        """What device ``expr`` names, as far as this function knows:
        ``cuda``, ``cpu``, ``param:<name>``, ``attr:<name>`` (``self.x``); None otherwise.
        ``"cuda" if ... else "cpu"`` (here, or in a local bound once) is ``cuda``:
        the device wherever CUDA is used (:func:`_spelled_device`)."""
        return _spelled_device(expr, self.reader, depth, self._named_device, index=True)

    def _named_device(self, expr: ast.expr, depth: int) -> Optional[str]:
        if (isinstance(expr, ast.Name) and expr.id in self.locals and expr.id not in self.parameters
                and isinstance(self.locals[expr.id], (ast.Constant, ast.Call, ast.IfExp))):
            value = self.locals[expr.id]
            assert value is not None
            return self.device_spec(value, depth + 1)
        parameter = self.subject(expr)
        if parameter is not None:
            return f"param:{parameter}"
        if (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == self.instance
                and self.instance is not None):
            return f"attr:{expr.attr}"
        if isinstance(expr, ast.Name) and not self.reader.shadowed_here(expr.id, self):
            value = self.reader.global_value(expr.id)  # `device = torch.device("cuda:0")` at the top
            if isinstance(value, (ast.Constant, ast.Call, ast.IfExp)):
                return self.device_spec(value, depth + 1)
        return None

    def move(self, node: ast.Call) -> None:
        """``x.cuda(...)`` or ``x.to(device, ...)`` of a parameter or of a drawn item."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in ("cuda", "to"):
            return
        starred = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        keywords = {k.arg for k in node.keywords if k.arg is not None}
        positional = [a for a in node.args if not isinstance(a, ast.Starred)]
        if func.attr == "cuda":
            spec: Optional[str] = "cuda"
            settled = "non_blocking" in keywords or len(positional) >= 2 or starred
        else:
            device = next((k.value for k in node.keywords if k.arg == "device"), positional[0] if positional else None)
            spec = self.device_spec(device) if device is not None else None
            settled = "non_blocking" in keywords or len(positional) >= 2 or starred
        receiver = func.value
        item = self.item_of(receiver)
        if spec is None and self.runtime_device(node):
            device = next((k.value for k in node.keywords if k.arg == "device"), node.args[0] if node.args else None)
            helper = self.device_call(device) if device is not None else None
            # of items drawn from a parameter, a returned value (perhaps from a project helper) or
            # `self.<attr>`, any device known at run time (`args.device`): a copy of a pinned
            # loader's batch if callers pin it (:func:`_pinned_copies`); of a parameter (a batch
            # handed in), only a device bound to a project helper's call, which the summaries may
            # know returns CUDA (`device = util.get_cuda(0)`)
            spec = (helper or UNKNOWN) if item is not None else helper
        if spec is None or spec == "cpu":
            return
        if item is not None:
            self.moves_items.add((item, spec, settled))
            if not settled:  # (of a returned value's items too: linked by :func:`_pinned_copies`)
                self.copies.add((item, node.lineno, node.col_offset))
            return
        parameter = self.part_of(receiver)
        if parameter is not None and parameter != self.instance:
            self.moves.add((parameter, spec, settled))
            if not settled:
                self.copies.add((BATCH + parameter, node.lineno, node.col_offset))

    def names_cuda(self, expr: ast.expr, depth: int) -> bool:
        """``expr`` is a CUDA device, or may be one: a ``"cuda..."`` string,
        a conditional with such a branch, ``torch.device(...)`` of one, or a
        local bound once to one (:func:`_spelled_device`; a bare integer is no
        device here: ``return 0``)."""
        return _spelled_device(expr, self.reader, depth, self._cuda_local, index=False) == "cuda"

    def _cuda_local(self, expr: ast.expr, depth: int) -> Optional[str]:
        if isinstance(expr, ast.Name) and expr.id not in self.parameters:
            bound = self.locals.get(expr.id)
            if bound is None:  # assigned on several paths (`if args.use_gpu: device = ... else: ...`)
                return "cuda" if expr.id in self.cuda_locals else None
            return "cuda" if self.names_cuda(bound, depth + 1) else None
        return None

    def device_call(self, expr: ast.expr) -> Optional[str]:
        """``device`` bound once (here or at module level) to a call of a
        function: ``call:<its dotted name>`` (the project may know it returns CUDA)."""
        if not isinstance(expr, ast.Name) or expr.id in self.parameters:
            return None
        bound = self.locals.get(expr.id) if expr.id in self.locals else (
            self.reader.module_assignments[0].get(expr.id) if self.reader.module_assignments is not None else None)
        if not isinstance(bound, ast.Call) or isinstance(bound.func, ast.Name) and bound.func.id in self.locals:
            return None
        named = resolve(bound.func, self.reader.imports, self.reader.local)
        return f"call:{named}" if named is not None else None

    def runtime_device(self, node: ast.Call) -> bool:
        """``x.to(device)`` with a device this function cannot name but that may
        be an accelerator: a name or attribute (not a dtype such as
        ``torch.float32`` or ``y.dtype``), or ``device=``; ``.cuda(i)`` is CUDA already."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr != "to":
            return False
        given = next((k.value for k in node.keywords if k.arg == "device"), None)
        if given is not None:
            return True
        if not node.args or isinstance(node.args[0], ast.Starred):
            return False
        first = node.args[0]
        if isinstance(first, ast.Attribute) and first.attr == "dtype":
            return False
        if isinstance(first, (ast.Name, ast.Attribute)):
            return resolve(first, self.reader.imports, {}) is None
        return False

    def subject(self, expr: ast.expr) -> Optional[str]:
        """The parameter ``expr`` is (a name of one, not rebound in the function
        but to fill in its default: what the caller passes, where it passes one)."""
        if isinstance(expr, ast.Name) and expr.id in self.parameters and (
                expr.id not in self.locals or expr.id in self.filled):
            return expr.id
        return None

    def result_of(self, expr: ast.expr) -> Optional[str]:
        """The returned value (:data:`RESULT`) ``expr`` holds: a local or module
        global bound once to a call's result, or ``self.<attr>`` so bound in the class."""
        if isinstance(expr, ast.Name):
            if expr.id in self.results:
                return self.results[expr.id]
            if expr.id not in self.parameters and expr.id not in self.locals:
                return self.reader.global_results.get(expr.id)
            return None
        if (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == self.instance
                and self.instance is not None and self.owner is not None):
            return self.reader.attribute_results(self.owner, self).get(expr.attr)
        return None

    def keep_results(self, target: ast.expr, value: ast.Call) -> None:
        """``self.a = f(...)`` or ``self.a, self.b = f(...)``: :attr:`Function.kept_results`."""
        if self.instance is None:
            return
        parts = list(target.elts) if isinstance(target, ast.Tuple) else [target]
        for index, part in enumerate(parts):
            kept = self.held(part)
            if kept is None:
                continue
            name = self.reader.result_name(value, self, "l", str(index) if isinstance(target, ast.Tuple) else "")
            if name is not None:
                self.kept_results.append((kept[len(HELD):], name))

    def tracked(self, expr: ast.expr) -> Optional[str]:
        """The parameter, the returned value, the instance's attribute, or a
        parameter's attribute (:data:`OBJECT`) ``expr`` is."""
        return self.subject(expr) or self.result_of(expr) or self.held(expr) or self.object_attribute(expr)

    def object_attribute(self, expr: ast.expr) -> Optional[str]:
        """``session.train_set`` with ``session`` a parameter (not the instance,
        not rebound): ``session^train_set`` (:data:`OBJECT`)."""
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id != self.instance:
            parameter = self.subject(expr.value)
            if parameter is not None:
                return parameter + OBJECT + expr.attr
        return None

    def held(self, expr: ast.expr) -> Optional[str]:
        """``self.<attr>`` in a method (:data:`HELD`), the instance not rebound."""
        if (self.instance is not None and self.owner is not None and isinstance(expr, ast.Attribute)
                and isinstance(expr.value, ast.Name) and expr.value.id == self.instance
                and self.instance not in self.locals):
            return HELD + expr.attr
        return None

    # statements

    def body(self, statements: Sequence[ast.stmt], disabled: bool, guard: Optional[Tuple[str, bool]]) -> None:
        self._depth += 1
        try:
            self._body(statements, disabled, guard)
        finally:
            self._depth -= 1

    def _body(self, statements: Sequence[ast.stmt], disabled: bool, guard: Optional[Tuple[str, bool]]) -> None:
        for statement in statements:
            self.statement(statement, disabled, guard)
            if (guard is None and isinstance(statement, ast.If) and not statement.orelse and statement.body
                    and isinstance(statement.body[-1], ast.Return)):
                condition = self._guard(statement.test)
                if condition is not None:  # `if p: return a` then `return b`: b runs only when not p
                    guard = (condition[0], not condition[1])

    def statement(self, node: ast.stmt, disabled: bool, guard: Optional[Tuple[str, bool]]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.current[node.name] = None
            if not isinstance(node, ast.ClassDef) and self.is_def and _calls_without_grad(
                    node, self.parameters, self.reader.imports):
                self.grad_off.add(GRAD_OFF_WRAPS)  # a decorator's wrapper: `with torch.no_grad(): return fn(*a)`
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and self._depth == 1:
            switched = _switched(node.value, self.reader.imports)
            if switched is not None:  # `torch.set_grad_enabled(False)`, `torch.no_grad().__enter__()`
                self.switched_off = switched is GradMode.DISABLED
        for name in _other_bindings(node):  # bound otherwise than by a plain assignment: not known
            self.current[name] = None
        if isinstance(node, (ast.For, ast.AsyncFor)):
            drawn = self.drawn(node.iter, disabled)
            for leaf in _stored(node.target):  # whatever an earlier loop bound the name to, it holds this one's items
                self.items.pop(leaf.id, None)
                self.parts.pop(leaf.id, None)
            for target, source in self.item_targets(node.target, node.iter, drawn):
                for leaf in _stored(target):
                    self.items[leaf.id] = source
            drawn.discard(PINNED_LOCAL)
            self.iterates |= drawn
            self.unpacked_parts(node.target, node.iter)
            self.drawn_parts(node.target, node.iter, drawn)
            if self.loops:
                self.repeats |= drawn
            yields = [n for n in _own_nodes(node.body) if isinstance(n, (ast.Yield, ast.YieldFrom))]
            if self.generator and yields:
                self.yields_from |= drawn
                bound = {leaf.id for leaf in ast.walk(node.target) if isinstance(leaf, ast.Name)}
                plain = all(isinstance(y, ast.Yield) and y.value is not None and _names_only(y.value, bound)
                            for y in yields)
                (self.yields_items if plain else self.altered_yields).update(drawn)
            self.expression(node.target, disabled)
            self.loops += 1
            self.body(node.body, disabled, None)
            self.loops -= 1
            self.body(node.orelse, disabled, None)
            return
        if isinstance(node, ast.While):
            self.expression(node.test, disabled)
            self.loops += 1
            self.body(node.body, disabled, None)
            self.loops -= 1
            self.body(node.orelse, disabled, None)
            return
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inner = disabled
            for item in node.items:
                entered = item.context_expr
                if (isinstance(item.optional_vars, ast.Name) and isinstance(entered, ast.Call)
                        and item.optional_vars.id not in self.parameters):
                    called = self.reader.callee(entered.func, self)
                    wrapper = wrappers().get(called[0]) if called is not None else None
                    if wrapper is not None and wrapper.enters_itself:  # `with tqdm(loader) as bar`: the bar itself
                        self.entered[item.optional_vars.id] = entered
                self.expression(item.context_expr, disabled)
                mode = python_grad_mode(item.context_expr, self.reader.imports)
                if mode is not None:
                    inner = mode is GradMode.DISABLED
            self.body(node.body, inner, None)
            return
        if isinstance(node, ast.If):
            self.expression(node.test, disabled)
            condition = self._guard(node.test)
            self.body(node.body, disabled, condition)
            self.body(node.orelse, disabled, (condition[0], not condition[1]) if condition is not None else None)
            return
        if isinstance(node, ast.Return):
            if node.value is not None:
                self.returns.append(self.returned(node.value, disabled, guard))
                if not self.accelerator and self.names_cuda(node.value, 0):
                    self.accelerator = True
            return
        rebound: List[str] = []  # names an assignment binds to something else than a drawn item
        if isinstance(node, ast.Assign):
            if self.loops and self.results:  # a local (or a module-level global) built anew on every pass of a loop
                for target in node.targets:
                    for leaf in _stored(target):
                        if self.results.get(leaf.id, "").startswith((RESULT + "l:", _PERSISTENT)):
                            self.results[leaf.id] = RESULT + "r:" + self.results[leaf.id][len(RESULT) + 2:]
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and self.names_cuda(node.value, 1):
                self.cuda_locals.add(node.targets[0].id)
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.assigned.setdefault(node.targets[0].id, []).append(node.value)
            for target in node.targets:  # `ds = split(...)`, then `ds = DataLoader(ds, ...)`: the last one, in order
                for leaf in _stored(target):
                    self.current[leaf.id] = node.value if (self._depth == 1 and target is leaf
                                                           and len(node.targets) == 1) else None
            kept = self.held(node.targets[0]) if len(node.targets) == 1 else None
            if kept is not None and self.pins_loader(node.value):
                self.pinned_attributes.add(kept[len(HELD):])
            if len(node.targets) == 1 and isinstance(node.value, ast.Call):
                self.keep_results(node.targets[0], node.value)
            for target in node.targets:  # `gen = DataLoader(..., pin_memory=True)`, perhaps in two branches
                built = self.reader.maker(node.value, self) if isinstance(target, ast.Name) else None
                for leaf in _stored(target):
                    pinned = built if built is not None and self.pins_loader(node.value) else None
                    _agree(self.pinned_names, leaf.id, pinned)
            for target in node.targets:  # `loaders = []`, then filled with pinned loaders
                for leaf in _stored(target):
                    fresh = (target is leaf and isinstance(node.value, ast.List) and not node.value.elts
                             and leaf.id not in self.pinned_lists)
                    if fresh or leaf.id in self.pinned_lists:
                        self.pinned_lists[leaf.id] = None if fresh else False
            iterated = self.iterator_of(node.value)
            for target in node.targets:  # `data_iter = iter(self.loader)`, perhaps again once it runs dry
                for leaf in _stored(target):
                    if iterated is not None or leaf.id in self.iterators:
                        _agree(self.iterators, leaf.id, iterated if target is leaf else None)
            drawn_from = self.item_of(node.value) or self.next_of(node.value)
            part = self.part_of(node.value) if drawn_from is None else None
            paired = self.pairwise(node.targets[0], node.value) if (
                drawn_from is None and part is None and len(node.targets) == 1) else set()
            for target in node.targets:  # `x, y = batch`, `images = batch["image"]`: parts
                for leaf in _stored(target):
                    if drawn_from is not None:
                        self.items[leaf.id] = drawn_from
                    elif part is not None and leaf.id not in self.parameters:
                        self.parts[leaf.id] = part
                if drawn_from is None:  # `x = x.float()`: a new tensor from here on, no longer the item
                    rebound.extend(name for name in _rebound(target) if name not in paired)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                self.statement(child, disabled, None)
            elif isinstance(child, ast.expr):
                self.expression(child, disabled)
            else:  # handlers, match cases...
                for grandchild in ast.iter_child_nodes(child):
                    if isinstance(grandchild, ast.stmt):
                        self.statement(grandchild, disabled, None)
                    elif isinstance(grandchild, ast.expr):
                        self.expression(grandchild, disabled)
        for name in rebound:  # after the value: `x = x.cuda()` is still a copy of the item
            self.items.pop(name, None)

    def _guard(self, test: ast.expr) -> Optional[Tuple[str, bool]]:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.subject(test.operand)
            return (inner, False) if inner is not None else None
        name = self.subject(test)
        return (name, True) if name is not None else None

    def returned(self, value: ast.expr, disabled: bool, guard: Optional[Tuple[str, bool]]) -> Return:
        for where, element in ([(str(i), e) for i, e in enumerate(value.elts)] if isinstance(value, ast.Tuple)
                               else [("", value)]):
            if self.pins_loader(element) or (
                    isinstance(element, ast.Name) and self.pinned_names.get(element.id) is not None):
                self.pinned_returns.add(where)  # (a local bound in branches, each to a pinned loader)
            elif isinstance(element, ast.Name) and self.pinned_lists.get(element.id):
                self.pinned_returns.add(where + PINNED_EACH)  # a list of pinned loaders: each element
            else:
                parameter = self.default_pin(element)
                if parameter is not None:
                    self.pinned_returns.add(f"{where}{DEFAULT_PIN}{parameter}")
        if isinstance(value, ast.Name) and value.id in self.results and value.id not in self.parameters:
            self.relays.append(("", self.results[value.id]))
        elif isinstance(value, ast.Call):  # `return get_mnist(train)`: what that call returns, as it is
            direct = self.reader.result_name(value, self, "l", "")
            if direct is not None:
                self.relays.append(("", direct))
        elif isinstance(value, ast.Tuple):
            for position, element in enumerate(value.elts):
                if isinstance(element, ast.Name) and element.id in self.results and element.id not in self.parameters:
                    self.relays.append((str(position), self.results[element.id]))
        if isinstance(value, ast.IfExp) and isinstance(value.orelse, ast.Constant) and value.orelse.value is None:
            condition = self._guard(value.test)
            self.expression(value.test, disabled)
            return self.returned(value.body, disabled, condition or guard)
        parameter = self.subject(value)
        if parameter is not None:
            return Return(parameter=parameter, guard=guard)
        if isinstance(value, ast.Call):
            before = len(self.calls)
            self.expression(value, disabled)
            target = self.reader.callee(value.func, self)
            if target is not None and len(self.calls) > before and self.calls[before].callee == target[0]:
                return Return(call=before, guard=guard)  # a function's result, or a new instance (see `link`)
            # `return M(opt)`, M imported in two branches; `return MODELS[name](args)`
            return Return(guard=guard, one_of=self.reader.choices(value.func, self))
        self.expression(value, disabled)
        if isinstance(value, ast.Name) and value.id not in self.parameters:
            # `m = M(opt); return m`, or `model = A(cfg)` / `model = B(cfg)` in branches, then `return model`
            calls = self.assigned_calls(value.id) or ()
            chosen_all: Set[str] = set()
            for call in calls:
                built = self.reader.built_by(call, self)
                if not built:
                    break
                chosen_all.update(built)
            else:
                if chosen_all:
                    return Return(guard=guard, one_of=tuple(sorted(chosen_all)))
        return Return(guard=guard)

    def assigned_calls(self, name: str) -> Optional[Tuple[ast.Call, ...]]:
        """The calls whose results are the only values the function binds
        ``name`` to (``name = call`` statements, in any branch); None when it
        is bound in any other way, or to anything else."""
        found = self._bound_calls.get(name)
        if not found or any(call is None or at for call, at in found):
            return None
        return tuple(call for call, _ in found if call is not None)

    # expressions

    def spread(self, node: ast.Call) -> ast.Call:
        """``step(epoch, *args, loader)`` after ``args = model, optimizer``
        (a local bound once to a tuple display): the call with the tuple's
        elements in the ``*``'s place, so that the positions after it are known."""
        if not any(isinstance(a, ast.Starred) for a in node.args):
            return node
        spread: List[ast.expr] = []
        for argument in node.args:
            value = self.locals.get(argument.value.id) if (
                isinstance(argument, ast.Starred) and isinstance(argument.value, ast.Name)
                and argument.value.id not in self.parameters) else None
            if isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in value.elts):
                spread.extend(value.elts)
            else:
                spread.append(argument)
        if len(spread) == len(node.args) and all(a is b for a, b in zip(spread, node.args)):
            return node
        return ast.copy_location(ast.Call(func=node.func, args=spread, keywords=node.keywords), node)

    def splat_pairs(self, splat: ast.expr) -> Optional[List[Tuple[str, ast.expr, bool]]]:
        """The keys a ``**`` in this function unpacks, each with its value and
        whether every path holds it: :func:`_dict_pairs`, else
        :func:`_conditional_pairs` (a local dict read only by ``**``: nothing
        else can have changed it); None when not known."""
        pairs = _dict_pairs(splat, self.locals, self.parameters, self._plain_reads())
        if pairs is not None:
            return [(name, value, True) for name, value in pairs]
        return _conditional_pairs(splat, self.locals, self.parameters, self._plain_reads())

    def _plain_reads(self) -> Mapping[str, int]:
        if self._loads is None:
            self._loads = _plain_reads(self.reader.own_nodes(self.statements))
        return self._loads

    def construction(self, expr: ast.expr, straight_line: bool = False) -> Optional[ast.Call]:
        """The call ``expr``'s value comes from: ``expr`` itself, or the value
        of a local bound once (with ``straight_line``, also what the
        function's straight-line statements last bound it to here,
        :attr:`current`); ``call(...) if c else None`` is the call."""
        if isinstance(expr, ast.Name) and expr.id in self.locals and expr.id not in self.parameters:
            value = self.locals[expr.id]
            if value is None and straight_line and expr.id not in self._walrus_bound():
                value = self.current.get(expr.id)
            expr = value if value is not None else expr
        expr = _unless_none(expr)
        return expr if isinstance(expr, ast.Call) else None

    def _walrus_bound(self) -> FrozenSet[str]:
        """Names a ``:=`` binds anywhere in the function (never followed
        through :attr:`current`), found once from its walked nodes."""
        if self._walrus is None:
            self._walrus = frozenset(n.target.id for n in self.reader.own_nodes(self.statements)
                                     if isinstance(n, ast.NamedExpr))
        return self._walrus

    def default_pin(self, expr: ast.expr) -> Optional[str]:
        """The parameter a loader class's construction takes ``pin_memory``
        from (``pin_memory=pin_memory``, or a local bound to such a
        construction, :meth:`construction`), when its default is a literal ``True``."""
        call = self.construction(expr, straight_line=True)
        maker = self.reader.maker(call, self) if call is not None else None
        if call is None or maker is None or loader_signature(maker) is None:
            return None
        given = next((k.value for k in call.keywords if k.arg == "pin_memory"), None)
        parameter = self.subject(given) if given is not None else None
        default = dict(self.defaults).get(parameter) if parameter is not None else None
        return parameter if default is not None and python_literal_bool(default) is True else None

    def pins_loader(self, expr: ast.expr) -> bool:
        """``expr`` is a loader class's construction with a literal
        ``pin_memory=True`` (or a local assigned once from one)."""
        maker = self.reader.maker(expr, self)
        return (maker is not None and loader_signature(maker) is not None
                and self.reader.pin_state(expr, self) == "lit")

    def drawn_parts(self, target: ast.expr, iterated: ast.expr, drawn: Set[str]) -> None:
        """``[ann.cuda() for ann in targets]`` where ``targets`` is (a part of)
        an item drawn from a parameter: what the loop binds are parts of it."""
        if drawn:
            return
        pairs = [(target, iterated)]
        if isinstance(iterated, ast.Call) and isinstance(target, ast.Tuple) and not iterated.keywords and not any(
                isinstance(a, ast.Starred) for a in iterated.args):
            called = self.reader.callee(iterated.func, self)
            name = called[0] if called is not None else None
            if name == "builtins.enumerate" and len(target.elts) == 2 and len(iterated.args) == 1:
                pairs = [(target.elts[1], iterated.args[0])]  # `for i, t in enumerate(batch)`: `t` a part of it
            elif name == "builtins.zip" and len(target.elts) == len(iterated.args):
                pairs = list(zip(target.elts, iterated.args))
        for bound, source in pairs:
            item = self.item_of(source)
            if item is None:
                continue
            for leaf in _stored(bound):
                if leaf.id not in self.parameters:
                    self.items[leaf.id] = item

    def pairwise(self, target: ast.expr, value: ast.expr) -> Set[str]:
        """``images, targets = batch[0], batch[1]``: each name holds what the
        element beside it holds (an item drawn from a parameter, or a part of
        one); the names so bound."""
        paired: Set[str] = set()
        if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
                and len(target.elts) == len(value.elts)
                and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))):
            return paired
        for name, element in zip(target.elts, value.elts):
            if not isinstance(name, ast.Name):
                continue
            item = self.item_of(element)
            if item is not None:
                self.items[name.id] = item
                paired.add(name.id)
                continue
            part = self.part_of(element)
            if part is not None and name.id not in self.parameters:
                self.parts[name.id] = part
                paired.add(name.id)
        return paired

    def next_of(self, expr: ast.expr) -> Optional[str]:
        """``next(it)`` (the builtin) of a parameter, a returned value or
        ``self.<attr>``: what the item it draws comes from (``batch, cond =
        next(self.data)`` over a generator that yields a loader's batches);
        ``it.__next__()``, and ``it.next()`` as loaders' iterators spelled it
        before torch 1.13, of a stored iterator."""
        if (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
                and expr.func.attr in ("__next__", "next") and not expr.args and not expr.keywords
                and isinstance(expr.func.value, ast.Name) and expr.func.value.id in self.iterators):
            return self.iterators[expr.func.value.id]
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "next"
                and expr.args and not isinstance(expr.args[0], ast.Starred) and not expr.keywords
                and not self.reader.shadowed("next", self)):
            return None
        source = expr.args[0]
        if isinstance(source, ast.Name) and source.id in self.iterators:  # `next(data_iter)`
            return self.iterators[source.id]
        return self.tracked(source)

    def iterator_of(self, expr: ast.expr) -> Optional[str]:
        """``iter(x)`` (the builtin) of a parameter, a returned value or ``self.<attr>``: that value."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "iter"
                and len(expr.args) == 1 and not isinstance(expr.args[0], ast.Starred) and not expr.keywords
                and not self.reader.shadowed("iter", self)):
            return None
        return self.tracked(expr.args[0])

    def drawn(self, expr: ast.expr, disabled: bool) -> Set[str]:
        """The parameters (and returned values) a loop over ``expr`` draws items from."""
        parameter = self.subject(expr)
        if parameter is not None:
            return {parameter}
        if isinstance(expr, ast.Subscript):  # `for x, y in dataloaders[phase]`: a loader the container holds
            container = self.subject(expr.value)
            if container is not None:
                self.expression(expr.slice, disabled)
                return {container + VALUES}
        result = self.result_of(expr)
        if result is not None:
            return self._drawn(expr, disabled) | {result}
        held = self.held(expr) or self.object_attribute(expr)
        if held is not None:
            return {held}
        if isinstance(expr, ast.Name) and self.pinned_names.get(expr.id) is not None:
            return {PINNED_LOCAL}  # a local pinned loader: its items are pinned batches
        if isinstance(expr, ast.Call):
            found = self._drawn(expr, disabled)
            direct = self.reader.result_name(expr, self, "r" if self.loops else "l", "")
            return found | {direct} if direct is not None else found
        agreed = self.agreed_source(expr.id) if isinstance(expr, ast.Name) else None
        if agreed is not None:
            return {agreed}  # bound in branches, each to the same loader or a wrapper of it
        return self._drawn(expr, disabled)

    def _drawn(self, expr: ast.expr, disabled: bool) -> Set[str]:
        if isinstance(expr, ast.Name):
            bound = self.bound_call(expr.id)
            if isinstance(bound, ast.Call) and expr.id not in self.parameters:
                return self.through_local(bound, disabled, 0)  # `bar = tqdm(loader)` then `for x in enumerate(bar)`
            if isinstance(bound, ast.Call) and self.drawn_quietly(expr) == expr.id:
                return {expr.id}  # `loader = tqdm(loader)`: still the parameter's items
        if not isinstance(expr, ast.Call):
            self.expression(expr, disabled)
            return set()
        target = self.reader.callee(expr.func, self)
        wrapper = wrappers().get(target[0]) if target is not None else None
        if wrapper is not None and wrapper.yields is not None:
            found: Set[str] = set()
            for position, keyword, argument in _arguments(expr):
                slot = _wrapper_slot(wrapper, position, keyword)
                if slot is not None and (slot == wrapper.yields or wrapper.yields == EVERY_POSITIONAL):
                    found |= self.drawn(argument, disabled)
                else:
                    self.expression(argument, disabled)
            return found
        self.call(expr, disabled, "iter")
        for argument in (*expr.args, *(k.value for k in expr.keywords)):
            self.expression(argument, disabled)
        return set()

    def through_local(self, bound: ast.Call, disabled: bool, depth: int) -> Set[str]:
        """The parameters a loop over a local bound once to ``bound`` draws
        from: a wrapper that yields its argument's items (the assignment's
        own calls are already recorded), or a project generator (recorded
        again, as iterated)."""
        if depth > 4:
            return set()
        target = self.reader.callee(bound.func, self)
        wrapper = wrappers().get(target[0]) if target is not None else None
        if wrapper is None or wrapper.yields is None:
            self.call(bound, disabled, "iter")  # what it yields is linked from its summary
            return set()
        found: Set[str] = set()
        for position, keyword, argument in _arguments(bound):
            slot = _wrapper_slot(wrapper, position, keyword)
            if slot is None or not (slot == wrapper.yields or wrapper.yields == EVERY_POSITIONAL):
                continue
            parameter = self.tracked(argument)
            if parameter is not None:
                found.add(parameter)
            elif isinstance(argument, ast.Name) and isinstance(self.locals.get(argument.id), ast.Call):
                inner = self.locals[argument.id]
                assert isinstance(inner, ast.Call)
                found |= self.through_local(inner, disabled, depth + 1)
            elif isinstance(argument, ast.Call):
                found |= self.through_local(argument, disabled, depth + 1)
        return found

    def expression(self, expr: ast.expr, disabled: bool) -> None:
        pending: List[ast.AST] = [expr]
        while pending:
            node = pending.pop()
            if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                for generator in node.generators:
                    drawn = self.drawn(generator.iter, disabled)
                    for target, source in self.item_targets(generator.target, generator.iter, drawn):
                        for leaf in _stored(target):  # `[t.to(device) for t in batch]`: the batch's items
                            self.items[leaf.id] = source
                    drawn.discard(PINNED_LOCAL)
                    self.iterates |= drawn
                    self.unpacked_parts(generator.target, generator.iter)
                    self.drawn_parts(generator.target, generator.iter, drawn)
                    pending.extend((generator.target, *generator.ifs))
                pending.extend([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt])
                continue
            if isinstance(node, (ast.Yield, ast.YieldFrom)):
                self.grad_yields.append(disabled or self.disabled or self.switched_off)
            if isinstance(node, ast.YieldFrom):
                parameter = self.subject(node.value)
                if parameter is not None:  # a loop over it that yields each item as it comes
                    self.yields_from.add(parameter)
                    self.iterates.add(parameter)
                    self.yields_items.add(parameter)
                    if self.loops:  # `while True: yield from loader`: pass after pass
                        self.repeats.add(parameter)
            if isinstance(node, ast.Call):
                self.call(node, disabled, "call")
                func = node.func
                if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                        and func.value.id in self.pinned_lists):
                    pinned = func.attr == "append" and len(node.args) == 1 and not node.keywords and (
                        self.pins_loader(node.args[0]))
                    if self.pinned_lists[func.value.id] is not False:
                        self.pinned_lists[func.value.id] = pinned
                if isinstance(node.func, ast.Name) and node.func.id in ("iter", "next") and node.args:
                    parameter = self.subject(node.args[0])
                    if parameter is not None and not self.reader.shadowed(node.func.id, self):
                        self.iterates.add(parameter)
                    restarted = self.iterator_of(node)
                    if restarted is not None:  # `iter(self.loader)`: a new pass, again and again in a loop
                        self.iterates.add(restarted)
                        if self.loops:
                            self.repeats.add(restarted)
            pending.extend(ast.iter_child_nodes(node))

    def call(self, node: ast.Call, disabled: bool, role: str) -> None:
        func = node.func
        self.move(node)
        if _wraps_parameter(node, self.parameters, self.reader.imports):
            self.grad_off.add(GRAD_OFF_WRAPS)  # `return torch.no_grad()(fn)`
        if not (disabled or self.disabled):
            run = self.subject(func.value if isinstance(func, ast.Attribute) and func.attr == "forward" else func)
            if run is not None and run != self.instance:
                self.runs_parameters.add(run)  # `model(x)`: a forward pass of what callers pass
        if self.instance is not None and not (disabled or self.disabled) and isinstance(func, ast.Attribute):
            held = func.value if func.attr == "forward" else func
            if (isinstance(held, ast.Attribute) and isinstance(held.value, ast.Name)
                    and held.value.id == self.instance and held.attr not in self.reader.methods.get(self.owner or "", ())):
                self.forwards.add(held.attr)
        on_self: Optional[str] = None
        if self.instance is not None and isinstance(func, ast.Attribute):
            receiver = func.value
            if isinstance(receiver, ast.Name) and receiver.id == self.instance:
                on_self = ""
            elif (isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name)
                  and receiver.value.id == self.instance):
                on_self = receiver.attr
                if func.attr == "eval" and not node.args and not node.keywords:
                    self.evals.add(on_self)
                elif func.attr == "train":
                    mode = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "mode"), None)
                    (self.evals if mode is not None and python_literal_bool(mode) is False else self.trains).add(on_self)
        target = resolve(func, self.reader.imports, {})
        if target is not None and takes_gradients(target):
            self.gradients = True
        if (isinstance(func, ast.Attribute) and func.attr == "load_state_dict") or loads_weights(
                target, lambda keyword: any(k.arg == keyword and python_literal_bool(k.value) is True
                                            for k in node.keywords)):
            self.loads_weights = True
        if (isinstance(func, ast.Attribute) and func.attr == "backward" and target is None) or target in _AUTOGRAD:
            (self.loop_runs if self.loops else self.runs).add(BACKWARD)
            return
        called = self.subject(func)
        if called is not None:
            self.called[called] = self.called.get(called, False) or self.loops > 0
        found = self.reader.callee(func, self)
        chosen = self.reader.choices(func, self) if found is None else ()
        if found is None and not chosen:
            return
        if chosen:
            self.choices_made += 1
        slots: List[Tuple[str, str]] = []
        makers: List[Tuple[str, str]] = []
        items: List[Tuple[str, str]] = []
        devices: List[Tuple[str, str]] = []
        parts: List[Tuple[str, str]] = []
        pins: List[Tuple[str, str]] = []
        built: List[Tuple[str, str]] = []
        node = self.spread(node)
        filled: List[str] = ["*"] if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords) else []
        for position, keyword, argument in _arguments(node):
            slot = keyword if keyword is not None else str(position)
            filled.append(slot)
            parameter = self.tracked(argument)
            if parameter is None and isinstance(argument, ast.Call):  # `train(model, make_loader(...))`
                parameter = self.reader.result_name(argument, self, "r" if self.loops else "l", "")
            if parameter is not None:
                slots.append((slot, parameter))
            maker = self.reader.maker(argument, self)
            if maker is not None:
                makers.append((slot, maker))
                pin = self.reader.pin_state(argument, self)
                if pin is not None:
                    pins.append((slot, pin))
            elif isinstance(argument, ast.Name) and self.pinned_names.get(argument.id) is not None:
                makers.append((slot, str(self.pinned_names[argument.id])))  # assigned more than once, each pinned
                pins.append((slot, "lit"))
            else:
                built.extend((slot, cls) for cls in self.reader.one_of_classes(argument, self))
            item = self.item_of(argument)
            if item is not None:
                items.append((slot, item))
            elif parameter is None:
                whole = self.part_of(argument)
                if whole is not None:
                    parts.append((slot, whole))
            spec = self.device_spec(argument)
            if spec is not None:
                devices.append((slot, spec))
        method = isinstance(func, ast.Attribute)  # `model.feed(x)`, model built by one class or another
        for callee, bound in [found] if found is not None else [(name, method) for name in chosen]:
            self.calls.append(Call(callee, bound, tuple(slots), role, disabled or self.disabled, tuple(makers),
                                   self.loops > 0, tuple(items), tuple(devices), tuple(parts), on_self, tuple(pins),
                                   choice=0 if found is not None else self.choices_made, passed=tuple(filled),
                                   built=tuple(built)))


def _names_only(expr: ast.expr, names: Set[str]) -> bool:
    """``expr`` is one of ``names``, or a tuple or list of such (``x, y``)."""
    if isinstance(expr, ast.Name):
        return expr.id in names
    return isinstance(expr, (ast.Tuple, ast.List)) and bool(expr.elts) and all(
        _names_only(element, names) for element in expr.elts)


def _arguments(call: ast.Call) -> Iterator[Tuple[Optional[int], Optional[str], ast.expr]]:
    """(position, keyword, value) of each argument; positions stop at a ``*`` unpacking."""
    for position, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            break
        yield position, None, argument
    for keyword in call.keywords:
        if keyword.arg is not None:
            yield None, keyword.arg, keyword.value


def _wrapper_slot(wrapper: Wrapper, position: Optional[int], keyword: Optional[str]) -> Optional[str]:
    return wrapper.slot(position, keyword)


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

OwnNodes = Callable[[Sequence[ast.stmt]], Iterable[ast.AST]]
"""A walk of a body's own nodes: :func:`_own_nodes`, or a file reader's memoised
:meth:`_FileReader.own_nodes`."""


def _own_nodes(statements: Sequence[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of a body, nested functions, classes and lambdas left out."""
    pending: List[ast.AST] = list(statements)
    node_type = ast.AST
    while pending:
        node = pending.pop()
        yield node
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                if not isinstance(value, _NESTED):
                    pending.append(value)
            elif type(value) is list:
                pending.extend(item for item in value if isinstance(item, node_type) and not isinstance(item, _NESTED))


def _single_assignments(
    body: Sequence[ast.stmt], parameters: Optional[FrozenSet[str]] = None,
    unpacked: Optional[Dict[str, Tuple[ast.Call, int]]] = None, own: "OwnNodes" = _own_nodes,
    calls: Optional[Dict[str, Optional[List[Tuple[Optional[ast.Call], str]]]]] = None,
    imports: Optional[List[Union[ast.Import, ast.ImportFrom]]] = None,
    filled: Optional[Set[str]] = None,
) -> Tuple[Dict[str, Optional[ast.expr]], bool, FrozenSet[str]]:
    """Names a function body binds: to the value of their one plain
    assignment, or None when bound otherwise or more than once; whether the
    body yields; and, when ``parameters`` are given, those the body rebinds
    only from themselves (``x = x.cuda()``, ``a, b = a.to(d), b.to(d)``:
    they still hold the argument's data).  One walk for all three; with
    ``unpacked``, also the names bound once, by unpacking a call's result
    into a flat tuple of names (``_, loader = make(...)``): name -> (call, index).
    ``own``: the walk of a body (a file's reader passes its memoised one);
    with ``calls``, also each name's values when every binding of it is a
    plain ``name = call(...)`` or unpacks a call's result (:func:`_bound_calls`;
    None when bound any other way); with
    ``imports``, the body's own import statements; with ``filled``, the
    parameters bound only by ``if p is None: p = ...`` (a default filled in:
    where the caller passes a value, the parameter keeps it)."""
    found: Dict[str, Optional[ast.expr]] = {}
    derived: Dict[str, bool] = {}
    fills: Dict[str, bool] = {}
    filling = _default_fills(own(body)) if filled is not None and parameters else set()
    yields = False
    for child in own(body):
        if isinstance(child, (ast.Yield, ast.YieldFrom)):
            yields = True
            continue
        if calls is not None:
            _bound_calls(child, calls)
        if imports is not None and isinstance(child, (ast.Import, ast.ImportFrom)):
            imports.append(child)
        targets: List[ast.expr] = []
        value: Optional[ast.expr] = None
        if isinstance(child, ast.Assign):
            targets, value = list(child.targets), child.value
        elif isinstance(child, (ast.AnnAssign, ast.AugAssign)):
            targets = [child.target]
        elif isinstance(child, (ast.For, ast.AsyncFor)):
            targets = [child.target]
        elif isinstance(child, ast.withitem) and child.optional_vars is not None:
            targets = [child.optional_vars]
        elif isinstance(child, ast.NamedExpr):
            targets = [child.target]
        for target in targets:
            simple = isinstance(target, ast.Name) and len(targets) == 1 and value is not None
            flat = (unpacked is not None and len(targets) == 1 and isinstance(value, ast.Call)
                    and isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts))
            for leaf in _stored(target):
                known = leaf.id in found
                found[leaf.id] = value if simple and not known else None
                if unpacked is not None:
                    if flat and not known:
                        assert isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Call)
                        unpacked[leaf.id] = (value, target.elts.index(leaf))
                    else:
                        unpacked.pop(leaf.id, None)
                if parameters is not None and leaf.id in parameters:
                    mentioned = value is not None and any(
                        isinstance(n, ast.Name) and n.id == leaf.id for n in ast.walk(value))
                    derived[leaf.id] = derived.get(leaf.id, True) and mentioned
                    fills[leaf.id] = fills.get(leaf.id, True) and id(child) in filling
    if filled is not None:
        filled.update(name for name, only in fills.items() if only)
    return found, yields, frozenset(name for name, kept in derived.items() if kept)


def _other_bindings(node: ast.stmt) -> Iterator[str]:
    """The names a statement binds other than as the target of a plain
    ``=`` (loop and ``with`` targets, ``+=``, annotated assignments, imports;
    ``:=`` is looked up once per function instead), for
    :attr:`_FunctionScan.current`."""
    targets: List[ast.expr] = []
    if isinstance(node, (ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        yield from ((alias.asname or alias.name).partition(".")[0] for alias in node.names)
    for target in targets:
        yield from (leaf.id for leaf in _stored(target))


def _default_fills(nodes: Iterable[ast.AST]) -> Set[int]:
    """The assignments ``p = ...`` that sit directly in ``if p is None:``
    (no ``else``): a parameter's default filled in."""
    found: Set[int] = set()
    for node in nodes:
        if not isinstance(node, ast.If) or node.orelse:
            continue
        test = node.test
        if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Is) and isinstance(test.comparators[0], ast.Constant)
                and test.comparators[0].value is None):
            continue
        for statement in node.body:
            if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == test.left.id):
                found.add(id(statement))
    return found


_BINDING = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr, ast.withitem,
                      ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, ast.ExceptHandler})
"""The nodes that bind names (:func:`_bound_calls` looks at no other)."""


def _joined_results(names: Sequence[Optional[str]]) -> Optional[str]:
    """One name (:data:`RESULT`) for a local bound to what one of several
    calls returns; None unless every call's result has a name."""
    if not names or any(name is None for name in names):
        return None
    each = [part for name in names if name is not None for part in results_of(name)]
    kinds = {kind for kind, _, _ in each}
    parts = sorted({f"{callee}|{position}" for _, callee, position in each})
    if len(kinds) != 1:
        return None
    return f"{RESULT}{kinds.pop()}:{RESULT_SEPARATOR.join(parts)}" if len(parts) > 1 else names[0]


def results_of(name: str) -> List[Tuple[str, str, str]]:
    """The (kind, callee, position) of each returned value a :data:`RESULT`
    name stands for (several for a local bound in branches to different calls)."""
    kind, _, rest = name[len(RESULT):].partition(":")
    found: List[Tuple[str, str, str]] = []
    for part in rest.split(RESULT_SEPARATOR):
        callee, _, position = part.rpartition("|")
        found.append((kind, callee, position))
    return found


def _bound_calls(child: ast.AST, calls: Dict[str, Optional[List[Tuple[Optional[ast.Call], str]]]]) -> None:
    """One node's part of :func:`_single_assignments`' ``calls``: each
    binding of a name by ``name = call(...)`` (position ``""``) or by
    unpacking a call's result into a flat tuple of names (its index);
    ``name = None`` (or another constant) as ``(None, "")``: a placeholder
    before the branch that builds the value, or in a branch that builds none
    (``train_loader = "your dataloader"``); nothing calls, iterates or copies
    a constant as it would the value."""
    if type(child) not in _BINDING:
        return
    if (isinstance(child, ast.Assign) and len(child.targets) == 1 and isinstance(child.targets[0], ast.Name)
            and isinstance(child.value, ast.Constant)):
        kept = calls.get(child.targets[0].id, [])  # `loader = None` before the branches that build it
        if kept is not None:
            kept.append((None, ""))
            calls[child.targets[0].id] = kept
        return
    if isinstance(child, ast.Assign) and len(child.targets) == 1 and isinstance(child.value, ast.Call):
        assigned = child.targets[0]
        pairs: List[Tuple[str, str]] = []
        if isinstance(assigned, ast.Name):
            pairs = [(assigned.id, "")]
        elif isinstance(assigned, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in assigned.elts):
            pairs = [(element.id, str(index)) for index, element in enumerate(assigned.elts)
                     if isinstance(element, ast.Name)]
        for name, position in pairs:
            kept = calls.get(name, [])
            if kept is not None:
                kept.append((child.value, position))
                calls[name] = kept
        if pairs:
            return
    targets: List[ast.AST] = []
    if isinstance(child, ast.Assign):
        targets = list(child.targets)
    elif isinstance(child, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
        targets = [child.target]
    elif isinstance(child, ast.withitem) and child.optional_vars is not None:
        targets = [child.optional_vars]
    elif isinstance(child, (ast.Global, ast.Nonlocal)):
        for declared in child.names:
            calls[declared] = None
    elif isinstance(child, (ast.Import, ast.ImportFrom)):
        for alias in child.names:
            calls[(alias.asname or alias.name).split(".", 1)[0]] = None
    elif isinstance(child, ast.ExceptHandler) and child.name:
        calls[child.name] = None
    for target in targets:
        for leaf in _stored(target):
            calls[leaf.id] = None


def _grad_off(expr: ast.expr, imports: Mapping[str, str]) -> bool:
    return python_grad_mode(expr, imports) is GradMode.DISABLED


def _switched(call: ast.Call, imports: Mapping[str, str]) -> Optional[GradMode]:
    """The grad mode a statement switches to from here on:
    ``torch.set_grad_enabled(False)``, or a grad-mode context entered by hand
    (``torch.no_grad().__enter__()``); None for any other call."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "__enter__" and not call.args:
        return python_grad_mode(func.value, imports)
    name = resolve(func, imports, {})
    return python_grad_mode(call, imports) if name and name.endswith("set_grad_enabled") else None


def _wraps_parameter(call: ast.Call, parameters: AbstractSet[str], imports: Mapping[str, str]) -> bool:
    """``torch.no_grad()(fn)``: a grad-off decorator applied to a parameter;
    also ``(torch.inference_mode if new else torch.no_grad)()(fn)``, where
    either choice switches gradients off."""
    if not (isinstance(call.func, ast.Call) and len(call.args) == 1 and isinstance(call.args[0], ast.Name)
            and call.args[0].id in parameters):
        return False
    made = call.func
    choices = [made.func.body, made.func.orelse] if isinstance(made.func, ast.IfExp) else [made.func]
    return all(_grad_off(ast.Call(func=choice, args=made.args, keywords=made.keywords), imports)
               for choice in choices)


def _calls_without_grad(node: FunctionNode, enclosing: AbstractSet[str], imports: Mapping[str, str]) -> bool:
    """Whether ``node``, a function defined inside another, calls a parameter
    of an enclosing function (``enclosing``, or one of a function nested
    between them) only with gradients off, and at least once: the wrapper a
    decorator returns.  A nested function runs when it is called, so only its
    own decorators and ``with`` blocks decide its grad mode."""
    found: List[bool] = []

    def scan(function: FunctionNode, names: AbstractSet[str]) -> None:
        own = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
        if function.args.vararg is not None:
            own.add(function.args.vararg.arg)
        if function.args.kwarg is not None:
            own.add(function.args.kwarg.arg)
        inner = (set(names) - own, set(names) | own)  # calls here; calls in functions nested deeper
        body(function.body, any(_grad_off(d, imports) for d in function.decorator_list), inner)

    def body(statements: Sequence[ast.stmt], disabled: bool, names: Tuple[Set[str], Set[str]]) -> None:
        for statement in statements:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scan(statement, names[1])
                continue
            if isinstance(statement, ast.ClassDef):
                continue
            inner = disabled
            if isinstance(statement, (ast.With, ast.AsyncWith)):
                for item in statement.items:
                    mode = python_grad_mode(item.context_expr, imports)
                    if mode is not None:
                        inner = mode is GradMode.DISABLED
            for child in ast.iter_child_nodes(statement):
                if isinstance(child, ast.stmt):
                    body([child], inner if isinstance(statement, (ast.With, ast.AsyncWith)) else disabled, names)
                elif isinstance(child, ast.expr):
                    expression(child, disabled, names)
                else:  # handlers, match cases
                    body([c for c in ast.iter_child_nodes(child) if isinstance(c, ast.stmt)], disabled, names)

    def expression(expr: ast.expr, disabled: bool, names: Tuple[Set[str], Set[str]]) -> None:
        pending: List[ast.AST] = [expr]
        while pending:
            current = pending.pop()
            if isinstance(current, ast.Lambda):
                continue
            if isinstance(current, ast.Call):
                if isinstance(current.func, ast.Name) and current.func.id in names[0]:
                    found.append(disabled)  # the wrapper calls the function it was given
                elif _wraps_parameter(current, names[1], imports):
                    found.append(True)  # `return torch.no_grad()(fn)` in a nested decorator
            pending.extend(ast.iter_child_nodes(current))

    scan(node, enclosing)
    return bool(found) and all(found)


STAR_PENDING = ".*."
"""Between a module's name and a name it may have from a project module's
star import (``train.*.evaluate``): resolved when the summaries are linked."""
_BUILTIN_NAMES = frozenset(dir(builtins))


def _unbound_names(tree: ast.Module) -> Set[str]:
    """The names the file reads that nothing in it binds (no assignment,
    parameter, loop or ``with`` target, definition, import or ``except``
    name, anywhere) and that are not Python's builtins."""
    loaded: Set[str] = set()
    bound: Set[str] = set(_BUILTIN_NAMES)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif type(node).__name__ in ("MatchAs", "MatchStar", "MatchMapping"):  # `case [x, *rest]` (3.10+)
            for field_name in ("name", "rest"):
                captured = getattr(node, field_name, None)
                if isinstance(captured, str):
                    bound.add(captured)
    return loaded - bound


def _device_like(value: ast.expr) -> bool:
    """A string that names a device, or a call of ``torch.device`` (however imported): what a
    module-level device is bound to."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str) and value.value.startswith(("cuda", "cpu"))
    return isinstance(value, ast.Call) and (
        isinstance(value.func, ast.Attribute) and value.func.attr == "device"
        or isinstance(value.func, ast.Name) and value.func.id == "device")


def _registries(assigned: Mapping[str, Optional[ast.expr]], imports: Mapping[str, str], local: Mapping[str, str],
                changed: AbstractSet[str]) -> Dict[str, Tuple[str, ...]]:
    """Module-level names bound once to a dict display whose values all
    name callables (``MODELS = {BERT.code(): BERT, "sas": SAS}``) and that
    nothing in the module writes to later (``changed``: ``MODELS[k] = v``,
    ``MODELS.update(...)``): the dotted names of its values."""
    found: Dict[str, Tuple[str, ...]] = {}
    for name, value in assigned.items():
        if name in changed or not isinstance(value, ast.Dict) or not value.values or None in value.keys:
            continue
        targets = [resolve(v, imports, local) if isinstance(v, (ast.Name, ast.Attribute)) else None
                   for v in value.values]
        if all(target is not None for target in targets):
            found[name] = tuple(sorted({target for target in targets if target is not None}))
    return found


_CHANGING_METHODS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})


def _module_writes(tree: ast.Module) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """One walk of a whole file: the names some function declares ``global``,
    and the names written through (``name[k] = v``, ``del name[k]``,
    ``name.update(...)``): what neither a module-level device nor a
    registry may be."""
    declared: Set[str] = set()
    changed: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            declared.update(node.names)
        elif (isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del))
              and isinstance(node.value, ast.Name)):
            changed.add(node.value.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in _CHANGING_METHODS:
            changed.add(node.value.id)
    return frozenset(declared), frozenset(changed)


def star_aliases(files: Iterable[Tuple[Path, bytes, str]], parts: Mapping[str, Any]) -> Dict[str, str]:
    """For each file that star-imports project modules, what each name those
    imports may bind resolves to (``train.*.evaluate`` -> ``utils.evaluate``;
    a later star import wins, as in Python): the aliases :func:`link` needs
    for the names :class:`_FileReader` left pending."""
    from torchlint.analysis.imports import star_lookup, star_names, star_sources

    found: Dict[str, str] = {}
    bindings: Dict[str, Dict[str, str]] = {}  # each star-imported module's, resolved once
    for path, data, module in files:
        if b"import *" not in data:
            continue
        for star in star_sources(data, module, path.stem == "__init__"):
            if star not in bindings:
                resolved = {name: star_lookup(parts, star, name, definitions=True) for name in star_names(parts, star)}
                bindings[star] = {name: target for name, target in resolved.items() if target is not None}
            for name, target in bindings[star].items():
                found[f"{module}{STAR_PENDING}{name}"] = target
    return found


def _library_star_bindings(tree: ast.Module, local: Mapping[str, str]) -> Dict[str, str]:
    """``from tqdm import *`` at the top of the file: the listed callables it
    binds (:func:`~torchlint.data.apidata.star_exports`) that nothing in the
    file binds otherwise."""
    modules = [s.module for s in tree.body if isinstance(s, ast.ImportFrom) and s.level == 0 and s.module
               and len(s.names) == 1 and s.names[0].name == "*"]
    if not modules:
        return {}
    exported = star_exports()
    found: Dict[str, str] = {}
    for name in sorted(_unbound_names(tree) - set(local)):
        for module in modules:
            qualified = exported.get((module, name))
            if qualified is not None:
                found[name] = qualified  # (the last star import that binds it)
    return found


class _FileReader:
    """The names one file's code can call, resolved through its imports,
    its module-level definitions and its classes' ``self`` attributes."""

    def __init__(self, tree: ast.Module, module: str, is_package: bool) -> None:
        self.module = module
        self.is_package = is_package
        self._tree = tree
        self._globals: Optional[Dict[str, Optional[ast.expr]]] = None
        self.imports = module_imports(tree, module, is_package)
        self.local = {
            s.name: f"{module}.{s.name}" for s in tree.body
            if isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        }
        if project_star_modules(tree, module, is_package):
            # `from utils import *`: a name the file reads but never binds may be
            # one of the project module's; named `<module>.*.<name>` here, which
            # :func:`link` resolves through the index's star imports (:func:`star_aliases`).
            for name in sorted(_unbound_names(tree) - set(self.imports) - set(self.local)):
                self.imports[name] = f"{module}{STAR_PENDING}{name}"
        self.imports.update(_library_star_bindings(tree, self.local))
        self.classes = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
        self.methods = {
            s.name: frozenset(m.name for m in s.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
            for s in tree.body if isinstance(s, ast.ClassDef)
        }
        """Each class's own methods (``self.m(...)`` calls one, not an attribute)."""
        self._own: Dict[int, Tuple[Sequence[ast.stmt], Tuple[ast.AST, ...]]] = {}
        self._writes: Dict[int, Tuple[ast.ClassDef, Tuple[Tuple[ast.AST, str, Optional[ast.expr]], ...]]] = {}
        self.attributes: Dict[str, Dict[str, Optional[str]]] = {}
        self._class_nodes: Dict[str, ast.ClassDef] = {}
        for statement in tree.body:
            if isinstance(statement, ast.ClassDef):
                self.attributes[statement.name] = self._attributes(statement)
                self._class_nodes[statement.name] = statement
        unpacked: Dict[str, Tuple[ast.Call, int]] = {}
        self.module_calls: Dict[str, Optional[List[Tuple[Optional[ast.Call], str]]]] = {}
        """The module body's names bound only to calls' results (:meth:`_FunctionScan.assigned_calls`)."""
        assigned, yields, derived = _single_assignments(tree.body, None, unpacked, self.own_nodes, self.module_calls)
        self.module_assignments: Optional[Tuple[Dict[str, Optional[ast.expr]], bool, FrozenSet[str],
                                                Dict[str, Tuple[ast.Call, int]]]] = (assigned, yields, derived, unpacked)
        """The module body's single assignments (one walk, shared with its scan)."""
        self._registries: Optional[Dict[str, Tuple[str, ...]]] = None
        self._writes_of_module: Optional[Tuple[FrozenSet[str], FrozenSet[str]]] = None
        self.global_results: Dict[str, str] = {}
        """Module globals bound once to what a call returns: their returned-value names
        (``r`` for one bound inside a module-level loop: built anew for every pass)."""
        looped = _looped_names(tree.body)
        for name, value in assigned.items():
            if isinstance(value, ast.Call):
                found = self.result_name(value, None, "r" if name in looped else "g", "")
                if found is not None:
                    self.global_results[name] = found
        for name, (call, position) in unpacked.items():
            found = self.result_name(call, None, "r" if name in looped else "g", str(position))
            if found is not None:
                self.global_results[name] = found
        self._attribute_results: Dict[str, Dict[str, str]] = {}
        self.scans: List["_FunctionScan"] = []
        """Each ``def`` scanned, in the order of the file's functions."""

    def result_name(self, call: ast.Call, scan: Optional["_FunctionScan"], kind: str, position: str) -> Optional[str]:
        """The name (:data:`RESULT`) of what ``call`` returns, when it calls
        something that may be a project function: not a builtin, a library
        wrapper or a loader class."""
        if scan is not None:
            found = self.callee(call.func, scan)
            if found is None:
                return None
            callee = found[0]
        else:
            named = resolve(call.func, self.imports, self.local)
            if named is None:
                return None
            callee = named
        if callee.startswith("builtins.") or callee in wrappers() or loader_signature(callee) is not None:
            return None
        return f"{RESULT}{kind}:{callee}|{position}"

    def own_nodes(self, statements: Sequence[ast.stmt]) -> Tuple[ast.AST, ...]:
        """:func:`_own_nodes` of a body of this file's tree, walked once: a
        function's body is read by its scan, its assignments, its loader and
        its class's attribute writes."""
        found = self._own.get(id(statements))
        if found is None or found[0] is not statements:
            found = (statements, tuple(_own_nodes(statements)))
            self._own[id(statements)] = found
        return found[1]

    def instance_writes(self, node: ast.ClassDef) -> Tuple[Tuple[ast.AST, str, Optional[ast.expr]], ...]:
        """:func:`_instance_writes` of a class of this file, found once (four facts ask them)."""
        found = self._writes.get(id(node))
        if found is None or found[0] is not node:
            found = (node, tuple(_instance_writes(node, self.own_nodes)))
            self._writes[id(node)] = found
        return found[1]

    def attribute_results(self, owner: str, scan: "_FunctionScan") -> Dict[str, str]:
        """``self.<attr>`` of the class ``owner`` that its methods assign only
        once, from a call's whole result: their returned-value names."""
        found = self._attribute_results.get(owner)
        if found is not None:
            return found
        found = {}
        node = self._class_nodes.get(owner)
        seen: Set[str] = set()
        for member, attribute, value in (self.instance_writes(node) if node is not None else ()):
            if attribute in seen:
                found.pop(attribute, None)
                continue
            seen.add(attribute)
            if not isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            instance = member.args.args[0].arg
            if isinstance(value, ast.Call):
                named = self._attribute_callee(value, owner, instance, "")
                if named is not None:
                    found[attribute] = named
            elif value is None:
                unpacked = self._unpacked_write(member, attribute, instance)
                if unpacked is not None:  # `self.train_loader, self.val_loader = make_loaders(cfg)`
                    named = self._attribute_callee(unpacked[0], owner, instance, str(unpacked[1]))
                    if named is not None:
                        found[attribute] = named
        self._attribute_results[owner] = found
        return found

    def _unpacked_write(self, member: FunctionNode, attribute: str,
                        instance: str) -> Optional[Tuple[ast.Call, int]]:
        """The call and position of ``self.a, self.b = call(...)`` where the
        method writes ``self.<attribute>`` as one element of a flat tuple."""
        for child in self.own_nodes(member.body):
            if not (isinstance(child, ast.Assign) and len(child.targets) == 1
                    and isinstance(child.targets[0], (ast.Tuple, ast.List)) and isinstance(child.value, ast.Call)):
                continue
            for position, element in enumerate(child.targets[0].elts):
                if isinstance(element, ast.Starred):
                    break
                if (isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name)
                        and element.value.id == instance and element.attr == attribute):
                    return child.value, position
        return None

    def _attribute_callee(self, call: ast.Call, owner: str, instance: str, position: str) -> Optional[str]:
        """The returned-value name of ``self.x = call`` (or of its element at
        ``position``) in a method of ``owner``: ``self.method(...)`` of the
        class, or a module's function."""
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == instance:
            return f"{RESULT}g:{self.module}.{owner}.{func.attr}|{position}"
        return self.result_name(call, None, "g", position)

    def _attributes(self, node: ast.ClassDef) -> Dict[str, Optional[str]]:
        """``self.x`` -> the class whose call builds it, for attributes every
        method assigns only once, from ``Cls(...)``."""
        found: Dict[str, Optional[str]] = {}
        for _member, attribute, value in self.instance_writes(node):
            built = resolve(value.func, self.imports, self.local) if isinstance(value, ast.Call) else None
            found[attribute] = built if attribute not in found else None
        return found

    def shadowed(self, name: str, scan: _FunctionScan) -> bool:
        return (name in scan.locals or name in scan.parameters or name in scan.imported or name in self.local
                or name in self.imports)

    def registries(self) -> Dict[str, Tuple[str, ...]]:
        """Module-level dicts of callables, never changed after (``MODELS =
        {"bert": BERT, "sas": SAS}``): found when a call first reads one."""
        if self._registries is None:
            assigned = self.module_assignments[0] if self.module_assignments is not None else {}
            # (the walk for later writes only where a dict display of callables may be one: most files have none)
            candidates = {name: value for name, value in assigned.items()
                          if isinstance(value, ast.Dict) and value.values and None not in value.keys
                          and all(isinstance(v, (ast.Name, ast.Attribute)) for v in value.values)}
            self._registries = _registries(candidates, self.imports, self.local,
                                           self.module_writes()[1]) if candidates else {}
        return self._registries

    def module_writes(self) -> Tuple[FrozenSet[str], FrozenSet[str]]:
        """:func:`_module_writes` of this file, walked once, when first asked."""
        if self._writes_of_module is None:
            self._writes_of_module = _module_writes(self._tree)
        return self._writes_of_module

    def shadowed_here(self, name: str, scan: _FunctionScan) -> bool:
        """``name`` is bound in the function itself (a parameter, a local, an import)."""
        own = self.module_assignments is None or scan.locals is not self.module_assignments[0]
        return name == scan.instance or name in scan.parameters or (own and name in scan.locals) or name in scan.imported

    def global_value(self, name: str) -> Optional[ast.expr]:
        """The value of the one plain assignment of a module-level ``name``
        (in the module's own statements; no function declares it ``global``)."""
        if self._globals is None:
            found: Dict[str, Optional[ast.expr]] = {}
            for statement in module_level(self._tree):
                targets = statement.targets if isinstance(statement, ast.Assign) else (
                    [statement.target] if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) else [])
                value = statement.value if isinstance(statement, ast.Assign) and len(targets) == 1 else None
                for target in targets:
                    for leaf in _stored(target):
                        found[leaf.id] = value if target is leaf and leaf.id not in found else None
            found = {name: value for name, value in found.items() if value is None or _device_like(value)}
            if any(value is not None for value in found.values()):
                for declared in self.module_writes()[0]:
                    found[declared] = None
            self._globals = found
        return self._globals.get(name)

    def named(self, expr: ast.expr, scan: Optional[_FunctionScan]) -> Optional[str]:
        """:func:`resolve` with the function's own imports first (one import
        of the name: that; several: unknown)."""
        name = dotted(expr)
        root = name.partition(".")[0] if name is not None else None
        chosen = scan.imported.get(root) if scan is not None and root is not None else None
        if chosen is not None and root is not None:
            return resolve(expr, {root: chosen[0]}, {}) if len(chosen) == 1 else None
        return resolve(expr, self.imports, self.local)

    def choices(self, func: ast.expr, scan: _FunctionScan, methods: bool = True) -> Tuple[str, ...]:
        """What calling ``func`` may run, one of several: a name the function
        imports in several branches, or a value of a module-level registry
        (``MODELS[name]``, or a local bound once to it); () when not so."""
        if isinstance(func, ast.Attribute) and not methods:
            return ()
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id not in scan.parameters and func.value.id != scan.instance):
            calls = scan.assigned_calls(func.value.id)  # `model = A(cfg)` in one branch, `B(cfg)` in another
            if calls is None or len(calls) < 2:
                return ()
            found: Set[str] = set()
            for call in calls:
                built = self.built_by(call, scan, methods=False)  # not `x = x.m()`: no method of a local twice
                if not built:
                    return ()
                found.update(f"{name}.{func.attr}" for name in built)
            return tuple(sorted(found))
        if isinstance(func, ast.Name) and func.id not in scan.parameters:
            chosen = scan.imported.get(func.id)
            if chosen is not None:
                return tuple(resolve(func, {func.id: target}, {}) or target for target in chosen)
            value = scan.locals.get(func.id)
            if isinstance(value, ast.Subscript):
                func = value
        if (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name)
                and not self.shadowed_here(func.value.id, scan)):
            local = self.registries().get(func.value.id)
            if local is not None:
                return local
            imported = resolve(func.value, self.imports, {}) if func.value.id in self.imports else None
            if imported is not None and not is_torch_module(imported):
                return (imported + REGISTRY_CALL,)  # another module's registry, perhaps: `link` reads it
        return ()

    def built_by(self, call: ast.Call, scan: _FunctionScan, methods: bool = True) -> Tuple[str, ...]:
        """What a call that gives a new value may run: :meth:`choices`, or the
        one callable it names (not a builtin, not a method of an instance)."""
        chosen = self.choices(call.func, scan, methods)
        if chosen:
            return chosen
        target = self.callee(call.func, scan)
        if target is None or target[1] or target[0].startswith("builtins."):
            return ()
        return (target[0],)

    def maker(self, expr: ast.expr, scan: _FunctionScan) -> Optional[str]:
        """The class a named constructor call built ``expr`` with, if certain."""
        if isinstance(expr, ast.Name) and expr.id in scan.locals and expr.id not in scan.parameters:
            value = scan.locals[expr.id]
            expr = value if value is not None else expr
        expr = _unless_none(expr)
        if isinstance(expr, ast.Call):
            return self.named(expr.func, scan)
        return None

    def annotation_class(self, annotation: ast.expr) -> Optional[str]:
        """The class an annotation names (``GradScaler``, ``amp.GradScaler``,
        ``Optional[GradScaler]``, ``"GradScaler"`` left as text is not read)."""
        if isinstance(annotation, ast.Subscript) and self.named(annotation.value, None) == "typing.Optional":
            annotation = annotation.slice
        if not isinstance(annotation, (ast.Name, ast.Attribute)):
            return None
        return self.named(annotation, None)

    def one_of_classes(self, expr: ast.expr, scan: _FunctionScan) -> Tuple[str, ...]:
        """The named classes (or callables) one of whose calls built ``expr``,
        asked when :meth:`maker` knows no single call: both sides of ``A() if
        c else B()``, or each call a local is bound to in several branches;
        () when any way of binding it is something else."""
        sides: List[ast.expr] = [expr]
        if isinstance(expr, ast.Name):
            if expr.id in scan.parameters:
                return ()
            calls = scan.assigned_calls(expr.id)
            value = scan.locals.get(expr.id)
            if calls:
                sides = list(calls)
            elif value is not None:
                sides = [value]
            else:
                return ()
        found: Set[str] = set()
        for side in sides:
            side = _unless_none(side)
            for part in (side.body, side.orelse) if isinstance(side, ast.IfExp) else (side,):
                part = _unless_none(part)
                name = self.named(part.func, scan) if isinstance(part, ast.Call) else None
                if name is None:
                    return ()
                found.add(name)
        return tuple(sorted(found))

    def pin_state(self, expr: ast.expr, scan: _FunctionScan) -> Optional[str]:
        """What the call that built ``expr`` (as :meth:`maker` finds it) passes
        for ``pin_memory`` (:attr:`Call.pins`); None for a ``**`` that may carry it."""
        call = scan.construction(expr)
        if call is None:
            return None
        found = ""
        for keyword in call.keywords:
            pairs: Optional[Sequence[Tuple[str, ast.expr, bool]]] = [(keyword.arg, keyword.value, True)] if (
                keyword.arg is not None) else scan.splat_pairs(keyword.value)
            if pairs is None:
                return None  # a `**` that may carry it
            for name, value, _everywhere in pairs:
                if name == "pin_memory":  # (pinned where a conditional dict says so: "lit")
                    found = "lit" if python_literal_bool(value) is True else "no"
        return found

    def callee(self, func: ast.expr, scan: _FunctionScan) -> Optional[Tuple[str, bool]]:
        """(dotted name, whether an instance is bound) of what ``func`` calls, when known."""
        name = dotted(func)
        if name is not None and name.partition(".")[0] in scan.imported:
            target = self.named(func, scan)
            return (target, False) if target is not None else None
        if isinstance(func, ast.Name):
            if func.id in scan.parameters:
                return None
            if func.id in scan.locals:
                built = self.maker(func, scan)
                return (f"{built}.__call__", True) if built is not None else None
            if func.id not in self.local and func.id not in self.imports:
                return (f"builtins.{func.id}", False)
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == scan.instance
                and scan.owner is not None):
            return (f"{self.module}.{scan.owner}.{func.attr}", True)
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute)
                and isinstance(func.value.value, ast.Name) and func.value.value.id == scan.instance
                and scan.owner is not None):
            built = self.attributes.get(scan.owner, {}).get(func.value.attr)
            return (f"{built}.{func.attr}", True) if built is not None else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in scan.locals:
            built = self.maker(func.value, scan)
            return (f"{built}.{func.attr}", True) if built is not None else None
        target = resolve(func, self.imports, self.local)
        return (target, False) if target is not None else None


def _looped_names(body: Sequence[ast.stmt]) -> FrozenSet[str]:
    """The names a module body binds inside its ``for``/``while`` loops
    (``for epoch in ...: eval_loader = loader.run("eval")``), not in functions or classes."""
    found: Set[str] = set()
    pending: List[Tuple[ast.AST, bool]] = [(statement, False) for statement in body]
    while pending:
        node, inside = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if inside and isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        looping = inside or isinstance(node, (ast.For, ast.AsyncFor, ast.While))
        pending.extend((child, looping) for child in ast.iter_child_nodes(node))
    return frozenset(found)


def _cuda_text(expr: ast.expr) -> bool:
    """A string that names a CUDA device: ``"cuda"``, ``"cuda:0"``, and
    formatted ones (``"cuda:{}".format(i)``, ``f"cuda:{i}"``, ``"cuda:" + str(i)``)."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, str) and (expr.value == "cuda" or expr.value.startswith("cuda:"))
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format":
        return _cuda_text(expr.func.value)
    if isinstance(expr, ast.JoinedStr) and expr.values:
        return _cuda_text(expr.values[0])
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Mod)):
        return _cuda_text(expr.left)
    return False


def _names_cuda(tree: ast.Module) -> bool:
    """The file spells CUDA in code: ``.cuda``/``torch.cuda`` or a ``"cuda..."`` string."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "cuda":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value == "cuda" or node.value.startswith("cuda:")):
            return True
    return False


def summarize_tree(tree: ast.Module, module: str, is_package: bool, cuda: Optional[bool] = None,
                   epochs: Optional[bool] = None) -> FileSummary:
    """The facts of one parsed file (``cuda``, ``epochs``: False when the text
    cannot name CUDA, or ``set_epoch``, at all)."""
    reader = _FileReader(tree, module, is_package)
    functions: List[Function] = []
    bases: List[Tuple[str, Tuple[str, ...]]] = []
    layers: List[WrappedLayer] = []
    attributes: List[Tuple[str, Tuple[Tuple[str, str], ...]]] = []
    devices: List[Tuple[str, Tuple[Tuple[str, str], ...]]] = []
    loaders: Dict[str, BuiltLoader] = {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(_scan(reader, statement, f"{module}.{statement.name}", None))
            built = _built_loader(reader, statement, f"{module}.{statement.name}", None)
            loaders.pop(f"{module}.{statement.name}", None)
            if built is not None:
                loaders[built.qualified] = built
        elif isinstance(statement, ast.ClassDef):
            qualified = f"{module}.{statement.name}"
            resolved = tuple(b for b in (resolve(base, reader.imports, reader.local) for base in statement.bases)
                             if b is not None)
            bases.append((qualified, resolved))
            for member in statement.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    functions.append(_scan(reader, member, f"{qualified}.{member.name}", statement.name))
                    built = _built_loader(reader, member, f"{qualified}.{member.name}", statement.name)
                    loaders.pop(f"{qualified}.{member.name}", None)  # the last def of a name is the one that counts
                    if built is not None:
                        loaders[built.qualified] = built
            wrapped = _wrapped_layer(statement, qualified, reader)
            if wrapped is not None:
                layers.append(wrapped)
            kept = _init_parameters(statement, reader)
            if kept:
                attributes.append((qualified, kept))
            placed = _device_attributes(statement, reader)
            if placed:
                devices.append((qualified, placed))
    accelerators = tuple(sorted(f.qualified for f, scan in zip(functions, reader.scans) if scan.accelerator))
    top = _FunctionScan(reader, tree, f"{module}.{MODULE_BODY}", None)
    top.body(tree.body, False, None)  # the script's own calls: what it passes to the project's functions
    if top.calls:
        functions.append(top.function())
    by_name = {f.qualified: f for f in functions}  # the last def of a name is the one that counts
    registries = tuple(sorted((f"{module}.{name}", targets) for name, targets in reader.registries().items()))
    return FileSummary(module, tuple(by_name.values()), tuple(bases), tuple(layers), tuple(attributes),
                       tuple(loaders[name] for name in sorted(loaders)), _names_cuda(tree) if cuda is not False else False,
                       accelerators, epochs=_sets_epoch(tree) if epochs is not False else False, devices=tuple(devices),
                       registries=registries)


def _sets_epoch(tree: ast.Module) -> bool:
    """The file calls a ``set_epoch`` method."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "set_epoch"
               for node in ast.walk(tree))


def _device_attributes(node: ast.ClassDef, reader: "_FileReader") -> Tuple[Tuple[str, str], ...]:
    """``self.<attr>`` a method of the class sets once, and nothing else
    writes, to a device that may be CUDA, the CPU or a call's result (see
    :attr:`FileSummary.devices`); any other attribute the class writes is
    ``?`` (it hides what a base class sets)."""
    writes: Dict[str, List[Optional[str]]] = {}
    for member, attribute, value in reader.instance_writes(node):
        spec: Optional[str] = None
        if value is not None and isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
            spec = _device_value(value, reader, node.name, member.args.args[0].arg, 0)
        writes.setdefault(attribute, []).append(spec)
    return tuple(sorted((attr, found[0] if len(found) == 1 and found[0] is not None else UNKNOWN)
                        for attr, found in writes.items()))


def _device_value(value: ast.expr, reader: "_FileReader", owner: str, instance: str, depth: int) -> Optional[str]:
    """``cuda`` for a device that may be CUDA, ``cpu`` for the CPU
    (:func:`_spelled_device`), ``call:<name>`` for a call of the instance's
    method or of a named function; else None."""

    def called(expr: ast.expr, _depth: int) -> Optional[str]:
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == instance:
            return f"call:{reader.module}.{owner}.{func.attr}"
        named = resolve(func, reader.imports, reader.local)
        return f"call:{named}" if named is not None and not named.startswith("torch.") else None

    return _spelled_device(value, reader, depth, called, index=True)


def _spelled_device(expr: ast.expr, reader: "_FileReader", depth: int,
                    more: Callable[[ast.expr, int], Optional[str]], index: bool) -> Optional[str]:
    """The device ``expr`` spells, the one reading the summaries share:
    ``cuda`` for one that may be CUDA (a ``"cuda..."`` string, formatted ones
    too; a conditional with such a side; ``torch.device(...)`` of one; where
    ``index``, in a device's place, an integer or ``int(...)``: ``x.to(0)``,
    ``int(os.environ["LOCAL_RANK"])``), ``cpu`` for the CPU (a conditional:
    both sides); anything else is what ``more`` (the reader's own names,
    attributes and calls, given the depth) makes of it."""
    if depth > 4:
        return None
    if _cuda_text(expr):
        return "cuda"
    if isinstance(expr, ast.Constant):
        if index and isinstance(expr.value, int) and not isinstance(expr.value, bool):
            return "cuda"  # a device index: `tensor.to(0)` is `cuda:0`
        return "cpu" if isinstance(expr.value, str) and expr.value.startswith("cpu") else None
    if isinstance(expr, ast.IfExp):
        sides = {_spelled_device(expr.body, reader, depth + 1, more, index),
                 _spelled_device(expr.orelse, reader, depth + 1, more, index)}
        return "cuda" if "cuda" in sides else ("cpu" if sides == {"cpu"} else None)
    if isinstance(expr, ast.Call):
        if (index and isinstance(expr.func, ast.Name) and expr.func.id == "int" and "int" not in reader.local
                and "int" not in reader.imports):
            return "cuda"
        if resolve(expr.func, reader.imports, reader.local) == "torch.device":
            return _spelled_device(expr.args[0], reader, depth + 1, more, True) if expr.args else None
    return more(expr, depth)


def _instance_writes(node: ast.ClassDef,
                     own: OwnNodes = _own_nodes) -> Iterator[Tuple[ast.AST, str, Optional[ast.expr]]]:
    """Each ``self.<attr>`` a method of the class writes in its own body: (the
    method, the attribute, the value when the attribute is the whole and only
    target of a plain assignment, else None)."""
    for member in node.body:
        if not isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) or not member.args.args:
            continue
        instance = member.args.args[0].arg
        for child in own(member.body):
            targets: List[ast.expr] = []
            value: Optional[ast.expr] = None
            if isinstance(child, ast.Assign):
                targets, value = list(child.targets), child.value
            elif isinstance(child, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
                targets = [child.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name) and leaf.value.id == instance:
                        whole = leaf is target and len(targets) == 1
                        yield member, leaf.attr, value if whole else None


def _init_parameters(node: ast.ClassDef, reader: "_FileReader") -> Tuple[Tuple[str, str], ...]:
    """``self.<attr> = <parameter>`` in ``__init__`` (the parameter not
    rebound there), for attributes no method writes anywhere else."""
    writes: Dict[str, List[Optional[str]]] = {}
    inits = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == "__init__"]
    init = inits[-1] if inits and inits[-1].args.args else None  # the last def of a name is the one that counts
    parameters = {a.arg for a in (*init.args.args[1:], *init.args.kwonlyargs)} if init is not None else set()
    rebound = set(_single_assignments(init.body, own=reader.own_nodes)[0]) if init is not None else set()
    for member, attribute, value in reader.instance_writes(node):
        given = (value.id if member is init and isinstance(value, ast.Name)
                 and value.id in parameters and value.id not in rebound else None)
        writes.setdefault(attribute, []).append(given)
    return tuple(sorted((attr, found[0]) for attr, found in writes.items() if len(found) == 1 and found[0] is not None))


def _wrapped_layer(node: ast.ClassDef, qualified: str, reader: "_FileReader") -> Optional[WrappedLayer]:
    """The one layer a module class's ``forward`` returns the output of, as
    ``__init__`` builds it; None for anything else (several layers on the
    way, the layer's ``bias`` read or changed, a layer rebuilt elsewhere)."""
    methods = {m.name: m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    init, forward = methods.get("__init__"), methods.get("forward")
    subclassed = _subclassed_layer(node, qualified, reader, methods)
    if subclassed is not None:
        return subclassed
    if init is None or forward is None or init.decorator_list or forward.decorator_list:
        return None
    if not init.args.args or not forward.args.args or init.args.posonlyargs:
        return None
    attribute = _returned_attribute(forward)
    if attribute is None:
        return None
    instance = init.args.args[0].arg
    built: List[ast.Call] = []
    for method in methods.values():
        receiver = method.args.args[0].arg if method.args.args else None
        for child in reader.own_nodes(method.body):
            if (isinstance(child, ast.Attribute) and isinstance(child.value, ast.Attribute)
                    and isinstance(child.value.value, ast.Name) and child.value.value.id == receiver
                    and child.value.attr == attribute and child.attr == "bias"):
                return None  # the class reads or sets the layer's bias itself
            if isinstance(child, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for target in targets:
                    if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                            and target.value.id == receiver and target.attr == attribute):
                        if method is not init or not isinstance(child, ast.Assign) or not isinstance(child.value, ast.Call):
                            return None
                        built.append(child.value)
    if len(built) != 1:
        return None
    call = built[0]
    layer = resolve(call.func, reader.imports, reader.local)
    if layer is None:
        return None
    return _layer_built(qualified, layer, call, init, instance, reader)


def _subclassed_layer(node: ast.ClassDef, qualified: str, reader: "_FileReader",
                      methods: Mapping[str, FunctionNode]) -> Optional[WrappedLayer]:
    """A subclass of one of torch's layers (``class Conv1d(nn.Conv1d)``) whose
    ``__init__`` builds the layer through ``super().__init__(...)`` and whose
    ``forward``, if it has one, returns what a ``torch.nn.functional`` call
    or the base class's ``forward`` returns: to what follows it, an instance
    is that layer, built with those arguments.  None when a method writes
    ``self.bias``."""
    if len(node.bases) != 1 or node.keywords:
        return None
    layer = resolve(node.bases[0], reader.imports, reader.local)
    init, forward = methods.get("__init__"), methods.get("forward")
    if layer is None or not layer.startswith("torch.nn.") or init is None or init.decorator_list:
        return None
    if not init.args.args or init.args.posonlyargs:
        return None
    instance = init.args.args[0].arg
    supers = [child for child in reader.own_nodes(init.body)
              if isinstance(child, ast.Call) and _is_super_init(child, instance)]
    if len(supers) != 1:
        return None
    if forward is not None:
        returns = [child for child in reader.own_nodes(forward.body) if isinstance(child, ast.Return)]
        if forward.decorator_list or len(returns) != 1 or not isinstance(returns[0].value, ast.Call):
            return None
        returned = returns[0].value
        target = resolve(returned.func, reader.imports, reader.local)
        if not ((target is not None and target.startswith("torch.nn.functional."))
                or (isinstance(returned.func, ast.Attribute) and returned.func.attr == "forward"
                    and isinstance(returned.func.value, ast.Call) and isinstance(returned.func.value.func, ast.Name)
                    and returned.func.value.func.id == "super")):
            return None
    for method in methods.values():
        receiver = method.args.args[0].arg if method.args.args else None
        for child in reader.own_nodes(method.body):
            if isinstance(child, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                if any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == receiver
                       and t.attr == "bias" for t in targets):
                    return None  # the class sets the layer's bias itself
    return _layer_built(qualified, layer, supers[0], init, instance, reader)


def _is_super_init(call: ast.Call, instance: str) -> bool:
    """``super().__init__(...)`` or ``super(Cls, self).__init__(...)``."""
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"
            and (not func.value.args or (len(func.value.args) == 2 and isinstance(func.value.args[1], ast.Name)
                                         and func.value.args[1].id == instance)))


def _layer_built(qualified: str, layer: str, call: ast.Call, init: FunctionNode, instance: str,
                 reader: "_FileReader") -> WrappedLayer:
    """The :class:`WrappedLayer` of ``layer`` built by ``call`` in ``__init__``."""
    parameters = tuple(a.arg for a in init.args.args[1:])
    keyword_only = tuple(a.arg for a in init.args.kwonlyargs)
    rebound = _single_assignments(init.body, own=reader.own_nodes)[0]
    every = (set(parameters) | set(keyword_only)) - set(rebound)  # not rebound

    def how(value: ast.expr) -> str:
        if python_literal_bool(value) is not None:
            return str(python_literal_bool(value))
        if isinstance(value, ast.Name) and value.id in every and value.id != instance:
            return f"param:{value.id}"
        return "?"

    positional = tuple(how(a) for a in call.args if not isinstance(a, ast.Starred))
    arguments = tuple((k.arg, how(k.value)) for k in call.keywords if k.arg is not None)
    open_keywords = (any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)
                     or init.args.kwarg is not None)
    defaults: List[Tuple[str, str]] = []
    positional_defaults = init.args.defaults
    for argument, default in zip(init.args.args[len(init.args.args) - len(positional_defaults):], positional_defaults):
        if python_literal_bool(default) is not None:
            defaults.append((argument.arg, str(python_literal_bool(default))))
    for argument, keyword_default in zip(init.args.kwonlyargs, init.args.kw_defaults):
        if python_literal_bool(keyword_default) is not None:
            defaults.append((argument.arg, str(python_literal_bool(keyword_default))))
    return WrappedLayer(qualified, layer, parameters, keyword_only, arguments, positional, tuple(defaults),
                        open_keywords)


def _returned_attribute(forward: FunctionNode) -> Optional[str]:
    """``X`` when ``forward`` is ``return self.X(...)``, or ``y = self.X(...)``
    then ``return y`` (nothing else but docstrings in between)."""
    if not forward.args.args:
        return None
    instance = forward.args.args[0].arg
    body = [s for s in forward.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]

    def called(value: Optional[ast.expr]) -> Optional[str]:
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and isinstance(value.func.value, ast.Name) and value.func.value.id == instance):
            return value.func.attr
        return None

    if len(body) == 1 and isinstance(body[0], ast.Return):
        return called(body[0].value)
    if (len(body) == 2 and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1
            and isinstance(body[0].targets[0], ast.Name) and isinstance(body[1], ast.Return)
            and isinstance(body[1].value, ast.Name) and body[1].value.id == body[0].targets[0].id):
        return called(body[0].value)
    return None


def _scan(reader: _FileReader, node: FunctionNode, qualified: str, owner: Optional[str]) -> Function:
    scan = _FunctionScan(reader, node, qualified, owner)
    reader.scans.append(scan)
    for decorator in node.decorator_list:
        scan.expression(decorator, False)
    scan.body(node.body, scan.disabled, None)
    found = scan.function()
    return dataclasses.replace(found, stub=True) if _stub(node) else found


def _stub(node: FunctionNode) -> bool:
    """A body that does nothing but say it is not implemented (``pass``,
    ``...``, ``raise NotImplementedError``, a bare ``return``), after an
    optional docstring: a method for subclasses to define."""
    body = node.body[1:] if (node.body and isinstance(node.body[0], ast.Expr)
                             and isinstance(node.body[0].value, ast.Constant)
                             and isinstance(node.body[0].value.value, str)) else node.body
    for statement in body:
        if isinstance(statement, ast.Pass) or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
                                                and statement.value.value is Ellipsis):
            continue
        if isinstance(statement, ast.Return) and (statement.value is None or (
                isinstance(statement.value, ast.Constant) and statement.value.value is None)):
            continue
        raised = statement.exc.func if isinstance(statement, ast.Raise) and isinstance(statement.exc, ast.Call) else (
            statement.exc if isinstance(statement, ast.Raise) else None)
        if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
            continue
        return False
    return True


_NEWEST_TORCH = TorchVersion(99, 0)
"""Positions mapped to a loader's keywords as the newest torch takes them
(``DataLoader``'s first positions have not moved since 1.0)."""


def _built_loader(reader: _FileReader, node: FunctionNode, qualified: str,
                  owner: Optional[str]) -> Optional[BuiltLoader]:
    """The loader every ``return`` of ``node`` builds (see :class:`BuiltLoader`),
    or the call of another callable every ``return`` makes (``return
    build(ds, num_workers=w, **kw)``: :attr:`BuiltLoader.through`, for
    :func:`link` to follow); None when a return gives anything else, two
    returns differ, or the function yields."""
    own = reader.own_nodes(node.body)
    returns = [child for child in own if isinstance(child, ast.Return)]
    if not returns:
        return None
    assigned, yields, _derived = _single_assignments(node.body, own=reader.own_nodes)
    if yields:
        return None
    args = node.args
    parameters = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    loads = _plain_reads(own)
    instance = args.args[0].arg if owner is not None and args.args else None
    found: Optional[BuiltLoader] = None
    for statement in returns:
        value = statement.value
        if isinstance(value, ast.Name) and value.id not in parameters and assigned.get(value.id) is not None:
            value = assigned[value.id]
        built: Optional[BuiltLoader] = None
        if isinstance(value, ast.Tuple):
            built = _tuple_of_loaders(value, reader, node, qualified, assigned, parameters, loads)
            if built is None:
                return None
            found = built if found is None else _either_loader(found, built)
            if found is None:
                return None
            continue
        if not isinstance(value, ast.Call):
            return None
        loader = resolve(value.func, reader.imports, reader.local)
        if loader is not None and loader_signature(loader) is not None:
            built = _loader_keywords(value, loader, node, qualified, assigned, parameters, loads)
        else:
            built = _passed_on(value, loader, instance, owner, reader, node, qualified, assigned, parameters, loads)
        if built is None:
            return None
        found = built if found is None else _either_loader(found, built)
        if found is None:
            return None
    return found


def _tuple_of_loaders(value: ast.Tuple, reader: _FileReader, node: FunctionNode, qualified: str,
                      assigned: Mapping[str, Optional[ast.expr]], parameters: Set[str],
                      loads: Mapping[str, int]) -> Optional[BuiltLoader]:
    """``return train_loader, val_loader, n_classes``: the loaders the
    tuple's elements build (a ``DataLoader(...)`` call, or a local assigned
    once from one), merged as two returns are (:func:`_either_loader`), with
    their positions (:attr:`BuiltLoader.parts`); None when no element is
    such a loader, or a starred element hides the positions."""
    found: Optional[BuiltLoader] = None
    positions: List[int] = []
    for position, element in enumerate(value.elts):
        if isinstance(element, ast.Starred):
            return None
        if isinstance(element, ast.Name) and element.id not in parameters and assigned.get(element.id) is not None:
            element = cast(ast.expr, assigned[element.id])
        if not isinstance(element, ast.Call):
            continue
        loader = resolve(element.func, reader.imports, reader.local)
        if loader is None or loader_signature(loader) is None:
            continue
        built = _loader_keywords(element, loader, node, qualified, assigned, parameters, loads)
        found = built if found is None else _either_loader(found, built)
        if found is None:
            return None
        positions.append(position)
    if found is None:
        return None
    return dataclasses.replace(found, parts=tuple(positions), arity=len(value.elts))


def _either_loader(first: BuiltLoader, second: BuiltLoader) -> Optional[BuiltLoader]:
    """Two ``return``s that each build a loader of one class (``if train: return
    DataLoader(train_set, batch_size=32, pin_memory=True)`` / ``else: return
    DataLoader(val_set, batch_size=1, pin_memory=True)``): what both give it;
    a keyword they pass differently, or only one passes, is not known.  None
    when they build different classes or are passed on differently."""
    if first == second:
        return first
    if (first.loader != second.loader or first.through or second.through or first.forwards != second.forwards
            or first.bound != second.bound or first.defaults != second.defaults or first.parts != second.parts
            or first.arity != second.arity):
        return None
    theirs = dict(second.arguments)
    mine = dict(first.arguments)
    merged = {key: (value if theirs.get(key) == value else UNKNOWN) for key, value in mine.items()}
    merged.update({key: UNKNOWN for key in theirs if key not in mine})
    return dataclasses.replace(first, arguments=tuple(sorted(merged.items())),
                               open_keywords=first.open_keywords or second.open_keywords)


def _passed_on(call: ast.Call, callee: Optional[str], instance: Optional[str], owner: Optional[str],
               reader: _FileReader, node: FunctionNode, qualified: str, assigned: Mapping[str, Optional[ast.expr]],
               parameters: Set[str], loads: Mapping[str, int]) -> Optional[BuiltLoader]:
    """A ``return`` of another callable's call, which may build a loader: the
    call's arguments by slot, for :func:`link` to put in the callee's loader."""
    func = call.func
    bound = False
    if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and instance is not None
            and func.value.id == instance and instance not in assigned):  # a method, perhaps of a base
        callee, bound = f"{reader.module}.{owner}.{func.attr}", True
    else:
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id in parameters or root.id in assigned:
            return None  # a callable the function was given or made: not known here
    if callee is None or callee.startswith("builtins."):
        return None
    slots, forwards, open_keywords = _call_keywords(call, None, node, assigned, parameters, loads)
    return BuiltLoader(qualified, callee, slots, _literal_defaults(node), forwards, open_keywords, True, bound)


def _call_keywords(call: ast.Call, positional: Optional[Sequence[str]], node: FunctionNode,
                   assigned: Mapping[str, Optional[ast.expr]], parameters: Set[str],
                   loads: Mapping[str, int]) -> Tuple[Tuple[Tuple[str, str], ...], Optional[str], bool]:
    """What a call of ``node``'s gets, by keyword (a position mapped through
    ``positional``, or written as a digit string when None): ``param:<name>``,
    ``lit:<source>`` or :data:`UNKNOWN`; the function's ``**`` parameter it
    passes on whole; whether it also gets a ``*``/``**`` of unknown contents."""

    def how(value: ast.expr) -> str:
        if isinstance(value, ast.Name) and value.id in parameters and value.id not in assigned:
            return f"param:{value.id}"
        return _literal_text(value) or UNKNOWN

    arguments: Dict[str, str] = {}
    open_keywords = False
    forwards: Optional[str] = None
    vararg = node.args.vararg.arg if node.args.vararg is not None else None
    for position, argument in enumerate(call.args):
        if (isinstance(argument, ast.Starred) and positional is not None and position == len(call.args) - 1
                and isinstance(argument.value, ast.Name) and argument.value.id == vararg
                and vararg not in assigned and not loads.get(vararg)):
            # `DataLoader(self, *args, **kwargs)`: the caller's extra positional arguments, in order
            for index, name in enumerate(positional[position:]):
                arguments[name] = f"{VARARG}{index}"
            break
        if isinstance(argument, ast.Starred) or (positional is not None and position >= len(positional)):
            open_keywords = True
            break
        arguments[positional[position] if positional is not None else str(position)] = how(argument)
    kwarg = node.args.kwarg.arg if node.args.kwarg is not None else None
    for keyword in call.keywords:
        if keyword.arg is not None:
            arguments[keyword.arg] = how(keyword.value)
            continue
        splat = keyword.value
        if isinstance(splat, ast.Name) and splat.id == kwarg and kwarg not in assigned and not loads.get(kwarg):
            forwards = kwarg  # the caller's extra keywords, untouched
            continue
        if (positional is not None and isinstance(splat, ast.Name) and splat.id in parameters
                and splat.id not in assigned and not loads.get(splat.id) and SPLATTED not in arguments):
            arguments[SPLATTED] = f"param:{splat.id}"  # `DataLoader(ds, **kwargs)`, `kwargs` a dict the caller passes
            continue
        pairs = _dict_pairs(splat, assigned, parameters, loads)
        if pairs is not None:
            for name, value in pairs:
                arguments[name] = how(value)
            continue
        cases = _conditional_pairs(splat, assigned, parameters, loads)
        if cases is None:
            open_keywords = True
            continue
        for name, value, everywhere in cases:
            text = _literal_text(value)
            arguments[name] = how(value) if everywhere else (
                MAYBE + text[len("lit:"):] if text is not None else UNKNOWN)
    return tuple(sorted(arguments.items())), forwards, open_keywords


SPLATTED = "**"
"""In :attr:`BuiltLoader.arguments`: ``param:<name>``, a parameter (not the
function's own ``**``) unpacked whole into the loader's keywords
(``def load_training(root, batch_size, kwargs): return DataLoader(...,
**kwargs)``): the keys of the dict a caller passes for it.  Only for a
loader the function builds itself: a dict passed on to another function
may fill that one's parameters, which stays open (:attr:`BuiltLoader.open_keywords`)."""


MAYBE = "maybe:"
"""In :attr:`BuiltLoader.arguments`: a literal the loader gets on some paths only (a key of one
side of ``{...} if use_cuda else {}``), the loader's default on the others."""


def _conditional_pairs(splat: ast.expr, assigned: Mapping[str, Optional[ast.expr]], parameters: AbstractSet[str],
                       loads: Mapping[str, int]) -> Optional[List[Tuple[str, ast.expr, bool]]]:
    """``**kwargs`` after ``kwargs = {"num_workers": 1, "pin_memory": True} if
    cuda else {}`` (a local assigned once and read only by ``**``, or the
    conditional itself): each key with its value and whether both sides
    hold it; None when a key's value differs between the sides or a side is
    not a dict display."""
    found_value = _read_once(splat, assigned, parameters, loads)
    if not isinstance(found_value, ast.IfExp):
        return None
    splat = found_value
    sides = [_dict_pairs(side, {}, parameters, {}) if isinstance(side, (ast.Dict, ast.Call)) else None
             for side in (splat.body, splat.orelse)]
    if sides[0] is None or sides[1] is None:
        return None
    first, second = dict(sides[0]), dict(sides[1])
    found: List[Tuple[str, ast.expr, bool]] = []
    for name in sorted({*first, *second}):
        if name in first and name in second:
            if ast.dump(first[name]) != ast.dump(second[name]):
                return None
            found.append((name, first[name], True))
        else:
            found.append((name, first[name] if name in first else second[name], False))
    return found


def _literal_defaults(node: FunctionNode) -> Tuple[Tuple[str, str], ...]:
    """The function's parameters whose default is a literal: ``lit:<source>``."""
    defaults: List[Tuple[str, str]] = []
    ordered = [*node.args.posonlyargs, *node.args.args]
    for parameter, default in zip(ordered[len(ordered) - len(node.args.defaults):], node.args.defaults):
        text = _literal_text(default)
        if text is not None:
            defaults.append((parameter.arg, text))
    for parameter, given in zip(node.args.kwonlyargs, node.args.kw_defaults):
        text = _literal_text(given) if given is not None else None
        if text is not None:
            defaults.append((parameter.arg, text))
    return tuple(sorted(defaults))


def _loader_keywords(call: ast.Call, loader: str, node: FunctionNode, qualified: str,
                     assigned: Mapping[str, Optional[ast.expr]], parameters: Set[str],
                     loads: Mapping[str, int]) -> BuiltLoader:
    signature = loader_signature(loader)
    assert signature is not None
    positional = signature.positional_names(_NEWEST_TORCH)
    arguments, forwards, open_keywords = _call_keywords(call, positional, node, assigned, parameters, loads)
    return BuiltLoader(qualified, loader, arguments, _literal_defaults(node), forwards, open_keywords)


def _literal_text(value: ast.expr) -> Optional[str]:
    """``lit:<source>`` for a number, ``True``/``False``/``None`` (a negative number too)."""
    inner = value.operand if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) else value
    if isinstance(inner, ast.Constant) and (inner.value is None or isinstance(inner.value, (bool, int, float))):
        return f"lit:{ast.unparse(value)}"
    return None


def _plain_reads(nodes: Iterable[ast.AST]) -> Dict[str, int]:
    """How often each name is read other than as the dict of a ``**`` or the
    sequence of a ``*`` (unpacking copies it: a name read only that way is
    never changed through a read)."""
    unpacked: Set[int] = set()
    names: List[ast.Name] = []
    for child in nodes:
        if (isinstance(child, ast.keyword) and child.arg is None or isinstance(child, ast.Starred)) and isinstance(
                child.value, ast.Name):
            unpacked.add(id(child.value))
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
            names.append(child)
    reads: Dict[str, int] = {}
    for name in names:
        if id(name) not in unpacked:
            reads[name.id] = reads.get(name.id, 0) + 1
    return reads


def _read_once(splat: ast.expr, assigned: Mapping[str, Optional[ast.expr]], parameters: AbstractSet[str],
               loads: Mapping[str, int]) -> Optional[ast.expr]:
    """What a ``**`` unpacks: the expression itself, or the one value of a local
    assigned once and read only by ``**`` unpackings (``loads``: the other
    reads, :func:`_plain_reads`; nothing can have changed it); None for a
    parameter or any other name."""
    if not isinstance(splat, ast.Name):
        return splat
    value = assigned.get(splat.id)
    if splat.id in parameters or value is None or loads.get(splat.id):
        return None
    return value


def _dict_pairs(splat: ast.expr, assigned: Mapping[str, Optional[ast.expr]], parameters: AbstractSet[str],
                loads: Mapping[str, int]) -> Optional[List[Tuple[str, ast.expr]]]:
    """The keys and values of a ``**`` of a dict display or ``dict(k=v)``, or
    of a local assigned one once and read only by ``**``; None otherwise."""
    found = _read_once(splat, assigned, parameters, loads)
    if found is None:
        return None
    splat = found
    if isinstance(splat, ast.Dict):
        pairs: List[Tuple[str, ast.expr]] = []
        for key, item in zip(splat.keys, splat.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None
            pairs.append((key.value, item))
        return pairs
    if (isinstance(splat, ast.Call) and isinstance(splat.func, ast.Name) and splat.func.id == "dict"
            and splat.func.id not in assigned and splat.func.id not in parameters and not splat.args
            and all(k.arg is not None for k in splat.keywords)):
        return [(k.arg, k.value) for k in splat.keywords if k.arg is not None]
    return None


# -- stored in the run's cache ----------------------------------------------------------------


def _to_json(summary: FileSummary) -> Any:
    return {
        "module": summary.module,
        "layers": [[w.qualified, w.layer, list(w.parameters), list(w.keyword_only), [list(a) for a in w.arguments],
                    list(w.positional), [list(d) for d in w.defaults], w.open_keywords] for w in summary.layers],
        "bases": [[name, list(bases)] for name, bases in summary.bases],
        "attributes": [[name, [list(a) for a in pairs]] for name, pairs in summary.attributes],
        "loaders": [[b.qualified, b.loader, [list(a) for a in b.arguments], [list(d) for d in b.defaults], b.forwards,
                     b.open_keywords, b.through, b.bound, list(b.parts), b.arity] for b in summary.loaders],
        "cuda": summary.cuda,
        "accelerators": list(summary.accelerators),
        "devices": [[name, [list(a) for a in pairs]] for name, pairs in summary.devices],
        "epochs": summary.epochs,
        "registries": [[name, list(targets)] for name, targets in summary.registries],
        "functions": [[
            f.qualified, list(f.parameters), list(f.keyword_only), f.method, sorted(f.runs), sorted(f.iterates),
            sorted(f.yields_from),
            [[r.builds, r.parameter, r.call, None if r.guard is None else [r.guard[0], r.guard[1]], list(r.one_of)]
             for r in f.returns],
            [[c.callee, c.bound, [list(s) for s in c.slots], c.role, c.disabled, [list(m) for m in c.makers],
              c.in_loop, [list(i) for i in c.items], [list(d) for d in c.devices], [list(p) for p in c.parts],
              c.on_self, [list(p) for p in c.pins], c.choice, [list(b) for b in c.built], list(c.passed)]
             for c in f.calls],
            [[name, in_loop] for name, in_loop in f.called_parameters],
            sorted(f.loop_runs), sorted(f.repeats),
            [list(m) for m in sorted(f.moves_items)], [list(m) for m in sorted(f.moves)], sorted(f.forwards),
            sorted(f.evals), [list(r) for r in f.relays], sorted(f.pinned_returns), sorted(f.pinned_attributes),
            [list(d) for d in f.device_defaults], sorted(f.yields_items),
            [list(c) for c in f.copies], f.stub, sorted(f.runs_parameters), f.gradients,
            [list(a) for a in f.annotated], sorted(f.grad_off), f.loads_weights, [list(k) for k in f.kept_results],
        ] for f in summary.functions],
    }


def _moves(value: Any) -> FrozenSet[Move]:
    if not isinstance(value, list) or not all(
            isinstance(m, list) and len(m) == 3 and all_of(str, m[0], m[1]) and isinstance(m[2], bool) for m in value):
        raise ValueError("moves")
    return frozenset((m[0], m[1], m[2]) for m in value)


def _strings(value: Any) -> FrozenSet[str]:
    if not isinstance(value, list) or not all_of(str, *value):
        raise ValueError("strings")
    return frozenset(value)


def _copies(value: Any) -> Tuple[Tuple[str, int, int], ...]:
    if not isinstance(value, list) or not all(
            isinstance(c, list) and len(c) == 3 and isinstance(c[0], str) and type(c[1]) is int and type(c[2]) is int
            for c in value):
        raise ValueError("copies")
    return tuple((c[0], c[1], c[2]) for c in value)


def _optional(kind: type, value: Any) -> bool:
    return value is None or (isinstance(value, kind) and not isinstance(value, bool) if kind is int else isinstance(value, kind))


def _pairs(value: Any) -> Tuple[Tuple[str, str], ...]:
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 and all_of(str, *p) for p in value):
        raise ValueError("pairs")
    return tuple((p[0], p[1]) for p in value)


def _from_json(data: Any) -> Optional[FileSummary]:
    """The summary a stored value holds; None unless it has exactly the
    shape :func:`_to_json` writes (a damaged entry is a miss)."""
    try:
        module = data["module"]
        bases = tuple((name, tuple(names)) for name, names in data["bases"])
        if not isinstance(module, str) or not all(all_of(str, name, *names) for name, names in bases):
            return None
        attributes = tuple((name, _pairs(pairs)) for name, pairs in data["attributes"])
        if not all(isinstance(name, str) for name, _ in attributes):
            return None
        functions = []
        for (qualified, parameters, keyword_only, method, runs, iterates, yields, returns, calls, called,
             loop_runs, repeats, moves_items, moves, forwards, evals, relays, pinned_returns, pinned_attributes,
             device_defaults, yields_items, copies, stub, runs_parameters, gradients, annotated,
             grad_off, loads, kept_results) in data["functions"]:
            if not (all_of(str, qualified, *parameters, *keyword_only, *runs, *iterates, *yields, *loop_runs,
                           *repeats, *forwards, *evals, *runs_parameters)
                    and all_of(bool, method, stub, gradients, loads)):
                return None
            parsed_returns = []
            for builds, parameter, call, guard, one_of in returns:
                if not (_optional(str, builds) and _optional(str, parameter) and _optional(int, call)
                        and isinstance(one_of, list) and all_of(str, *one_of)):
                    return None
                if guard is not None and not (isinstance(guard, list) and len(guard) == 2
                                              and isinstance(guard[0], str) and isinstance(guard[1], bool)):
                    return None
                parsed_returns.append(Return(builds, parameter, call, None if guard is None else (guard[0], guard[1]),
                                             tuple(one_of)))
            parsed_calls = []
            for callee, bound, slots, role, disabled, makers, in_loop, items, devices, parts, on_self, pins, choice, \
                    built, passed in calls:
                if not (isinstance(callee, str) and isinstance(role, str) and isinstance(choice, int)
                        and all_of(bool, bound, disabled, in_loop) and _optional(str, on_self)
                        and isinstance(passed, list) and all_of(str, *passed)):
                    return None
                parsed_calls.append(Call(callee, bound, _pairs(slots), role, disabled, _pairs(makers), in_loop,
                                         _pairs(items), _pairs(devices), _pairs(parts), on_self, _pairs(pins), choice,
                                         tuple(passed), _pairs(built)))
            counts = []
            for name, in_loop in called:
                if not (isinstance(name, str) and isinstance(in_loop, bool)):
                    return None
                counts.append((name, in_loop))
            functions.append(Function(qualified, tuple(parameters), tuple(keyword_only), method, frozenset(runs),
                                      frozenset(iterates), frozenset(yields), tuple(parsed_returns),
                                      tuple(parsed_calls), tuple(counts), frozenset(loop_runs), frozenset(repeats),
                                      _moves(moves_items), _moves(moves), frozenset(forwards), frozenset(evals),
                                      _pairs(relays), _strings(pinned_returns), _strings(pinned_attributes),
                                      _pairs(device_defaults), _strings(yields_items),
                                      _copies(copies), stub, frozenset(runs_parameters), gradients,
                                      loads, _strings(grad_off), _pairs(annotated), _pairs(kept_results)))
        layers = []
        for qualified, layer, parameters, keyword_only, arguments, positional, defaults, open_keywords in data["layers"]:
            if not (all_of(str, qualified, layer, *parameters, *keyword_only, *positional)
                    and isinstance(open_keywords, bool)):
                return None
            layers.append(WrappedLayer(qualified, layer, tuple(parameters), tuple(keyword_only), _pairs(arguments),
                                       tuple(positional), _pairs(defaults), open_keywords))
        loaders = []
        for qualified, loader, arguments, defaults, forwards, open_keywords, through, bound, parts, arity in (
                data["loaders"]):
            if not (all_of(str, qualified, loader) and _optional(str, forwards)
                    and all_of(bool, open_keywords, through, bound) and isinstance(parts, list)
                    and count(arity) and all(count(p) for p in parts)):
                return None
            loaders.append(BuiltLoader(qualified, loader, _pairs(arguments), _pairs(defaults), forwards, open_keywords,
                                       through, bound, tuple(parts), arity))
        cuda, accelerators = data["cuda"], data["accelerators"]
        if not isinstance(cuda, bool) or not isinstance(accelerators, list) or not all_of(str, *accelerators):
            return None
        devices = tuple((name, _pairs(pairs)) for name, pairs in data["devices"])
        if not all(isinstance(name, str) for name, _ in devices):
            return None
        epochs = data["epochs"]
        if not isinstance(epochs, bool):
            return None
        registries = tuple((name, tuple(targets)) for name, targets in data["registries"])
        if not all(isinstance(name, str) and all_of(str, *targets) for name, targets in registries):
            return None
        return FileSummary(module, tuple(functions), bases, tuple(layers), attributes, tuple(loaders), cuda,
                           tuple(accelerators), epochs=epochs, devices=devices, registries=registries)
    except (KeyError, TypeError, ValueError):
        return None


def summarize_file(path: Path, data: bytes, module: str, store: Optional[Store]) -> Optional[FileSummary]:
    """One file's summary, from ``store`` when it holds it (a warm run parses
    nothing), else parsed and stored; None when the file does not parse."""
    found = stored_summary(path, data, module, store)
    if found is not None:
        return found
    tree = parse_quietly(data)
    summary = None if tree is None else summary_of_tree(path, tree, module, data)
    if summary is not None:
        store_summary(path, data, module, store, summary)
    return summary


def stored_summary(path: Path, data: bytes, module: str, store: Optional[Store]) -> Optional[FileSummary]:
    """One file's summary as ``store`` holds it (None: not there, or damaged)."""
    if store is None:
        return None
    stored = store.get_facts(store_key(path, data, module, None, _FORMAT))
    return _from_json(stored) if isinstance(stored, dict) else None


def store_summary(path: Path, data: bytes, module: str, store: Optional[Store], summary: FileSummary) -> None:
    """Keep one file's summary in ``store`` for the next run."""
    if store is not None:
        store.put_facts(store_key(path, data, module, None, _FORMAT), _to_json(summary))


def summary_of_tree(path: Path, tree: ast.Module, module: str, data: bytes) -> Optional[FileSummary]:
    """One file's summary from its CPython tree of ``data`` (None: nested too deeply)."""
    try:
        return summarize_tree(tree, module, path.stem == "__init__", None if b"cuda" in data else False,
                              None if b"set_epoch" in data else False)
    except RecursionError:
        return None


# -- linking ----------------------------------------------------------------------------------


def link(files: Iterable[FileSummary], aliases: Optional[Mapping[str, str]] = None,
         paths: Optional[Mapping[str, str]] = None) -> Summaries:
    """Propagate the files' facts through their calls to a fixed point
    (``aliases``: the names packages re-export definitions under; ``paths``:
    each file's module name by absolute path)."""
    aliases = aliases or {}
    written: Dict[str, Function] = {}
    bases: Dict[str, Tuple[str, ...]] = {}
    layers: Dict[str, WrappedLayer] = {}
    attributes: Dict[str, Mapping[str, str]] = {}
    loaders: Dict[str, BuiltLoader] = {}
    cuda: Set[str] = set()
    accelerators: Set[str] = set()
    devices: Dict[str, Mapping[str, str]] = {}
    epochs: Set[str] = set()
    modules: Dict[str, str] = {}
    registries: Dict[str, Tuple[str, ...]] = {}
    files = list(files)
    for summary in files:
        registries.update(summary.registries)
    for summary in files:
        accelerators.update(summary.accelerators)
        devices.update((name, dict(pairs)) for name, pairs in summary.devices)
        for function in summary.functions:
            function = _registry_calls(function, registries, aliases)
            written[function.qualified] = function
            modules[function.qualified] = summary.module
            if summary.cuda:
                cuda.add(function.qualified)
            if summary.epochs:
                epochs.add(function.qualified)
        bases.update(summary.bases)
        attributes.update((name, dict(pairs)) for name, pairs in summary.attributes)
        layers.update((wrapped.qualified, wrapped) for wrapped in summary.layers)
        loaders.update((built.qualified, built) for built in summary.loaders)
    bases = dict(_canonical_bases(bases, aliases))  # a base imported by another name: as defined
    for specialized, inherited in _dispatched(written, bases, aliases):
        written[specialized.qualified] = specialized
        modules[specialized.qualified] = modules[inherited]
        if inherited in cuda:
            cuda.add(specialized.qualified)
        if inherited in epochs:
            epochs.add(specialized.qualified)
    state: Dict[str, Summary] = {
        name: Summary(name, f.parameters, f.keyword_only, f.method, f.runs, f.iterates, f.yields_from,
                      tuple(r for r in f.returns if r.call is None and not r.one_of), loop_runs=f.loop_runs, repeats=f.repeats,
                      moves_items=f.moves_items, moves=f.moves, forwards=f.forwards, evals=f.evals,
                      device_defaults=f.device_defaults, runs_parameters=f.runs_parameters,
                      gradients=f.gradients, grad_off=f.grad_off, loads_weights=f.loads_weights)
        for name, f in written.items()
    }
    makers = _parameter_makers(written, state, bases, aliases)
    placed = _Placed(state, written, devices, bases, aliases, accelerators, cuda, epochs)
    built = _constructions(written, state, bases, aliases, attributes)
    callers: Dict[str, Set[str]] = {}
    for cls, (init, members, _held) in built.items():
        state[cls] = _construction(cls, state[init], members, state, _held, placed)
        for member in members:
            callers.setdefault(member, set()).add(cls)
    factories = _factories(written, bases, aliases)
    chosen = _chosen_methods(written, state, bases, aliases, factories)
    for name, members in chosen.items():
        for member in members:
            callers.setdefault(member, set()).add(name)
        met = _met(name, members, state)
        if met is not None:
            state[name] = met
    targets: Dict[Tuple[str, int], Optional[str]] = {}
    for name, function in written.items():
        for index, call in enumerate(function.calls):
            canonical = canonical_name(call.callee, aliases)
            target = find(canonical, state, bases)
            # (one of several classes' methods that do not meet: named by the call, see `_pinned`)
            targets[(name, index)] = target.qualified if target is not None else (
                canonical if canonical in chosen else None)
            if target is not None and not target.wrapper:
                callers.setdefault(target.qualified, set()).add(name)
    pending = sorted({*written, *built, *(name for name in chosen if name in state)})
    queued = set(pending)
    while pending:
        name = pending.pop()
        queued.discard(name)
        if name in built:
            init, members, held = built[name]
            grown = _construction(name, state[init], members, state, held, placed)
        elif name in chosen:
            met = _met(name, chosen[name], state)
            if met is None:
                continue
            grown = met
        else:
            grown = _apply(written[name], state, bases, makers, aliases)
        if grown != state[name]:
            state[name] = grown
            for caller in callers.get(name, ()):
                if caller not in queued:
                    queued.add(caller)
                    pending.append(caller)
    kept = _held_uses(state, placed)
    for name, linked in list(state.items()):  # the instance's attributes served the constructions only
        if not linked.constructs and (any(v.startswith(HELD) for v in linked.iterates)
                                      or any(m[0].startswith(HELD) for m in linked.moves_items)):
            state[name] = dataclasses.replace(
                linked, iterates=frozenset(v for v in linked.iterates if not v.startswith(HELD)),
                repeats=frozenset(v for v in linked.repeats if not v.startswith(HELD)),
                moves_items=frozenset(m for m in linked.moves_items if not m[0].startswith(HELD)),
                held_iterates=frozenset(v for v in linked.iterates if v.startswith(HELD)),
                held_repeats=frozenset(v for v in linked.repeats if v.startswith(HELD)))
    for name, linked in list(state.items()):  # functions that run the epoch loop over a parameter themselves
        if linked.constructs or linked.wrapper or BACKWARD not in linked.loop_runs:
            continue
        trained = frozenset(p for p in linked.repeats if p in linked.parameters)
        if trained and not placed.sets_epoch([name]):
            state[name] = dataclasses.replace(linked, epochs=trained)
    relays = {name: function.relays for name, function in written.items() if function.relays}
    returned = _returned_uses(state, bases, aliases, cuda, accelerators, placed, relays)
    linked_loaders = _linked_loaders(loaders, state, bases, aliases)
    pinned = _pinned(written, state, bases, aliases, attributes, linked_loaders, targets, chosen, devices)
    copies, copying = _pinned_copies(written, modules, pinned, state, bases, aliases, targets)
    passed = _passed_classes(written, state, bases, aliases, targets, chosen)
    return Summaries(state, bases, makers, layers, dict(aliases), dict(paths or {}), attributes,
                     linked_loaders, returned, kept, placed.resolved(), pinned=pinned,
                     pinned_copies=copies, copying=copying, factories=factories, passed=passed,
                     accelerators=frozenset(accelerators), without_grad=_called_without_grad(written, targets))


def _registry_calls(function: Function, registries: Mapping[str, Tuple[str, ...]],
                    aliases: Mapping[str, str]) -> Function:
    """``function`` with each call of another module's registry value
    (:data:`REGISTRY_CALL`) made a call of each callable the registry holds,
    as a registry of its own module is (one choice); a call of a dict that is
    no registry the project defines is dropped, as any unknown call is."""
    if not any(call.callee.endswith(REGISTRY_CALL) for call in function.calls) and not any(
            name.endswith(REGISTRY_CALL) for ret in function.returns for name in ret.one_of):
        return function

    def values(name: str) -> Tuple[str, ...]:
        return registries.get(canonical_name(name[:-len(REGISTRY_CALL)], aliases), ())

    calls: List[Call] = []
    renumbered: Dict[int, int] = {}  # old index -> new index, for the returns that name a call
    for index, call in enumerate(function.calls):
        if not call.callee.endswith(REGISTRY_CALL):
            renumbered[index] = len(calls)
            calls.append(call)
            continue
        for target in values(call.callee):
            calls.append(dataclasses.replace(call, callee=target))
    returns = []
    for ret in function.returns:
        one_of = tuple(target for name in ret.one_of
                       for target in (values(name) if name.endswith(REGISTRY_CALL) else (name,)))
        at = renumbered.get(ret.call) if ret.call is not None else None
        returns.append(dataclasses.replace(ret, one_of=one_of, call=at))
    return dataclasses.replace(function, calls=tuple(calls), returns=tuple(returns))


def _called_without_grad(written: Mapping[str, Function],
                         targets: Mapping[Tuple[str, int], Optional[str]]) -> FrozenSet[str]:
    """:attr:`Summaries.without_grad`: each call's resolved target, kept
    while every call of it is made with gradients off."""
    off: Dict[str, bool] = {}
    for (name, index), target in targets.items():
        if target is not None:
            off[target] = off.get(target, True) and written[name].calls[index].disabled
    return frozenset(name for name, every in off.items() if every)


def _dispatched(written: Mapping[str, Function], bases: Mapping[str, Tuple[str, ...]],
                aliases: Mapping[str, str]) -> List[Tuple[Function, str]]:
    """Methods a project class the project builds (or calls methods of)
    inherits whose calls on ``self`` run, for an instance of that class, a
    method the base leaves to subclasses (``start()`` in a base ``Trainer``
    calls ``self.train_step(batch)``, which the base does not define or
    only raises ``NotImplementedError`` in): a copy of each, named after the
    subclass, with those calls aimed at the subclass (Python's dispatch),
    with the method it was copied from.  A base's own working method a
    subclass overrides is not followed this way (the copies would grow
    with every override of every base)."""
    methods: Dict[str, Set[str]] = {}
    for name, function in written.items():
        if function.method:
            owner, _, last = name.rpartition(".")
            methods.setdefault(owner, set()).add(last)

    named_bases = _canonical_bases(bases, aliases)

    @functools.lru_cache(maxsize=None)
    def defining(cls: str, method: str) -> Optional[str]:
        return first_in_bases(cls, named_bases, lambda name: name if method in methods.get(name, ()) else None)

    used: Set[str] = set()  # classes the project builds, or calls a method of on an instance
    for function in written.values():
        for call in function.calls:
            name = canonical_name(call.callee, aliases)
            used.add(name if not call.bound else name.rpartition(".")[0])
    found: List[Tuple[Function, str]] = []
    for cls in sorted(bases):
        if not bases[cls] or cls not in used:
            continue
        inherited: Dict[str, str] = {}  # method -> the ancestor that defines it
        for ancestor in _ancestors(cls, named_bases):
            for method in sorted(methods.get(ancestor, ())):
                if method not in methods.get(cls, ()) and method not in inherited:
                    inherited[method] = defining(cls, method) or ancestor
        if not inherited:
            continue
        # A method changes when a call on `self` in it runs, for `cls`, a method the base leaves
        # to subclasses, or an inherited method that changes: each self-call looked at once.
        changed: Set[str] = set()
        pending: List[str] = []
        callers_of: Dict[str, List[str]] = {}
        for method, owner in inherited.items():
            for call in written[f"{owner}.{method}"].calls:
                if call.on_self != "" or not call.callee.startswith(owner + "."):
                    continue
                called = call.callee[len(owner) + 1:]
                before = defining(owner, called)
                abstract = before is None or written[f"{before}.{called}"].stub  # left to subclasses
                if abstract and defining(cls, called) != before:
                    if method not in changed:
                        changed.add(method)
                        pending.append(method)
                elif called in inherited:
                    callers_of.setdefault(called, []).append(method)
        while pending:
            for caller in callers_of.get(pending.pop(), ()):
                if caller not in changed:
                    changed.add(caller)
                    pending.append(caller)
        for method in sorted(changed):
            owner = inherited[method]
            source = written[f"{owner}.{method}"]
            calls = tuple(
                dataclasses.replace(call, callee=f"{cls}.{call.callee[len(owner) + 1:]}")
                if call.on_self == "" and call.callee.startswith(owner + ".") else call
                for call in source.calls)
            found.append((dataclasses.replace(source, qualified=f"{cls}.{method}", calls=calls), source.qualified))
    return found


def _canonical_bases(bases: Mapping[str, Tuple[str, ...]], aliases: Mapping[str, str]) -> Mapping[str, Tuple[str, ...]]:
    if not aliases:
        return bases
    return {name: tuple(canonical_name(base, aliases) for base in found) for name, found in bases.items()}


def _ancestors(cls: str, bases: Mapping[str, Tuple[str, ...]]) -> List[str]:
    """The project classes ``cls`` derives from, nearest first, each once
    (:func:`first_in_bases`' walk, every class visited)."""
    found: List[str] = []

    def visit(name: str) -> Optional[str]:
        if name != cls and name in bases:
            found.append(name)
        return None

    first_in_bases(cls, bases, visit)
    return found


_MAX_FACTORY_DEPTH = 8
"""Factories followed through at most this many functions returning another's call."""


def _factories(written: Mapping[str, Function], bases: Mapping[str, Tuple[str, ...]],
               aliases: Mapping[str, str]) -> Dict[str, FrozenSet[str]]:
    """:attr:`Summaries.factories`: the project functions every ``return`` of
    which gives a new instance of a project class, with those classes
    (``define_model(opt)`` returning ``M(opt)`` where ``M`` is imported in
    several branches, a registry's value, or another factory's result)."""
    memo: Dict[str, Optional[FrozenSet[str]]] = {}

    def classes_of(name: str, depth: int) -> Optional[FrozenSet[str]]:
        if name in memo:
            return memo[name]
        memo[name] = None  # a cycle of factories gives nothing
        function = written.get(name)
        if function is None or not function.returns or depth > _MAX_FACTORY_DEPTH:
            return None
        found: Set[str] = set()
        for ret in function.returns:
            named = ret.one_of
            if not named and ret.call is not None and not function.calls[ret.call].bound:
                named = (function.calls[ret.call].callee,)
            if not named:
                return None
            for candidate in named:
                target = canonical_name(candidate, aliases)
                inner = frozenset({target}) if target in bases else classes_of(target, depth + 1)
                if inner is None:
                    return None
                found |= inner
        memo[name] = frozenset(found)
        return memo[name]

    every = {name: classes_of(name, 0) for name in sorted(written)}
    return {name: classes for name, classes in every.items() if classes}


def _chosen_methods(written: Mapping[str, Function], state: Mapping[str, Summary],
                    bases: Mapping[str, Tuple[str, ...]], aliases: Mapping[str, str],
                    factories: Mapping[str, FrozenSet[str]]) -> Dict[str, Tuple[str, ...]]:
    """The methods the project calls on a factory's result (``model =
    define_model(opt); model.feed_data(batch)``, named ``<factory>.<method>``),
    each with the method every class the factory may build runs."""
    found: Dict[str, Tuple[str, ...]] = {}
    for function in written.values():
        for call in function.calls:
            if not call.bound:
                continue
            owner, _, method = canonical_name(call.callee, aliases).rpartition(".")
            name = f"{owner}.{method}"
            if owner not in factories or name in found:
                continue
            members = [find(f"{cls}.{method}", state, bases) for cls in sorted(factories[owner])]
            if members and all(member is not None and not member.wrapper for member in members):
                found[name] = tuple(sorted({member.qualified for member in members if member is not None}))
    return found


def _chosen(function: Function, choice: int, state: Mapping[str, Summary], bases: Mapping[str, Tuple[str, ...]],
            aliases: Mapping[str, str]) -> Optional[Summary]:
    """What the call site ``choice`` of ``function`` does whichever of its callables runs."""
    found = [find(canonical_name(call.callee, aliases), state, bases) for call in function.calls if call.choice == choice]
    if any(target is None or target.wrapper for target in found):
        return None
    return meet([target for target in found if target is not None])


def _met(name: str, members: Sequence[str], state: Mapping[str, Summary]) -> Optional[Summary]:
    """What a method called on a factory's result does whichever class built it, named ``name``."""
    met = meet([state[member] for member in members])
    return dataclasses.replace(met, qualified=name) if met is not None else None


def _pins(maker: Optional[str], pin: str, loaders: Mapping[str, BuiltLoader], aliases: Mapping[str, str]) -> bool:
    """A call of ``maker`` that passes ``pin`` for ``pin_memory``
    (:attr:`Call.pins`) builds a loader with a literal ``pin_memory=True``:
    a loader class given it, or a project function whose loader gets it
    (a literal there, its ``pin_memory`` parameter so passed or left at a
    ``True`` default, or the call's keyword through its ``**kwargs``)."""
    if maker is None:
        return False
    if loader_signature(maker) is not None:
        return pin == "lit"
    built = loaders.get(canonical_name(maker, aliases))
    if built is None:
        return False
    given = dict(built.arguments).get("pin_memory")
    if given is None:
        return built.forwards is not None and pin == "lit"
    if given in ("lit:True", MAYBE + "True"):  # (on the paths that pass it: where CUDA is used, say)
        return True
    if given == "param:pin_memory":
        return pin == "lit" or (pin == "" and dict(built.defaults).get("pin_memory") == "lit:True")
    return False


def _pinned(written: Mapping[str, Function], state: Mapping[str, Summary], bases: Mapping[str, Tuple[str, ...]],
            aliases: Mapping[str, str], attributes: Mapping[str, Mapping[str, str]],
            loaders: Mapping[str, BuiltLoader],
            targets: Mapping[Tuple[str, int], Optional[str]],
            chosen: Mapping[str, Tuple[str, ...]],
            writes: Mapping[str, Mapping[str, str]]) -> Dict[str, FrozenSet[str]]:
    """:attr:`Summaries.pinned`: pinned loaders from the calls that build them
    to the parameters they fill, then on through the calls that pass those
    parameters (or the ``self`` attributes a construction keeps them in),
    to a fixed point; each (function, parameter) is added once.  ``writes``:
    the ``self`` attributes each class writes (:attr:`FileSummary.devices`)."""
    found: Dict[str, Set[str]] = {}
    held: Dict[str, Set[str]] = {}  # class (and its bases) -> pinned self attributes
    pending: List[str] = []
    methods: Dict[str, List[str]] = {}
    for name, function in written.items():
        if function.method:
            methods.setdefault(name.rpartition(".")[0], []).append(name)
    subclasses: Dict[str, List[str]] = {}
    for cls, parents in sorted(bases.items()):
        for parent in parents:
            subclasses.setdefault(canonical_name(parent, aliases), []).append(cls)

    def hold(owner: str, kept: Set[str]) -> bool:
        grown = kept - held.setdefault(owner, set())
        if grown:
            held[owner] |= grown
            pending.extend(methods.get(owner, ()))
        return bool(grown)

    def keep(cls: str, kept: Set[str]) -> None:
        """``kept`` attributes of instances of ``cls`` hold pinned loaders: for
        its methods and those of its bases (the first base at each step), and
        of its subclasses, whose instances its ``__init__`` builds too (a
        base ``Trainer`` keeps the loaders, a subclass's ``train_step`` gets
        their batches; each class takes each attribute once)."""
        owner: Optional[str] = cls
        seen: Set[str] = set()
        while owner is not None and owner not in seen and kept:
            seen.add(owner)
            hold(owner, kept)
            parents = bases.get(owner, ())
            owner = canonical_name(parents[0], aliases) if parents else None
        below = [(sub, kept) for sub in subclasses.get(cls, ())]
        while below:
            sub, passed = below.pop()
            passed = passed - writes.get(sub, {}).keys()  # a subclass that writes one itself hides the base's
            if passed and hold(sub, passed):
                below.extend((lower, passed) for lower in subclasses.get(sub, ()))

    def add(target: Summary, slot: str, bound: bool, batch: bool = False, kept: AbstractSet[str] = frozenset()) -> None:
        """``slot`` of a call of ``target`` gets a pinned loader (a batch of one with
        ``batch``; with ``kept``, an object whose ``kept`` attributes hold pinned
        loaders: the parameter's attributes, :data:`OBJECT`, are pinned there)."""
        if target.qualified in chosen:  # a method of a factory's result: whichever class built it gets them
            for member in chosen[target.qualified]:
                if member in state:
                    add(state[member], slot, bound, batch, kept)
            return
        position, keyword = (int(slot), None) if slot.isdigit() else (None, slot)
        parameter = target.parameter_for(position, keyword, bound)
        if parameter is None or ((batch or kept) and target.constructs):
            return
        if batch:
            parameter = BATCH + parameter
        if target.constructs:  # the attributes `__init__` keeps the argument in, for every method
            init = find(f"{target.qualified}.__init__", state, bases)  # a base's, when the class has none
            owner = init.qualified.rpartition(".")[0] if init is not None else target.qualified
            keep(target.qualified, {attr for attr, param in attributes.get(owner, {}).items()
                                    if param == parameter})
            return
        names = {parameter + OBJECT + attr for attr in kept} if kept else {parameter}
        fresh = names - found.setdefault(target.qualified, set())
        if fresh:
            found[target.qualified] |= fresh
            pending.append(target.qualified)

    def target_of(name: str, index: int) -> Optional[Summary]:
        """What the function's call number ``index`` runs (resolved once, by
        :func:`link`); for one of several classes' methods whose summaries do
        not meet (``model.feed_data(batch)`` where their signatures differ),
        the first of them: :func:`add` hands what it gets to each."""
        qualified = targets.get((name, index))
        if qualified is not None and qualified in chosen and qualified not in state:
            members = [state[member] for member in chosen[qualified] if member in state]
            return dataclasses.replace(members[0], qualified=qualified) if members else None
        return state.get(qualified) if qualified is not None else None

    for name, function in written.items():
        if function.pinned_attributes:  # `self.train_loader = DataLoader(..., pin_memory=True)`
            keep(name.rpartition(".")[0], set(function.pinned_attributes))
        returned = {attr for attr, value in function.kept_results  # `self.a, self.b = get_loaders(args)`
                    if _returned_pinned(value, written, state, bases, aliases, function)}
        if returned:
            keep(name.rpartition(".")[0], returned)
        for index, call in enumerate(function.calls):
            makers = dict(call.makers)
            pinned_slots = [slot for slot, pin in call.pins if _pins(makers.get(slot), pin, loaders, aliases)]
            for slot, value in call.slots:  # `train_loader, val_loader = get_loaders(cfg)`, then passed on
                if value.startswith(RESULT) and _returned_pinned(value, written, state, bases, aliases, function):
                    pinned_slots.append(slot)
            for slot in pinned_slots:
                target = target_of(name, index)
                if target is not None:
                    add(target, slot, call.bound)
            for slot, value in call.items:  # a batch of a local pinned loader, handed on
                target = target_of(name, index) if value == PINNED_LOCAL else None
                if target is not None:
                    add(target, slot, call.bound, batch=True)
    done: Set[Tuple[str, int, str, bool]] = set()
    objects_done: Set[Tuple[str, int, str, str]] = set()

    def drain() -> None:
        while pending:
            name = pending.pop()
            current = written.get(name)
            if current is None:
                continue
            owner = name.rpartition(".")[0] if current.method else ""
            sources = found.get(name, set()) | {HELD + attr for attr in held.get(owner, ())}
            kept: Dict[str, Set[str]] = {}  # parameter -> its pinned attributes (`session.train_set`)
            for source in sources:
                holder, mark, attr = source.partition(OBJECT)
                if mark:
                    kept.setdefault(holder, set()).add(attr)
            for index, call in enumerate(current.calls):
                passed = [(slot, False) for slot, value in call.slots if value in sources]
                passed += [(slot, True) for slot, value in call.slots if BATCH + value in sources]
                passed += [(slot, True) for slot, value in call.items if value in sources]  # a batch drawn here
                passed += [(slot, True) for slot, value in call.parts if BATCH + value in sources]
                for slot, batch in passed:
                    if (name, index, slot, batch) not in done:
                        done.add((name, index, slot, batch))
                        target = target_of(name, index)
                        if target is not None:
                            add(target, slot, call.bound, batch)
                for slot, value in call.slots:  # the object itself handed on
                    attrs = kept.get(value)
                    if attrs:
                        send_object(name, index, call, slot, attrs)

    def send_object(name: str, index: int, call: Call, slot: str, attrs: AbstractSet[str]) -> None:
        fresh = {attr for attr in attrs if (name, index, slot, attr) not in objects_done}
        if fresh:
            objects_done.update((name, index, slot, attr) for attr in fresh)
            target = target_of(name, index)
            if target is not None:
                add(target, slot, call.bound, kept=fresh)

    # Objects of classes whose construction kept a pinned loader (`TTSSession(train_set=loader)`),
    # handed to a function: their attributes are pinned there.  `held` grows while the flow
    # runs, so the objects are sent again until nothing more is found (each (call, slot,
    # attribute) once: linear in the calls).
    objects: Optional[List[Tuple[str, int, Call, str, str]]] = None
    seen_held = 0
    while True:
        drain()
        size = sum(len(attrs) for attrs in held.values())
        if size == seen_held:
            break  # (no class keeps a pinned loader: no object to send, and no pass over the calls)
        seen_held = size
        if objects is None:
            objects = [(name, index, call, slot, canonical_name(maker, aliases))
                       for name, function in written.items() for index, call in enumerate(function.calls)
                       for slot, maker in (*call.makers, *call.built)]
        for name, index, call, slot, cls in objects:
            attrs = held.get(cls)
            if attrs:
                send_object(name, index, call, slot, attrs)
    for owner, attrs in held.items():
        for name in methods.get(owner, ()):
            found.setdefault(name, set()).update(HELD + attr for attr in attrs)
    return {name: frozenset(values) for name, values in sorted(found.items()) if values}


def _pinned_copies(written: Mapping[str, Function], modules: Mapping[str, str],
                   pinned: Mapping[str, FrozenSet[str]], state: Mapping[str, Summary],
                   bases: Mapping[str, Tuple[str, ...]], aliases: Mapping[str, str],
                   targets: Mapping[Tuple[str, int], Optional[str]],
                   ) -> Tuple[Dict[str, FrozenSet[Tuple[int, int]]], FrozenSet[str]]:
    """:attr:`Summaries.pinned_copies` (and :attr:`Summaries.copying`): each
    function's own blocking copies (:attr:`Function.copies`) of what its
    callers pin, by module: items drawn from a pinned parameter, from a
    project generator the function gives a pinned parameter to (``for x in
    logger.log_every(loader, 10)``), or from a loader a project function
    returns pinned (``self.train_loader, self.val_loader = get_loaders(cfg)``)."""
    lines: Dict[str, Set[Tuple[int, int]]] = {}
    copying: Set[str] = set()
    for name, function in written.items():
        values = pinned.get(name, frozenset())
        for source, line, column in function.copies:
            if source in values or (source.startswith(RESULT) and (
                    _returned_pinned(source, written, state, bases, aliases, function)
                    or _yields_pinned(name, function, source, values, written, state, bases, aliases, targets))):
                lines.setdefault(modules[name], set()).add((line, column))
                copying.add(name)
    return {module: frozenset(found) for module, found in sorted(lines.items())}, frozenset(copying)


def _returned_pinned(source: str, written: Mapping[str, Function], state: Mapping[str, Summary],
                     bases: Mapping[str, Tuple[str, ...]], aliases: Mapping[str, str],
                     caller: Optional[Function] = None) -> bool:
    """Whether ``source`` (a returned value's name, :data:`RESULT`) is a loader
    its project function builds with ``pin_memory=True`` (the whole value, or
    that element of the tuple or list it returns: ``self.train_loader,
    self.val_loader = get_loaders(cfg)``); for a local bound in branches to
    several calls' results, any of them; through functions that return
    another's result as it is, ``return get_loaders_eval(args)``, or as one
    element of their tuple); built with ``pin_memory=<parameter>`` defaulting
    to ``True`` (:data:`DEFAULT_PIN`), where every call ``caller`` makes of the
    function leaves that parameter out."""
    direct = {(callee, position) for _, callee, position in results_of(source)}
    pending = sorted(direct)
    seen: Set[Tuple[str, str]] = set()
    while pending:
        callee, position = pending.pop()
        if (callee, position) in seen or len(seen) > _MAX_CHAIN * 4:
            continue  # (a bounded walk a call: the whole pass stays linear in the calls)
        seen.add((callee, position))
        built = find(canonical_name(callee, aliases), state, bases)
        function = written.get(built.qualified) if built is not None and not built.wrapper else None
        if function is None:
            continue
        if position in function.pinned_returns or (bool(position) and PINNED_EACH in function.pinned_returns):
            return True
        if caller is not None and (callee, position) in direct and built is not None and any(
                at == position and mark and _leaves_default(caller, callee, built, parameter, aliases)
                for at, mark, parameter in (entry.partition(DEFAULT_PIN) for entry in function.pinned_returns)):
            return True
        for at, relayed in function.relays:  # what it returns of another call's result
            for _, inner, inner_position in results_of(relayed):
                if not at and not inner_position:
                    pending.append((inner, position))  # `return load(...)`: the same element of `load`'s
                elif at == position:
                    pending.append((inner, inner_position))
    return False


def _leaves_default(caller: Function, callee: str, built: Summary, parameter: str,
                    aliases: Mapping[str, str]) -> bool:
    """``caller`` calls ``callee`` (whose summary is ``built``), and none of
    those calls fills ``parameter`` (nor unpacks ``*args``/``**kwargs``)."""
    found = False
    wanted = canonical_name(callee, aliases)
    for call in caller.calls:
        if canonical_name(call.callee, aliases) != wanted:
            continue
        found = True
        for slot in call.passed:
            if slot == "*" or built.parameter_for(int(slot) if slot.isdigit() else None,
                                                  None if slot.isdigit() else slot, call.bound) == parameter:
                return False
    return found


def _yields_pinned(name: str, function: Function, source: str, values: FrozenSet[str],
                   written_of: Mapping[str, Function],
                   state: Mapping[str, Summary], bases: Mapping[str, Tuple[str, ...]],
                   aliases: Mapping[str, str], targets: Mapping[Tuple[str, int], Optional[str]]) -> bool:
    """Whether ``source`` (a returned value's name, :data:`RESULT`) is what
    a project generator yields of the pinned values ``values``: every loop
    of ``function`` over a call of that generator passes one of them where
    the generator draws the items it yields."""
    each = results_of(source)
    if len(each) != 1:
        return False
    _, callee, position = each[0]
    generator = find(canonical_name(callee, aliases), state, bases)
    written_generator = written_of.get(generator.qualified) if generator is not None else None
    if position or generator is None or written_generator is None or not written_generator.yields_items:
        return False
    found = False
    for index, call in enumerate(function.calls):
        if call.role != "iter" or targets.get((name, index)) != generator.qualified:
            continue
        drawn = {
            value for slot, value in call.slots
            if generator.parameter_for(int(slot) if slot.isdigit() else None, None if slot.isdigit() else slot,
                                       call.bound) in written_generator.yields_items
        }
        if not drawn or not drawn <= values:
            return False
        found = True
    return found


def _held_uses(state: Mapping[str, Summary], placed: "_Placed") -> Dict[str, Dict[str, ReturnUse]]:
    """What each class's own methods do with its ``self.<attr>`` values
    (:data:`HELD`), by class and attribute: iterated, again and again, items
    copied to a device that may be CUDA (as for returned values)."""
    found: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for name in sorted(state):
        summary = state[name]
        if summary.constructs or not any(v.startswith(HELD) for v in summary.iterates):
            continue
        owner = name.rpartition(".")[0]
        for value in summary.iterates:
            if value.startswith(HELD):
                entry = found.setdefault((owner, value[len(HELD):]), {
                    "iterated": True, "repeated": False, "to_cuda": False, "blocking": False, "callers": set()})
                entry["callers"].add(name)
                entry["repeated"] = entry["repeated"] or value in summary.repeats
        for moved, device, settled in summary.moves_items:
            moved_entry = found.get((owner, moved[len(HELD):])) if moved.startswith(HELD) else None
            if moved_entry is not None and placed.device(device, name, owner, {}) == "cuda":
                moved_entry["to_cuda"] = True
                moved_entry["blocking"] = moved_entry["blocking"] or not settled
    joined: Dict[str, Dict[str, ReturnUse]] = {}
    for (owner, attribute), entry in sorted(found.items()):
        joined.setdefault(owner, {})[attribute] = ReturnUse(
            entry["iterated"], entry["repeated"], entry["to_cuda"], entry["blocking"], tuple(sorted(entry["callers"])))
    return joined


def _returned_uses(state: Dict[str, Summary], bases: Mapping[str, Tuple[str, ...]], aliases: Mapping[str, str],
                   cuda: Set[str], accelerators: Set[str], placed: "_Placed",
                   relays: Mapping[str, Tuple[Tuple[str, str], ...]]) -> Dict[str, Dict[str, ReturnUse]]:
    """Takes the returned values (:data:`RESULT`) out of the linked summaries
    (``state``, changed in place) and joins what their callers do with them,
    by the project function that returns them and the position."""
    found: Dict[Tuple[str, str], Dict[str, Any]] = {}
    resolved: Dict[str, Optional[str]] = {}

    def use(name: str, caller: Optional[str]) -> List[Dict[str, Any]]:
        """The entries of the returned values ``name`` stands for (one for
        each call a local bound in branches may hold the result of)."""
        entries: List[Dict[str, Any]] = []
        for _, callee, position in results_of(name):
            if callee not in resolved:
                target = find(canonical_name(callee, aliases), state, bases)
                resolved[callee] = target.qualified if target is not None and not target.wrapper else None
            qualified = resolved[callee]
            if qualified is None:
                continue
            entry = found.setdefault((qualified, position), {"iterated": False, "repeated": False, "to_cuda": False,
                                                             "blocking": False, "callers": set()})
            if caller is not None:
                entry["callers"].add(caller)
            entries.append(entry)
        return entries

    for name in sorted(state):
        summary = state[name]
        if not any(v.startswith(RESULT) for v in (*summary.iterates, *summary.repeats, *summary.yields_from)) and not any(
                m[0].startswith(RESULT) for m in (*summary.moves_items, *summary.moves)):
            continue
        for value in summary.iterates:
            if value.startswith(RESULT):
                for entry in use(value, name):
                    entry["iterated"] = True
        for value in summary.repeats:
            if value.startswith(RESULT) and not value.startswith(RESULT + "r:"):
                for entry in use(value, name):
                    entry["repeated"] = True
        for value, device, settled in summary.moves_items:
            if not value.startswith(RESULT):
                continue
            helper = find(canonical_name(device[len("call:"):], aliases), state, bases) if device.startswith(
                "call:") else None  # a project helper that returns CUDA (`define_device("auto")`)
            where = placed.attribute(name.rpartition(".")[0], device[5:]) if device.startswith("attr:") else None
            if where == "cuda" or device == "cuda" or (helper is not None and helper.qualified in accelerators) or (
                    name in cuda and not device.startswith("cpu") and where is None):
                for entry in use(value, name):
                    entry["to_cuda"] = True
                    entry["blocking"] = entry["blocking"] or not settled
        state[name] = dataclasses.replace(
            summary,
            iterates=frozenset(v for v in summary.iterates if not v.startswith(RESULT)),
            yields_from=frozenset(v for v in summary.yields_from if not v.startswith(RESULT)),
            repeats=frozenset(v for v in summary.repeats if not v.startswith(RESULT)),
            moves_items=frozenset(m for m in summary.moves_items if not m[0].startswith(RESULT)),
            moves=frozenset(m for m in summary.moves if not m[0].startswith(RESULT)),
        )
    for _ in range(_MAX_CHAIN):  # a function that returns what another returned: its callers' uses are that one's
        grown = False
        positions: Dict[str, Set[str]] = {}
        for name, position in found:
            positions.setdefault(name, set()).add(position)
        for name in sorted(relays):
            for position, value in relays[name]:
                if value[len(RESULT):].startswith("g:"):
                    continue
                pairs = [(position, value)]
                if not position and all(not inner for _, _, inner in results_of(value)):
                    # `return load(...)` as it is: an element callers use is that element of `load`'s result
                    kind = value[len(RESULT):].partition(":")[0]
                    pairs += [(element, f"{RESULT}{kind}:" + RESULT_SEPARATOR.join(
                        f"{callee}|{element}" for _, callee, _ in results_of(value)))
                        for element in sorted(positions.get(name, ())) if element]
                for at, relayed in pairs:
                    source = found.get((name, at))
                    if source is not None:
                        grown = _relay_use(source, use(relayed, None)) or grown
        if not grown:
            break
    joined: Dict[str, Dict[str, ReturnUse]] = {}
    for (qualified, position), entry in sorted(found.items()):
        joined.setdefault(qualified, {})[position] = ReturnUse(
            entry["iterated"], entry["repeated"], entry["to_cuda"], entry["blocking"], tuple(sorted(entry["callers"])))
    return joined


def _relay_use(source: Dict[str, Any], entries: Sequence[Dict[str, Any]]) -> bool:
    """Joins what callers do with a relaying function's result (``source``)
    into the entries of the values it relays; whether any of them grew."""
    grown = False
    for entry in entries:
        before = (entry["iterated"], entry["repeated"], entry["to_cuda"], entry["blocking"], len(entry["callers"]))
        for flag in ("iterated", "repeated", "to_cuda", "blocking"):
            entry[flag] = entry[flag] or source[flag]
        entry["callers"] |= source["callers"]
        grown = grown or before != (entry["iterated"], entry["repeated"], entry["to_cuda"], entry["blocking"],
                                    len(entry["callers"]))
    return grown


def _rebound(target: ast.expr) -> List[str]:
    """The names an assignment target binds itself (not ``x`` of ``x[0] = ...``)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _rebound(element)]
    if isinstance(target, ast.Starred):
        return _rebound(target.value)
    return []


def _passed_over_again(subject: str) -> str:
    """A value the callee itself iterates again and again: repeated whatever
    loop of the caller built it (a returned value built anew on every pass,
    ``@r:``, counts as a kept one, ``@l:``: each one built is iterated many times)."""
    anew = RESULT + "r:"
    return RESULT + "l:" + subject[len(anew):] if subject.startswith(anew) else subject


def _linked_loaders(loaders: Mapping[str, BuiltLoader], state: Mapping[str, Summary],
                    bases: Mapping[str, Tuple[str, ...]], aliases: Mapping[str, str]) -> Dict[str, BuiltLoader]:
    """Every function's loader, those that return another project function's
    call (:attr:`BuiltLoader.through`) given the loader that call builds, in
    their own parameters' terms; the rest of those dropped.  Each function is
    resolved once (a chain at most :data:`_MAX_CHAIN` deep, a cycle builds
    nothing), so the work is linear in the number of functions."""
    done: Dict[str, Optional[BuiltLoader]] = {}
    for start in sorted(loaders):
        chain: List[str] = []
        name: Optional[str] = start
        found: Optional[BuiltLoader] = None
        while name is not None and name not in done:  # walk down to a known loader (or none)
            built = loaders.get(name)
            if built is None or not built.through:
                done[name] = built
                break
            if name in chain or len(chain) >= _MAX_CHAIN:
                break
            chain.append(name)
            target = find(canonical_name(built.loader, aliases), state, bases)
            name = target.qualified if target is not None and not target.wrapper else None
        found = done.get(name) if name is not None else None
        for outer in reversed(chain):  # then back up, each link composed with the one below
            built = loaders[outer]
            target = find(canonical_name(built.loader, aliases), state, bases)
            found = (_composed(built, found, target, state.get(outer))
                     if found is not None and target is not None and not target.wrapper else None)
            done[outer] = found
    return {name: built for name, built in done.items() if built is not None and name in loaders}


def _composed(outer: BuiltLoader, inner: BuiltLoader, callee: Summary, own: Optional[Summary]) -> Optional[BuiltLoader]:
    """The loader ``outer``'s call of ``callee`` builds (``inner``: what
    ``callee`` passes its loader, in its parameters' terms), in ``outer``'s
    terms: a parameter of ``callee`` the call fills takes the call's
    argument; one it leaves takes its default, or, when ``outer`` passes its
    own ``**`` on and has no parameter of that name, what ``outer``'s
    callers pass under that name (a keyword of ``outer`` whose default is
    ``callee``'s)."""
    if own is None:
        return None
    passed: Dict[str, str] = {}
    extra: Dict[str, str] = {}
    unknown = outer.open_keywords
    for slot, spec in outer.arguments:
        position = int(slot) if slot.isdigit() else None
        keyword = None if position is not None else slot
        parameter = callee.parameter_for(position, keyword, outer.bound)
        if parameter is not None:
            passed[parameter] = spec
        elif keyword is not None:
            extra[keyword] = spec
        else:
            unknown = True  # a position ``callee`` takes through ``*args``
    mine = set(own.parameters) | set(own.keyword_only)
    inner_defaults = dict(inner.defaults)
    defaults = dict(outer.defaults)
    arguments: Dict[str, str] = {}
    for keyword, spec in inner.arguments:
        kind, _, parameter = spec.partition(":")
        if spec.startswith(VARARG):
            arguments[keyword] = UNKNOWN  # the inner function's extra positions: not followed through a relay
        elif kind != "param":
            arguments[keyword] = spec
        elif parameter in passed:
            arguments[keyword] = passed[parameter]
        elif unknown:
            arguments[keyword] = UNKNOWN
        elif outer.forwards is not None and parameter not in mine:
            arguments[keyword] = f"param:{parameter}"  # outer's callers may pass it through ``**``
            if parameter in inner_defaults:
                defaults[parameter] = inner_defaults[parameter]
        else:
            arguments[keyword] = inner_defaults.get(parameter, UNKNOWN)
    forwards: Optional[str] = None
    open_keywords = inner.open_keywords
    if inner.forwards is not None:
        for keyword, spec in extra.items():
            arguments.setdefault(keyword, spec)
        forwards = outer.forwards
        open_keywords = open_keywords or unknown
    return BuiltLoader(outer.qualified, inner.loader, tuple(sorted(arguments.items())), tuple(sorted(defaults.items())),
                       forwards, open_keywords, parts=inner.parts, arity=inner.arity)


def _apply(function: Function, state: Mapping[str, Summary], bases: Mapping[str, Tuple[str, ...]],
           makers: Mapping[str, Mapping[str, str]], aliases: Mapping[str, str]) -> Summary:
    """The function's facts with its callees' current facts added."""
    current = state[function.qualified]
    runs, iterates, yields = set(current.runs), set(current.iterates), set(current.yields_from)
    loop_runs, repeats = set(current.loop_runs), set(current.repeats)
    moves_items, moves = set(current.moves_items), set(current.moves)
    forwards, evals = set(current.forwards), set(current.evals)
    run_parameters = set(current.runs_parameters)
    gradients = current.gradients
    loads = current.loads_weights
    returns = list(current.returns)
    for ret in function.returns:  # `return M(opt)`, M one of several classes: a new instance of one of them
        for candidate in ret.one_of:
            target = find(canonical_name(candidate, aliases), state, bases)
            found = Return(builds=candidate, guard=ret.guard) if target is None or target.constructs else Return(
                guard=ret.guard)
            if found not in returns:
                returns.append(found)
    for called, in_loop in function.called_parameters:
        built = makers.get(function.qualified, {}).get(called)
        target = find(canonical_name(f"{built}.__call__", aliases), state, bases) if built is not None else None
        if target is not None:
            (loop_runs if in_loop else runs).update(target.runs)
            loop_runs |= target.loop_runs
    for index, call in enumerate(function.calls):
        if call.choice:
            if index and function.calls[index - 1].choice == call.choice:
                continue  # the site's first call stands for all of them
            target = _chosen(function, call.choice, state, bases, aliases)
            if target is None:
                continue
        else:
            target = find(canonical_name(call.callee, aliases), state, bases)
        if target is None or target.constructs:
            for ret in function.returns:  # not a function of the project: a new instance of what it names
                if ret.call == index and not call.bound:
                    found = Return(builds=call.callee, guard=ret.guard)
                    if found not in returns:
                        returns.append(found)
            if target is None:
                continue
        if call.in_loop:
            loop_runs |= target.runs | target.loop_runs
        else:
            runs |= target.runs
            loop_runs |= target.loop_runs
        gradients = gradients or (target.gradients and not call.disabled)
        loads = loads or target.loads_weights
        shared: List[str] = []  # values that are the same here as in the callee
        if not target.wrapper:
            shared.append(_PERSISTENT)  # a global or an attribute the callee uses
        if call.on_self == "" and target.method and not target.wrapper and function.method:
            shared.append(HELD)  # `self.train_epoch()`: the same instance's attributes
        for prefix in shared:
            for value in target.iterates:
                if value.startswith(prefix):
                    iterates.add(value)
                    if call.in_loop or value in target.repeats:
                        repeats.add(value)
            for moved, device, settled in target.moves_items:
                if moved.startswith(prefix):
                    moves_items.add((moved, _mapped(device, call, target, function), settled))
        if call.on_self is not None and target.method and not target.wrapper and function.method:
            prefix = f"{call.on_self}." if call.on_self else ""
            if not call.disabled:
                forwards.update(_within(prefix, target.forwards))
            if call.callee.rsplit(".", 1)[-1] == "eval" or not call.on_self:  # `self.x.eval()`, `self.helper()`
                evals.update(_within(prefix, target.evals))
        for slot, subject in call.slots:
            filled = target.parameter_for(int(slot) if slot.isdigit() else None,
                                          None if slot.isdigit() else slot, call.bound)
            if filled is None:
                continue
            parameter = filled
            if parameter in target.runs_parameters and not call.disabled and subject in current.parameters:
                run_parameters.add(subject)  # `forward(model, batch)` whose `forward` runs `model(batch)`
            if parameter in target.iterates or (call.role == "iter" and parameter in target.yields_from):
                iterates.add(subject)
                if parameter in target.repeats:
                    repeats.add(_passed_over_again(subject))
                elif call.in_loop:
                    repeats.add(subject)
            if target.moves_items or target.moves:
                for moved, device, settled in target.moves_items:
                    if moved == parameter:
                        moves_items.add((subject, _mapped(device, call, target, function), settled))
                for moved, device, settled in target.moves:
                    if moved == parameter:
                        moves.add((subject, _mapped(device, call, target, function), settled))
        for slot, item in call.items:
            filled = target.parameter_for(int(slot) if slot.isdigit() else None,
                                          None if slot.isdigit() else slot, call.bound)
            for moved, device, settled in target.moves:
                if filled is not None and moved == filled:  # `to_gpu(batch[0])` in a loop over a parameter
                    moves_items.add((item, _mapped(device, call, target, function), settled))
        for slot, whole in call.parts:
            filled = target.parameter_for(int(slot) if slot.isdigit() else None,
                                          None if slot.isdigit() else slot, call.bound)
            for moved, device, settled in target.moves:
                if filled is not None and moved == filled:  # `to_gpu(x)` after `x, y = batch`
                    moves.add((whole, _mapped(device, call, target, function), settled))
        for ret in function.returns:
            if ret.call != index or target.wrapper:
                continue
            for inner in target.returns:
                if inner.guard is not None:
                    continue
                if inner.builds is not None:
                    found = Return(builds=inner.builds, guard=ret.guard)
                elif inner.parameter is not None:
                    mapped = dict(call.slots).get(_slot_of(target, inner.parameter, call.bound) or "")
                    if mapped is not None and mapped.startswith((RESULT, HELD)):
                        mapped = None  # a value the caller got from a call, not one of its parameters
                    found = Return(parameter=mapped, guard=ret.guard) if mapped is not None else Return(guard=ret.guard)
                else:
                    found = Return(guard=ret.guard)
                if found not in returns:
                    returns.append(found)
    return Summary(current.qualified, current.parameters, current.keyword_only, current.method, frozenset(runs),
                   frozenset(iterates), frozenset(yields), tuple(returns), loop_runs=frozenset(loop_runs),
                   repeats=frozenset(repeats), moves_items=frozenset(moves_items), moves=frozenset(moves),
                   forwards=frozenset(forwards), evals=frozenset(evals), device_defaults=current.device_defaults,
                   runs_parameters=frozenset(run_parameters), gradients=gradients, grad_off=current.grad_off,
                   loads_weights=loads)


class _Placed:
    """Where the project's classes place their ``self.<attr>`` devices, and
    which devices a method's copy goes to, as far as the summaries know."""

    def __init__(self, state: Mapping[str, Summary], written: Mapping[str, Function],
                 devices: Mapping[str, Mapping[str, str]],
                 bases: Mapping[str, Tuple[str, ...]], aliases: Mapping[str, str], accelerators: Set[str],
                 cuda: Set[str], epochs: Set[str]) -> None:
        self.state = state
        """The summaries as linked so far (the caller's, growing)."""
        self.devices = devices
        self.bases = bases
        self.aliases = aliases
        self.accelerators = accelerators
        self.cuda = cuda
        self.epochs = epochs
        """The functions of files that call ``set_epoch``."""
        self.written = written
        self._setting: Dict[Tuple[str, ...], bool] = {}

    def sets_epoch(self, members: Sequence[str]) -> bool:
        """Some of ``members``, or a function one of them calls, is in a file
        that calls ``set_epoch`` (asked once per class)."""
        key = tuple(members)
        if key not in self._setting:
            found = False
            for member in members:
                function = self.written.get(member)
                if member in self.epochs or function is None:
                    found = True
                    break
                for call in function.calls:
                    target = find(canonical_name(call.callee, self.aliases), self.state, self.bases)
                    if target is not None and target.qualified in self.epochs:
                        found = True
                        break
                if found:
                    break
            self._setting[key] = found
        return self._setting[key]

    def attribute(self, owner: str, attribute: str, walk: bool = True) -> Optional[str]:
        """``cuda`` when the class ``owner`` (or the first of its bases that
        sets it) sets ``self.<attribute>`` to a device that may be CUDA, or to
        what a project function that returns one gives; ``cpu`` when it sets
        it to the CPU; None otherwise."""
        start = canonical_name(owner, self.aliases)
        spec = first_in_bases(start, self.bases if walk else {},
                              lambda name: self.devices.get(name, {}).get(attribute))
        if spec is None or spec in ("cuda", "cpu"):
            return spec
        if spec == UNKNOWN:
            return None
        helper = find(canonical_name(spec[len("call:"):], self.aliases), self.state, self.bases)
        return "cuda" if helper is not None and helper.qualified in self.accelerators else None

    def resolved(self) -> Dict[str, Dict[str, str]]:
        """Each class's own device attributes (:attr:`Summaries.placed`):
        ``cuda``, ``cpu``, or ``?`` where a class writes an attribute that
        some class keeps a known device in (it hides the base's)."""
        own = {cls: {attr: self.attribute(cls, attr, walk=False) or UNKNOWN for attr in attrs}
               for cls, attrs in self.devices.items()}
        known = {attr for attrs in own.values() for attr, where in attrs.items() if where != UNKNOWN}
        return {cls: found for cls, found in (
            (cls, {attr: where for attr, where in sorted(attrs.items()) if attr in known})
            for cls, attrs in sorted(own.items())) if found}

    def device(self, device: str, method: str, owner: str, held: Mapping[str, str]) -> Optional[str]:
        """A device a method of ``owner`` copies its instance's attribute to,
        for a construction of ``owner``: ``param:<name>`` for an ``__init__``
        parameter kept in ``self.<attr>``; ``cuda`` for a CUDA device, or one
        known only at run time in a file that uses CUDA; None for the CPU or
        what cannot be known."""
        kind, _, name = device.partition(":")
        if kind == "cuda":
            return device
        if kind == "cpu":
            return None
        if kind == "attr":
            if name in held:
                return f"param:{held[name]}"
            where = self.attribute(owner, name)
            if where is not None:
                return where if where == "cuda" else None
        if kind == "call":
            helper = find(canonical_name(name, self.aliases), self.state, self.bases)
            if helper is not None and helper.qualified in self.accelerators:
                return "cuda"
        return "cuda" if method in self.cuda else None


def _constructions(written: Mapping[str, Function], state: Mapping[str, Summary],
                   bases: Mapping[str, Tuple[str, ...]], aliases: Mapping[str, str],
                   attributes: Mapping[str, Mapping[str, str]]) -> Dict[str, Tuple[str, Tuple[str, ...], Dict[str, str]]]:
    """The project classes the project's code builds (``Solver(cfg, loader)``)
    whose ``__init__`` is the project's: class -> (that ``__init__``, the
    methods an instance has, the ``__init__`` parameters it keeps in
    ``self.<attr>``: attr -> parameter)."""
    owners: Dict[str, List[str]] = {}
    for name in written:
        owner = name.rpartition(".")[0]
        if owner in bases:
            owners.setdefault(owner, []).append(name)
    found: Dict[str, Tuple[str, Tuple[str, ...], Dict[str, str]]] = {}
    seen: Set[str] = set()
    for function in written.values():
        for call in function.calls:
            cls = canonical_name(call.callee, aliases)
            if call.bound or cls in seen or cls not in bases:
                continue
            seen.add(cls)
            init = find(f"{cls}.__init__", state, bases)
            if init is None or init.wrapper or find(cls, state, bases) is not None:
                continue
            members: List[str] = []
            names: Set[str] = set()
            pending = [cls]
            classes: Set[str] = set()
            while pending:  # the class and its bases, each once: every method an instance has
                current = pending.pop(0)
                if current in classes:
                    continue
                classes.add(current)
                for method in owners.get(current, ()):
                    last = method.rpartition(".")[2]
                    if last in names:
                        continue
                    names.add(last)
                    target = find(f"{cls}.{last}", state, bases)
                    if target is not None and not target.wrapper:
                        members.append(target.qualified)
                pending.extend(bases.get(current, ()))
            held = dict(attributes.get(init.qualified.rpartition(".")[0], {}))
            found[cls] = (init.qualified, tuple(sorted(set(members))), held)
    return found


def _construction(cls: str, init: Summary, members: Sequence[str], state: Mapping[str, Summary],
                  held: Mapping[str, str], placed: _Placed) -> Summary:
    """What building ``cls`` commits its arguments to (:attr:`Summary.constructs`)."""
    instance = init.parameters[0] if init.method and init.parameters else None
    parameters = init.parameters[1:] if init.method else init.parameters

    def own(value: str) -> bool:
        return value != instance and not value.startswith((RESULT, HELD))

    iterates = {v for v in init.iterates if own(v)}
    repeats = {v for v in init.repeats if own(v)}
    moves_items = {m for m in init.moves_items if own(m[0])}
    trained: Set[str] = set()
    for member in members:
        summary = state.get(member)
        if summary is None:
            continue
        for value in summary.iterates:
            parameter = held.get(value[len(HELD):]) if value.startswith(HELD) else None
            if parameter is not None:
                iterates.add(parameter)
                if value in summary.repeats:
                    repeats.add(parameter)
                    if BACKWARD in summary.loop_runs:
                        trained.add(parameter)
        for moved, device, settled in summary.moves_items:
            parameter = held.get(moved[len(HELD):]) if moved.startswith(HELD) else None
            where = placed.device(device, member, cls, held) if parameter is not None else None
            if parameter is not None and where is not None:
                moves_items.add((parameter, where, settled))
    return Summary(cls, parameters, init.keyword_only, False, init.runs, frozenset(iterates),
                   frozenset(v for v in init.yields_from if own(v)), (), loop_runs=init.loop_runs,
                   repeats=frozenset(repeats), moves_items=frozenset(moves_items),
                   moves=frozenset(m for m in init.moves if own(m[0])), constructs=True,
                   epochs=frozenset() if placed.sets_epoch(members) else frozenset(trained),
                   device_defaults=init.device_defaults)


def _within(prefix: str, paths: FrozenSet[str]) -> Iterator[str]:
    """``paths`` under ``prefix``, those longer than :data:`_MAX_PATH` attributes left out
    (a class that holds an instance of itself would grow them for ever)."""
    for path in paths:
        found = prefix + path
        if found.count(".") < _MAX_PATH:
            yield found


def _mapped(device: str, call: Call, target: Summary, caller: Function) -> str:
    """A callee's device as the caller knows it: the callee's parameter
    becomes what the call passes for it, the callee's ``self.<attr>`` stays
    one when the call is on the caller's own instance; ``?`` otherwise."""
    kind, _, name = device.partition(":")
    if kind == "param":
        slot = _slot_of(target, name, call.bound)
        if slot is None:
            return "?"
        passed = dict(call.devices).get(slot)
        if passed is None and slot in dict(call.slots):
            passed = f"param:{dict(call.slots)[slot]}"
        return passed or "?"
    if kind == "attr":
        owner = caller.qualified.rsplit(".", 1)[0]
        own = caller.method and call.bound and call.callee.rsplit(".", 1)[0] == owner
        return device if own else "?"
    return device


def _slot_of(target: Summary, parameter: str, bound: bool) -> Optional[str]:
    if parameter in target.parameters:
        index = target.parameters.index(parameter) - (1 if bound and target.method else 0)
        return str(index) if index >= 0 else None
    return parameter if parameter in target.keyword_only else None


def _parameter_makers(written: Mapping[str, Function], state: Mapping[str, Summary],
                      bases: Mapping[str, Tuple[str, ...]], aliases: Mapping[str, str]) -> Dict[str, Dict[str, str]]:
    """For each function whose parameter it calls, the class every call of
    it builds that argument with (all calls the project makes must agree,
    and some must be known)."""
    wanted = {name for name, function in written.items() if function.called_parameters}
    if not wanted:
        return {}
    seen: Dict[Tuple[str, str], Set[Optional[str]]] = {}
    for function in written.values():
        for call in function.calls:
            target = find(canonical_name(call.callee, aliases), state, bases) if not call.choice else None
            if target is None or target.qualified not in wanted:
                continue
            known = dict(call.makers)
            for parameter, _in_loop in written[target.qualified].called_parameters:
                slot = _slot_of(target, parameter, call.bound)
                by_keyword = parameter if parameter in target.parameters else None
                built = known.get(slot or "") or (known.get(by_keyword) if by_keyword else None)
                seen.setdefault((target.qualified, parameter), set()).add(built)
    agreed: Dict[str, Dict[str, str]] = {}
    for (callee, parameter), makers in sorted(seen.items(), key=lambda item: item[0]):
        only = next(iter(makers))
        if len(makers) == 1 and only is not None:
            agreed.setdefault(callee, {})[parameter] = only
    return agreed


_UNKNOWN_CLASS = "?"
"""In :attr:`Summaries.passed`: some call passes something no known class built."""


def _passed_classes(written: Mapping[str, Function], state: Mapping[str, Summary],
                    bases: Mapping[str, Tuple[str, ...]], aliases: Mapping[str, str],
                    targets: Mapping[Tuple[str, int], Optional[str]],
                    chosen: Mapping[str, Tuple[str, ...]]) -> Dict[str, Dict[str, FrozenSet[str]]]:
    """:attr:`Summaries.passed`: the classes that built what each call passes
    (:attr:`Call.makers`, :attr:`Call.built`), given to the parameters it
    fills, then on through the calls that pass those parameters along
    (``main`` builds a ``GradScaler`` and hands it to ``fit``, which hands
    it to ``train_one_epoch``); each (parameter, class) is added once, so
    the work is linear in the calls and what flows through them."""
    found: Dict[Tuple[str, str], Set[str]] = {}
    pending: List[Tuple[str, str]] = []

    def slots_of(target: Summary, slot: str, bound: bool) -> List[Tuple[str, str]]:
        """The (function, parameter) pairs an argument in ``slot`` fills."""
        if target.qualified in chosen:  # one of several callables: whichever runs gets it
            return [pair for member in chosen[target.qualified] for pair in slots_of(state[member], slot, bound)]
        position, keyword = (int(slot), None) if slot.isdigit() else (None, slot)
        parameter = target.parameter_for(position, keyword, bound)
        if parameter is None or target.wrapper:
            return []
        if target.constructs:  # a construction fills its `__init__`'s parameters
            init = find(f"{target.qualified}.__init__", state, bases)
            return [(init.qualified, parameter)] if init is not None and not init.wrapper else []
        return [(target.qualified, parameter)]

    def add(pair: Tuple[str, str], classes: Iterable[str]) -> None:
        have = found.setdefault(pair, set())
        grown = set(classes) - have
        if grown:
            have |= grown
            pending.append(pair)

    named_bases = _canonical_bases(bases, aliases)
    subclasses: Dict[str, List[str]] = {}
    for cls in sorted(named_bases):
        for base in named_bases[cls]:
            subclasses.setdefault(base, []).append(cls)

    @functools.lru_cache(maxsize=None)
    def overrides(owner: str, method: str) -> List[Summary]:
        """``method`` as the subclasses of ``owner`` (at any depth) define it:
        what ``self.method(...)`` in ``owner`` runs for their instances
        (each (owner, method) walked once)."""
        found_here: List[Summary] = []
        seen: Set[str] = {owner}
        stack = list(subclasses.get(owner, ()))
        while stack:
            cls = stack.pop()
            if cls in seen:
                continue
            seen.add(cls)
            summary = state.get(f"{cls}.{method}")
            if summary is not None:
                found_here.append(summary)
            stack.extend(subclasses.get(cls, ()))
        return found_here

    relays: Dict[Tuple[str, str], List[Tuple[str, str]]] = {}
    for name, function in written.items():
        own = set(function.parameters) | set(function.keyword_only)
        for parameter, cls in function.annotated:
            add((name, parameter), (canonical_name(cls, aliases),))
        for index, call in enumerate(function.calls):
            qualified = targets.get((name, index))
            target = state.get(qualified) if qualified is not None else None
            if target is None:
                continue
            runs = [target]
            if call.on_self == "" and function.method:  # a subclass's override runs for its instances
                runs += overrides(name.rpartition(".")[0], call.callee.rpartition(".")[2])
            classes: Dict[str, Set[str]] = {}
            for slot, cls in (*call.makers, *call.built):
                classes.setdefault(slot, set()).add(canonical_name(cls, aliases))
            relayed = {slot: value for slot, value in call.slots if value in own}
            for slot in call.passed:  # anything else passed: not known (`summarize(model, [x])`)
                if slot not in classes and slot not in relayed:
                    classes[slot] = {_UNKNOWN_CLASS}
            for each in runs:
                if "*" in call.passed:  # `*args`/`**kwargs` may fill any parameter
                    filled = find(f"{each.qualified}.__init__", state, bases) if each.constructs else each
                    if filled is not None:
                        for parameter in (*filled.parameters, *filled.keyword_only):
                            add((filled.qualified, parameter), (_UNKNOWN_CLASS,))
                for slot, value in relayed.items():
                    for pair in slots_of(each, slot, call.bound):
                        relays.setdefault((name, value), []).append(pair)
                for slot, built in sorted(classes.items()):
                    if slot == "*":
                        continue
                    for pair in slots_of(each, slot, call.bound):
                        add(pair, built)
    while pending:
        source = pending.pop()
        for pair in relays.get(source, ()):
            add(pair, found[source])
    passed: Dict[str, Dict[str, FrozenSet[str]]] = {}
    for (function_name, parameter), names in sorted(found.items()):
        passed.setdefault(function_name, {})[parameter] = frozenset(names)
    return passed


# -- which files ------------------------------------------------------------------------------


def defined(files: Iterable[FileSummary]) -> Set[str]:
    """The module-level functions and classes the files define (what a
    package may re-export)."""
    found: Set[str] = set()
    for summary in files:
        depth = summary.module.count(".") + 1
        found.update(f.qualified for f in summary.functions if f.qualified.count(".") == depth
                     and not f.qualified.endswith(MODULE_BODY))
        found.update(name for name, _ in summary.bases)
    return found


def summarize_project(chosen: Sequence[Tuple[Path, bytes, str]], store: Optional[Store],
                      known: Optional[Mapping[str, Optional[FileSummary]]] = None) -> List[FileSummary]:
    """The summaries of the files :func:`~torchlint.analysis.imports.connected`
    chose (path, bytes, module), from ``store`` where it holds them;
    ``known``: those the index's one pass over each file made already, by path."""
    summaries: List[FileSummary] = []
    for path, text, module in chosen:
        summary = known[str(path)] if known is not None and str(path) in known else summarize_file(
            path, text, module, store)
        if summary is not None:
            summaries.append(summary)
    return summaries


def summarize_sources(sources: Sequence[Tuple[str, Union[str, bytes], bool]]) -> Summaries:
    """The linked summaries of in-memory files (module, text, is a package), for tests."""
    found = []
    for module, text, is_package in sources:
        tree = parse_quietly(text)
        if tree is not None:
            found.append(summarize_tree(tree, module, is_package))
    return link(found)


def _unless_none(expr: ast.expr) -> ast.expr:
    """``DataLoader(...) if test_set is not None else None``: where it is
    not None, the value is the other side, and ``None`` is never iterated or copied."""
    if isinstance(expr, ast.IfExp):
        for side, other in ((expr.body, expr.orelse), (expr.orelse, expr.body)):
            if isinstance(other, ast.Constant) and other.value is None:
                return side
    return expr


def _stored(target: ast.AST) -> Iterator[ast.Name]:
    """The names an assignment target binds (``x``, ``x, (y, *z)``): not
    the ``x`` of ``x.attr = v`` or ``x[i] = v``, which stays what it was."""
    return (leaf for leaf in ast.walk(target) if isinstance(leaf, ast.Name) and isinstance(leaf.ctx, ast.Store))


def _agree(table: Dict[str, Optional[str]], name: str, value: Optional[str]) -> None:
    """Record that an assignment binds ``name`` to ``value``: the table keeps
    the value every binding so far agrees on, None once two disagree."""
    earlier = table.get(name, value)
    table[name] = value if earlier == value else None
