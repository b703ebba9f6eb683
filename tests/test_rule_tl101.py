"""TL101 tensor-created-then-moved: findings, fixes and their safety."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import pytest

import torchlint
from torchlint.model import Applicability, Diagnostic
from torchlint.ruleapi.registry import by_code_or_name
from torchlint.lint.settings import Settings, settings_from_table

ONLY = Settings(select=("TL101",))


def findings(source: str, settings: Settings = ONLY) -> List[Diagnostic]:
    return [d for d in torchlint.check_source(source, "x.py", settings) if d.code == "TL101"]


def fixed(source: str, settings: Settings = ONLY) -> str:
    return torchlint.fix_source(source, "x.py", settings, unsafe=True).source


def only_fix(source: str) -> Optional[Applicability]:
    found = findings(source)
    assert len(found) == 1, found
    return found[0].fix.applicability if found[0].fix else None


# -- what is reported -------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nx = torch.randn(3).cuda()\n",
        "import torch as th\nx = th.zeros(3).to('cuda:0')\n",
        "import torch\nfrom torch import ones\nx = ones(3).to(torch.device('cuda'))\n",
        "import torch\nfor device in devices:\n    torch.zeros(3).to(device)\n",
        "import torch\ndef f(x):\n    dev = pick(x)\n    return torch.zeros(3).to(dev)\n",
        "import torch\nx = torch.zeros(3).to(y.device)\n",
        "import torch\nx = torch.zeros(3).to(self.device)\n",
        "import torch\nx = torch.zeros(3).to(device=anything)\n",
        "import torch\nx = torch.zeros(3).to(0)\n",
        "import torch\nx = torch.zeros(3).to(f'cuda:{rank}')\n",
        "import torch\ndef f(device):\n    return torch.zeros(3).to(device)\n",
        "import torch\ndef f(local_rank):\n    return torch.zeros(3).to(local_rank)\n",
        "import torch\nx = torch.zeros(3).float().view(3, 1).to('cuda')\n",
        "import torch\nx = torch.zeros(3).cuda().requires_grad_()\n",
        "import torch.nn as nn\nm = nn.Linear(3, 4).cuda()\n",
        "from torch import nn\nm = nn.Conv2d(3, 8, 3).to('cuda')\n",
        "from torch.nn import Linear as L\nm = L(3, 4).cuda()\n",
        "from torch.nn.modules.normalization import LayerNorm\nm = LayerNorm(8).cuda()\n",
        "import torch\nx = torch.ones(4, 4).tril().cuda()\n",
        "import torch\nx = torch.empty(4).normal_(0, 0.02).cuda()\n",
        "import torch\nx = torch.ones(3).type(torch.float16).cuda()\n",
        # Built-in containers of layers, and tensor expressions with numbers (issue 26's scope).
        "import torch.nn as nn\nm = nn.Sequential(nn.Linear(3, 4)).cuda()\n",
        "import torch\nx = (torch.ones(3) * 2).cuda()\n",
        "import torch\nx = (1 - torch.zeros(3)).to('cuda')\n",
    ],
)
def test_reported(source: str) -> None:
    assert len(findings(source)) == 1


@pytest.mark.parametrize(
    "source",
    [
        # Not a move.
        "import torch\nx = torch.zeros(3).to(torch.float16)\n",
        "import torch\nx = torch.zeros(3).to(dtype)\n",
        "import torch\nx = torch.zeros(3).to(other_tensor)\n",
        "import torch\nx = torch.zeros(3).to(memory_format=torch.channels_last)\n",
        "import torch\nx = torch.zeros(3).to('cuda', copy=True)\n",
        "import torch\nx = torch.zeros(3).to('cpu')\n",
        "import torch\nx = torch.zeros(3).to(torch.device('cpu'))\n",
        "import torch\nx = torch.zeros(3).to(cpu_device)\n",
        "import torch\nx = torch.zeros(3).float()\n",
        # Not a factory result, or moved in a later statement.
        "import torch\nt = torch.zeros(3)\nt = t.cuda()\n",
        "import torch\nmodel = Net().cuda()\n",
        "import torch\nx = torch.stack([a, b]).cuda()\n",
        "import torch\nx = torch.zeros(3)[0].cuda()\n",
        "import torch\nx = torch.from_numpy(a).cuda()\n",
        "import torch.nn as nn\nm = nn.Sequential(nn.ReLU()).cuda()\n",
        "import torch.nn as nn\nm = nn.Sequential(Block()).cuda()\n",
        "import torch\nx = (torch.ones(3) * y).cuda()\n",
        "import torch\nx = (torch.ones(3) @ w).cuda()\n",
        "import torch.nn as nn\nm = nn.ReLU().cuda()\n",
        # User-defined look-alikes.
        "import torch\ndef randn(*s):\n    return s\nx = randn(3).cuda()\n",
        "import torch\nclass Linear:\n    pass\nm = Linear(3).cuda()\n",
        "import torch\ndef f(torch):\n    return torch.zeros(3).cuda()\n",
        "zeros = make_zeros\nx = zeros(3).cuda()\n",
        # Names that are not certainly devices.
        "import torch\ndef f(target):\n    return torch.zeros(3).to(target)\n",
        "import torch\ndef f(x):\n    where = x.dtype\n    return torch.zeros(3).to(where)\n",
        "import torch\ndef f(x):\n    where = 'cuda'\n    if x:\n        where = x\n    return torch.zeros(3).to(where)\n",
        "import torch\nout = [torch.zeros(3).to(d) for d in devices]\n",
        "import torch\nfor where in places:\n    torch.zeros(3).to(where)\n",
        # A name matching the pattern, but assigned a dtype or a tensor.
        "import torch\ndef f(x):\n    dev = x.dtype\n    return torch.zeros(3).to(dev)\n",
        "import torch\ndevice = torch.zeros(3)\nx = torch.zeros(3).to(device)\n",
        # Already on the device, or tied to the CPU.
        "import torch\nx = torch.zeros(3, device=device).to(device)\n",
        "import torch\nx = torch.zeros(3, device='cuda').cuda()\n",
        "import torch\nx = torch.zeros(3, device=y.device).to(z.device)\n",
        "import torch\nx = torch.randn(3, device='cpu').to(device)\n",
        "import torch.nn as nn\nm = nn.Linear(3, 4, device='cpu').cuda()\n",
        "import torch\nx = torch.zeros_like(y).to(y.device)\n",
        "import torch\nx = torch.randn(3, generator=g).cuda()\n",
        "import torch\nx = torch.empty(3).normal_(generator=g).cuda()\n",
        "import torch\nx = torch.zeros(3, out=buf).cuda()\n",
        "import torch\nx = torch.zeros(3, **opts).cuda()\n",
        "import torch.nn as nn\nm = nn.Embedding(3, 4, _weight=w).cuda()\n",
        "import torch.nn as nn\nm = nn.Transformer(custom_encoder=enc).cuda()\n",
        "import torch.nn as nn\nm = nn.Linear(3, 4, True, 'cpu').cuda()\n",
        "import torch\nx = torch.ones(3).expand(2, 3).cuda()\n",
    ],
)
def test_not_reported(source: str) -> None:
    assert findings(source) == []


def test_report_covers_the_chain_and_says_what_to_do() -> None:
    source = "import torch\nx = torch.randn(2, 3).float().cuda().requires_grad_()\n"
    (diagnostic,) = findings(source)
    assert (diagnostic.start.line, diagnostic.start.column) == (2, 5)
    assert diagnostic.end.column == len("x = torch.randn(2, 3).float().cuda()") + 1
    assert "`torch.randn(...)` is created on the CPU" in diagnostic.message
    assert diagnostic.hint is not None and 'device="cuda"' in diagnostic.hint


def test_one_finding_per_chain() -> None:
    source = "import torch\nx = torch.zeros(3).cuda().float().to('cuda:1')\n"
    assert len(findings(source)) == 1
    assert fixed(source) == "import torch\nx = torch.zeros(3, device='cuda:1', dtype=torch.float32)\n"


def test_noqa_on_the_line_silences_it() -> None:
    assert findings("import torch\nx = torch.zeros(3).cuda()  # noqa: TL101\n") == []
    source = "import torch\nx = torch.zeros(  # noqa: TL101\n    3,\n).cuda()\n"
    assert findings(source) == []


def test_modules_need_torch_1_9() -> None:
    old = Settings(select=("TL101",), torch_version="1.8")
    source = "import torch\nimport torch.nn as nn\nm = nn.Linear(3, 4).cuda()\nx = torch.zeros(3).cuda()\n"
    assert [d.start.line for d in findings(source, old)] == [4]
    new = Settings(select=("TL101",), torch_version="1.9")
    assert [d.start.line for d in findings(source, new)] == [3, 4]


def test_device_pattern_option() -> None:
    settings = settings_from_table(
        {"select": ["TL101"], "tensor-created-then-moved": {"device-pattern": "^dev$"}},
        Path("pyproject.toml"),
    )
    source = (
        "import torch\n"
        "def f(dev, device, cfg):\n"
        "    a = torch.zeros(3).to(dev)\n"
        "    b = torch.zeros(3).to(device)\n"
        "    c = torch.zeros(3).to(cfg.dev)\n"
        "    d = torch.zeros(3).to(cfg.device)\n"
    )
    assert [d.start.line for d in findings(source, settings)] == [3, 5, 6]
    assert [d.start.line for d in findings(source)] == [3, 4, 5, 6]


def test_scope_bound_names() -> None:
    source = (
        "import torch\n"
        "accel = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def f():\n"
        "    target = 'cuda:1'\n"
        "    a = torch.zeros(3).to(target)\n"
        "    b = torch.zeros(3).to(accel)\n"
        "    return a, b\n"
        "class M:\n"
        "    gpu0 = 'cuda:0'\n"
        "    def g(self):\n"
        "        return torch.zeros(3).to(gpu0)\n"
        "def h():\n"
        "    host = torch.device('cpu')\n"
        "    return torch.zeros(3).to(host)\n"
    )
    # A class attribute is not visible inside a method; a CPU device is no move.
    assert [d.start.line for d in findings(source)] == [5, 6]


# -- the fixes ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x = torch.zeros(3).cuda()", 'x = torch.zeros(3, device="cuda")'),
        ("x = torch.zeros(3).cuda(1)", 'x = torch.zeros(3, device="cuda:1")'),
        ("x = torch.zeros(3).cuda(None)", 'x = torch.zeros(3, device="cuda")'),
        ("x = torch.zeros(3).cuda(non_blocking=True)", 'x = torch.zeros(3, device="cuda")'),
        ("x = torch.zeros(3).to(dev, non_blocking=True)", "x = torch.zeros(3, device=dev)"),
        ("x = torch.zeros(3).to(device=d.device)", "x = torch.zeros(3, device=d.device)"),
        # Casts fold into dtype= when the values are exact ...
        ("x = torch.ones(3).half().cuda()", 'x = torch.ones(3, device="cuda", dtype=torch.float16)'),
        ("x = torch.ones(3).to(device, torch.bfloat16)", "x = torch.ones(3, device=device, dtype=torch.bfloat16)"),
        ("x = torch.ones(3).to(device, dtype=d)", "x = torch.ones(3, device=device, dtype=d)"),
        ("x = torch.ones(3).bool().to(device)", "x = torch.ones(3, device=device, dtype=torch.bool)"),
        (
            "x = torch.zeros(3, dtype=torch.long).double().cuda()",
            'x = torch.zeros(3, dtype=torch.float64, device="cuda")',
        ),
        ("x = torch.ones(6).view(2, 3).float().to(device)", "x = torch.ones(6, device=device, dtype=torch.float32).view(2, 3)"),
        # ... and stay as calls otherwise.
        ("x = torch.tensor([1.5]).long().cuda()", 'x = torch.tensor([1.5], device="cuda").long()'),
        ("x = torch.rand(3).long().cuda()", 'x = torch.rand(3, device="cuda").long()'),
        ("x = torch.rand(3).to(device, torch.int64)", "x = torch.rand(3, device=device).to(torch.int64)"),
        ("x = torch.rand(3).half().cuda()", 'x = torch.rand(3, device="cuda", dtype=torch.float16)'),
        ("x = torch.randn(3).to(device, dtype)", "x = torch.randn(3, device=device).to(dtype)"),
        ("x = torch.full((3,), 0.1).double().cuda()", 'x = torch.full((3,), 0.1, device="cuda").double()'),
        ("x = torch.arange(10).float().to(device)", "x = torch.arange(10, device=device).float()"),
        ("x = torch.zeros(4).view(torch.int32).float().cuda()", 'x = torch.zeros(4, device="cuda").view(torch.int32).float()'),
        ("x = torch.ones(3, dtype=torch.long).to(device, dtype)", "x = torch.ones(3, dtype=torch.long, device=device).to(dtype)"),
        ("x = torch.empty(3).fill_(0.1).double().cuda()", 'x = torch.empty(3, device="cuda").fill_(0.1).double()'),
        # Calls around the move stay where they were.
        ("x = torch.zeros(3).cuda().requires_grad_()", 'x = torch.zeros(3, device="cuda").requires_grad_()'),
        ("x = torch.tensor(v).unsqueeze(0).to(device)", "x = torch.tensor(v, device=device).unsqueeze(0)"),
        ("x = torch.zeros(3).cuda().to(y)", 'x = torch.zeros(3, device="cuda").to(y)'),
        ("x = (torch.zeros(3).cuda())", 'x = (torch.zeros(3, device="cuda"))'),
        # A device already given is replaced.
        ("x = torch.zeros(3, device='cpu').to(device)", "x = torch.zeros(3, device=device)"),
        ("m = nn.LayerNorm(8, device=torch.device('cpu')).cuda()", 'm = nn.LayerNorm(8, device="cuda")'),
        # Modules.
        ("m = nn.Linear(3, 4).half().cuda()", 'm = nn.Linear(3, 4, device="cuda", dtype=torch.float16)'),
        ("m = nn.LSTM(3, 4, batch_first=True).to(device)", "m = nn.LSTM(3, 4, batch_first=True, device=device)"),
        ("m = nn.BatchNorm2d(8).cuda().eval()", 'm = nn.BatchNorm2d(8, device="cuda").eval()'),
        ("m = nn.Linear(3, 4).eval().cuda()", 'm = nn.Linear(3, 4, device="cuda").eval()'),
    ],
)
def test_fix(source: str, expected: str) -> None:
    header = "import torch\nimport torch.nn as nn\n"
    assert fixed(header + source + "\n") == header + expected + "\n"


def test_fix_spells_torch_like_the_file() -> None:
    source = "import torch as th\nx = th.ones(3).half().cuda()\n"
    assert fixed(source) == 'import torch as th\nx = th.ones(3, device="cuda", dtype=th.float16)\n'


def test_fix_adds_the_torch_import_it_needs() -> None:
    source = '"""Doc."""\nfrom torch import ones\nx = ones(3).half().cuda()\n'
    assert fixed(source) == (
        '"""Doc."""\nimport torch\nfrom torch import ones\n'
        'x = ones(3, device="cuda", dtype=torch.float16)\n'
    )
    # No dtype to spell: no import.
    source = "from torch import ones\nx = ones(3).cuda()\n"
    assert fixed(source) == 'from torch import ones\nx = ones(3, device="cuda")\n'


def test_fix_keeps_the_call_layout() -> None:
    source = "import torch\nx = torch.zeros(\n    3,\n    4,\n).cuda()\ny = torch.zeros(3,\n                4).cuda()\n"
    assert fixed(source) == (
        "import torch\nx = torch.zeros(\n    3,\n    4,\n    device=\"cuda\",\n)\n"
        "y = torch.zeros(3,\n                4,\n                device=\"cuda\")\n"
    )


def test_no_fix_when_a_comment_would_be_lost() -> None:
    source = "import torch\nx = (torch.zeros(3)  # zeros\n     .cuda())\n"
    (diagnostic,) = findings(source)
    assert diagnostic.fix is None
    assert fixed(source) == source


def test_no_fix_for_pinned_memory() -> None:
    source = "import torch\nx = torch.zeros(3, pin_memory=True).cuda(non_blocking=True)\n"
    (diagnostic,) = findings(source)
    assert diagnostic.fix is None
    assert diagnostic.hint is not None and "pin_memory" in diagnostic.hint


@pytest.mark.parametrize(
    ("source", "applicability"),
    [
        ("x = torch.zeros(3).cuda()", Applicability.SAFE),
        ("x = torch.tensor([1, 2]).to(device)", Applicability.SAFE),
        ("x = torch.arange(10).cuda()", Applicability.SAFE),
        ("x = torch.arange(len(v)).cuda()", Applicability.SAFE),
        ("y = torch.ones(3)\nx = torch.zeros_like(y).cuda()", Applicability.SAFE),
        ("x = torch.zeros(3).cuda(torch.cuda.current_device())", Applicability.SAFE),
        ("m = nn.LayerNorm(8).half().cuda()", Applicability.SAFE),
        ("x = torch.empty(3).cuda().normal_()", Applicability.SAFE),
        # Different random numbers, rounding, leaf status, or a possible None.
        ("x = torch.randn(3).cuda()", Applicability.UNSAFE),
        ("x = torch.randint(0, 9, (3,)).cuda()", Applicability.UNSAFE),
        ("y = torch.ones(3)\nx = torch.randn_like(y).cuda()", Applicability.UNSAFE),
        ("x = torch.empty(3).normal_().cuda()", Applicability.UNSAFE),
        ("x = torch.arange(0, 1, 0.1).cuda()", Applicability.UNSAFE),
        ("x = torch.arange(n).cuda()", Applicability.UNSAFE),
        ("x = torch.linspace(0, 1, 5).cuda()", Applicability.UNSAFE),
        ("x = torch.tensor([1.0], requires_grad=True).cuda()", Applicability.UNSAFE),
        ("x = torch.zeros(3).cuda(k)", Applicability.UNSAFE),
        ("m = nn.Linear(3, 4).cuda()", Applicability.UNSAFE),
    ],
)
def test_fix_safety(source: str, applicability: Applicability) -> None:
    assert only_fix("import torch\nimport torch.nn as nn\n" + source + "\n") is applicability


def test_fixes_are_stable() -> None:
    source = (
        "import torch\n"
        "a = torch.tensor([1.5]).long().cuda()\n"
        "b = torch.rand(3).to('cuda', torch.int64)\n"
        "c = torch.ones(3).to(device).to(torch.float16)\n"
    )
    once = torchlint.fix_source(source, "x.py", ONLY, unsafe=True)
    assert once.converged and not once.dropped
    assert findings(once.source) == []


def test_metadata() -> None:
    rule = by_code_or_name("TL101")
    assert rule is not None
    assert rule.name == "tensor-created-then-moved"
    assert rule.fix_availability.value == "sometimes"
    assert "device-pattern" in rule.options
    assert "1.9" in rule.torch_versions
    sections = rule.doc_sections()
    for heading in ("What it does", "Why is this bad?", "Example", "Fix safety", "Options", "Source guide"):
        assert sections.get(heading), heading
    assert "Use instead" in sections["Example"]


# -- issue 12: legacy constructors, wrappers, indexing, tensor targets --------


@pytest.mark.parametrize(
    ("source", "expected", "applicability"),
    [
        # Data: the legacy constructor converts to its dtype, as torch.tensor(dtype=) does.
        (
            "x = torch.LongTensor([[i]] * k).to(device)",
            "x = torch.tensor([[i]] * k, dtype=torch.int64, device=device)",
            Applicability.SAFE,
        ),
        (
            "x = torch.IntTensor([n] * b).to(device)",
            "x = torch.tensor([n] * b, dtype=torch.int32, device=device)",
            Applicability.SAFE,
        ),
        (
            "x = torch.FloatTensor((1, 2)).cuda()",
            'x = torch.tensor((1, 2), dtype=torch.float32, device="cuda")',
            Applicability.SAFE,
        ),
        # torch.Tensor(data) has the default dtype, which torch.tensor would not infer for ints.
        (
            "x = torch.Tensor([1, 2]).cuda()",
            'x = torch.tensor([1, 2], dtype=torch.get_default_dtype(), device="cuda")',
            Applicability.SAFE,
        ),
        # Sizes: uninitialized memory, which torch.empty allocates the same way.
        (
            "x = torch.LongTensor(n, m).fill_(0).to(device)",
            "x = torch.empty(n, m, dtype=torch.int64, device=device).fill_(0)",
            Applicability.SAFE,
        ),
        (
            "x = torch.LongTensor(n, m).zero_().view(-1, b).to(device)",
            "x = torch.empty(n, m, dtype=torch.int64, device=device).zero_().view(-1, b)",
            Applicability.SAFE,
        ),
        ("x = torch.Tensor(2, 3).cuda()", 'x = torch.empty(2, 3, device="cuda")', Applicability.SAFE),
        (
            "x = torch.ByteTensor(4).float().cuda()",
            'x = torch.empty(4, dtype=torch.float32, device="cuda")',
            Applicability.SAFE,
        ),
        # Chains: indexing that only adds axes, conversions, Variable.
        (
            "x = torch.tensor(ids)[None, ...].to(device)",
            "x = torch.tensor(ids, device=device)[None, ...]",
            Applicability.SAFE,
        ),
        (
            "x = torch.tensor(ids)[:, None].long().to(device)",
            "x = torch.tensor(ids, device=device)[:, None].long()",
            Applicability.SAFE,
        ),
        (
            "x = torch.arange(4).repeat(2, 3, 4, 1).permute(0, 1, 3, 2).to(device)",
            "x = torch.arange(4, device=device).repeat(2, 3, 4, 1).permute(0, 1, 3, 2)",
            Applicability.SAFE,
        ),
        (
            "x = Variable(torch.zeros(3)).cuda()",
            'x = Variable(torch.zeros(3, device="cuda"))',
            Applicability.SAFE,
        ),
        (
            "x = Variable(torch.LongTensor([1, 2])).cuda()",
            'x = Variable(torch.tensor([1, 2], dtype=torch.int64, device="cuda"))',
            Applicability.SAFE,
        ),
        # Variable(..., requires_grad=True).cuda() is a non-leaf copy; fixed it is a leaf.
        (
            "x = Variable(torch.zeros(3), requires_grad=True).cuda()",
            'x = Variable(torch.zeros(3, device="cuda"), requires_grad=True)',
            Applicability.UNSAFE,
        ),
    ],
)
def test_issue_12_fixes(source: str, expected: str, applicability: Applicability) -> None:
    header = "import torch\nfrom torch.autograd import Variable\n"
    assert only_fix(header + source + "\n") is applicability
    assert fixed(header + source + "\n") == header + expected + "\n"


def test_legacy_constructor_through_an_alias_keeps_the_alias() -> None:
    source = "import torch as t\nx = t.FloatTensor([1.0]).cuda()\n"
    assert fixed(source) == 'import torch as t\nx = t.tensor([1.0], dtype=t.float32, device="cuda")\n'


def test_legacy_constructor_imported_by_name() -> None:
    source = "from torch import LongTensor\nx = LongTensor([1]).cuda()\n"
    assert fixed(source) == (
        'import torch\nfrom torch import LongTensor\nx = torch.tensor([1], dtype=torch.int64, device="cuda")\n'
    )


def test_legacy_constructor_of_unknown_argument_is_reported_without_fix() -> None:
    source = "import torch\ndef f(cfg):\n    return torch.FloatTensor(cfg.MEANS).cuda()\n"
    (diagnostic,) = findings(source)
    assert diagnostic.fix is None
    assert diagnostic.hint is not None and "torch.tensor(data, dtype=torch.float32" in diagnostic.hint
    assert "torch.empty(sizes" in diagnostic.hint


def test_legacy_constructor_of_a_list_name_is_fixed() -> None:
    source = "import torch\nmeans = [0.5, 0.4]\nx = torch.FloatTensor(means).cuda()\n"
    assert fixed(source).endswith('x = torch.tensor(means, dtype=torch.float32, device="cuda")\n')


@pytest.mark.parametrize(
    "source",
    [
        # Wraps a tensor: an alias, no new CPU tensor.
        "import torch\nt = torch.zeros(3)\nx = torch.FloatTensor(t).cuda()\n",
        "import torch\ndef f(t):\n    return torch.FloatTensor(t.cpu()).cuda()\n",
        "import torch\ndef f(t):\n    return torch.FloatTensor(t.data).cuda()\n",
        # A storage: aliased too (`torch.ByteStorage.from_buffer(pickled)`).
        "import torch\ndef f(b):\n    s = torch.ByteStorage.from_buffer(b)\n    return torch.ByteTensor(s).to('cuda')\n",
        # Keywords: the legacy constructor rejects or handles them; left alone.
        "import torch\nx = torch.FloatTensor(3, device='cuda').cuda()\n",
        # Already CUDA constructors, and non-constructor uses.
        "import torch\nx = torch.cuda.FloatTensor([1.0]).cuda()\n",
        "import torch\nx = torch.FloatTensor([1.0]).to(torch.float16)\n",
        "import torch\nx = torch.FloatTensor([1.0]).cpu()\n",
        # Look-alike constructors and wrappers.
        "import torch\nclass FloatTensor:\n    pass\nx = FloatTensor([1]).cuda()\n",
        "import torch\nx = Variable(torch.zeros(3)).cuda()\n",
        "import torch\nfrom torch.autograd import Variable\nx = Variable(torch.zeros(3), foo=1).cuda()\n",
        # Indexing that selects elements is no pure view of all of them.
        "import torch\nx = torch.tensor(ids)[0].cuda()\n",
        "import torch\nx = torch.tensor(ids)[1:].cuda()\n",
        "import torch\nx = torch.tensor(ids)[mask].cuda()\n",
        # A move to another tensor whose device is not known.
        "import torch\ndef f(x):\n    return torch.zeros(3).type_as(x)\n",
        "import torch\ndef f(x):\n    return torch.zeros(3).to(x)\n",
        # ... or known to be the CPU.
        "import torch\nh = torch.zeros(3)\nx = torch.ones(3).to(h)\n",
        "import torch\nh = torch.zeros(3)\nx = torch.ones(3).type_as(h)\n",
        # ... or not certain: one binding of the name has no known device.
        "import torch\nh = torch.zeros(3, device='cuda')\nif c:\n    h = g()\nx = torch.ones(3).to(h)\n",
    ],
)
def test_issue_12_not_reported(source: str) -> None:
    assert findings(source) == []


def test_moves_to_a_tensor_of_known_device() -> None:
    source = (
        "import torch\n"
        "buf = torch.zeros(3, device='cuda')\n"
        "a = torch.ones(3).to(buf)\n"
        "b = torch.arange(3).type_as(buf)\n"
    )
    assert fixed(source) == (
        "import torch\n"
        "buf = torch.zeros(3, device='cuda')\n"
        "a = torch.ones(3, device=buf.device, dtype=buf.dtype)\n"
        "b = torch.arange(3, device=buf.device).to(buf.dtype)\n"
    )


def test_type_as_alone_is_enough_to_look_at_a_file() -> None:
    # No `.cuda(` or `.to(` in the file: the trigger words and the precheck
    # must still let `.type_as(` through.
    source = "import torch\nbuf = torch.zeros(3, device='cuda')\nb = torch.arange(3).type_as(buf)\n"
    assert len(findings(source)) == 1


@pytest.mark.parametrize("source", [
    "def f(y):\n    return torch.zeros_like(y).cuda()\n",  # y's place is unknown: most often the target already
    "y = torch.ones(3, device='cuda')\nx = torch.zeros_like(y).cuda()\n",  # made on the GPU: no copy
    "def f(batch, device):\n    return torch.ones_like(batch).to(device)\n",
])
def test_like_forms_are_reported_only_from_a_cpu_input(source: str) -> None:
    assert findings("import torch\n" + source) == []
    cpu = source.replace("device='cuda'", "device='cpu'")
    if cpu != source:
        assert [d.start.line for d in findings("import torch\n" + cpu)] == [3]
