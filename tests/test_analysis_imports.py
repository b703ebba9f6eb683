"""Import resolution and the index's answers: right (Python's last binding
wins), linear in the project's imports, and never shared between runs."""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Tuple

import pytest

from torchlint.analysis.imports import module_imports, reexports, star_parts
from torchlint.analysis.index import ProjectIndex
from torchlint.analysis.queries import build, subclasses_of


def _write(root: Path, sources: Dict[str, str]) -> List[Path]:
    files = []
    for name, text in sources.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files.append(path)
    return files


# -- 25.11: of two imports of one name, the later one is the binding ---------------------


def test_the_last_import_of_a_name_is_its_binding() -> None:
    import ast

    tree = ast.parse("import numpy as torch\nimport torch\ntry:\n    from a import x\nexcept ImportError:\n"
                     "    from b import x\nfrom c import y\nfrom d import y\n")
    table = module_imports(tree, "m", False)
    assert table == {"torch": "torch", "x": "b.x", "y": "d.y"}


def test_a_package_importing_a_name_twice_reexports_the_last(tmp_path: Path) -> None:
    files = _write(tmp_path, {
        "pkg/__init__.py": "from .old import Wrap\nfrom .new import Wrap\n",
        "pkg/old.py": "class Wrap:\n    pass\n",
        "pkg/new.py": "import torch.nn as nn\nclass Wrap(nn.DataParallel):\n    pass\n",
        "main.py": "from pkg import Wrap\nWrap(1)\n",
    })
    index = build(files, [subclasses_of("torch.nn.DataParallel")])
    assert index.defined_as("pkg.Wrap") == "pkg.new.Wrap"
    assert index.derives_from("pkg.Wrap", "torch.nn.DataParallel")


def test_a_star_imported_module_binding_a_name_twice_exports_the_last(tmp_path: Path) -> None:
    files = _write(tmp_path, {
        "common.py": "import numpy as torch\nimport torch\nimport torch.nn as nn\nfrom torch import nn\n",
        "train.py": "from common import *\ntorch.load(p)\n",
    })
    index = build(files, [])
    assert index.star_export("common", "torch") == "torch"
    assert index.star_export("common", "nn") == "torch.nn"


