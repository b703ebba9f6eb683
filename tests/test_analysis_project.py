"""The project index: class hierarchy and cross-module calls, read with ast."""

from __future__ import annotations

from pathlib import Path

from torchlint.analysis import project
from torchlint.analysis.project import build_index, index_of_sources, module_name

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


def test_relative_imports_resolve() -> None:
    index = index_of_sources({
        "pkg/__init__.py": "",
        "pkg/a.py": "import torch\nclass A(torch.nn.DataParallel):\n    pass\n",
        "pkg/b.py": "from .a import A\nclass B(A):\n    pass\n",
    })
    assert "pkg.b.B" in index.subclasses_of("torch.nn.DataParallel")


def test_prepare_installs_only_when_needed(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("import torch\nclass P(torch.nn.DataParallel):\n    pass\n")
    try:
        assert project.prepare([path], []) is project.EMPTY
        assert project.current().classes == {}
        built = project.prepare([path], ["torch.nn.DataParallel"])
        assert project.current() is built and "m.P" in built.classes
        assert built.fingerprint != project.EMPTY.fingerprint
    finally:
        project.install(project.EMPTY)


def test_hierarchy_follows_subclasses_through_files_that_never_name_the_base(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import torch\nclass Wrap(torch.nn.DataParallel):\n    pass\n")
    (tmp_path / "b.py").write_text("from a import Wrap\nclass Deeper(Wrap):\n    pass\n")
    (tmp_path / "c.py").write_text("class Unrelated:\n    pass\n")
    index = project.build_hierarchy(sorted(tmp_path.glob("*.py")), ["torch.nn.DataParallel"])
    assert set(index.classes) == {"a.Wrap", "b.Deeper"}


def test_tl501_reports_data_parallel_subclasses_in_the_file_and_across_files() -> None:
    from torchlint.engine import LintConfig, lint_source
    from torchlint.registry import by_code_or_name

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
    try:
        project.install(index_of_sources({"wraps.py": local}))
        assert [d.start.line for d in lint_source(user, "use.py", config)] == [2]
    finally:
        project.install(project.EMPTY)


def test_index_skips_fifos_and_missing_files(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "a.py").write_text("import torch\nclass W(torch.nn.DataParallel):\n    pass\n")
    files = [tmp_path / "pipe.py", tmp_path / "missing.py", tmp_path / "a.py"]
    assert set(project.build_hierarchy(files, ["torch.nn.DataParallel"]).classes) == {"a.W"}


def test_imports_inside_functions_do_not_resolve_module_level_bases() -> None:
    index = index_of_sources({
        "m.py": (
            "def setup():\n    from torch.nn import DataParallel\n"
            "class Mine(DataParallel):\n    pass\n"
        ),
    })
    assert index.subclasses_of("torch.nn.DataParallel") == frozenset()
