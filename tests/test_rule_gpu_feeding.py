"""The GPU-feeding rules of issue 14 (TL102, TL103, TL202, TL203, TL504, TL505),
the loader facts they share, and TL201's new options."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import List

import libcst as cst
import pytest

import torchlint
from torchlint.analysis import Facts
from torchlint.analysis.queries import build, index_of_sources, keyword_passed
from torchlint.lint.settings import ConfigError, Settings, load_config_file


def lines(code: str, source: str, **options: object) -> List[int]:
    settings = Settings(select=(code,), rule_options={code: dict(options)} if options else {})
    found = torchlint.check_source(textwrap.dedent(source), "train.py", settings)
    return [d.start.line for d in found if d.code == code]


def fixed(code: str, source: str, **options: object) -> str:
    settings = Settings(select=(code,), rule_options={code: dict(options)} if options else {})
    return torchlint.fix_source(textwrap.dedent(source), "train.py", settings, unsafe=True).source


# -- loader facts ------------------------------------------------------------------------


def test_batches_are_followed_through_a_function_parameter_and_self_attributes() -> None:
    source = textwrap.dedent(
        """
        import torch
        from torch.utils.data import DataLoader
        class Trainer:
            def __init__(self, data):
                self.loader = DataLoader(data, pin_memory=True)
            def fit(self):
                for batch in self.loader:
                    batch.cuda()
        def run(loader):
            for x, y in enumerate(loader):
                y.to("cuda")
        run(DataLoader(other))
        """
    )
    module = cst.parse_module(source)
    loaders = Facts.of_module(module).loaders
    moved = sorted(module.code_for_node(move.call) for move in loaders.moves())
    assert moved == ['batch.cuda()', 'y.to("cuda")']
    assert all(len(move.loaders) == 1 for move in loaders.moves())


def test_a_reused_module_level_name_takes_the_binding_of_its_own_loop() -> None:
    source = textwrap.dedent(
        """
        from torch.utils.data import DataLoader
        first = DataLoader(a, pin_memory=True)
        second = DataLoader(b)
        for x in first:
            x = x.cuda()
        for x in second:
            x = x.cuda()
        """
    )
    module = cst.parse_module(source)
    loaders = Facts.of_module(module).loaders
    first, second = loaders.constructors
    assert [set(move.loaders) for move in loaders.moves()] == [{first}, {second}]


def test_an_assignment_in_a_sibling_branch_does_not_hide_the_loop_target() -> None:
    source = textwrap.dedent(
        """
        from torch.utils.data import DataLoader
        for x in DataLoader(d, pin_memory=True):
            if fast:
                x = x.cuda(non_blocking=True)
            else:
                x = x.to("cuda")
        """
    )
    module = cst.parse_module(source)
    moves = list(Facts.of_module(module).loaders.moves())
    assert [module.code_for_node(move.call) for move in moves] == ["x.cuda(non_blocking=True)", 'x.to("cuda")']


def test_a_value_computed_from_the_batch_is_not_the_batch() -> None:
    source = "from torch.utils.data import DataLoader\nfor x in DataLoader(d):\n    x.float().cuda()\n"
    assert list(Facts.of_module(cst.parse_module(source)).loaders.moves()) == []


# -- TL102 -----------------------------------------------------------------------------------


def test_tl102_reports_each_blocking_copy_of_a_pinned_batch_and_adds_non_blocking() -> None:
    source = """
    from torch.utils.data import DataLoader
    loader = DataLoader(ds, pin_memory=True)
    for images, labels in loader:
        images, labels = images.cuda(), labels.to(device="cuda:0")
    """
    assert lines("TL102", source) == [5, 5]
    assert "images.cuda(non_blocking=True), labels.to(device=\"cuda:0\", non_blocking=True)" in fixed("TL102", source)


@pytest.mark.parametrize(
    "loader, copy",
    [
        ("DataLoader(ds, pin_memory=flag)", "x = x.cuda()"),  # variable pin_memory
        ("DataLoader(ds, pin_memory=True)", "x = x.to('cpu')"),  # to the host
        ("DataLoader(ds, pin_memory=True)", "y = x.cpu()"),  # to the host
        ("DataLoader(ds, pin_memory=True)", "y = x.cuda(non_blocking=False)"),  # deliberate
        ("DataLoader(ds, pin_memory=True)", "y = x.cuda(0, True)"),  # positional non_blocking
        ("DataLoader(ds, pin_memory=True)", "y = x.cuda(); x.add_(1)"),  # source modified in place
        ("DataLoader(ds, pin_memory=True)", "y = x.cuda(); x[0] = 0"),  # source modified in place
        ("DataLoader(ds)", "x = x.cuda()"),  # not pinned
    ],
)
def test_tl102_leaves_alone(loader: str, copy: str) -> None:
    source = f"from torch.utils.data import DataLoader\nfor x in {loader}:\n    {copy}\n"
    assert lines("TL102", source) == []


def test_tl102_a_source_rebound_by_the_copy_may_be_modified_afterwards() -> None:
    source = "from torch.utils.data import DataLoader\nfor x in DataLoader(ds, pin_memory=True):\n    x = x.cuda()\n    x.add_(1)\n"
    assert lines("TL102", source) == [3]


# -- TL202 -----------------------------------------------------------------------------------


def test_tl202_reports_missing_and_false_pin_memory_when_batches_go_to_cuda() -> None:
    source = """
    import torch
    from torch.utils.data import DataLoader
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train = DataLoader(a, num_workers=4)
    val = DataLoader(b, num_workers=4, pin_memory=False)
    for loader in (train, val):
        pass
    def step(loader):
        for x, y in loader:
            x = x.to(device)
    step(train)
    step(val)
    """
    assert lines("TL202", source) == [5, 6]
    result = fixed("TL202", source)
    assert "DataLoader(a, num_workers=4, pin_memory=True)" in result
    assert "DataLoader(b, num_workers=4, pin_memory=True)" in result


@pytest.mark.parametrize(
    "source",
    [
        # **kwargs may carry it
        "from torch.utils.data import DataLoader\nfor x in DataLoader(ds, **kw):\n    x.cuda()\n",
        # a variable value
        "from torch.utils.data import DataLoader\nfor x in DataLoader(ds, pin_memory=p):\n    x.cuda()\n",
        # no CUDA use in the file
        "import torch\nfrom torch.utils.data import DataLoader\nd = torch.device(name)\n"
        "for x in DataLoader(ds):\n    x.to(d)\n",
        # batches never moved
        "import torch\nfrom torch.utils.data import DataLoader\nfor x in DataLoader(ds):\n    print(x)\ntorch.cuda.init()\n",
    ],
)
def test_tl202_leaves_alone(source: str) -> None:
    assert lines("TL202", source) == []


# -- TL203 -----------------------------------------------------------------------------------

EPOCHS = """
from torch.utils.data import DataLoader
loader = DataLoader(ds, num_workers={workers})
for epoch in range(3):
    for x in loader:
        pass
