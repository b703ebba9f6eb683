"""The project index: class hierarchy and cross-module calls, read with ast."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List

import pytest

from torchlint.analysis import imports, queries
from torchlint.analysis.imports import Exports, absolute_import, module_name, read_sources, star_parts
from torchlint.analysis.index import EMPTY, MethodShape, ProjectIndex
from torchlint.analysis.queries import (
    build, build_hierarchy, build_index, callers_of, index_of_sources, method_called, method_shapes, subclasses_of,
)

SOURCES = {
    "pkg/parallel.py": (
        "import torch.nn as nn\n"
        "from torch.nn.parallel import DataParallel\n"
        "class MyParallel(nn.DataParallel):\n    pass\n"
        "class Deeper(MyParallel):\n    pass\n"
        "class Other(DataParallel):\n    pass\n"
        "class Net(nn.Module):\n    pass\n"
        "class Plain:\n    pass\n"
        "def evaluate(model):\n    return model\n"
    ),
    "pkg/train.py": (
        "from pkg.parallel import Deeper, evaluate\n"
        "import pkg.parallel as par\n"
        "class Local(Deeper):\n    pass\n"
        "evaluate(1)\n"
        "par.evaluate(2)\n"
    ),
    "pkg/broken.py": "def f(:\n",
}


def test_subclasses_across_files() -> None:
    index = index_of_sources(SOURCES)
    found = index.subclasses_of("torch.nn.DataParallel")
    assert found == {"pkg.parallel.MyParallel", "pkg.parallel.Deeper", "pkg.parallel.Other", "pkg.train.Local"}
    assert index.derives_from("pkg.parallel.Net", "torch.nn.Module")
    assert not index.derives_from("pkg.parallel.Plain", "torch.nn.Module")
    assert index.classes["pkg.parallel.Net"].line == 9


def test_calls_from_other_modules() -> None:
    index = index_of_sources(SOURCES)
    sites = index.callers_of("pkg.parallel.evaluate")
    assert [(site.caller_module, site.line) for site in sites] == [("pkg.train", 5), ("pkg.train", 6)]
    assert index.callers_of("pkg.parallel.Net") == ()


def test_module_names_follow_packages(tmp_path: Path) -> None:
    package = tmp_path / "proj" / "models"
    package.mkdir(parents=True)
    (tmp_path / "proj" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "wrap.py").write_text("import torch\nclass W(torch.nn.DataParallel):\n    pass\n")
    (tmp_path / "script.py").write_text("from proj.models.wrap import W\nW(1)\n")
    assert module_name(package / "wrap.py") == "proj.models.wrap"
    assert module_name(package / "__init__.py") == "proj.models"
    index = build_index([package / "wrap.py", tmp_path / "script.py", tmp_path / "missing.py"])
    assert index.subclasses_of("torch.nn.DataParallel") == {"proj.models.wrap.W"}
    assert [s.caller_module for s in index.callers_of("proj.models.wrap.W")] == ["script"]


def test_a_folder_named_as_no_identifier_is_no_package(tmp_path: Path) -> None:
    """A checkout folder `fast-aa` with a stray `__init__.py` cannot be
    imported: the package chain starts below it, as Python's imports do."""
    checkout = tmp_path / "fast-aa"
    package = checkout / "pkg"
    package.mkdir(parents=True)
    (checkout / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "data.py").write_text("")
    (tmp_path / "__init__.py").write_text("")
    assert module_name(package / "data.py") == "pkg.data"
    named = tmp_path / "fastaa"
    (named / "pkg").mkdir(parents=True)
    (named / "__init__.py").write_text("")
    (named / "pkg" / "__init__.py").write_text("")
    (named / "pkg" / "data.py").write_text("")
    assert module_name(named / "pkg" / "data.py").endswith("fastaa.pkg.data")


def test_relative_imports_resolve() -> None:
    index = index_of_sources({
        "pkg/__init__.py": "",
        "pkg/a.py": "import torch\nclass A(torch.nn.DataParallel):\n    pass\n",
        "pkg/b.py": "from .a import A\nclass B(A):\n    pass\n",
    })
    assert "pkg.b.B" in index.subclasses_of("torch.nn.DataParallel")


