"""Torch API data: the shipped files validate, malformed files are rejected
with the file and entry named, and the signatures match the installed torch."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

import pytest

from torchlint.data import apidata
from torchlint.data.apidata import CheckMethod, DataError, FixKind, Signature
from torchlint.model import Applicability
from torchlint.ruleapi.rule import TorchVersion


def test_shipped_files_load_and_hold_the_facts_rules_rely_on() -> None:
    signatures = apidata.signatures()
    deprecations = apidata.deprecations()
    assert signatures is apidata.signatures()  # read once
    v = TorchVersion.parse

    conv = signatures["torch.nn.Conv2d"]
    assert conv.positional_names(v("2.0")).index("bias") == 7
    device = conv.parameter("device")
    assert device is not None and device.added == v("1.9")
    assert "device" not in conv.positional_names(v("1.8"))
    assert signatures["torch.nn.Linear"].positional_names(v("2.0")).index("bias") == 2
    assert signatures["torch.nn.LazyLinear"].positional_names(v("2.0")).index("bias") == 1

    loader = signatures["torch.utils.data.DataLoader"]
    assert loader.positional_names(v("2.0")).index("num_workers") == 5
    for name, position in (("sampler", 3), ("shuffle", 2), ("pin_memory", 7)):
        assert loader.positional_names(v("2.0")).index(name) == position
    persistent = loader.parameter("persistent_workers")
    assert persistent is not None and not persistent.positional and persistent.added == v("1.7")

    set_to_none = signatures["torch.optim.Optimizer.zero_grad"].parameter("set_to_none")
    assert set_to_none is not None and set_to_none.added == v("1.7")
    weights_only = signatures["torch.load"].parameter("weights_only")
    assert weights_only is not None and not weights_only.positional and weights_only.added == v("1.13")
    assert signatures["torch.amp.GradScaler"].since == v("2.3")
    assert signatures["torch.amp.autocast"].since == v("1.10")
    assert signatures["torch.amp.autocast"].positional_names(v("2.4"))[0] == "device_type"
    assert signatures["torch.cuda.amp.autocast"].positional_names(v("2.4"))[0] == "enabled"
    assert signatures["torch.zeros"].var_positional == "size"

    solve = deprecations["torch.solve"]
    assert solve.removed(v("2.0")) and not solve.removed(v("1.12"))
    assert deprecations["torch.ger"].fix is FixKind.RENAME and deprecations["torch.ger"].replacement == "torch.outer"
    assert deprecations["torch.range"].safety is Applicability.UNSAFE
    assert deprecations["torch.norm"].documentation_only
    assert deprecations["torch.cuda.amp.GradScaler"].applies_to(v("2.4"))
    assert not deprecations["torch.cuda.amp.GradScaler"].applies_to(v("2.3"))


def test_signature_versions_cover_later_changes() -> None:
    layer_norm = apidata.signature("torch.nn.LayerNorm")
    v = TorchVersion.parse
    assert layer_norm.versions_from(v("1.9")) == (v("1.9"), v("2.1"))
    assert layer_norm.positional_names(v("2.0"))[3] == "device"
    assert layer_norm.positional_names(v("2.1"))[3] == "bias"
    with pytest.raises(KeyError, match="torch.nn.NoSuchLayer"):
        apidata.signature("torch.nn.NoSuchLayer")


# -- malformed files ---------------------------------------------------------------

GOOD_SIGNATURE = '''
[[signature]]
name = "torch.f"
parameters = ["a", "b"]
reference = "docs"
'''

GOOD_DEPRECATION = '''
[[deprecation]]
symbol = "torch.old"
deprecated_in = "1.9"
replacement = "torch.new"
fix = "rename"
safety = "safe"
reference = "docs"
note = "use torch.new"
'''


def _error(path: Path, text: str, read: Callable[[Path], object]) -> str:
    path.write_text(text)
    with pytest.raises(DataError) as error:
        read(path)
    return str(error.value)


def test_good_examples_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(GOOD_SIGNATURE)
    (tmp_path / "d.toml").write_text(GOOD_DEPRECATION)
    assert list(apidata.read_signatures(tmp_path / "s.toml")) == ["torch.f"]
    assert list(apidata.read_deprecations(tmp_path / "d.toml")) == ["torch.old"]


MALFORMED_SIGNATURES = [
        (GOOD_SIGNATURE + 'colour = "red"\n', "entry 1 (torch.f): unknown key 'colour'"),
        (GOOD_SIGNATURE.replace('["a", "b"]', '"a, b"'), "entry 1 (torch.f): `parameters` must be a list"),
        (GOOD_SIGNATURE + 'added = { a = "1.x" }\n', "entry 1 (torch.f): `added.a` must be a version"),
        (GOOD_SIGNATURE + 'added = { a = 1.9 }\n', "entry 1 (torch.f): `added.a` must be a version string"),
        (GOOD_SIGNATURE + 'since = "v2"\n', "entry 1 (torch.f): `since` must be a version"),
        (GOOD_SIGNATURE + 'added = { c = "1.9" }\n', "entry 1 (torch.f): `added` names 'c'"),
        (GOOD_SIGNATURE + 'keyword_only = ["a"]\n', "entry 1 (torch.f): parameter 'a' is listed twice"),
        (GOOD_SIGNATURE + 'check = "guess"\n', "entry 1 (torch.f): `check` has an unknown value 'guess'"),
        (GOOD_SIGNATURE + GOOD_SIGNATURE, "torch.f: listed twice"),
        (GOOD_SIGNATURE.replace('reference = "docs"\n', ""), "entry 1 (torch.f): missing `reference`"),
        ('[[signatur]]\nname = "x"\n', "unknown top-level key 'signatur'"),
        ("[[signature]\n", "not valid TOML"),
        ("signature = 3\n", "must be an array of tables"),
]
MALFORMED_DEPRECATIONS = [
        (GOOD_DEPRECATION.replace('"rename"', '"rewrite"'), "entry 1 (torch.old): `fix` has an unknown value"),
        (GOOD_DEPRECATION.replace('"safe"', '"maybe"'), "entry 1 (torch.old): `safety` has an unknown value"),
        (GOOD_DEPRECATION.replace('replacement = "torch.new"\n', ""), "a `rename` fix needs a `replacement`"),
        (GOOD_DEPRECATION.replace('deprecated_in = "1.9"\n', ""), "needs `deprecated_in` or `removed_in`"),
        (GOOD_DEPRECATION + 'removed_in = "1.8"\n', "`removed_in` is older than `deprecated_in`"),
        (GOOD_DEPRECATION + "documentation_only = 1\n", "`documentation_only` must be true or false"),
        (GOOD_DEPRECATION + GOOD_DEPRECATION, "torch.old: listed twice"),
        (GOOD_DEPRECATION.replace('"1.9"', '"1.9.0"'), "`deprecated_in` must be a version like"),
]


@pytest.mark.parametrize(
    "name, text, complaint",
    [("signatures.toml", text, complaint) for text, complaint in MALFORMED_SIGNATURES]
    + [("deprecations.toml", text, complaint) for text, complaint in MALFORMED_DEPRECATIONS],
)
def test_malformed_files_are_rejected_naming_file_and_entry(
    tmp_path: Path, name: str, text: str, complaint: str
) -> None:
    read = apidata.read_signatures if name == "signatures.toml" else apidata.read_deprecations
    message = _error(tmp_path / name, text, read)
    assert message.startswith(f"{name}: ")
    assert complaint in message


# -- the installed torch agrees with the data ------------------------------------------


def _resolve(name: str) -> Any:
    parts = name.split(".")
    for size in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:size]))
        except ImportError:
            continue
        for part in parts[size:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(name)


Shape = Tuple[List[str], List[str], Optional[str], Optional[str]]


def _from_inspect(signature: inspect.Signature) -> Shape:
    parameters = [p for p in signature.parameters.values() if p.name != "self"]
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword = [p.name for p in parameters if p.kind == p.KEYWORD_ONLY]
    star = next((p.name for p in parameters if p.kind == p.VAR_POSITIONAL), None)
    stars = next((p.name for p in parameters if p.kind == p.VAR_KEYWORD), None)
    return positional, keyword, star, stars


def _from_docstring(doc: str) -> Shape:
    """``zeros(*size, *, out=None, dtype=None) -> Tensor``, as builtins document themselves."""
    line = doc.strip().splitlines()[0].replace("\\*", "*")
    inner = line[line.index("(") + 1 : line.rindex(")")]
    pieces, depth, current = [], 0, ""
    for char in inner:
        depth += char in "(["
        depth -= char in ")]"
        if char == "," and depth == 0:
            pieces.append(current)
            current = ""
        else:
            current += char
    pieces.append(current)
    positional: List[str] = []
    keyword: List[str] = []
    star: Optional[str] = None
    stars: Optional[str] = None
    keyword_only = False
    for piece in (p.strip() for p in pieces):
        name = piece.split("=")[0].split(":")[0].strip()
        if not name:
            continue
        if name == "*":
            keyword_only = True
        elif name.startswith("**"):
            stars = name[2:]
        elif name.startswith("*"):
            star, keyword_only = name[1:], True
        else:
            (keyword if keyword_only else positional).append(name)
    return positional, keyword, star, stars


def _installed(entry: Signature) -> Shape:
    obj = _resolve(entry.name)
    if entry.check is CheckMethod.DOCSTRING:
        return _from_docstring(obj.__doc__ or "")
    if entry.check is CheckMethod.OVERLOAD:
        import typing

        if not hasattr(typing, "get_overloads"):
            pytest.skip("typing.get_overloads needs Python 3.11")
        return _from_inspect(inspect.signature(typing.get_overloads(obj.__init__)[0]))
    return _from_inspect(inspect.signature(obj))


def _recorded(entry: Signature) -> Shape:
    positional = [p.name for p in entry.parameters if p.positional and p.keyword_only_since is None]
    keyword = [p.name for p in entry.parameters if p.name not in positional]
    return positional, keyword, entry.var_positional, entry.var_keyword


CHECKED = [s for s in apidata.signatures().values() if s.check is not CheckMethod.NONE]


@pytest.mark.parametrize("entry", CHECKED, ids=[s.name for s in CHECKED])
def test_signature_matches_installed_torch(entry: Signature) -> None:
    torch = pytest.importorskip("torch")
    version = TorchVersion.parse(torch.__version__.split("+")[0])
    if entry.since is not None and version < entry.since:
        pytest.skip(f"{entry.name} is newer than torch {version}")
    positional, keyword, star, stars = _installed(entry)
    recorded = _recorded(entry)
    assert positional == recorded[0], "positional parameters differ"
    assert sorted(keyword) == sorted(recorded[1]), "keyword-only parameters differ"
    assert (star, stars) == (recorded[2], recorded[3]), "*args / **kwargs differ"


def test_docstring_header_parser() -> None:
    assert _from_docstring("randint(low=0, high, size, \\*, generator=None, dtype=None) -> Tensor") == (
        ["low", "high", "size"], ["generator", "dtype"], None, None
    )
    assert _from_docstring("zeros(*size, *, out=None, device=None) -> Tensor") == (
        [], ["out", "device"], "size", None
    )


def test_loading_does_not_import_torch() -> None:
    import subprocess

    probe = (
        "import sys; from torchlint.data import apidata; apidata.signatures(); apidata.deprecations(); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- libraries that differentiate through what they are given (autograd.toml) -----------

GOOD_LIBRARY = '[[library]]\nprefix = "captum.attr"\nnote = "attribution"\n'


def test_gradient_libraries_match_by_module_not_by_spelling(tmp_path: Path) -> None:
    (tmp_path / "autograd.toml").write_text(GOOD_LIBRARY)
    assert [lib.prefix for lib in apidata.read_gradient_libraries(tmp_path / "autograd.toml")] == ["captum.attr"]
    assert apidata.takes_gradients("captum.attr.IntegratedGradients")
    assert apidata.takes_gradients("torch.autograd.grad")
    assert apidata.takes_gradients("torch.autograd.functional.jacobian")
    # A legacy tensor wrapper and the grad-mode switches take no gradients.
    assert not apidata.takes_gradients("torch.autograd.Variable")
    assert not apidata.takes_gradients("torch.autograd.no_grad")
    assert apidata.takes_gradients("torch.func.jacrev")
    assert apidata.takes_gradients("torchattacks.PGD")
    # A module whose name only starts the same way is another module.
    assert not apidata.takes_gradients("captumx.attr.Thing")
    assert not apidata.takes_gradients("torch.autogradient")
    assert not apidata.takes_gradients("mylib.attack.pgd")


@pytest.mark.parametrize("text, complaint", [
    (GOOD_LIBRARY + 'colour = "red"\n', "unknown key 'colour'"),
    (GOOD_LIBRARY.replace('"captum.attr"', '"captum attr"'), "`prefix` must be a dotted module name"),
    (GOOD_LIBRARY.replace('note = "attribution"\n', ""), "missing `note`"),
    (GOOD_LIBRARY + GOOD_LIBRARY, "a prefix is listed twice"),
])
def test_malformed_gradient_libraries_are_rejected(tmp_path: Path, text: str, complaint: str) -> None:
    message = _error(tmp_path / "autograd.toml", text, apidata.read_gradient_libraries)
    assert message.startswith("autograd.toml: ")
    assert complaint in message


# -- what other library callables do to autograd and to a model (autograd.toml) -----------

GOOD_AUTOGRAD = (
    '[[grad_mode]]\nname = "lib.ctx.frozen"\naliases = ["lib.frozen"]\nmode = "disabled"\nnote = "n"\n'
    '[[compiler]]\nprefix = "lib.jit.script"\nnote = "n"\n'
    '[[weights]]\nprefix = "hub"\nmethod = "from_pretrained"\nnote = "n"\n'
    '[[weights]]\nprefix = "zoo.build"\nwhen_true = "pretrained"\nnote = "n"\n'
    '[[trainer]]\nprefix = "lib.Trainer"\nmethod = "fit"\nnote = "n"\n'
)


def test_autograd_tables_are_read_and_matched_by_qualified_name(tmp_path: Path) -> None:
    (tmp_path / "autograd.toml").write_text(GOOD_AUTOGRAD)
    data = apidata.read_autograd(tmp_path / "autograd.toml")
    assert [(g.name, g.aliases, g.mode) for g in data.grad_modes] == [
        ("lib.ctx.frozen", ("lib.frozen",), apidata.GradUse.DISABLED)]
    pretrained, built = data.weights
    assert pretrained.matches("hub.models.Bert.from_pretrained")
    assert not pretrained.matches("hubx.Bert.from_pretrained") and not pretrained.matches("hub.Bert.load")
    assert built.matches("zoo.build") and built.when_true == "pretrained"
    assert data.trainers[0].matches("lib.Trainer.fit") and not data.trainers[0].matches("lib.Trainer.test")
    # The shipped tables.
    assert apidata.compiles("torch.jit.script") and apidata.compiles("torch.compile")
    assert not apidata.compiles("torch.jit.unused") and not apidata.compiles("torch.compiler.disable")
    assert not apidata.compiles(None)
    assert apidata.library_grad_modes()["monai.networks.eval_mode"] is apidata.GradUse.DISABLED
    assert apidata.loads_weights("transformers.AutoModel.from_pretrained", lambda keyword: False)
    assert apidata.loads_weights("timm.create_model", lambda keyword: keyword == "pretrained")
    assert not apidata.loads_weights("timm.create_model", lambda keyword: False)
    assert apidata.trains("lightning.pytorch.Trainer.fit") and not apidata.trains("lightning.pytorch.Trainer.test")
    assert apidata.leaves_grad_mode("tqdm.trange") and apidata.leaves_grad_mode("click.command")
    assert not apidata.leaves_grad_mode("tqdmx.trange") and not apidata.leaves_grad_mode(None)


@pytest.mark.parametrize("text, complaint", [
    ('[[grad_mode]]\nname = "lib.ctx"\nmode = "sometimes"\nnote = "n"\n', "unknown value 'sometimes'"),
    ('[[grad_mode]]\nname = "ctx"\nmode = "disabled"\nnote = "n"\n', "must be a module's callable"),
    ('[[grad_mode]]\nname = "a.b"\nmode = "disabled"\nnote = "n"\n' * 2, "[[grad_mode]] a.b: listed twice"),
    ('[[compiler]]\nprefix = "torch jit"\nnote = "n"\n', "`prefix` must be a dotted name"),
    ('[[weights]]\nprefix = "hub"\nmethod = "from pretrained"\nnote = "n"\n', "`method` must be a name"),
    ('[[weights]]\nprefix = "hub"\nwhen_true = 1\nnote = "n"\n', "`when_true` must be a string"),
    ('[[trainer]]\nprefix = "lib.T"\nmethod = "fit"\n', "missing `note`"),
    ('[[trainer]]\nprefix = "lib.T"\nmethod = "fit"\nnote = "n"\n' * 2, "[[trainer]] lib.T fit: listed twice"),
    ('[[optimiser]]\nprefix = "x"\n', "unknown top-level key 'optimiser'"),
    ('[[grad_free]]\nprefix = "tqdm"\nnote = "n"\n' * 2, "[[grad_free]] tqdm: listed twice"),
])
def test_malformed_autograd_tables_are_rejected(tmp_path: Path, text: str, complaint: str) -> None:
    message = _error(tmp_path / "autograd.toml", text, apidata.read_autograd)
    assert message.startswith("autograd.toml: ")
    assert complaint in message