"""


@pytest.mark.parametrize("call, advice, fixed_call", [
    ("make(data)", "pass `pin=True` here", "make(data, pin=True)"),
    ("make(data, pin=False)", "pass `True` where this call passes `False`", "make(data, pin=True)"),
])
def test_tl202_at_a_helpers_call_names_what_that_call_can_change(call: str, advice: str, fixed_call: str) -> None:
    """The helper hands its own parameter `pin` to `pin_memory`: the advice
    names `pin` (or the `False` the call passes), as the fix does, never a
    `pin_memory=` the helper does not take."""
    source = f"""
        import torch
        from torch.utils.data import DataLoader
        def make(data, pin=False):
            return DataLoader(data, batch_size=8, pin_memory=pin)
        loader = {call}
        for x in loader:
            x = x.cuda()
    """
    settings = Settings(select=("TL202",))
    (found,) = torchlint.check_source(textwrap.dedent(source), "train.py", settings)
    assert found.message.endswith(advice), found.message
    assert f"loader = {fixed_call}" in fixed("TL202", source)


def test_tl203_reports_a_loader_iterated_every_epoch_and_writes_the_guarded_flag_for_a_variable() -> None:
    assert lines("TL203", EPOCHS.format(workers=4)) == [3]
    assert "num_workers=4, persistent_workers=True)" in fixed("TL203", EPOCHS.format(workers=4))
    assert "num_workers=n, persistent_workers=n > 0)" in fixed("TL203", EPOCHS.format(workers="n"))
    assert lines("TL203", EPOCHS.format(workers=0)) == []
    assert lines("TL203", EPOCHS.format(workers="count()")) == [3]
    assert "persistent_workers" not in fixed("TL203", EPOCHS.format(workers="count()"))


def test_tl203_is_quiet_when_another_file_of_the_project_sets_persistent_workers(tmp_path: Path) -> None:
    source = textwrap.dedent(EPOCHS.format(workers=4))
    elsewhere = "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=2, persistent_workers=False)\n"
    settings = Settings(select=("TL203",))
    unrelated = index_of_sources({"other.py": "x = 1\n"})
    assert [d.code for d in torchlint.check_source(source, "train.py", settings, unrelated)] == ["TL203"]
    files = [tmp_path / "train.py", tmp_path / "data.py"]
    files[0].write_text(source)
    files[1].write_text(elsewhere)
    built = build(files, [keyword_passed("persistent_workers")])
    assert built.passes_keyword("persistent_workers")
    assert torchlint.check_source(source, "train.py", settings, built) == []
    assert not build(files[:1], [keyword_passed("persistent_workers")]).passes_keyword("persistent_workers")


def test_tl203_a_loader_built_inside_the_epoch_loop_is_not_reported() -> None:
    source = """
    from torch.utils.data import DataLoader
    def evaluate():
        for x in DataLoader(ds, num_workers=4):
            pass
    for epoch in range(3):
        evaluate()
    """
    assert lines("TL203", source) == []


# -- TL504 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "statement, reported",
    [
        ('os.environ["CUDA_VISIBLE_DEVICES"] = "1"', True),
        ('os.environ["CUDA_VISIBLE_DEVICES"] = gpus', True),
        ('os.environ["MASTER_PORT"] = "12355"', True),
        ('os.environ["MASTER_PORT"] = 12355', True),
        ('os.environ.update({"MASTER_PORT": "1"})', True),
        ('os.environ["MASTER_PORT"] = port', False),
        ('port = os.environ["MASTER_PORT"]', False),
        ('os.environ.setdefault("MASTER_PORT", "12355")', False),
        ('os.environ["CUDA_VISIBLE_DEVICES"] = ""', False),
        ('os.environ["MASTER_ADDR"] = "localhost"', False),
    ],
)
def test_tl504_writes_not_reads(statement: str, reported: bool) -> None:
    assert lines("TL504", f"import os\n{statement}\n") == ([2] if reported else [])


# -- TL505 -----------------------------------------------------------------------------------

DDP = "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(net)\n"


def test_tl505_load_without_map_location_only_in_ddp_code() -> None:
    assert lines("TL505", DDP + "s = torch.load(p)\n") == [4]
    assert fixed("TL505", DDP + "s = torch.load(p)\n").endswith('torch.load(p, map_location="cpu")\n')
    assert lines("TL505", DDP + "s = torch.load(p, 'cpu')\n") == []
    assert lines("TL505", DDP + "s = torch.load(p, **kw)\n") == []
    assert lines("TL505", "import torch\ns = torch.load(p)\n") == []


def test_tl505_saves_guarded_by_an_if_or_an_early_return_are_not_reported() -> None:
    source = DDP + textwrap.dedent(
        """
        def save(state):
            if rank != 0:
                return
            torch.save(state, "a.pt")
        def unguarded(state):
            torch.save(state, "b.pt")
        if rank == 0:
            unguarded(1)
        save(2)
        torch.save(model.module.state_dict(), "c.pt")
        """
    )
    assert lines("TL505", source) == [14]  # only the module-level save


def test_tl505_the_wrappers_state_dict_is_reported_even_under_a_guard() -> None:
    source = DDP + "if rank == 0:\n    torch.save({'m': model.state_dict()}, 'x.pt')\n"
    assert lines("TL505", source) == [5]


# -- TL103 -----------------------------------------------------------------------------------

LOOP = """
import torch
model = torch.nn.Linear(4, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step, x in enumerate(batches):
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
    {line}
"""


@pytest.mark.parametrize(
    "line, reported",
    [
        ("total += loss.item()", True),
        ("values = model(x).detach().cpu().numpy()", True),
        ("print(loss)", True),
        ("torch.cuda.synchronize()", True),
        ("print(step)", False),
        ("total += step.item()", False),  # not a tensor as far as the file says
        ("if step % 10 == 0: print(loss.item())", False),
    ],
)
def test_tl103_reports_host_reads_of_tensors_on_every_step(line: str, reported: bool) -> None:
    found = lines("TL103", LOOP.format(line=line))
    assert bool(found) is reported, found


def test_tl103_needs_cuda_use_and_an_optimizer_step() -> None:
    cpu = LOOP.replace(".cuda()", "").format(line="total += loss.item()")
    assert lines("TL103", cpu) == []
    no_step = LOOP.replace("optimizer.step()", "pass").format(line="total += loss.item()")
    assert lines("TL103", no_step) == []


# -- TL201's options -------------------------------------------------------------------------


def test_tl201_min_workers_reports_small_literal_counts_only() -> None:
    source = ("from torch.utils.data import DataLoader\na = DataLoader(d, num_workers=2)\nb = DataLoader(d, num_workers=n)\n"
              'if __name__ == "__main__":\n    main()\n')  # a guarded script: TL201's fix is offered
    assert lines("TL201", source) == []
    assert lines("TL201", source, **{"min-workers": 4}) == [2]
    assert "num_workers=4)" in fixed("TL201", source, **{"min-workers": 4})


def test_tl201_slurm_worker_count_reads_the_environment_with_one_import() -> None:
    source = ("from torch.utils.data import DataLoader\na = DataLoader(d)\nb = DataLoader(e, num_workers=0)\n"
              'if __name__ == "__main__":\n    main()\n')
    result = fixed("TL201", source, **{"num-workers": "slurm"})
    assert result.count("import os\n") == 1
    assert result.count('num_workers=int(os.environ.get("SLURM_CPUS_PER_TASK", 4))') == 2
    aliased = "from os import environ\n" + source
    assert 'int(environ.get("SLURM_CPUS_PER_TASK", 4))' in fixed("TL201", aliased, **{"num-workers": "slurm"})


def test_tl201_num_workers_accepts_slurm_and_refuses_other_words(tmp_path: Path) -> None:
    good = tmp_path / "torchlint.toml"
    good.write_text('[dataloader-without-workers]\nnum-workers = "slurm"\n')
    assert load_config_file(good).rule_options == {"TL201": {"num-workers": "slurm"}}
    bad = tmp_path / "bad" / "torchlint.toml"
    bad.parent.mkdir()
    bad.write_text('[dataloader-without-workers]\nnum-workers = "all"\n')
    with pytest.raises(ConfigError, match='must be an integer or "slurm"'):
        load_config_file(bad)


def test_tl202_says_a_generator_hands_the_batches_out_rather_than_returning_the_loader(tmp_path: Path) -> None:
    """The loader behind `yield from loader` is not returned: the message says
    a generator hands its batches out; a factory that returns the loader is
    still "returned to" its caller."""
    from torchlint.analysis.queries import summaries

    for body, said in (("    yield from DataLoader(ds, batch_size=8)\n", "handed out batch by batch by a generator to"),
                       ("    return DataLoader(ds, batch_size=8)\n", "returned to")):
        folder = tmp_path / said.split()[0]
        folder.mkdir()
        (folder / "data.py").write_text("from torch.utils.data import DataLoader\n\n\ndef make(ds):\n" + body)
        (folder / "train.py").write_text(textwrap.dedent("""
            from data import make


            def main(ds):
                batches = make(ds)
                for x, y in batches:
                    x.cuda()
        """))
        index = build(sorted(folder.glob("*.py")), [summaries()])
        data = folder / "data.py"
        found = torchlint.check_source(data.read_text(), str(data), Settings(select=("TL202",)), index)
        assert [d.code for d in found] == ["TL202"]
        assert f"{said} `train.main`" in found[0].message
