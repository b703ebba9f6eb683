"""The GPU-throughput rules of issue 14 (TL402-TL404, TL602-TL604, TL606):
the project-wide "setting present anywhere" fact, the workload facts the
suggestions decide from, and behaviour the examples and fixtures do not show."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner

from torchlint.analysis import Facts
from torchlint.analysis.queries import build, name_used
from torchlint.analysis.mentions import names_used
from torchlint.interfaces.cli import main
from torchlint.lint.engine import lint_source
from torchlint.lint.settings import settings_from_table

TRAIN = textwrap.dedent(
    """
    import torch
    from torch import nn

    model = nn.Conv2d(3, 8, 3).cuda()
    for x in loader:
        model(x.cuda()).sum().backward()
        optimizer.step()
    """
)


def _codes(source: str, select: str, path: str = "train.py") -> list:
    config = settings_from_table({"select": [select]}, Path(path)).lint_config(Path(path))
    return [d.code for d in lint_source(textwrap.dedent(source), path, config)]


# -- the project-wide fact ---------------------------------------------------------------


def test_names_used_resolve_through_imports_not_words() -> None:
    wanted = frozenset({"torch.backends.cudnn.benchmark", "torch.compile"})
    assert names_used("import torch.backends.cudnn as cudnn\ncudnn.benchmark = True\n", wanted) == {
        "torch.backends.cudnn.benchmark"
    }
    assert names_used("def f():\n    from torch import compile as c\n    return c\n", wanted) == {"torch.compile"}
    # Not torch's: a local object called cudnn, and a word in a string or comment.
    assert names_used("cudnn = Config()\ncudnn.benchmark = True  # torch.compile\n", wanted) == set()
    assert names_used("def f(:\n", wanted) == set()


def test_prepare_records_the_names_rules_ask_about(tmp_path: Path) -> None:
    helper = tmp_path / "setup_helpers.py"
    helper.write_text("import torch\ndef fast():\n    torch.backends.cudnn.benchmark = True\n")
    other = tmp_path / "train.py"
    other.write_text(TRAIN)
    index = build([helper, other], [name_used("torch.backends.cudnn.benchmark", "torch.compile")])
    assert index.uses("torch.backends.cudnn.benchmark")
    assert not index.uses("torch.compile")
    assert index.fingerprint != build([other], [name_used("torch.backends.cudnn.benchmark")]).fingerprint


def test_a_suggestion_is_silent_when_another_file_of_the_project_makes_the_setting(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text('if __name__ == "__main__":\n    pass\n' + TRAIN)
    runner = CliRunner()
    args = ["check", "--no-cache", "-j", "1", "--select", "TL604,TL403,TL602,TL404,TL603", "--output-format",
            "concise", str(tmp_path)]
    before = runner.invoke(main, args)
    assert before.exit_code == 1, before.output
    assert {"TL403", "TL404", "TL602", "TL603", "TL604"} <= {c for c in before.output.split() if c.startswith("TL")}
    (tmp_path / "utils.py").write_text(
        "import torch\nfrom torch.backends import cudnn\n"
        "def setup(model):\n    cudnn.benchmark = True\n    torch.set_float32_matmul_precision('high')\n"
        "    return torch.compile(model.to(memory_format=torch.channels_last))\n"
        "amp = torch.autocast\n"
    )
    after = runner.invoke(main, args)
    assert after.exit_code == 0, after.output


# -- the workload facts ------------------------------------------------------------------


def _workload(source: str):
    return Facts.of_module(cst.parse_module(textwrap.dedent(source))).workload


def test_workload_finds_the_step_loop_not_the_epoch_loop() -> None:
    work = _workload(
        """
        import torch
        def epoch(loader):
            for x in loader:
                model(x).sum().backward()
                optimizer.step()
        for e in range(3):
            epoch(loader)
        """
    )
    assert work.step_loop is not None and isinstance(work.step_loop.node, cst.For)
    assert isinstance(work.step_loop.node.target, cst.Name) and work.step_loop.node.target.value == "x"
    assert work.cuda is None and work.convolution is None and work.entry_point


def test_cuda_and_convolutions_come_from_torch_not_from_names() -> None:
    work = _workload(
        """
        import torch
        from torchvision import models
        cuda = Conv2d = object()
        net = models.resnet50()
        """
    )
    assert work.convolution is not None and work.cuda is None
    assert _workload('import torch\nx = torch.zeros(1, device="cuda:1")\n').cuda is not None
    assert _workload("import torch\nok = torch.cuda.is_available()\n").cuda is not None
    assert _workload('import torch\nname = "cudax"\n').cuda is None


def test_test_files_get_no_suggestions() -> None:
    assert _codes(TRAIN, "TL602") == ["TL602"]
    assert _codes(TRAIN, "TL602", path="test_train.py") == []


# -- TL402 -----------------------------------------------------------------------------


def test_manual_attention_needs_the_values_product_and_torch_two() -> None:
    source = """
        import torch
        def attention(q, k, v):
            attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
            return attn @ v
        """
    assert _codes(source, "TL402") == ["TL402"]
    assert _codes(source.replace("return attn @ v", "return attn.sum(-1)"), "TL402") == []
    config = settings_from_table({"select": ["TL402"], "torch-version": "1.13"}, Path("m.py")).lint_config(Path("m.py"))
    assert lint_source(textwrap.dedent(source), "m.py", config) == []


def test_manual_attention_probabilities_passed_to_an_unknown_call_are_left_alone() -> None:
    assert _codes(
        """
        import torch
        def attention(q, k, v, hook):
            attn = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
            hook(attn)
            return attn @ v
        """,
        "TL402",
    ) == []


# -- TL606 -----------------------------------------------------------------------------


def test_float64_metric_tensors_are_not_reported_but_a_batch_is() -> None:
    source = """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(data)
        total = torch.zeros(3, device="cuda").double()
        for batch in tqdm(loader):
            out = model(batch.cuda().double())
        """
    assert _codes(source, "TL606") == ["TL606"]


def test_a_loop_that_only_differentiates_is_not_training() -> None:
    profiler = """
        import torch
        model = torch.nn.Conv2d(3, 3, 3).cuda()
        for _ in range(10):
            model(x.cuda()).sum().backward()
        """
    assert _codes(profiler, "TL602") == []
    stepped = profiler.replace(".backward()\n", ".backward()\n            optimizer.step()\n")
    assert "optimizer.step()" in stepped
    assert _codes(stepped, "TL602") == ["TL602"]


@pytest.mark.parametrize(
    "guard, runs",
    [('if __name__ == "__main__":', True), ('if "__main__" == __name__:', True),
     ('if __name__ == "worker":', False), ('if __name__ != "__main__":', False)],
)
def test_a_file_runs_as_a_program_under_the_one_main_guard_fact(guard: str, runs: bool) -> None:
    # The same test as TL201's import-time check and TL303's debug guards (analysis/import_time.py).
    work = _workload(f"import torch\ndef main():\n    pass\n{guard}\n    main()\n")
    assert work.entry_point is runs