def test_build_indexes_only_what_is_asked(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("import torch\nclass P(torch.nn.DataParallel):\n    pass\n")
    assert build([path], []) is EMPTY
    built = build([path], [subclasses_of("torch.nn.DataParallel")])
    assert "m.P" in built.classes
    assert built.fingerprint != EMPTY.fingerprint


def test_hierarchy_follows_subclasses_through_files_that_never_name_the_base(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import torch\nclass Wrap(torch.nn.DataParallel):\n    pass\n")
    (tmp_path / "b.py").write_text("from a import Wrap\nclass Deeper(Wrap):\n    pass\n")
    (tmp_path / "c.py").write_text("class Unrelated:\n    pass\n")
    index = build_hierarchy(sorted(tmp_path.glob("*.py")), ["torch.nn.DataParallel"])
    assert set(index.classes) == {"a.Wrap", "b.Deeper"}


def test_tl501_reports_data_parallel_subclasses_in_the_file_and_across_files() -> None:
    from dataclasses import replace

    from torchlint.lint.engine import LintConfig, lint_source
    from torchlint.ruleapi.registry import by_code_or_name

    rule = by_code_or_name("TL501")
    assert rule is not None
    config = LintConfig(rules=(rule,))
    local = (
        "from torch import nn\n"
        "class Wrap(nn.DataParallel):\n    pass\n"
        "class Deeper(Wrap):\n    pass\n"
        "class Plain(nn.Module):\n    pass\n"
        "a, b, c = Wrap(1), Deeper(2), Plain()\n"
    )
    assert [d.start.column for d in lint_source(local, "x.py", config)] == [11, 20]
    user = "from wraps import Deeper\nm = Deeper(1)\n"
    assert lint_source(user, "use.py", config) == []  # no index: nothing known
    with_index = replace(config, project=index_of_sources({"wraps.py": local}))
    assert [d.start.line for d in lint_source(user, "use.py", with_index)] == [2]


def test_index_skips_fifos_and_missing_files(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "a.py").write_text("import torch\nclass W(torch.nn.DataParallel):\n    pass\n")
    files = [tmp_path / "pipe.py", tmp_path / "missing.py", tmp_path / "a.py"]
    assert set(build_hierarchy(files, ["torch.nn.DataParallel"]).classes) == {"a.W"}


def test_imports_inside_functions_do_not_resolve_module_level_bases() -> None:
    index = index_of_sources({
        "m.py": (
            "def setup():\n    from torch.nn import DataParallel\n"
            "class Mine(DataParallel):\n    pass\n"
        ),
    })
    assert index.subclasses_of("torch.nn.DataParallel") == frozenset()


CALLERS = {
    "engine.py": "def evaluate(model):\n    model.eval()\n    return model(1)\n",
    "main.py": (
        "import torch\n"
        "import engine\n"
        "from engine import evaluate\n"
        "with torch.no_grad():\n    evaluate(1)\n"                       # 4-5
        "@torch.inference_mode()\ndef decorated():\n    return engine.evaluate(2)\n"  # 6-8
        "def train(loader, loss):\n"
        "    for x in loader:\n"
        "        evaluate(x)\n"                                           # 11
        "        loss.backward()\n"
        "def epochs(loader, loss):\n"
        "    for e in range(3):\n"
        "        for x in loader:\n"
        "            loss.backward()\n"
        "        evaluate(e)\n"                                           # 17
        "def local():\n"
        "    from engine import evaluate as ev\n"
        "    with torch.set_grad_enabled(False):\n"
        "        ev(3)\n"                                                 # 21
        "    with torch.enable_grad():\n"
        "        ev(4)\n"                                                 # 23
    ),
}


def test_call_sites_say_grad_mode_and_training_step() -> None:
    index = index_of_sources(CALLERS)
    facts = {site.line: (site.grad_disabled, site.training_step) for site in index.callers_of("engine.evaluate")}
    assert facts == {
        5: (True, False), 8: (True, False), 11: (False, True), 17: (False, False), 21: (True, False),
        23: (False, False),
    }


def _write(root: Path, sources: "dict[str, str]") -> "list[Path]":
    for name, text in sources.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return sorted(root / name for name in sources)


def test_callers_are_indexed_only_for_files_with_the_rule_words(tmp_path: Path) -> None:
    files = _write(tmp_path, {
        **CALLERS,
        "helpers.py": "def plain(x):\n    return x\n",  # no callee word: its callers are not asked about
        "user.py": "from helpers import plain\nplain(1)\n",
        "unrelated.py": "def f():\n    return 1\n",
    })
    index = build(files, [callers_of((".eval(",))])
    assert set(index.calls) == {"engine.evaluate"}
    assert index.module_of(str(tmp_path / "engine.py")) == "engine"
    assert index.module_of(str(tmp_path / "helpers.py")) is None
    assert build(files, [callers_of()]) is EMPTY


class _CountingStore:
    def __init__(self) -> None:
        self.entries: "dict[str, object]" = {}
        self.reads = 0

    def get_facts(self, key: str) -> object:
        self.reads += 1
        return self.entries.get(key)

    def put_facts(self, key: str, value: object) -> None:
        self.entries[key] = value


def test_a_warm_run_reads_contributions_instead_of_parsing(tmp_path: Path, monkeypatch) -> None:
    from torchlint.lint.cache import Cache

    files = _write(tmp_path / "src", CALLERS)
    cache = Cache(tmp_path / "cache")
    parsed: "list[str]" = []
    real = queries._parse_contribution

    def counting(path, text, module, focus=None, star_bound=()):  # type: ignore[no-untyped-def]
        parsed.append(module)
        return real(path, text, module, focus, star_bound)

    monkeypatch.setattr(queries, "_parse_contribution", counting)
    cold = build(files, [callers_of((".eval(",))], cache)
    assert parsed == ["main"]  # only the file importing engine is read for calls
    warm = build(files, [callers_of((".eval(",))], cache)
    assert parsed == ["main"]  # nothing parsed again
    assert warm.calls == cold.calls and warm.fingerprint == cold.fingerprint


def test_a_damaged_stored_contribution_is_a_miss(tmp_path: Path) -> None:
    files = _write(tmp_path, CALLERS)
    store = _CountingStore()
    expected = build(files, [callers_of((".eval(",))], store).calls
    for key in store.entries:
        store.entries[key] = {"classes": [], "calls": [["engine.evaluate", "main.py", -1, "main", 1, 0]]}
    assert build(files, [callers_of((".eval(",))], store).calls == expected
    for key in store.entries:
        store.entries[key] = {"classes": "nope"}
    assert build(files, [callers_of((".eval(",))], store).calls == expected


def test_the_digest_of_one_functions_callers_changes_only_with_those_calls() -> None:
    """What a cache entry is keyed by: a lint that asked for `engine.evaluate`'s
    callers depends on those calls, not on another function's."""
    before = index_of_sources({**CALLERS, "other.py": "def g():\n    return 1\n"})
    guarded = CALLERS["main.py"].replace("    evaluate(1)\n", "    pass\nevaluate(1)\n")
    after = index_of_sources({**CALLERS, "main.py": guarded, "other.py": "def g():\n    return 1\n"})
    recorded = before.recording()
    recorded.callers_of("engine.evaluate")
    assert recorded.reads == {"calls:engine.evaluate"}
    assert before.digest_of(recorded.reads) != after.digest_of(recorded.reads)
    assert before.digest_of(["calls:other.g"]) == after.digest_of(["calls:other.g"])


def test_relative_imports_are_made_absolute(tmp_path: Path) -> None:
    package = tmp_path / "pkg" / "sub"
    package.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    assert absolute_import(str(package / "m.py"), 1, "parallel") == "pkg.sub.parallel"
    assert absolute_import(str(package / "m.py"), 2, None) == "pkg"
    assert absolute_import(str(package / "__init__.py"), 1, "x") == "pkg.sub.x"
    assert absolute_import(str(package / "m.py"), 4, None) is None


STAR_PROJECT = {
    "models/__init__.py": "from .fcn import *\nfrom .psp import *\n",
    "models/fcn.py": "import torch\nimport torch.nn as nn\nfrom torch.nn import functional as F\nimport _private\n",
    "models/psp.py": "import numpy as np\n__all__ = ['PSP']\nclass PSP: pass\n",
    "utils/__init__.py": "",
    "utils/tools.py": "from models import *\nimport os\n",
    "train.py": "from models import *\nfrom utils.tools import *\ntorch.load(path)\n",
}


def _write(root: Path, sources: "dict[str, str]") -> "list[Path]":
    files = []
    for name, text in sources.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files.append(path)
    return files


def test_star_exports_follow_star_imports_of_the_project(tmp_path: Path) -> None:
    files = _write(tmp_path, STAR_PROJECT)
    index = build(files, [])  # no rule asks: the star imports still resolve
    assert index is not EMPTY
    assert index.star_export("models", "torch") == "torch"
    assert index.star_export("models", "nn") == "torch.nn"
    assert index.star_export("models", "F") == "torch.nn.functional"
    assert index.star_export("models", "np") is None  # psp.py's __all__ leaves it out
    assert index.star_export("models", "_private") is None  # underscore names are not exported
    assert index.star_export("utils.tools", "torch") == "torch"  # through models, one more level
    assert index.star_export("utils.tools", "os") == "os"


REEXPORT_PROJECT = {
    "common.py": "import torch\nfrom torch.utils.data import DataLoader, Dataset\nfrom torch import load\n",
    "data.py": "from common import DataLoader\nfrom common import load as restore\n",
    "own.py": "from torch.utils.data import DataLoader\nclass DataLoader(DataLoader):\n    pass\n",
    "rebound.py": "from torch import load\nload = None\n",
    "quiet.py": "import torch\nclass Dataset:\n    pass\n",
    "train.py": (
        "from data import DataLoader, restore\nfrom own import DataLoader as Own\nfrom rebound import load\n"
        "from quiet import Dataset\n"
    ),
}


def test_a_name_a_project_module_imports_and_others_import_from_it_resolves(tmp_path: Path) -> None:
    """`from data import DataLoader` where data.py imports it from common.py,
    which imports torch's: the chain ends at torch.  A module that defines
    or assigns the name itself re-exports nothing; a module whose imports do
    not spell the name is not parsed for it (not among the parts)."""
    files = _write(tmp_path, REEXPORT_PROJECT)
    index = build(files, [])
    assert index is not EMPTY
    assert index.named_export("data.DataLoader") == "torch.utils.data.DataLoader"
    assert index.named_export("data.restore") == "torch.load"
    assert index.named_export("own.DataLoader") is None
    assert index.named_export("rebound.load") is None
    assert index.named_export("quiet.Dataset") is None
    assert "quiet" not in index.star_parts and "data" in index.star_parts
    assert index.named_export("missing.DataLoader") is None


def test_a_project_that_re_exports_nothing_keeps_the_empty_index(tmp_path: Path) -> None:
    files = _write(tmp_path, {"models.py": "import torch\nclass Net:\n    pass\n",
                              "train.py": "from models import Net\nimport torch\n"})
    assert build(files, []) is EMPTY


def test_re_exported_torch_names_resolve_in_the_import_table(tmp_path: Path) -> None:
    import libcst as cst

    from torchlint.analysis.names import ImportTable

    files = _write(tmp_path, REEXPORT_PROJECT)
    index = build(files, [])
    module = cst.parse_module(REEXPORT_PROJECT["train.py"] + "DataLoader(ds)\nOwn(ds)\nload(p)\nrestore(p)\n")
    table = ImportTable.from_module(module, str(tmp_path / "train.py"), index)
    assert table.qualified_name(cst.parse_expression("DataLoader")) == "torch.utils.data.DataLoader"
    assert table.qualified_name(cst.parse_expression("restore")) == "torch.load"
    assert table.qualified_name(cst.parse_expression("Own")) == "own.DataLoader"
    assert table.qualified_name(cst.parse_expression("load")) == "rebound.load"
    alone = ImportTable.from_module(module, str(tmp_path / "train.py"))
    assert alone.qualified_name(cst.parse_expression("DataLoader")) == "data.DataLoader"  # no index: as imported


def test_a_star_imported_module_s_own_definition_is_not_an_import(tmp_path: Path) -> None:
    """`from models import *` where models.py imports `load` from torch and
    then defines its own `load`: the star import binds the project's one."""
    files = _write(tmp_path, {"models.py": "from torch import load\ndef load(p):\n    return p\n",
                              "train.py": "from models import *\n"})
    assert build(files, []).star_export("models", "load") is None


def test_a_name_bound_once_to_a_torch_name_is_exported_as_that_name(tmp_path: Path) -> None:
    """`LongTensor = torch.LongTensor` at module level, reached through two
    star imports, is torch's; a name bound twice, or bound and also defined
    by a `def`, or bound to something that is not torch, is not an alias."""
    files = _write(tmp_path, {
        "utils/__init__.py": "from utils.tensors import *\n",
        "utils/tensors.py": (
            "import torch\nimport numpy as np\nLongTensor = torch.LongTensor\n"
            "Double = torch.DoubleTensor\nDouble = torch.FloatTensor\n"
            "def ones(*size):\n    return size\nones = torch.ones\nfloat32 = np.float32\n"
        ),
        "train.py": "from utils import *\nx = LongTensor([1])\n",
    })
    index = build(files, [])
    assert index.star_export("utils", "LongTensor") == "torch.LongTensor"
    assert index.star_export("utils", "Double") is None
    assert index.star_export("utils", "ones") is None
    assert index.star_export("utils", "float32") is None


def test_star_exports_of_a_module_name_two_files_disagree_on(tmp_path: Path) -> None:
    sources = dict(STAR_PROJECT)
    sources["other/__init__.py"] = ""
    sources["other/models/__init__.py"] = "import tensorflow as torch\n"  # `other.models`: no clash
    files = _write(tmp_path, sources)
    clash = tmp_path / "lib" / "models.py"
    clash.parent.mkdir()
    clash.write_text("import tensorflow as torch\n")  # a second top-level `models` module
    assert build(files, []).star_export("models", "torch") == "torch"
    assert build([*files, clash], []).star_export("models", "torch") is None


def test_star_imports_resolve_in_the_import_table(tmp_path: Path) -> None:
    import libcst as cst

    from torchlint.analysis.names import ImportTable

    source = "from models import *\nimport numpy\ntorch.load(p)\nnn.Linear(1, 1)\nnumpy.zeros(1)\n"
    table = ImportTable.from_module(cst.parse_module(source))
    assert table.qualified_name(cst.parse_expression("torch.load")) is None  # no index: unknown
    index = ProjectIndex(star_parts={"models": Exports({"torch": "torch", "nn": "torch.nn"}, (), None)})
    table = ImportTable.from_module(cst.parse_module(source), None, index)
    assert table.qualified_name(cst.parse_expression("torch.load")) == "torch.load"
    assert table.qualified_name(cst.parse_expression("nn.Linear")) == "torch.nn.Linear"
    assert table.qualified_name(cst.parse_expression("numpy.zeros")) == "numpy.zeros"
    assert table.qualified_name(cst.parse_expression("np.zeros")) is None


def test_relative_star_imports_resolve_from_the_files_package(tmp_path: Path) -> None:
    import libcst as cst

    from torchlint.analysis.names import ImportTable

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    source = "from .common import *\ntorch.load(p)\n"
    module = cst.parse_module(source)
    index = ProjectIndex(star_parts={"pkg.common": Exports({"torch": "torch"}, (), None)})
    inside = ImportTable.from_module(module, str(tmp_path / "pkg" / "train.py"), index)
    assert inside.qualified_name(cst.parse_expression("torch.load")) == "torch.load"
    no_path = ImportTable.from_module(module, None, index)
    assert no_path.qualified_name(cst.parse_expression("torch.load")) is None
    outside = ImportTable.from_module(module, str(tmp_path / "train.py"), index)  # no package to be relative to
    assert outside.qualified_name(cst.parse_expression("torch.load")) is None


def test_star_exports_are_read_from_the_store_and_a_damaged_entry_is_a_miss(tmp_path: Path, monkeypatch) -> None:
    files = _write(tmp_path, STAR_PROJECT)
    texts = list(read_sources(files))

    class Store(dict):  # type: ignore[type-arg]
        def get_facts(self, key: str) -> object:
            return self.get(key)

        def put_facts(self, key: str, value: object) -> None:
            self[key] = value

    store = Store()
    first = star_parts(texts, store)
    assert first["models.fcn"].imported["torch"] == "torch" and store
    parses = []
    real_parse = imports.ast.parse
    monkeypatch.setattr(imports.ast, "parse", lambda *a, **k: parses.append(1) or real_parse(*a, **k))
    assert star_parts(texts, store) == first and not parses  # a warm run parses nothing
    for key in store:
        store[key] = {"imported": {"torch": 1}, "stars": [], "public": None}  # not a string: damaged
    assert star_parts(texts, store) == first and parses  # re-parsed, same answer


METHODS = {
    "optim/__init__.py": "",
    "optim/wrap.py": (
        "import functools\n"
        "class Scheduled:\n    def zero_grad(self):\n        pass\n"
        "class Flexible:\n    def zero_grad(self, set_to_none=True, *, foo=1):\n        pass\n"
        "class Forwarding:\n    def zero_grad(self, *args, **kwargs):\n        pass\n"
        "class Wrapped:\n    @functools.wraps(print)\n    def zero_grad(self):\n        pass\n"
        "class Twice:\n    def zero_grad(self, set_to_none=True):\n        pass\n"
        "    def zero_grad(self):\n        pass\n"
        "class Heir(Scheduled):\n    pass\n"
        "def zero_grad(params):\n    pass\n"
    ),
    "other.py": "class Scheduled:\n    def step(self):\n        pass\n",
}


def test_method_shapes_of_project_classes(tmp_path: Path) -> None:
    files = _write(tmp_path, METHODS)
    index = build(files, [method_shapes("zero_grad")])
    scheduled = index.method("optim.wrap.Scheduled", "zero_grad")
    assert scheduled == MethodShape((), 0) and not scheduled.accepts_keyword("set_to_none")
    flexible = index.method("optim.wrap.Flexible", "zero_grad")
    assert flexible == MethodShape(("set_to_none", "foo"), 1)
    assert flexible.accepts_keyword("set_to_none") and not flexible.accepts_keyword("bar")
    forwarding = index.method("optim.wrap.Forwarding", "zero_grad")
    assert forwarding is not None and forwarding.accepts_keyword("set_to_none")
    assert index.method("optim.wrap.Wrapped", "zero_grad") is None  # a decorator may change it
    assert index.method("optim.wrap.Twice", "zero_grad") == MethodShape((), 0)  # the last def counts
    assert index.method("optim.wrap.Heir", "zero_grad") is None  # inherited: not followed
    assert index.method("optim.wrap.Scheduled", "step") is None  # not asked about
    assert index.method("other.Scheduled", "zero_grad") is None


def test_method_shapes_are_cached_and_change_the_fingerprint(tmp_path: Path) -> None:
    files = _write(tmp_path, METHODS)
    store = _CountingStore()
    cold = build(files, [method_shapes("zero_grad")], store)
    assert len(store.entries) == 1  # only the file with a `def zero_grad` was parsed
    for key in store.entries:  # a damaged entry is parsed again
        store.entries[key] = [["optim.wrap.Scheduled", "zero_grad", ["x"], -1, False, False]]
    assert build(files, [method_shapes("zero_grad")], store).methods == cold.methods
    (tmp_path / "optim" / "wrap.py").write_text(
        METHODS["optim/wrap.py"].replace("def zero_grad(self):\n        pass\nclass Flexible",
                                         "def zero_grad(self, set_to_none=False):\n        pass\nclass Flexible"))
    changed = build(files, [method_shapes("zero_grad")], store)
    assert changed.method("optim.wrap.Scheduled", "zero_grad") == MethodShape(("set_to_none",), 1)
    assert changed.digest_of(["methods"]) != cold.digest_of(["methods"])


def test_two_scripts_with_one_module_name_and_different_methods_give_none(tmp_path: Path) -> None:
    files = _write(tmp_path, {
        "a/train.py": "class Opt:\n    def zero_grad(self):\n        pass\n",
        "b/train.py": "class Opt:\n    def zero_grad(self, set_to_none=True):\n        pass\n",
    })
    index = build(files, [method_shapes("zero_grad")])
    assert index.method("train.Opt", "zero_grad") is None


def test_classes_reexported_by_packages_resolve_to_their_definition(tmp_path: Path) -> None:
    files = _write(tmp_path, {
        "pkg/__init__.py": "import os\nfrom .sub import Wrap as Short\n",
        "pkg/sub/__init__.py": "from .impl import Wrap, helper\n",
        "pkg/sub/impl.py": (
            "import torch.nn as nn\n"
            "class Wrap(nn.DataParallel):\n    def zero_grad(self):\n        pass\n"
            "def helper():\n    pass\n"
        ),
        "main.py": "from pkg import Short\nShort(1)\n",
    })
    index = build(files, [subclasses_of("torch.nn.DataParallel"), method_shapes("zero_grad")])
    assert index.reexports == {"pkg.Short": "pkg.sub.impl.Wrap", "pkg.sub.Wrap": "pkg.sub.impl.Wrap"}
    assert index.derives_from("pkg.Short", "torch.nn.DataParallel")
    assert index.method("pkg.sub.Wrap", "zero_grad") == MethodShape((), 0)
    assert index.defined_as("pkg.os") == "pkg.os"  # an import of something else is no re-export


def test_reexports_are_found_on_disk_when_only_some_files_are_linted(tmp_path: Path) -> None:
    """As pre-commit runs: the packages' __init__ files are not among the run's files."""
    files = _write(tmp_path, {
        "pkg/__init__.py": "from .sub import Wrap as Short\n",
        "pkg/sub/__init__.py": "from .impl import Wrap\n",
        "pkg/sub/impl.py": "import torch.nn as nn\nclass Wrap(nn.DataParallel):\n    pass\n",
        "main.py": "from pkg import Short\nShort(1)\n",
    })
    linted = [f for f in files if f.name != "__init__.py"]
    index = build(linted, [subclasses_of("torch.nn.DataParallel")])
    assert index.derives_from("pkg.Short", "torch.nn.DataParallel")


def test_classes_of_modules_the_linted_files_import_are_read_from_disk(tmp_path: Path, monkeypatch) -> None:
    """Linting only `scripts/train.py` (as pre-commit does) still knows the
    project's wrapper classes it imports, through re-exporting packages, but
    no module further than two plain-module imports away."""
    _write(tmp_path, {
        "lib/__init__.py": "from .parallel import Gather\nfrom . import optim\n",
        "lib/parallel/__init__.py": "from .impl import Gather\n",
        "lib/parallel/impl.py": "from .base import Base\nclass Gather(Base):\n    pass\n",
        "lib/parallel/base.py": "import torch.nn as nn\nfrom .far import Far\nclass Base(nn.DataParallel):\n    pass\n",
        "lib/parallel/far.py": "from .farther import Farther\nclass Far:\n    def zero_grad(self):\n        pass\n",
        "lib/parallel/farther.py": "class Farther:\n    def zero_grad(self):\n        pass\n",
        "lib/optim.py": "class Wrapper:\n    def zero_grad(self):\n        pass\n",
        "scripts/train.py": "from lib import Gather, optim\nimport os, numpy\nGather(1)\noptim.Wrapper().zero_grad()\n",
    })
    monkeypatch.chdir(tmp_path)
    index = build([tmp_path / "scripts" / "train.py"], [subclasses_of("torch.nn.DataParallel"), method_shapes("zero_grad")])
    assert index.derives_from("lib.Gather", "torch.nn.DataParallel")  # impl.py and base.py: two hops
    assert index.method("lib.optim.Wrapper", "zero_grad") == MethodShape((), 0)  # `from . import optim`
    assert index.method("lib.parallel.far.Far", "zero_grad") is None  # three plain-module hops away


def test_methods_called_anywhere_in_the_project(tmp_path: Path) -> None:
    files = _write(tmp_path, {
        "fp16.py": "def convert(m):\n    m.weight.data = m.weight.data.half()\n",
        "train.py": "half = 1\nprint(half)\nmodel.float()\n",
    })
    index = build(files, [method_called("half", "bfloat16", "float")])
    without = build(files[1:], [method_called("half", "bfloat16", "float")])
    assert index.calls_method("half") and index.calls_method("float") and not index.calls_method("bfloat16")
    assert not without.calls_method("half")  # a name `half` is no call of a method
    assert index.digest_of(["called"]) != without.digest_of(["called"])


# -- one parse a file, and the per-file part in workers (issue 27) -----------------------

_EVERY_PART = (
    "import torch\n"
    "from lib import helper\n"
    "torch.backends.cudnn.benchmark = True\n"
    "def train(model, loader, opt):\n"
    "    for batch in loader:\n"
    "        model(batch, non_blocking=True).half().backward()\n"
    "    torch.save(torch.nn.Linear(2, 2), 'm.pt')\n"
    "helper()\n"
)


def _every_part_queries() -> List[Any]:
    from torchlint.analysis.queries import keyword_passed, method_called, name_used, summaries, whole_saves

    return [name_used("torch.backends.cudnn.benchmark"), keyword_passed("non_blocking"), method_called("half"),
            summaries(), whole_saves()]


def test_the_index_parses_each_file_once_whatever_asks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Names used, keywords passed, methods called, summaries and saves all
    read the same file: CPython parses it once for all of them."""
    import ast

    (tmp_path / "train.py").write_text(_EVERY_PART)
    (tmp_path / "lib.py").write_text("def helper():\n    pass\n")
    parsed: List[str] = []
    real = ast.parse

    def counted(source: Any, *args: Any, **kwargs: Any) -> Any:
        text = source.decode() if isinstance(source, bytes) else str(source)
        parsed.append("train.py" if "non_blocking" in text else "other")
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counted)
    index = build(sorted(tmp_path.glob("*.py")), _every_part_queries())
    assert index.keywords == {"non_blocking"} and index.called == {"half"}
    assert index.used == {"torch.backends.cudnn.benchmark"} and index.whole_saves
    assert index.summaries is not None
    assert parsed.count("train.py") == 1


def test_the_per_file_part_in_worker_processes_gives_the_same_index(tmp_path: Path) -> None:
    from torchlint.lint.pool import each_in_workers

    for number in range(6):
        (tmp_path / f"m{number}.py").write_text(_EVERY_PART.replace("helper", f"helper{number}"))
    (tmp_path / "lib.py").write_text("".join(f"def helper{n}():\n    pass\n" for n in range(6)))
    files = sorted(tmp_path.glob("*.py"))
    assert each_in_workers(2, 3) is None and each_in_workers(1, 100) is None  # too few to pay, or one job
    each = each_in_workers(2, len(files))
    assert each is not None
    pids = each(lambda index: os.getpid(), len(files))
    assert os.getpid() not in pids
    assert build(files, _every_part_queries(), each=each) == build(files, _every_part_queries())


def test_a_cold_run_parses_each_file_with_ast_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index's parse of a file also makes its pre-check summary
    (``ProjectIndex.prechecks``): the lint does not parse it again."""
    import ast

    from torchlint.lint.runner import cached_run, lint_file
    from torchlint.lint.settings import Settings

    (tmp_path / "train.py").write_text(_EVERY_PART + "x = torch.zeros(3).cuda()\n")
    (tmp_path / "lib.py").write_text("def helper():\n    pass\n")
    parsed: List[str] = []
    real = ast.parse

    def counted(source: Any, *args: Any, **kwargs: Any) -> Any:
        text = source.decode() if isinstance(source, bytes) else str(source)
        if "non_blocking" in text:
            parsed.append("train.py")
        return real(source, *args, **kwargs)

    monkeypatch.chdir(tmp_path)
    settings = Settings(select=("ALL",), root=tmp_path)
    files = [Path("lib.py"), Path("train.py")]
    before = cached_run(files, lambda _: settings, lint_file, cache=None)
    monkeypatch.setattr(ast, "parse", counted)
    outcomes = cached_run(files, lambda _: settings, lint_file, cache=None)
    assert [o.diagnostics for o in outcomes] == [o.diagnostics for o in before]
    assert any(o.diagnostics for o in outcomes)
    assert parsed == ["train.py"]
