"""The verify corpus: changes to user-shaped scripts, each correct or broken (issue 24).

Every script in this folder is written the way people write training code:
state in ``main()`` or a trainer object, argparse, prints per step or epoch,
checkpoints beside the script, seeds, loader workers.  None of them defines
``torchlint_outputs()``: verify has to find what to compare by itself.

A ``Change`` is one case: a script, the rule whose contract judges it (``""``:
the strict "same outputs" contract of ``verify A --against B``), whether the
change is *correct* (torchlint's own fix, or an equivalent a user would write)
or *broken* (an autofixer's subtle bug: a wrong argument, a dropped or moved
statement, a changed seed, a detached tensor ...), and the edits that make it
(``fix=True``: torchlint's fix of that rule).  ``quick`` marks the subset the
default test run checks; the whole corpus runs under ``pytest -m slow``.

The cases were written for the issue, before the checks were tuned on them;
docs/measurements.md reports what the slow test measured on them.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Tuple

HERE = Path(__file__).resolve().parent
CORRECT, BROKEN = "correct", "broken"


@dataclass(frozen=True)
class Change:
    id: str
    script: str  # a file of this folder
    rule: str  # the contract it is judged by; "" for the strict "same outputs" one
    kind: str  # CORRECT or BROKEN
    edits: Tuple[Tuple[str, str], ...] = ()  # (old, new), applied in order, each old text present once
    fix: bool = False  # torchlint's own fix of ``rule``
    why: str = ""
    quick: bool = False  # in the default test run

    def changed(self, source: str) -> str:
        for old, new in self.edits:
            if source.count(old) != 1:
                raise ValueError(f"{self.id}: {old!r} occurs {source.count(old)} times in {self.script}")
            source = source.replace(old, new)
        return source


def _state(path: Path, out: int = 2, inputs: int = 4) -> None:
    import torch

    layer = torch.nn.Linear(inputs, out)
    with torch.no_grad():
        layer.weight.copy_(torch.linspace(-0.5, 0.5, out * inputs).view(out, inputs))
        layer.bias.fill_(0.1)
    torch.save(layer.state_dict(), path)


def _run_checkpoint(path: Path) -> None:
    import torch

    layer = torch.nn.Linear(3, 1)
    torch.save({"model": layer.state_dict(), "args": argparse.Namespace(lr=0.1)}, path)


# Files a script expects beside it (made in the test's copy of the script's folder).
FILES: Dict[str, Dict[str, Callable[[Path], None]]] = {
    "resume_checkpoint.py": {"ckpt.pt": _state},
    "load_weights.py": {"weights.pt": lambda path: _state(path, 2, 3)},
    "load_config_checkpoint.py": {"run.pt": _run_checkpoint},
}


def C(id: str, script: str, rule: str, *edits: Tuple[str, str], fix: bool = False, why: str = "",
      quick: bool = False) -> Change:
    return Change(id, script, rule, CORRECT, tuple(edits), fix, why, quick)


def B(id: str, script: str, rule: str, *edits: Tuple[str, str], fix: bool = False, why: str = "",
      quick: bool = False) -> Change:
    return Change(id, script, rule, BROKEN, tuple(edits), fix, why, quick)


CHANGES: Tuple[Change, ...] = (
    # -- TL101 tensor-created-then-moved ------------------------------------------------------------
    C("tl101-fix", "regression_main.py", "TL101", fix=True),
    C("tl101-user-zeros", "regression_main.py", "TL101",
      ("w = torch.zeros(8).to(device)", "w = torch.zeros(8, device=device)")),
    C("tl101-user-randn", "regression_main.py", "TL101",
      ("x = torch.randn(64, 8).to(device)", "x = torch.randn(64, 8, device=device)")),
    C("tl101-user-full", "regression_main.py", "TL101",
      ("bias = torch.full((1,), 0.5).to(device)", "bias = torch.full((1,), 0.5, device=device)")),
    B("tl101-rand-for-randn", "regression_main.py", "TL101",
      ("x = torch.randn(64, 8).to(device)", "x = torch.rand(64, 8, device=device)"),
      why="the wrong factory"),
    B("tl101-full-value", "regression_main.py", "TL101",
      ("torch.full((1,), 0.5).to(device)", "torch.full((1,), 5.0, device=device)"), why="a value lost a decimal"),
    B("tl101-linspace-end", "regression_main.py", "TL101",
      ("torch.linspace(-1.0, 1.0, 8).to(device)", "torch.linspace(-1.0, 1.0, 9, device=device)[:8]"),
      why="the steps argument moved"),
    # -- TL102 blocking-host-to-device-copy ---------------------------------------------------------
    C("tl102-fix", "pinned_loop.py", "TL102", fix=True),
    C("tl102-user-keyword", "pinned_loop.py", "TL102",
      ("images = images.to(device)", "images = images.to(device=device, non_blocking=True)")),
    C("tl102-user-labels-only", "pinned_loop.py", "TL102",
      ("labels = labels.to(device)", "labels = labels.to(device, non_blocking=True)")),
    B("tl102-labels-from-images", "pinned_loop.py", "TL102",
      ("labels = labels.to(device)", "labels = images.to(device, non_blocking=True)"), why="copy-paste"),
    B("tl102-labels-as-float", "pinned_loop.py", "TL102",
      ("labels = labels.to(device)", "labels = labels.to(device, torch.float32, non_blocking=True)"),
      why="a positional argument taken for the dtype"),
    # -- TL201 dataloader-without-workers ----------------------------------------------------------
    C("tl201-fix", "workers_dataset.py", "TL201", fix=True),
    C("tl201-user-two-workers", "workers_dataset.py", "TL201",
      ("batch_size=8, shuffle=True)", "batch_size=8, shuffle=True, num_workers=2, persistent_workers=False)")),
    C("tl201-trainer-fix", "loader_trainer.py", "TL201", fix=True),
    C("tl201-user-one-worker", "workers_dataset.py", "TL201",
      ("batch_size=8, shuffle=True)", "batch_size=8, shuffle=True, num_workers=1)")),
    B("tl201-shuffle-dropped", "workers_dataset.py", "TL201",
      ("batch_size=8, shuffle=True)", "batch_size=8, num_workers=2)"), why="an argument replaced"),
    B("tl201-batch-size-dropped", "workers_dataset.py", "TL201",
      ("DataLoader(Features(32), batch_size=8, shuffle=True)", "DataLoader(Features(32), shuffle=True, num_workers=2)"),
      why="an argument lost"),
    B("tl201-random-getitem", "augmenting_dataset.py", "TL201", ("batch_size=4)", "batch_size=4, num_workers=2)"),
      why="workers draw the augmentation from their own seeds"),
    B("tl201-drop-last", "loader_trainer.py", "TL201",
      ("shuffle=True)", "shuffle=True, num_workers=2, drop_last=True)"), why="an extra argument"),
    # -- TL202 dataloader-without-pin-memory -------------------------------------------------------
    C("tl202-fix", "persistent_epochs.py", "TL202", fix=True),
    C("tl202-user-conditional", "persistent_epochs.py", "TL202",
      ("num_workers=2)", "num_workers=2, pin_memory=torch.cuda.is_available())")),
    B("tl202-drop-last", "persistent_epochs.py", "TL202",
      ("num_workers=2)", "num_workers=2, pin_memory=True, drop_last=True)"), why="an extra argument"),
    B("tl202-batch-size", "persistent_epochs.py", "TL202",
      ("batch_size=6, shuffle=True, num_workers=2)", "batch_size=4, shuffle=True, num_workers=2, pin_memory=True)"),
      why="a neighbouring argument changed"),
    # -- TL203 dataloader-without-persistent-workers -------------------------------------------------
    C("tl203-fix", "persistent_epochs.py", "TL203", fix=True),
    C("tl203-user-prefetch", "persistent_epochs.py", "TL203",
      ("num_workers=2)", "num_workers=2, persistent_workers=True, prefetch_factor=2)")),
    B("tl203-no-shuffle", "persistent_epochs.py", "TL203",
      ("shuffle=True, num_workers=2)", "num_workers=2, persistent_workers=True)"), why="an argument replaced"),
    B("tl203-batch-size", "persistent_epochs.py", "TL203",
      ("batch_size=6, shuffle=True, num_workers=2)", "batch_size=5, shuffle=True, num_workers=2, persistent_workers=True)"),
      why="a neighbouring argument changed"),
    # -- TL301 eval-without-no-grad ------------------------------------------------------------------
    C("tl301-fix", "eval_trainer.py", "TL301", fix=True),
    C("tl301-user-with-block", "eval_trainer.py", "TL301",
      ("        logits = self.model(self.val_x)\n",
       "        with torch.no_grad():\n            logits = self.model(self.val_x)\n")),
    C("tl301-user-inference-mode", "eval_trainer.py", "TL301",
      ("    def evaluate(self):\n", "    @torch.inference_mode()\n    def evaluate(self):\n")),
    C("tl301-user-detach", "eval_trainer.py", "TL301",
      ("        logits = self.model(self.val_x)\n", "        logits = self.model(self.val_x).detach()\n")),
    B("tl301-train-mode-in-eval", "eval_trainer.py", "TL301",
      ("        self.model.eval()\n        logits", "        logits"), why="the eval() call dropped with the edit"),
    B("tl301-no-grad-on-training", "eval_trainer.py", "TL301",
      ("    def train_step(self):\n", "    @torch.no_grad()\n    def train_step(self):\n"),
      why="the decorator on the wrong method"),
    B("tl301-sliced-loss", "eval_trainer.py", "TL301",
      ("loss = nn.functional.cross_entropy(logits, self.val_y)", "loss = nn.functional.cross_entropy(logits[:8], self.val_y[:8])"),
      why="a slice slipped in"),
    # -- TL302 zero-grad-not-set-to-none ---------------------------------------------------------------
    C("tl302-fix", "zero_grad_main.py", "TL302", fix=True, quick=True),
    C("tl302-user-none-loop", "zero_grad_main.py", "TL302",
      ("        optimizer.zero_grad(set_to_none=False)\n",
       "        for parameter in model.parameters():\n            parameter.grad = None\n")),
    C("tl302-user-model-zero-grad", "zero_grad_main.py", "TL302",
      ("optimizer.zero_grad(set_to_none=False)", "model.zero_grad()")),
    C("tl302-user-explicit-true", "zero_grad_main.py", "TL302",
      ("zero_grad(set_to_none=False)", "zero_grad(set_to_none=True)")),
    B("tl302-moved-after-step", "zero_grad_main.py", "TL302",
      ("        optimizer.zero_grad(set_to_none=False)\n", ""),
      ("        optimizer.step()\n", "        optimizer.step()\n        optimizer.zero_grad()\n"),
      why="zero_grad moved after step", quick=True),
    B("tl302-dropped", "zero_grad_main.py", "TL302", ("        optimizer.zero_grad(set_to_none=False)\n", ""),
      why="the statement lost: gradients accumulate"),
    B("tl302-lr", "zero_grad_main.py", "TL302",
      ("optimizer.zero_grad(set_to_none=False)", "optimizer.zero_grad()"), ("lr=0.01", "lr=0.0104"),
      why="a learning rate changed by 4%"),
    # -- TL305 loss-accumulated-with-graph ------------------------------------------------------------
    C("tl305-fix", "accumulate_loss.py", "TL305", fix=True, quick=True),
    C("tl305-user-item", "accumulate_loss.py", "TL305", ("total_loss += loss\n", "total_loss += loss.item()\n")),
    C("tl305-user-float", "accumulate_loss.py", "TL305", ("total_loss += loss\n", "total_loss += float(loss)\n")),
    C("tl305-user-plus-detach", "accumulate_loss.py", "TL305",
      ("total_loss += loss\n", "total_loss = total_loss + loss.detach()\n")),
    B("tl305-still-leaking", "accumulate_loss.py", "TL305",
      ("total_loss += loss\n", "total_loss = total_loss + loss * 1\n"), why="the graph is still kept"),
    B("tl305-last-only", "accumulate_loss.py", "TL305", ("total_loss += loss\n", "total_loss = loss.detach()\n"),
      why="+= lost"),
    B("tl305-detach-before-backward", "accumulate_loss.py", "TL305",
      ("        loss.backward()\n", "        loss = loss.detach()\n        loss.backward()\n"),
      why="the detach put on the wrong line"),
    # -- TL306 train-mode-not-restored ------------------------------------------------------------------
    C("tl306-fix", "train_eval_modes.py", "TL306", fix=True, quick=True),
    C("tl306-user-top-of-epoch", "train_eval_modes.py", "TL306",
      ("    for epoch in range(3):\n", "    for epoch in range(3):\n        model.train()\n")),
    C("tl306-user-end-of-epoch", "train_eval_modes.py", "TL306",
      ("val {evaluate(model, val_x, val_y):.4f}\")\n", "val {evaluate(model, val_x, val_y):.4f}\")\n        model.train()\n")),
    B("tl306-before-eval", "train_eval_modes.py", "TL306",
      ("    model.eval()\n    with torch.no_grad():", "    model.eval()\n    model.train()\n    with torch.no_grad():"),
      why="train() put right after eval()", quick=True),
    B("tl306-submodule-only", "train_eval_modes.py", "TL306",
      ("    for epoch in range(3):\n", "    for epoch in range(3):\n        model.head.train()\n"),
      why="only part of the model restored"),
    B("tl306-train-false", "train_eval_modes.py", "TL306",
      ("    for epoch in range(3):\n", "    for epoch in range(3):\n        model.train(False)\n"),
      why="train(False) for train()"),
    # -- TL307 require-grad-typo ---------------------------------------------------------------------------
    C("tl307-fix", "freeze_backbone.py", "TL307", fix=True),
    C("tl307-user-method", "freeze_backbone.py", "TL307",
      ("        p.require_grad = False\n", "        p.requires_grad_(False)\n")),
    C("tl307-user-module-method", "freeze_backbone.py", "TL307",
      ("    for p in backbone.parameters():\n        p.require_grad = False\n", "    backbone.requires_grad_(False)\n")),
    B("tl307-inverted", "freeze_backbone.py", "TL307",
      ("        p.require_grad = False\n", "        p.requires_grad = True\n"), why="the value flipped"),
    B("tl307-head-frozen", "freeze_backbone.py", "TL307",
      ("    for p in backbone.parameters():\n        p.require_grad = False\n",
       "    for p in head.parameters():\n        p.requires_grad = False\n"), why="the wrong module"),
    # -- TL401 conv-bias-before-batchnorm ----------------------------------------------------------------
    C("tl401-fix", "cnn_main.py", "TL401", fix=True),
    C("tl401-user-first-only", "cnn_main.py", "TL401",
      ("nn.Conv2d(3, 6, 3, padding=1)", "nn.Conv2d(3, 6, 3, padding=1, bias=False)")),
    C("tl401-user-second-only", "cnn_main.py", "TL401",
      ("nn.Conv2d(6, 6, 3, padding=1)", "nn.Conv2d(6, 6, 3, padding=1, bias=False)")),
    B("tl401-linear-bias", "cnn_main.py", "TL401",
      ("nn.Linear(6, 3)", "nn.Linear(6, 3, bias=False)"), why="the bias removed where nothing cancels it"),
    B("tl401-batchnorm-dropped", "cnn_main.py", "TL401",
      ("nn.Conv2d(6, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),",
       "nn.Conv2d(6, 6, 3, padding=1, bias=False), nn.ReLU(),"), why="the batch norm removed with the bias"),
    B("tl401-momentum", "cnn_main.py", "TL401",
      ("nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6)", "nn.Conv2d(3, 6, 3, padding=1, bias=False), nn.BatchNorm2d(6, momentum=0.01)"),
      why="an argument added to the wrong call"),
    # -- TL502 sampler-without-set-epoch --------------------------------------------------------------------
    C("tl502-fix", "ddp_sampler.py", "TL502", fix=True),
    C("tl502-user-through-loader", "ddp_sampler.py", "TL502",
      ("    for epoch in range(3):\n", "    for epoch in range(3):\n        loader.sampler.set_epoch(epoch)\n")),
    B("tl502-constant", "ddp_sampler.py", "TL502",
      ("    for epoch in range(3):\n", "    for epoch in range(3):\n        sampler.set_epoch(0)\n"), why="a constant"),
    B("tl502-off-by-one", "ddp_sampler.py", "TL502",
      ("    for epoch in range(3):\n", "    for epoch in range(3):\n        sampler.set_epoch(epoch + 1)\n"),
      why="the first epoch's order changes"),
    B("tl502-after-the-epoch", "ddp_sampler.py", "TL502",
      ("        print(f\"epoch {epoch} loss", "        sampler.set_epoch(epoch)\n        print(f\"epoch {epoch} loss"),
      why="set after the epoch ran"),
    # -- TL503 legacy-distributed-launch -------------------------------------------------------------------
    C("tl503-fix", "launch_args.py", "TL503", fix=True),
    C("tl503-user-dest", "launch_args.py", "TL503",
      ('parser.add_argument("--local_rank", type=int, default=0)',
       'parser.add_argument("--local-rank", "--local_rank", dest="local_rank", type=int, default=0)')),
    C("tl503-user-dashed-first", "launch_args.py", "TL503",
      ('parser.add_argument("--local_rank", type=int, default=0)',
       'parser.add_argument("--local-rank", "--local_rank", type=int, default=0)')),
    B("tl503-renamed", "launch_args.py", "TL503",
      ('"--local_rank", type=int', '"--local-rank", type=int'), why="renamed instead of aliased"),
    B("tl503-type-lost", "launch_args.py", "TL503",
      ('parser.add_argument("--local_rank", type=int, default=0)',
       'parser.add_argument("--local_rank", "--local-rank", default=0)'), why="type=int lost"),
    B("tl503-default", "launch_args.py", "TL503",
      ('"--local_rank", type=int, default=0)', '"--local_rank", "--local-rank", type=int, default=-1)'),
      why="the default changed"),
    # -- TL505 ddp-checkpoint-io ---------------------------------------------------------------------------
    C("tl505-fix", "resume_checkpoint.py", "TL505", fix=True),
    C("tl505-user-device", "resume_checkpoint.py", "TL505",
      ('torch.load("ckpt.pt")', 'torch.load("ckpt.pt", map_location=torch.device("cpu"))')),
    C("tl505-user-lambda", "resume_checkpoint.py", "TL505",
      ('torch.load("ckpt.pt")', 'torch.load("ckpt.pt", map_location=lambda storage, location: storage)')),
    C("tl505-user-dict", "resume_checkpoint.py", "TL505",
      ('torch.load("ckpt.pt")', 'torch.load("ckpt.pt", map_location={"cuda:0": "cpu"})')),
    B("tl505-meta", "resume_checkpoint.py", "TL505",
      ('torch.load("ckpt.pt")', 'torch.load("ckpt.pt", map_location="meta")'), why="the wrong device"),
    B("tl505-file-name", "resume_checkpoint.py", "TL505",
      ('torch.load("ckpt.pt")', 'torch.load("ckpt.pth", map_location="cpu")'), why="a typo in the edit"),
    # -- TL601 clip-before-unscale ---------------------------------------------------------------------------
    C("tl601-fix", "amp_clip.py", "TL601", fix=True),
    C("tl601-user-helper", "amp_clip.py", "TL601",
      ("        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)\n",
       "        scaler.unscale_(optimizer)\n        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n")),
    B("tl601-after-clip", "amp_clip.py", "TL601",
      ("        scaler.step(optimizer)\n", "        scaler.unscale_(optimizer)\n        scaler.step(optimizer)\n"),
      why="unscale_ after the clip"),
    B("tl601-max-norm", "amp_clip.py", "TL601",
      ("        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)\n",
       "        scaler.unscale_(optimizer)\n        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.1)\n"),
      why="the threshold changed"),
    # -- TL603 tf32-off and TL604 cudnn-benchmark-unset ---------------------------------------------------
    C("tl603-fix", "tf32_training.py", "TL603", fix=True),
    C("tl603-user-precision", "tf32_training.py", "TL603",
      ("import torch\n", "import torch\n\ntorch.set_float32_matmul_precision(\"high\")\n")),
    C("tl603-user-both-flags", "tf32_training.py", "TL603",
      ("import torch\n", "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cudnn.allow_tf32 = True\n")),
    B("tl603-medium", "tf32_training.py", "TL603",
      ("import torch\n", "import torch\n\ntorch.set_float32_matmul_precision(\"medium\")\n"), why="bfloat16, not TF32"),
    B("tl603-nothing-set", "tf32_training.py", "TL603",
      ("import torch\n", "import torch\n\ntorch.backends.cudnn.allow_tf32 = True\n"), why="the wrong flag"),
    C("tl604-fix", "conv_benchmark.py", "TL604", fix=True),
    C("tl604-user-in-main", "conv_benchmark.py", "TL604",
      ("    torch.manual_seed(0)\n", "    torch.backends.cudnn.benchmark = True\n    torch.manual_seed(0)\n")),
    B("tl604-flag-off", "conv_benchmark.py", "TL604",
      ("import torch\n", "import torch\n\ntorch.backends.cudnn.benchmark = False\n"), why="the flag's value"),
    B("tl604-deterministic-off", "conv_benchmark.py", "TL604",
      ("import torch\n", "import torch\n\ntorch.backends.cudnn.benchmark = True\ntorch.set_float32_matmul_precision(\"medium\")\n"),
      why="another math mode changed with it"),
    # -- TL607 imprecise-log-exp -------------------------------------------------------------------------
    C("tl607-fix", "log_exp.py", "TL607", fix=True, quick=True),
    C("tl607-user-softplus", "log_exp.py", "TL607",
      ("torch.log(1 + torch.exp(-scores))", "torch.nn.functional.softplus(-scores)")),
    C("tl607-user-special", "log_exp.py", "TL607", ("torch.exp(rates) - 1", "torch.special.expm1(rates)")),
    C("tl607-user-logsumexp", "log_exp.py", "TL607",
      ("torch.log(torch.sum(torch.exp(scores.detach()), dim=1))", "torch.logsumexp(scores.detach(), dim=1)")),
    B("tl607-wrong-dim", "log_exp.py", "TL607",
      ("torch.log(torch.sum(torch.exp(scores.detach()), dim=1))", "torch.logsumexp(scores.detach(), dim=0)[:32]"),
      why="the reduction's dimension"),
    B("tl607-sign", "log_exp.py", "TL607",
      ("torch.log(1 + torch.exp(-scores))", "torch.log1p(torch.exp(scores))"), why="a sign lost"),
    B("tl607-half", "log_exp.py", "TL607", ("torch.exp(rates) - 1", "torch.expm1(rates.half()).float()"),
      why="precision lost on the way"),
    # -- TL701 deprecated-amp-api, TL703 deprecated-torch-api --------------------------------------------
    C("tl701-fix", "old_amp.py", "TL701", fix=True),
    C("tl701-user-amp", "old_amp.py", "TL701", ("torch.cuda.amp.autocast()", "torch.amp.autocast(\"cuda\")")),
    C("tl701-user-keyword", "old_amp.py", "TL701", ("torch.cuda.amp.autocast()", "torch.autocast(device_type=\"cuda\")")),
    B("tl701-cpu-autocast", "old_amp.py", "TL701", ("torch.cuda.amp.autocast()", "torch.autocast(\"cpu\")"),
      why="the device type guessed wrong"),
    B("tl703-fix", "old_api.py", "TL703", fix=True,
      why="torchlint's own fix: `arange` of integers is int64 where `range` gave float32 (documented, unsafe)"),
    C("tl703-user-outer", "old_api.py", "TL703", ("torch.ger(a, b)", "torch.outer(a, b)")),
    C("tl703-user-arange", "old_api.py", "TL703", ("torch.range(0, 4)", "torch.arange(0, 5.0)")),
    C("tl703-user-multi-dot", "old_api.py", "TL703",
      ("torch.chain_matmul(pairwise, c, c.t())", "torch.linalg.multi_dot([pairwise, c, c.t()])")),
    B("tl703-range-end", "old_api.py", "TL703", ("torch.range(0, 4)", "torch.arange(0, 4)"),
      why="range's end is inclusive, arange's is not"),
    B("tl703-outer-swapped", "old_api.py", "TL703", ("torch.ger(a, b)", "torch.outer(b, a)"),
      why="the arguments swapped"),
    B("tl703-multi-dot-dropped", "old_api.py", "TL703",
      ("torch.chain_matmul(pairwise, c, c.t())", "torch.linalg.multi_dot([pairwise, c])"), why="an argument lost"),
    # -- TL705 checkpoint-use-reentrant, TL707 non-public-collate -----------------------------------------
    C("tl705-fix", "checkpointed_blocks.py", "TL705", fix=True),
    C("tl705-user-keyword", "checkpointed_blocks.py", "TL705",
      ("checkpoint(self.block, h)", "checkpoint(self.block, h, use_reentrant=False, preserve_rng_state=True)")),
    B("tl705-detached-input", "checkpointed_blocks.py", "TL705",
      ("checkpoint(self.block, h)", "checkpoint(self.block, h.detach(), use_reentrant=False)"),
      why="an input detached: the stem stops training"),
    B("tl705-wrong-module", "checkpointed_blocks.py", "TL705",
      ("checkpoint(self.block, h)", "checkpoint(self.block[0], h, use_reentrant=False)"), why="part of the block"),
    C("tl707-fix", "private_collate.py", "TL707", fix=True),
    C("tl707-user-module", "private_collate.py", "TL707",
      ("from torch.utils.data._utils.collate import default_collate", "from torch.utils.data import default_collate")),
    B("tl707-convert", "private_collate.py", "TL707",
      ("from torch.utils.data._utils.collate import default_collate",
       "from torch.utils.data import default_convert as default_collate"), why="the wrong function"),
    # -- TL801 unsafe-torch-load (its fix targets torch < 2.6: the change is written out) ---------------
    C("tl801-weights-only", "load_weights.py", "TL801",
      ('torch.load("weights.pt")', 'torch.load("weights.pt", weights_only=True)')),
    C("tl801-safe-globals", "load_config_checkpoint.py", "TL801",
      ('    checkpoint = torch.load("run.pt", weights_only=False)  # it pickles the namespace too\n',
       '    torch.serialization.add_safe_globals([argparse.Namespace])\n'
       '    checkpoint = torch.load("run.pt", weights_only=True)\n'),
      ("import torch\n", "import argparse\n\nimport torch\n")),
    B("tl801-namespace", "load_config_checkpoint.py", "TL801",
      ('torch.load("run.pt", weights_only=False)', 'torch.load("run.pt", weights_only=True)'),
      why="the checkpoint pickles a namespace: loading it now fails"),
    B("tl801-strict", "load_weights.py", "TL801",
      ('model.load_state_dict(torch.load("weights.pt"))',
       'model.load_state_dict(torch.load("weights.pt", weights_only=True), strict=False)\n    model.bias.data.zero_()'),
      why="an unrelated line changed"),
    # -- the strict contract: hand-made refactors (--against, no rule) -----------------------------------
    C("strict-rename-local", "loader_trainer.py", "",
      ("            loss = nn.functional.mse_loss(self.model(x), y)\n            loss.backward()\n"
       "            self.optimizer.step()\n            self.losses.append(loss.item())",
       "            batch_loss = nn.functional.mse_loss(self.model(x), y)\n            batch_loss.backward()\n"
       "            self.optimizer.step()\n            self.losses.append(batch_loss.item())")),
    C("strict-extract-function", "zero_grad_main.py", "",
      ("        loss = nn.functional.mse_loss(model(x), y)\n",
       "        loss = compute_loss(model, x, y)\n"),
      ("def main():\n", "def compute_loss(model, x, y):\n    return nn.functional.mse_loss(model(x), y)\n\n\ndef main():\n"), quick=True),
    C("strict-enumerate", "accumulate_loss.py", "",
      ("    for x, y in batches:\n", "    for index, (x, y) in enumerate(batches):\n")),
    C("strict-fstring", "launch_args.py", "",
      ('print(f"rank {args.local_rank} epoch {epoch} loss {loss.item():.5f}")',
       'print("rank {} epoch {} loss {:.5f}".format(args.local_rank, epoch, loss.item()))')),
    C("strict-new-attribute", "eval_trainer.py", "",
      ("        self.train_x, self.train_y = torch.randn(32, 10), torch.randint(0, 2, (32,))\n"
       "        self.val_x, self.val_y = torch.randn(16, 10), torch.randint(0, 2, (16,))\n",
       "        self.train_x, self.train_y = torch.randn(32, 10), torch.randint(0, 2, (32,))\n"
       "        self.val_x, self.val_y = torch.randn(16, 10), torch.randint(0, 2, (16,))\n"
       "        self.best = None\n")),
    C("strict-checkpoint-name", "eval_trainer.py", "",
      ('torch.save(trainer.model.state_dict(), "checkpoint.pt")',
       'torch.save(trainer.model.state_dict(), "checkpoint-final.pt")')),
    C("strict-comment-and-import", "cnn_main.py", "",
      ("import torch\n", "import math  # for later\n\nimport torch\n")),
    C("strict-in-place-update", "regression_main.py", "",
      ("            w -= 0.1 * w.grad\n", "            w.sub_(0.1 * w.grad)\n")),
    B("strict-seed", "zero_grad_main.py", "", ("torch.manual_seed(0)", "torch.manual_seed(1)"),
      why="a changed seed", quick=True),
    B("strict-extra-draw", "zero_grad_main.py", "",
      ("    optimizer = torch.optim.Adam", "    torch.rand(1)\n    optimizer = torch.optim.Adam"),
      why="one more random draw"),
    B("strict-lr", "loader_trainer.py", "", ('default=0.01', 'default=0.0104'), why="a learning rate by 4%"),
    B("strict-betas", "loader_trainer.py", "",
      ("torch.optim.Adam(self.model.parameters(), lr=args.lr)",
       "torch.optim.Adam(self.model.parameters(), lr=args.lr, betas=(0.9, 0.99))"), why="a hyperparameter"),
    B("strict-epochs", "loader_trainer.py", "", ('"--epochs", type=int, default=2', '"--epochs", type=int, default=3'),
      why="a count"),
    B("strict-mean-dim", "workers_dataset.py", "",
      ("x.sum().unsqueeze(0)", "x.mean().unsqueeze(0)"), why="sum for mean"),
    B("strict-dropped-statement", "train_eval_modes.py", "",
      ("            optimizer.step()\n", ""), why="a dropped statement"),
    B("strict-detached-target", "regression_main.py", "",
      ("        loss = ((x @ w + bias - y) ** 2).mean()", "        loss = ((x @ w.detach() + bias - y) ** 2).mean()"),
      why="a detached weight: its gradient stops"),
    B("strict-momentum", "pinned_loop.py", "", ("lr=0.05, momentum=0.9", "lr=0.05, momentum=0.95"),
      why="a hyperparameter"),
    B("strict-checkpoint-content", "eval_trainer.py", "",
      ("        val_loss, accuracy = trainer.evaluate()\n",
       "        val_loss, accuracy = trainer.evaluate()\n        trainer.model[0].weight.data[0, 0] += 1e-3\n"),
      why="a weight nudged by 1e-3"),
    B("strict-printed-only", "augmenting_dataset.py", "",
      ('print(f"first batch mean {batches[0].mean().item():.5f}")', 'print(f"first batch mean {batches[0].mean().item() * 1.001:.5f}")'),
      why="a printed metric"),
    B("strict-label-flipped", "eval_trainer.py", "",
      ("        self.val_x, self.val_y = torch.randn(16, 10), torch.randint(0, 2, (16,))\n",
       "        self.val_x, self.val_y = torch.randn(16, 10), torch.randint(0, 2, (16,))\n"
       "        self.val_y[0] = 1 - self.val_y[0]\n"), why="one label flipped"),
    # -- written after the checks above were settled and run once as a held-out set (10 correct, 10
    # broken: all correct passed, 9 broken flagged; the miss, a checkpoint saved before the step,
    # made verify compare the checkpoints a run writes) ---------------------------------------------

    C("late-tl302-fix", "gan_like.py", "TL302", fix=True),
    C("late-tl302-user-true", "gan_like.py", "TL302",
      ("self.c_opt.zero_grad(set_to_none=False)", "self.c_opt.zero_grad(set_to_none=True)"),
      ("self.g_opt.zero_grad(set_to_none=False)", "self.g_opt.zero_grad(set_to_none=True)")),
    C("late-strict-commuted", "gan_like.py", "", ("c_loss = real_loss + fake_loss", "c_loss = fake_loss + real_loss")),
    C("late-tl101-fix", "scheduler_run.py", "TL101", fix=True),
    C("late-tl305-fix", "scheduler_run.py", "TL305", fix=True),
    C("late-strict-rename", "scheduler_run.py", "",
      ("ACCUMULATE = 2\n", "STEPS_PER_UPDATE = 2\n"),
      ("/ ACCUMULATE\n", "/ STEPS_PER_UPDATE\n"), ("% ACCUMULATE == 0", "% STEPS_PER_UPDATE == 0")),
    C("late-tl201-fix", "text_classifier.py", "TL201", fix=True),
    C("late-tl301-fix", "text_classifier.py", "TL301", fix=True),
    C("late-tl306-fix", "text_classifier.py", "TL306", fix=True),
    C("late-tl301-user", "text_classifier.py", "TL301",
      ("    for tokens, labels in loader:\n        correct",
       "    with torch.no_grad():\n        batches = list(loader)\n    for tokens, labels in batches:\n        with torch.no_grad():\n            correct")),
    B("late-detach-dropped", "gan_like.py", "TL302",
      ("self.critic(fake.detach())", "self.critic(fake)"), ("self.c_opt.zero_grad(set_to_none=False)", "self.c_opt.zero_grad()")),
    B("late-betas", "gan_like.py", "TL302",
      ("self.g_opt = torch.optim.Adam(self.generator.parameters(), lr=1e-3, betas=(0.5, 0.999))",
       "self.g_opt = torch.optim.Adam(self.generator.parameters(), lr=1e-3)")),
    B("late-scheduler-inside", "scheduler_run.py", "",
      ("                optimizer.zero_grad()\n        scheduler.step()\n",
       "                optimizer.zero_grad()\n                scheduler.step()\n")),
    B("late-accumulate-count", "scheduler_run.py", "TL305",
      ("running += loss\n", "running += loss.detach()\n"), ("/ ACCUMULATE\n", "/ len(batches)\n")),
    B("late-checkpoint-before-step", "scheduler_run.py", "",
      ('        torch.save({"model": model.state_dict(), "epoch": epoch}, f"epoch{epoch}.pt")\n', ""),
      ("        optimizer.zero_grad()\n        for index", "        torch.save({\"model\": model.state_dict(), \"epoch\": epoch}, f\"epoch{epoch}.pt\")\n        optimizer.zero_grad()\n        for index")),
    B("late-dropout", "text_classifier.py", "", ('"--dropout", type=float, default=0.1', '"--dropout", type=float, default=0.2')),
    B("late-eval-dropped", "text_classifier.py", "TL301", ("    model.eval()\n    correct = 0\n", "    correct = 0\n")),
    B("late-tl306-before", "text_classifier.py", "TL306",
      ("    model.eval()\n    correct = 0\n", "    model.eval()\n    model.train()\n    correct = 0\n")),
    B("late-seed-moved", "text_classifier.py", "",
      ("    torch.manual_seed(0)\n    train = DataLoader", "    train = DataLoader"),
      ("    model = Classifier(20, args.width, args.dropout)\n", "    model = Classifier(20, args.width, args.dropout)\n    torch.manual_seed(0)\n")),
    B("late-valid-shuffled", "text_classifier.py", "TL201",
      ("valid = DataLoader(Sentences(16, 6, 20), batch_size=8)", "valid = DataLoader(Sentences(16, 6, 20), batch_size=8, shuffle=True, num_workers=2)")),
)