# -- 25.6: linear in the project's imports ------------------------------------------------


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Fail (rather than hang) when the body uses more than ``seconds`` of CPU time
    (CPU, not wall time: other work on a loaded machine must not fail it)."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"took longer than {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _timed(action: Callable[[], object]) -> float:
    """CPU seconds of ``action`` (wall time would measure the machine's load)."""
    start = time.process_time()
    action()
    return time.process_time() - start


def _star_lattice(width: int, depth: int) -> Dict[str, str]:
    """``depth`` layers of ``width`` modules, each star-importing every module
    of the layer below: the number of paths grows as width ** depth."""
    sources: Dict[str, str] = {}
    for layer in range(depth):
        for i in range(width):
            below = "".join(f"from m{layer + 1}_{j} import *\n" for j in range(width)) if layer + 1 < depth else ""
            sources[f"m{layer}_{i}.py"] = f"{below}import os as name{layer}_{i}\n"
    sources["train.py"] = "".join(f"from m0_{i} import *\n" for i in range(width)) + "torch.load(p)\n"
    return sources


def test_star_import_resolution_is_linear_in_the_star_imports(tmp_path: Path) -> None:
    """68 tiny modules that star-import each other by layers: every name is
    resolved with one walk of the modules, not one per path (there are 4 ** 17)."""
    files = _write(tmp_path, _star_lattice(4, 17))
    with _deadline(20):
        index = build(files, [])
        elapsed = _timed(lambda: [index.star_export(f"m0_{i}", f"name{d}_{i}") for d in range(17) for i in range(4)])
    assert index.star_export("m0_0", "name16_3") == "os"  # found through 16 layers
    assert index.star_export("m0_0", "missing") is None
    assert elapsed < 5, elapsed  # milliseconds; a walk per path took minutes


def _subclass_chain(count: int) -> Dict[str, str]:
    """A package re-exporting a chain of ``count`` modules, each defining a
    subclass of the one before (the first derives from DataParallel)."""
    sources = {"pkg/__init__.py": "".join(f"from .m{i} import C{i}\n" for i in range(count))}
    sources["pkg/m0.py"] = "import torch.nn as nn\nclass C0(nn.DataParallel):\n    pass\n"
    for i in range(1, count):
        sources[f"pkg/m{i}.py"] = f"from .m{i - 1} import C{i - 1}\nclass C{i}(C{i - 1}):\n    pass\n"
    sources["train.py"] = f"from pkg import C{count - 1}\nmodel = C{count - 1}(net)\n"
    return sources


def test_a_long_subclass_chain_costs_linear_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check train.py` over a package that re-exports an 800-module chain
    of subclasses: the index, the hierarchy and the re-exports are read in
    time linear in the chain (it took 91 s, cubic, before)."""
    small, large = tmp_path / "small", tmp_path / "large"
    _write(small, _subclass_chain(100))
    _write(large, _subclass_chain(800))
    times = {}
    for root, size in ((small, 100), (large, 800)):
        monkeypatch.chdir(root)
        with _deadline(60):
            times[size] = _timed(lambda: build([root / "train.py"], [subclasses_of("torch.nn.DataParallel")]))
        index = build([root / "train.py"], [subclasses_of("torch.nn.DataParallel")])
        assert index.derives_from(f"pkg.C{size - 1}", "torch.nn.DataParallel")
        assert len(index.subclasses_of("torch.nn.DataParallel")) == size
    # Eight times the chain: linear costs about eight times as much; quadratic 64, cubic 512.
    assert times[800] < 24 * times[100] + 1.0, times


def test_reexports_of_a_long_chain_are_followed_in_linear_time() -> None:
    """Packages re-exporting one class through 3,000 links: each package
    file is searched and parsed once, and the chain resolves to its end."""
    count = 3000
    texts: List[Tuple[Path, bytes]] = [
        (Path("pkg") / f"a{i}" / "__init__.py", f"from ..a{i + 1} import Wrap\n".encode()) for i in range(count)
    ]
    texts.append((Path("pkg") / f"a{count}" / "__init__.py", b"from .impl import Wrap\n"))
    with _deadline(30):
        found = reexports(texts, [f"pkg.a{count}.impl.Wrap"], None, module_of=lambda path: f"pkg.{path.parent.name}")
    assert found["pkg.a0.Wrap"] == f"pkg.a{count}.impl.Wrap"
    assert len(found) == count + 1


def test_subclasses_are_answered_once_per_base() -> None:
    from torchlint.analysis.index import ClassInfo

    count = 3000
    classes = {f"m.C{i}": ClassInfo(f"m.C{i}", "m.py", i, (f"m.C{i - 1}" if i else "torch.nn.DataParallel",))
               for i in range(count)}
    index = ProjectIndex(classes)
    with _deadline(5):  # milliseconds; one walk up the chain per question took 15 s
        assert all(index.derives_from(name, "torch.nn.DataParallel") for name in classes)  # 3,000 questions
    assert len(index.subclasses_of("torch.nn.DataParallel")) == count


def test_star_parts_read_each_module_once(tmp_path: Path) -> None:
    files = _write(tmp_path, _star_lattice(4, 17))
    texts = [(path, path.read_bytes()) for path in files]
    parts = star_parts(texts)
    assert len(parts) == 68 and parts["m0_0"].stars == ("m1_0", "m1_1", "m1_2", "m1_3")


# -- 25.9: no global index: each lint sees the index it was given --------------------------


def test_two_editor_lints_at_once_each_see_their_own_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The editor lints on its event loop and on a worker thread at once;
    each document must be judged with its own project's index (before, the
    index was one global that the other lint overwrote in between)."""
    pytest.importorskip("pygls")
    import torchlint.lint.engine
    from torchlint.interfaces.lsp import TorchlintServer

    one, other = tmp_path / "one", tmp_path / "other"
    _write(one, {"nets.py": "import torch.nn as nn\nclass Wrap(nn.DataParallel):\n    pass\n"})
    _write(other, {"nets.py": "import torch.nn as nn\nclass Wrap(nn.Module):\n    pass\n"})
    text = "import torch\nfrom nets import Wrap\nmodel = Wrap(torch.nn.Linear(2, 2))\n"
    for root in (one, other):
        (root / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL501"]\n')
        (root / "train.py").write_text(text)
    server = TorchlintServer()
    real = torchlint.lint.engine.lint_source
    both_prepared = threading.Barrier(2, timeout=20)

    def lint_after_both_prepared(*args, **kwargs):  # type: ignore[no-untyped-def]
        both_prepared.wait()  # both lints have built (and, before, installed) their index
        return real(*args, **kwargs)

    monkeypatch.setattr(torchlint.lint.engine, "lint_source", lint_after_both_prepared)
    results: Dict[str, object] = {}

    def lint(root: Path) -> None:
        results[root.name] = server._lint_text((root / "train.py").as_uri(), text, 1)

    for _ in range(3):
        for order in ((one, other), (other, one)):
            worker = threading.Thread(target=lint, args=(order[0],))
            worker.start()
            lint(order[1])
            worker.join()
            found = {name: [d.code for d in getattr(result, "diagnostics", ())] for name, result in results.items()}
            assert found == {"one": ["TL501"], "other": []}, found


def test_namespace_packages_give_modules_their_other_names(tmp_path: Path) -> None:
    """Folders without `__init__.py` under the working folder prefix a
    module's name (as Python 3 imports them); a name two files could have, a
    module's own name, and folders above the working folder do not."""
    from torchlint.analysis.imports import namespace_aliases

    files = _write(tmp_path / "work", {
        "utils/data_utils.py": "",          # utils.data_utils, not above work/
        "exp/models/net.py": "",            # models.net, exp.models.net
        "pkg/__init__.py": "", "pkg/mod.py": "",  # a package: its own name only
        "a/common/io.py": "", "b/common/io.py": "",  # common.io is ambiguous: left out
        "tools/utils.py": "", "utils.py": "",  # tools.utils is fine; `utils` is a module's own name
    })
    texts = [(path, b"") for path in files]
    aliases = namespace_aliases(texts, top=tmp_path / "work")
    assert aliases["utils.data_utils"] == "data_utils"
    assert aliases["models.net"] == "net" and aliases["exp.models.net"] == "net"
    assert aliases["a.common.io"] == "io" and aliases["b.common.io"] == "io"
    assert "common.io" not in aliases
    assert aliases["tools.utils"] == "utils"
    assert not any(name.startswith(("work.", "pkg")) for name in aliases)


def test_a_folder_a_file_puts_on_sys_path_names_its_modules_from_there(tmp_path: Path) -> None:
    """``sys.path.append("core")`` (or ``insert(0, ...)``, or joined to the file's own folder): the
    modules under that folder, relative to the file, are importable by their names from there; a
    folder given by a variable, a name two files could have, and a module's own name are not."""
    from torchlint.analysis.imports import module_name, path_aliases

    files = _write(tmp_path, {
        "core/__init__.py": "", "core/datasets.py": "", "core/utils/__init__.py": "", "core/utils/flow.py": "",
        "lib/__init__.py": "", "lib/models.py": "", "lib/datasets.py": "",
        "tools/helpers.py": "",
        "train.py": "import sys\nsys.path.append('core')\nimport datasets\n",
        "evaluate.py": "import sys, os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))  # models\n",
        "other.py": "import sys\nsys.path.append(folder)\nsys.path.append('tools' + suffix)\n",
    })
    texts = [(path, path.read_bytes()) for path in files]
    aliases = path_aliases(texts, module_name)
    assert aliases["utils.flow"] == "core.utils.flow"
    assert aliases["models"] == "lib.models"
    assert "datasets" not in aliases  # core/datasets.py and lib/datasets.py could both be it
    assert "helpers" not in aliases  # `tools` is put on the path only by an expression
    assert aliases.get("core") is None and "train" not in aliases  # own names stay their own


def test_a_script_in_a_package_folder_imports_its_siblings_by_their_bare_names(tmp_path: Path) -> None:
    """``python face_verify.py`` puts the script's folder first on sys.path: in a folder with an
    ``__init__.py``, its siblings are importable by their bare names as well; a folder without a
    script (``lib``) gives no such names, and neither does a script whose folder is no package."""
    from torchlint.analysis.imports import module_name, script_aliases
    from torchlint.analysis.summaries import canonical_name

    files = _write(tmp_path, {
        "app/__init__.py": "", "app/learner.py": "", "app/data/__init__.py": "", "app/data/loader.py": "",
        "app/face_verify.py": "from learner import Learner\n\nif __name__ == '__main__':\n    pass\n",
        "lib/__init__.py": "", "lib/models.py": "",
        "tools/run.py": "if __name__ == \"__main__\":\n    pass\n", "tools/helper.py": "",
    })
    texts = [(path, path.read_bytes()) for path in files]
    aliases = script_aliases(texts, module_name)
    assert aliases["learner"] == "app.learner"
    assert aliases["data.loader"] == "app.data.loader"
    assert "models" not in aliases and "helper" not in aliases
    # A method of a class in an aliased module resolves through the longest aliased prefix.
    assert canonical_name("learner.Learner.infer", aliases) == "app.learner.Learner.infer"
    assert canonical_name("torch.nn.Linear", aliases) == "torch.nn.Linear"


def test_a_star_import_binds_the_project_modules_own_definitions_too(tmp_path: Path) -> None:
    """``from utils import *`` then ``evaluate(...)``: the project's function, as Python binds it
    (a later star import wins; a name with an underscore, or left out of ``__all__``, is not bound)."""
    from torchlint.analysis.imports import star_lookup
    from torchlint.analysis.summaries import star_aliases

    files = _write(tmp_path, {
        "base.py": "def evaluate(m):\n    pass\n\ndef shared():\n    pass\n",
        "utils.py": "from base import *\n\ndef shared():\n    pass\n\ndef _hidden():\n    pass\n",
        "listed.py": "__all__ = ['kept']\n\ndef kept():\n    pass\n\ndef dropped():\n    pass\n",
        "train.py": "from listed import *\nfrom utils import *\nevaluate(1)\nshared()\nkept()\n",
    })
    texts = [(path, path.read_bytes()) for path in files]
    parts = star_parts(texts)
    assert star_lookup(parts, "utils", "evaluate") is None  # a definition, not an import
    assert star_lookup(parts, "utils", "evaluate", definitions=True) == "base.evaluate"
    assert star_lookup(parts, "utils", "shared", definitions=True) == "utils.shared"
    assert star_lookup(parts, "utils", "_hidden", definitions=True) is None
    assert star_lookup(parts, "listed", "dropped", definitions=True) is None
    aliases = star_aliases([(path, data, path.stem) for path, data in texts], parts)
    assert {k: v for k, v in aliases.items() if k.startswith("train.")} == {
        "train.*.evaluate": "base.evaluate", "train.*.shared": "utils.shared", "train.*.kept": "listed.kept",
    }
    index = build(files, [])
    assert index.star_binding("utils", "evaluate") == "base.evaluate"
    assert index.star_export("utils", "evaluate") is None
