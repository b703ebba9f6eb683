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
    # A loader built through the script's own helper: the fix goes to the helper's call.
    C("tl201-wrapper-call-fix", "wrapped_loaders.py", "TL201", fix=True),
    C("tl201-user-wrapper-workers", "wrapped_loaders.py", "TL201",
      ("make_loader(train_set, 8, shuffle=True)", "make_loader(train_set, 8, shuffle=True, num_workers=2)")),
    B("tl201-wrapper-shuffle-dropped", "wrapped_loaders.py", "TL201",
      ("make_loader(train_set, 8, shuffle=True)", "make_loader(train_set, 8, num_workers=2)"),
      why="an argument of the helper's call replaced"),
    B("tl201-wrapper-batch-size", "wrapped_loaders.py", "TL201",
      ("make_loader(train_set, 8, shuffle=True)", "make_loader(train_set, 4, shuffle=True, num_workers=4)"),
      why="the helper's positional batch size edited with the fix"),
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
    C("tl203-wrapper-call-fix", "wrapped_loaders.py", "TL203", fix=True),
    B("tl203-wrapper-drop-last", "wrapped_loaders.py", "TL203",
      ("make_loader(val_set, 16, num_workers=2)", "make_loader(val_set, 16, num_workers=2, persistent_workers=True, drop_last=True)"),
      why="an extra argument at the helper's call"),
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

    # -- written blind for the verify-blind task by a helper who had read neither this corpus nor its
    # test, and run once on the build of main 34968f3 before anything changed (132 changes to 15
    # scripts; docs/measurements-verify.md): 2 of 64 correct changes failed (TL401's fix
    # of a script that saves its state_dict) and 2 of 68 broken ones passed (a scaler enabled on the
    # CPU; a requires_grad on a tensor the loop overwrites, which changes nothing the program leaves:
    # relabelled correct here, counted as a miss in the blind figures) ------------------------------
    # blind_regress.py
    C('blind-s01-c-tl305-fix', 'blind_regress.py', 'TL305', fix=True, why="torchlint's own fix: running += loss.detach()"),
    C('blind-s01-c-tl201-fix', 'blind_regress.py', 'TL201', fix=True, why="torchlint's own fix: num_workers=4 with a shuffled loader"),
    C('blind-s01-c-tl302-fix', 'blind_regress.py', 'TL302',
      ('            opt.zero_grad()\n', '            opt.zero_grad(set_to_none=True)\n'),
      why="torchlint's own fix: zero_grad(set_to_none=True)"),
    C('blind-s01-c-tl801-fix', 'blind_regress.py', 'TL801',
      ('    state = torch.load(ckpt)\n', '    state = torch.load(ckpt, weights_only=True)\n'),
      why="torchlint's own fix: torch.load(..., weights_only=True)"),
    C('blind-s01-c-tl305-hand', 'blind_regress.py', 'TL305',
      ('            running += loss\n', '            running = running + loss.detach()\n'),
      why='hand: running = running + loss.detach()'),
    C('blind-s01-c-strict-extract', 'blind_regress.py', '',
      ('\n'
       'def main():\n',
       '\n'
       'def train_step(model, opt, loss_fn, xb, yb):\n'
       '    opt.zero_grad()\n'
       '    loss = loss_fn(model(xb), yb)\n'
       '    loss.backward()\n'
       '    opt.step()\n'
       '    return loss\n'
       '\n'
       '\n'
       'def main():\n'),
      ('            opt.zero_grad()\n'
       '            loss = loss_fn(model(xb), yb)\n'
       '            loss.backward()\n'
       '            opt.step()\n',
       '            loss = train_step(model, opt, loss_fn, xb, yb)\n'),
      why='hand refactor: the step moved into a function'),
    B('blind-s01-b-tl305-assign', 'blind_regress.py', 'TL305',
      ('            running += loss\n', '            running = loss.detach()\n'),
      why='accumulation replaced by assignment: only the last loss is kept'),
    B('blind-s01-b-tl201-noshuffle', 'blind_regress.py', 'TL201',
      ('    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True)\n',
       '    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, num_workers=2)\n'),
      why='workers added but shuffle=True dropped'),
    B('blind-s01-b-tl201-persistent', 'blind_regress.py', 'TL201',
      ('    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True)\n',
       '    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True, num_workers=2, persistent_workers=True)\n'),
      why='persistent workers draw no new base seed per epoch: the global stream, hence the shuffle order of epoch 2+, changes'),
    B('blind-s01-b-strict-ckpt-epoch', 'blind_regress.py', '',
      ('    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": args.epochs}, ckpt)\n',
       '    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": epoch}, ckpt)\n'),
      why='checkpoint saves the loop variable (off by one) instead of the epoch count'),
    B('blind-s01-b-tl302-order', 'blind_regress.py', 'TL302',
      ('            opt.zero_grad()\n', ''),
      ('            loss.backward()\n'
       '            opt.step()\n',
       '            loss.backward()\n'
       '            opt.zero_grad(set_to_none=True)\n'
       '            opt.step()\n'),
      why='zero_grad moved after backward: the step sees no gradient'),
    B('blind-s01-b-strict-lr', 'blind_regress.py', '',
      ('    parser.add_argument("--lr", type=float, default=0.05)\n',
       '    parser.add_argument("--lr", type=float, default=0.5)\n'),
      why='default learning rate changed'),
    # blind_trainer.py
    C('blind-s02-c-tl301-fix', 'blind_trainer.py', 'TL301', fix=True, why="torchlint's own fix: @torch.no_grad() on evaluate"),
    C('blind-s02-c-tl306-fix', 'blind_trainer.py', 'TL306', fix=True, why="torchlint's own fix: model.train() after evaluate()"),
    C('blind-s02-c-tl301-hand', 'blind_trainer.py', 'TL301',
      ('        logits = self.model(self.vx)\n'
       '        loss = F.cross_entropy(logits, self.vy)\n'
       '        acc = (logits.argmax(dim=1) == self.vy).float().mean()\n',
       '        with torch.no_grad():\n'
       '            logits = self.model(self.vx)\n'
       '            loss = F.cross_entropy(logits, self.vy)\n'
       '            acc = (logits.argmax(dim=1) == self.vy).float().mean()\n'),
      why='hand: with torch.no_grad() inside evaluate'),
    C('blind-s02-c-tl306-top', 'blind_trainer.py', 'TL306',
      ('        for epoch in range(self.epochs):\n'
       '            for i in range(0, 128, 32):\n',
       '        for epoch in range(self.epochs):\n'
       '            self.model.train()\n'
       '            for i in range(0, 128, 32):\n'),
      why='hand: model.train() at the top of every epoch'),
    C('blind-s02-c-tl306-in-eval', 'blind_trainer.py', 'TL306',
      ('        acc = (logits.argmax(dim=1) == self.vy).float().mean()\n'
       '        return loss, acc\n',
       '        acc = (logits.argmax(dim=1) == self.vy).float().mean()\n'
       '        self.model.train()\n'
       '        return loss, acc\n'),
      why='hand: evaluate restores train mode before it returns'),
    C('blind-s02-c-tl302-fix', 'blind_trainer.py', 'TL302',
      ('                self.opt.zero_grad()\n', '                self.opt.zero_grad(set_to_none=True)\n'),
      why="torchlint's own fix with Adam"),
    C('blind-s02-c-strict-eq', 'blind_trainer.py', '',
      ('        acc = (logits.argmax(dim=1) == self.vy).float().mean()\n',
       '        acc = logits.argmax(1).eq(self.vy).float().mean()\n'),
      why='hand: the accuracy spelled with eq()'),
    B('blind-s02-b-tl301-eval-moved', 'blind_trainer.py', 'TL301',
      ('    def evaluate(self):\n'
       '        self.model.eval()\n'
       '        logits = self.model(self.vx)\n',
       '    @torch.no_grad()\n'
       '    def evaluate(self):\n'
       '        logits = self.model(self.vx)\n'
       '        self.model.eval()\n'),
      why='no_grad added, but model.eval() moved after the forward: validation runs with dropout'),
    B('blind-s02-b-tl306-train-first', 'blind_trainer.py', 'TL306',
      ('        self.model.eval()\n'
       '        logits = self.model(self.vx)\n',
       '        self.model.eval()\n'
       '        self.model.train()\n'
       '        logits = self.model(self.vx)\n'),
      why='train() put before the evaluation forward: evaluation runs in train mode'),
    B('blind-s02-b-tl306-after-step', 'blind_trainer.py', 'TL306',
      ('                self.opt.step()\n'
       '            val_loss, acc = self.evaluate()\n',
       '                self.opt.step()\n'
       '                self.model.train()\n'
       '            val_loss, acc = self.evaluate()\n'),
      why='train() after each step: the first batch after an evaluation still runs in eval mode'),
    B('blind-s02-b-tl301-reduction', 'blind_trainer.py', 'TL301',
      ('\n    def evaluate(self):\n', '\n    @torch.no_grad()\n    def evaluate(self):\n'),
      ('        loss = F.cross_entropy(logits, self.vy)\n',
       '        loss = F.cross_entropy(logits, self.vy, reduction="sum")\n'),
      why='validation loss reduction changed'),
    B('blind-s02-b-strict-dropout', 'blind_trainer.py', '',
      ('        self.drop = nn.Dropout(0.3)\n', '        self.drop = nn.Dropout(0.2)\n'),
      why='dropout p changed'),
    B('blind-s02-b-tl302-betas', 'blind_trainer.py', 'TL302',
      ('        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)\n',
       '        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr, betas=(0.9, 0.99))\n'),
      ('                self.opt.zero_grad()\n', '                self.opt.zero_grad(set_to_none=True)\n'),
      why='Adam betas changed'),
    # blind_convbn.py
    # quick: the blind run's failures (TL401 on a script that saves its state_dict; a scaler enabled
    # on the CPU) and a broken TL401 change on the same script, checked in the default run
    C('blind-s03-c-tl401-fix', 'blind_convbn.py', 'TL401', fix=True, why="torchlint's own fix: bias=False on both convs",
      quick=True),
    C('blind-s03-c-tl401-one', 'blind_convbn.py', 'TL401',
      ('        nn.Conv2d(3, 8, 3, padding=1),\n', '        nn.Conv2d(3, 8, 3, padding=1, bias=False),\n'),
      why='hand: only the first conv loses its bias', quick=True),
    C('blind-s03-c-strict-slice', 'blind_convbn.py', '',
      ('        idx = slice((step % 3) * 16, (step % 3) * 16 + 16)\n',
       '        start = (step % 3) * 16\n'
       '        idx = slice(start, start + 16)\n'),
      why='hand refactor of the batch index'),
    C('blind-s03-c-strict-inference', 'blind_convbn.py', '',
      ('    with torch.no_grad():\n', '    with torch.inference_mode():\n'),
      why='evaluation under inference_mode instead of no_grad'),
    B('blind-s03-b-tl401-linear', 'blind_convbn.py', 'TL401',
      ('        nn.Conv2d(3, 8, 3, padding=1),\n', '        nn.Conv2d(3, 8, 3, padding=1, bias=False),\n'),
      ('        nn.Conv2d(8, 8, 3, padding=1),\n', '        nn.Conv2d(8, 8, 3, padding=1, bias=False),\n'),
      ('        nn.Linear(8, 3),\n', '        nn.Linear(8, 3, bias=False),\n'),
      why="the classifier's bias removed too (no batch norm follows it)", quick=True),
    B('blind-s03-b-tl401-momentum', 'blind_convbn.py', 'TL401',
      ('        nn.Conv2d(3, 8, 3, padding=1),\n'
       '        nn.BatchNorm2d(8),\n',
       '        nn.Conv2d(3, 8, 3, padding=1, bias=False),\n'
       '        nn.BatchNorm2d(8, momentum=0.01),\n'),
      ('        nn.Conv2d(8, 8, 3, padding=1),\n', '        nn.Conv2d(8, 8, 3, padding=1, bias=False),\n'),
      why="first batch norm's momentum changed"),
    B('blind-s03-b-tl401-eps', 'blind_convbn.py', 'TL401',
      ('        nn.Conv2d(3, 8, 3, padding=1),\n', '        nn.Conv2d(3, 8, 3, padding=1, bias=False),\n'),
      ('        nn.Conv2d(8, 8, 3, padding=1),\n'
       '        nn.BatchNorm2d(8),\n',
       '        nn.Conv2d(8, 8, 3, padding=1, bias=False),\n'
       '        nn.BatchNorm2d(8, eps=1e-3),\n'),
      why="second batch norm's eps changed"),
    B('blind-s03-b-tl401-no-eval', 'blind_convbn.py', 'TL401',
      ('        nn.Conv2d(3, 8, 3, padding=1),\n', '        nn.Conv2d(3, 8, 3, padding=1, bias=False),\n'),
      ('        nn.Conv2d(8, 8, 3, padding=1),\n', '        nn.Conv2d(8, 8, 3, padding=1, bias=False),\n'),
      ('    model.eval()\n', ''),
      why='model.eval() dropped: the evaluation uses batch statistics'),
    B('blind-s03-b-strict-wd', 'blind_convbn.py', '',
      ('    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)\n',
       '    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)\n'),
      why='weight decay dropped'),
    B('blind-s03-b-tl401-seed', 'blind_convbn.py', 'TL401',
      ('        nn.Conv2d(3, 8, 3, padding=1),\n', '        nn.Conv2d(3, 8, 3, padding=1, bias=False),\n'),
      ('        nn.Conv2d(8, 8, 3, padding=1),\n', '        nn.Conv2d(8, 8, 3, padding=1, bias=False),\n'),
      ('    torch.manual_seed(0)\n', '    torch.manual_seed(1)\n'),
      why='fix plus a changed seed'),
    # blind_amp_clip.py
    C('blind-s04-c-tl601-fix', 'blind_amp_clip.py', 'TL601', fix=True, why="torchlint's own fix: scaler.unscale_(opt) before the clip"),
    C('blind-s04-c-tl601-helper', 'blind_amp_clip.py', 'TL601',
      ('device = "cpu"\n'
       '\n',
       'device = "cpu"\n'
       '\n'
       '\n'
       'def clip(model, opt, scaler, max_norm):\n'
       '    scaler.unscale_(opt)\n'
       '    return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)\n'
       '\n'),
      ('        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)\n',
       '        clip(model, opt, scaler, 0.5)\n'),
      why='hand: unscale and clip in a helper function'),
    C('blind-s04-c-strict-modelzero', 'blind_amp_clip.py', '',
      ('        opt.zero_grad(set_to_none=True)\n', '        model.zero_grad(set_to_none=True)\n'),
      why='model.zero_grad instead of opt.zero_grad (same parameters)'),
    B('blind-s04-b-tl601-after', 'blind_amp_clip.py', 'TL601',
      ('        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)\n'
       '        scaler.step(opt)\n',
       '        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)\n'
       '        scaler.unscale_(opt)\n'
       '        scaler.step(opt)\n'),
      why='unscale_ placed after the clip'),
    B('blind-s04-b-tl601-maxnorm', 'blind_amp_clip.py', 'TL601',
      ('        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)\n',
       '        scaler.unscale_(opt)\n'
       '        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)\n'),
      why='clip threshold changed'),
    B('blind-s04-b-tl601-value', 'blind_amp_clip.py', 'TL601',
      ('        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)\n',
       '        scaler.unscale_(opt)\n'
       '        torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)\n'),
      why='clip by value instead of by norm'),
    B('blind-s04-b-strict-fp16', 'blind_amp_clip.py', '',
      ('        with torch.autocast(device_type=device, dtype=torch.bfloat16):\n',
       '        with torch.autocast(device_type=device, dtype=torch.float16):\n'),
      why='autocast dtype changed'),
    B('blind-s04-b-strict-initscale', 'blind_amp_clip.py', '',
      ('    scaler = torch.amp.GradScaler(device, init_scale=1024.0)\n',
       '    scaler = torch.amp.GradScaler(device, init_scale=2048.0)\n'),
      why='initial loss scale changed'),
    # blind_dist_sampler.py
    C('blind-s05-c-tl502-fix', 'blind_dist_sampler.py', 'TL502', fix=True, why="torchlint's own fix: sampler.set_epoch(epoch)"),
    C('blind-s05-c-tl502-loader', 'blind_dist_sampler.py', 'TL502',
      ('        total = 0.0\n'
       '        for xb, yb in loader:\n',
       '        total = 0.0\n'
       '        loader.sampler.set_epoch(epoch)\n'
       '        for xb, yb in loader:\n'),
      why='hand: set_epoch through loader.sampler, just before the iteration'),
    C('blind-s05-c-tl201-fix', 'blind_dist_sampler.py', 'TL201', fix=True, why="torchlint's own fix: workers with a DistributedSampler"),
    C('blind-s05-c-strict-range', 'blind_dist_sampler.py', '',
      ('    for epoch in range(epochs):\n', '    for epoch in range(0, epochs, 1):\n'),
      why='trivially respelled loop'),
    B('blind-s05-b-tl502-plus1', 'blind_dist_sampler.py', 'TL502',
      ('    for epoch in range(epochs):\n'
       '        total = 0.0\n',
       '    for epoch in range(epochs):\n'
       '        sampler.set_epoch(epoch + 1)\n'
       '        total = 0.0\n'),
      why="set_epoch(epoch + 1): the first epoch's order changes"),
    B('blind-s05-b-tl502-end', 'blind_dist_sampler.py', 'TL502',
      ('            total += loss.item()\n'
       '        print(f"epoch {epoch} loss {total / len(loader):.6f}")\n',
       '            total += loss.item()\n'
       '        sampler.set_epoch(epoch)\n'
       '        print(f"epoch {epoch} loss {total / len(loader):.6f}")\n'),
      why='set_epoch at the end of the epoch: epochs 0 and 1 share an order'),
    B('blind-s05-b-tl502-seed', 'blind_dist_sampler.py', 'TL502',
      ('    sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=True, seed=0)\n',
       '    sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=True, seed=1)\n'),
      ('    for epoch in range(epochs):\n'
       '        total = 0.0\n',
       '    for epoch in range(epochs):\n'
       '        sampler.set_epoch(epoch)\n'
       '        total = 0.0\n'),
      why='sampler seed changed'),
    B('blind-s05-b-tl502-zero', 'blind_dist_sampler.py', 'TL502',
      ('    for epoch in range(epochs):\n'
       '        total = 0.0\n',
       '    for epoch in range(epochs):\n'
       '        sampler.set_epoch(0)\n'
       '        total = 0.0\n'),
      why='set_epoch(0) every epoch: still the same order'),
    # blind_local_rank.py
    C('blind-s06-c-tl503-fix', 'blind_local_rank.py', 'TL503', fix=True, why="torchlint's own fix: both spellings"),
    C('blind-s06-c-tl503-dest', 'blind_local_rank.py', 'TL503',
      ('    parser.add_argument("--local_rank", type=int, default=0)\n',
       '    parser.add_argument("--local-rank", "--local_rank", dest="local_rank", type=int, default=0)\n'),
      why='hand: dashed spelling first with an explicit dest'),
    C('blind-s06-c-tl503-nodest', 'blind_local_rank.py', 'TL503',
      ('    parser.add_argument("--local_rank", type=int, default=0)\n',
       '    parser.add_argument("--local-rank", "--local_rank", type=int, default=0)\n'),
      why='hand: dashed spelling first, dest derived (local_rank)'),
    C('blind-s06-c-tl302-fix', 'blind_local_rank.py', 'TL302',
      ('        opt.zero_grad()\n', '        opt.zero_grad(set_to_none=True)\n'),
      why="torchlint's own fix under DDP"),
    B('blind-s06-b-tl503-dash-only', 'blind_local_rank.py', 'TL503',
      ('    parser.add_argument("--local_rank", type=int, default=0)\n',
       '    parser.add_argument("--local-rank", type=int, default=0)\n'),
      why='underscore spelling dropped'),
    B('blind-s06-b-tl503-default', 'blind_local_rank.py', 'TL503',
      ('    parser.add_argument("--local_rank", type=int, default=0)\n',
       '    parser.add_argument("--local_rank", "--local-rank", type=int, default=-1)\n'),
      why='default changed to -1 (changes the seed)'),
    B('blind-s06-b-tl503-momentum', 'blind_local_rank.py', 'TL503',
      ('    parser.add_argument("--local_rank", type=int, default=0)\n',
       '    parser.add_argument("--local_rank", "--local-rank", type=int, default=0)\n'),
      ('    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.5)\n',
       '    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)\n'),
      why='an unrelated momentum slip'),
    # blind_finetune.py
    C('blind-s07-c-tl307-fix', 'blind_finetune.py', 'TL307', fix=True, why="torchlint's own fix: requires_grad"),
    C('blind-s07-c-tl307-method', 'blind_finetune.py', 'TL307',
      ('    for p in model.backbone.parameters():\n'
       '        p.require_grad = False\n',
       '    model.backbone.requires_grad_(False)\n'),
      why='hand: requires_grad_(False) on the backbone'),
    C('blind-s07-c-tl307-filter', 'blind_finetune.py', 'TL307',
      ('        p.require_grad = False\n'
       '    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n',
       '        p.requires_grad = False\n'
       '    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1, momentum=0.9)\n'),
      why='fix plus an optimizer over trainable parameters only'),
    B('blind-s07-b-tl307-true', 'blind_finetune.py', 'TL307',
      ('        p.require_grad = False\n', '        p.requires_grad = True\n'),
      why='the flag set to True'),
    B('blind-s07-b-tl307-head', 'blind_finetune.py', 'TL307',
      ('    for p in model.backbone.parameters():\n'
       '        p.require_grad = False\n',
       '    for p in model.head.parameters():\n'
       '        p.requires_grad = False\n'),
      why='the head frozen instead of the backbone'),
    B('blind-s07-b-tl307-partial', 'blind_finetune.py', 'TL307',
      ('    for p in model.backbone.parameters():\n'
       '        p.require_grad = False\n',
       '    for p in model.backbone[:2].parameters():\n'
       '        p.requires_grad = False\n'),
      why='only the first backbone layer frozen'),
    B('blind-s07-b-strict-range', 'blind_finetune.py', '',
      ('        for i in range(0, 60, 20):\n', '        for i in range(0, 40, 20):\n'),
      why='loop bound off: the last batch is never trained'),
    # blind_logexp.py
    C('blind-s08-c-tl607-fix', 'blind_logexp.py', 'TL607', fix=True, why="torchlint's own fix: log1p, logsumexp, expm1"),
    C('blind-s08-c-tl607-softplus', 'blind_logexp.py', 'TL607',
      ('    return torch.log(1 + torch.exp(-margin)).mean()\n',
       '    return torch.nn.functional.softplus(-margin).mean()\n'),
      why='hand: softplus for log(1 + exp(-m))'),
    C('blind-s08-c-tl607-lse', 'blind_logexp.py', 'TL607',
      ('    return torch.log(torch.sum(torch.exp(logits), dim=1))\n',
       '    return torch.logsumexp(logits, dim=1)\n'),
      why='hand: logsumexp only'),
    C('blind-s08-c-tl607-expm1', 'blind_logexp.py', 'TL607',
      ('    growth = torch.exp(torch.tensor([1e-4, 1e-3, 0.5])) - 1\n',
       '    growth = torch.tensor([1e-4, 1e-3, 0.5]).expm1()\n'),
      why='hand: Tensor.expm1()'),
    B('blind-s08-b-tl607-dim', 'blind_logexp.py', 'TL607',
      ('    return torch.log(1 + torch.exp(-margin)).mean()\n',
       '    return torch.log1p(torch.exp(-margin)).mean()\n'),
      ('    return torch.log(torch.sum(torch.exp(logits), dim=1))\n',
       '    return torch.logsumexp(logits, dim=1, keepdim=True)\n'),
      ('    growth = torch.exp(torch.tensor([1e-4, 1e-3, 0.5])) - 1\n',
       '    growth = torch.expm1(torch.tensor([1e-4, 1e-3, 0.5]))\n'),
      why='keepdim=True: the scores broadcast against the targets to a 50x50 matrix'),
    B('blind-s08-b-tl607-sign', 'blind_logexp.py', 'TL607',
      ('    return torch.log(1 + torch.exp(-margin)).mean()\n',
       '    return torch.log1p(torch.exp(margin)).mean()\n'),
      ('    return torch.log(torch.sum(torch.exp(logits), dim=1))\n',
       '    return torch.logsumexp(logits, dim=1)\n'),
      ('    growth = torch.exp(torch.tensor([1e-4, 1e-3, 0.5])) - 1\n',
       '    growth = torch.expm1(torch.tensor([1e-4, 1e-3, 0.5]))\n'),
      why='sign of the margin dropped'),
    B('blind-s08-b-tl607-expm1-1', 'blind_logexp.py', 'TL607',
      ('    return torch.log(1 + torch.exp(-margin)).mean()\n',
       '    return torch.log1p(torch.exp(-margin)).mean()\n'),
      ('    return torch.log(torch.sum(torch.exp(logits), dim=1))\n',
       '    return torch.logsumexp(logits, dim=1)\n'),
      ('    growth = torch.exp(torch.tensor([1e-4, 1e-3, 0.5])) - 1\n',
       '    growth = torch.expm1(torch.tensor([1e-4, 1e-3, 0.5])) - 1\n'),
      why='the - 1 kept'),
    B('blind-s08-b-tl607-log1p-1', 'blind_logexp.py', 'TL607',
      ('    return torch.log(1 + torch.exp(-margin)).mean()\n',
       '    return torch.log1p(1 + torch.exp(-margin)).mean()\n'),
      why='log1p applied to 1 + x (log(2 + x))'),
    # blind_deprecated.py
    C('blind-s09-c-tl703-fix', 'blind_deprecated.py', 'TL703', fix=True, why="torchlint's own fix: torch.outer"),
    C('blind-s09-c-tl705-fix', 'blind_deprecated.py', 'TL705', fix=True, why="torchlint's own fix: use_reentrant=False"),
    C('blind-s09-c-tl707-fix', 'blind_deprecated.py', 'TL707', fix=True, why="torchlint's own fix: public default_collate"),
    C('blind-s09-c-tl705-true', 'blind_deprecated.py', 'TL705',
      ('        h = torch.utils.checkpoint.checkpoint(self.block, h)\n',
       '        h = torch.utils.checkpoint.checkpoint(self.block, h, use_reentrant=True)\n'),
      why='hand: use_reentrant=True (the old default, explicit)'),
    C('blind-s09-c-tl201-fix', 'blind_deprecated.py', 'TL201', fix=True, why="torchlint's own fix: workers with a private collate"),
    C('blind-s09-c-tl705-norng', 'blind_deprecated.py', 'TL705',
      ('        h = torch.utils.checkpoint.checkpoint(self.block, h)\n',
       '        h = torch.utils.checkpoint.checkpoint(self.block, h, use_reentrant=False, preserve_rng_state=False)\n'),
      why='hand: non-reentrant, no RNG state kept (the block draws nothing)'),
    B('blind-s09-b-tl703-swap', 'blind_deprecated.py', 'TL703',
      ('    rank1 = torch.ger(a, b)\n', '    rank1 = torch.outer(b, a)\n'),
      why='outer with its arguments swapped'),
    B('blind-s09-b-tl707-shuffle', 'blind_deprecated.py', 'TL707',
      ('from torch.utils.data._utils.collate import default_collate\n',
       'from torch.utils.data import default_collate\n'),
      ('    loader = DataLoader(ds, batch_size=10, collate_fn=default_collate)\n',
       '    loader = DataLoader(ds, batch_size=10, shuffle=True, collate_fn=default_collate)\n'),
      why='fix plus shuffle=True: the batch order changes'),
    B('blind-s09-b-tl705-detach', 'blind_deprecated.py', 'TL705',
      ('        h = torch.relu(self.inp(x))\n'
       '        h = torch.utils.checkpoint.checkpoint(self.block, h)\n',
       '        h = torch.relu(self.inp(x)).detach()\n'
       '        h = torch.utils.checkpoint.checkpoint(self.block, h, use_reentrant=False)\n'),
      why='a detach before the checkpointed block: the input layer stops training'),
    B('blind-s09-b-strict-arange', 'blind_deprecated.py', '',
      ('    b = torch.arange(3.0)\n', '    b = torch.arange(1.0, 4.0)\n'),
      why='wrong vector values'),
    # blind_moved.py
    C('blind-s10-c-tl101-fix', 'blind_moved.py', 'TL101', fix=True, why="torchlint's own fix: device= on the three factories"),
    C('blind-s10-c-tl101-zeros', 'blind_moved.py', 'TL101',
      ('        h = torch.zeros(batch, dim).to(device)\n',
       '        h = torch.zeros(batch, dim, device=device)\n'),
      why='hand: only the zeros'),
    C('blind-s10-c-tl101-newzeros', 'blind_moved.py', 'TL101',
      ('        h = torch.zeros(batch, dim).to(device)\n', '        h = seq.new_zeros(batch, dim)\n'),
      why="hand: new_zeros on the sequence's device"),
    B('blind-s10-b-tl101-ones', 'blind_moved.py', 'TL101',
      ('    seq = torch.randn(steps, batch, dim).to(device)\n',
       '    seq = torch.randn(steps, batch, dim, device=device)\n'),
      ('        h = torch.zeros(batch, dim).to(device)\n',
       '        h = torch.ones(batch, dim, device=device)\n'),
      ('            noise = torch.randn(batch, dim).to(device) * 0.01\n',
       '            noise = torch.randn(batch, dim, device=device) * 0.01\n'),
      why='zeros became ones'),
    B('blind-s10-b-tl101-scale', 'blind_moved.py', 'TL101',
      ('    seq = torch.randn(steps, batch, dim).to(device)\n',
       '    seq = torch.randn(steps, batch, dim, device=device)\n'),
      ('        h = torch.zeros(batch, dim).to(device)\n',
       '        h = torch.zeros(batch, dim, device=device)\n'),
      ('            noise = torch.randn(batch, dim).to(device) * 0.01\n',
       '            noise = torch.randn(batch, dim, device=device) * 0.1\n'),
      why='noise scale changed'),
    B('blind-s10-b-tl101-rand', 'blind_moved.py', 'TL101',
      ('            noise = torch.randn(batch, dim).to(device) * 0.01\n',
       '            noise = torch.rand(batch, dim, device=device) * 0.01\n'),
      why='rand instead of randn'),
    B('blind-s10-b-tl101-hoist', 'blind_moved.py', 'TL101',
      ('        opt.zero_grad()\n'
       '        for t in range(steps):\n',
       '        opt.zero_grad()\n'
       '        noise = torch.randn(batch, dim, device=device) * 0.01\n'
       '        for t in range(steps):\n'),
      ('            noise = torch.randn(batch, dim).to(device) * 0.01\n', ''),
      why='noise hoisted out of the time loop (drawn once per epoch)'),
    C('blind-s10-b-tl101-leaf', 'blind_moved.py', 'TL101',
      ('        h = torch.zeros(batch, dim).to(device)\n',
       '        h = torch.zeros(batch, dim, device=device, requires_grad=True)\n'),
      why='blind-labelled broken, wrongly: the leaf is overwritten in the loop, so nothing the program leaves, prints or saves changes; backward only computes a gradient no one reads'),
    # blind_loader.py
    C('blind-s11-c-tl202-fix', 'blind_loader.py', 'TL202', fix=True, why="torchlint's own fix: pin_memory=True"),
    C('blind-s11-c-tl203-fix', 'blind_loader.py', 'TL203', fix=True, why="torchlint's own fix: persistent_workers=True"),
    C('blind-s11-c-strict-nonblocking', 'blind_loader.py', '',
      ('            xb, yb = xb.to(device), yb.to(device)\n',
       '            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)\n'),
      why='hand: non_blocking copies'),
    C('blind-s11-c-strict-oneworker', 'blind_loader.py', '',
      ('    loader = DataLoader(Squares(42), batch_size=8, shuffle=True, num_workers=2)\n',
       '    loader = DataLoader(Squares(42), batch_size=8, shuffle=True, num_workers=1)\n'),
      why='one worker instead of two'),
    B('blind-s11-b-tl202-droplast', 'blind_loader.py', 'TL202',
      ('    loader = DataLoader(Squares(42), batch_size=8, shuffle=True, num_workers=2)\n',
       '    loader = DataLoader(Squares(42), batch_size=8, shuffle=True, num_workers=2, pin_memory=True, drop_last=True)\n'),
      why='pin_memory plus drop_last (42 is not a multiple of 8)'),
    B('blind-s11-b-strict-typo', 'blind_loader.py', '',
      ('            xb, yb = xb.to(device), yb.to(device)\n',
       '            xb, yb = xb.to(device, non_blocking=True), xb.to(device, non_blocking=True)\n'),
      why='non_blocking rewrite copies xb twice (the target becomes the input)'),
    B('blind-s11-b-tl203-noshuffle', 'blind_loader.py', 'TL203',
      ('    loader = DataLoader(Squares(42), batch_size=8, shuffle=True, num_workers=2)\n',
       '    loader = DataLoader(Squares(42), batch_size=8, num_workers=2, persistent_workers=True)\n'),
      why='persistent workers, shuffle dropped'),
    B('blind-s11-b-tl202-batch', 'blind_loader.py', 'TL202',
      ('    loader = DataLoader(Squares(42), batch_size=8, shuffle=True, num_workers=2)\n',
       '    loader = DataLoader(Squares(42), batch_size=16, shuffle=True, num_workers=2, pin_memory=True)\n'),
      why='pin_memory plus a changed batch size'),
    # blind_ddp_ckpt.py
    C('blind-s12-c-tl505-fix', 'blind_ddp_ckpt.py', 'TL505', fix=True, why='torchlint\'s own fix: map_location="cpu"'),
    C('blind-s12-c-tl505-device', 'blind_ddp_ckpt.py', 'TL505',
      ('    restored = torch.load(path)\n',
       '    restored = torch.load(path, map_location=torch.device("cpu"))\n'),
      why="hand: map_location=torch.device('cpu')"),
    C('blind-s12-c-tl801-fix', 'blind_ddp_ckpt.py', 'TL801',
      ('    restored = torch.load(path)\n', '    restored = torch.load(path, weights_only=True)\n'),
      why="torchlint's own fix: weights_only=True"),
    C('blind-s12-c-tl302-fix', 'blind_ddp_ckpt.py', 'TL302',
      ('        opt.zero_grad()\n', '        opt.zero_grad(set_to_none=True)\n'),
      why="torchlint's own fix under DDP with Adam"),
    B('blind-s12-b-tl505-meta', 'blind_ddp_ckpt.py', 'TL505',
      ('    restored = torch.load(path)\n', '    restored = torch.load(path, map_location="meta")\n'),
      why="map_location='meta': values are not loaded"),
    B('blind-s12-b-tl505-early-save', 'blind_ddp_ckpt.py', 'TL505',
      ('    x, y = torch.randn(24, 4), torch.randn(24, 1)\n'
       '    for step in range(4):\n',
       '    x, y = torch.randn(24, 4), torch.randn(24, 1)\n'
       '    torch.save(model.state_dict(), os.path.join(HERE, "ddp.pt"))\n'
       '    for step in range(4):\n'),
      ('    torch.save(model.state_dict(), path)\n'
       '    restored = torch.load(path)\n',
       '    restored = torch.load(path, map_location="cpu")\n'),
      why='the save moved before training: the restored weights are the initial ones'),
    B('blind-s12-b-strict-lr', 'blind_ddp_ckpt.py', '',
      ('    opt = torch.optim.Adam(model.parameters(), lr=0.01)\n',
       '    opt = torch.optim.Adam(model.parameters(), lr=0.001)\n'),
      why='learning rate changed'),
    # blind_accum.py
    C('blind-s13-c-strict-rename', 'blind_accum.py', '',
      ('ACCUM = 3\n', 'ACCUM_STEPS = 3\n'),
      ('            loss = nn.functional.mse_loss(model(xb), yb) / ACCUM\n',
       '            loss = nn.functional.mse_loss(model(xb), yb) / ACCUM_STEPS\n'),
      ('            if (i + 1) % ACCUM == 0:\n', '            if (i + 1) % ACCUM_STEPS == 0:\n'),
      why='constant renamed'),
    C('blind-s13-c-strict-inference', 'blind_accum.py', '',
      ('    with torch.no_grad():\n', '    with torch.inference_mode():\n'),
      why='validation under inference_mode'),
    C('blind-s13-c-strict-split', 'blind_accum.py', '',
      ('        for i, (xb, yb) in enumerate(batches(x, y, 8)):\n',
       '        for i, (xb, yb) in enumerate(zip(x.split(8), y.split(8))):\n'),
      why='batches from Tensor.split'),
    C('blind-s13-c-tl302-fix', 'blind_accum.py', 'TL302',
      ('                opt.zero_grad()\n', '                opt.zero_grad(set_to_none=True)\n'),
      why="torchlint's own fix with gradient accumulation"),
    B('blind-s13-b-strict-offbyone', 'blind_accum.py', '',
      ('            if (i + 1) % ACCUM == 0:\n', '            if i % ACCUM == 0:\n'),
      why='accumulation boundary off by one'),
    B('blind-s13-b-strict-eval-left', 'blind_accum.py', '',
      ('        loss = nn.functional.mse_loss(model(vx), vy).item()\n'
       '    model.train()\n'
       '    return loss\n',
       '        loss = nn.functional.mse_loss(model(vx), vy).item()\n'
       '    return loss\n'),
      why='validate no longer restores train mode (dropout off after the first epoch)'),
    B('blind-s13-b-strict-noscale', 'blind_accum.py', '',
      ('            loss = nn.functional.mse_loss(model(xb), yb) / ACCUM\n',
       '            loss = nn.functional.mse_loss(model(xb), yb)\n'),
      why='loss no longer divided by the accumulation count'),
    B('blind-s13-b-strict-ckpt-obj', 'blind_accum.py', '',
      ('            torch.save({"epoch": epoch, "model": model.state_dict()}, ckpt)\n',
       '            torch.save({"epoch": epoch, "model": opt.state_dict()}, ckpt)\n'),
      why="checkpoint saves the optimizer's state instead of the model's"),
    B('blind-s13-b-tl302-swap', 'blind_accum.py', 'TL302',
      ('            if (i + 1) % ACCUM == 0:\n'
       '                opt.step()\n',
       '            if (i + 1) % ACCUM == 0:\n'
       '                opt.zero_grad(set_to_none=True)\n'
       '                opt.step()\n'),
      ('                opt.zero_grad()\n', ''),
      why='zero_grad swapped before step'),
    # blind_sched.py
    C('blind-s14-c-tl302-fix', 'blind_sched.py', 'TL302',
      ('        opt.zero_grad()\n', '        opt.zero_grad(set_to_none=True)\n'),
      why="torchlint's own fix"),
    C('blind-s14-c-strict-kw', 'blind_sched.py', '',
      ('        nn.utils.clip_grad_norm_(model.parameters(), args.clip)\n',
       '        nn.utils.clip_grad_norm_(model.parameters(), max_norm=args.clip)\n'),
      why='keyword argument'),
    C('blind-s14-c-strict-lr-read', 'blind_sched.py', '',
      ('        print(f"epoch {epoch} lr {sched.get_last_lr()[0]:.4f} loss {loss.item():.5f}")\n',
       '        print(f"epoch {epoch} lr {opt.param_groups[0][\'lr\']:.4f} loss {loss.item():.5f}")\n'),
      why='read the rate from the optimizer'),
    B('blind-s14-b-strict-order', 'blind_sched.py', '',
      ('        opt.step()\n        sched.step()\n', '        sched.step()\n        opt.step()\n'),
      why='scheduler stepped before the optimizer'),
    B('blind-s14-b-strict-momentum', 'blind_sched.py', '',
      ('    parser.add_argument("--momentum", type=float, default=0.9)\n',
       '    parser.add_argument("--momentum", type=float, default=0.99)\n'),
      why='momentum default changed'),
    B('blind-s14-b-strict-stepsize', 'blind_sched.py', '',
      ('    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)\n',
       '    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)\n'),
      why='schedule step size changed'),
    B('blind-s14-b-tl302-clip-moved', 'blind_sched.py', 'TL302',
      ('        opt.zero_grad()\n'
       '        loss = nn.functional.cross_entropy(model(x), y)\n'
       '        loss.backward()\n'
       '        nn.utils.clip_grad_norm_(model.parameters(), args.clip)\n'
       '        opt.step()\n',
       '        opt.zero_grad(set_to_none=True)\n'
       '        loss = nn.functional.cross_entropy(model(x), y)\n'
       '        loss.backward()\n'
       '        opt.step()\n'
       '        nn.utils.clip_grad_norm_(model.parameters(), args.clip)\n'),
      why='clip moved after the step'),
    B('blind-s14-b-strict-extra-draw', 'blind_sched.py', '',
      ('    torch.manual_seed(5)\n'
       '    model = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 2))\n',
       '    torch.manual_seed(5)\n'
       '    torch.rand(1)\n'
       '    model = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 2))\n'),
      why='an extra random draw before the model is built'),
    # blind_amp_legacy.py
    C('blind-s15-c-tl701-fix', 'blind_amp_legacy.py', 'TL701', fix=True, why="torchlint's own fix: torch.amp names"),
    C('blind-s15-c-tl703-hand', 'blind_amp_legacy.py', 'TL703',
      ('        self.grid = torch.range(0, 1, 0.25)\n', '        self.grid = torch.arange(0, 1.25, 0.25)\n'),
      why='hand: arange with the end moved by one step'),
    C('blind-s15-c-tl701-autocast', 'blind_amp_legacy.py', 'TL701',
      ('        with torch.cpu.amp.autocast(dtype=torch.bfloat16):\n',
       '        with torch.autocast("cpu", dtype=torch.bfloat16):\n'),
      why="hand: torch.autocast('cpu')"),
    C('blind-s15-c-tl701-scaler', 'blind_amp_legacy.py', 'TL701',
      ('        self.scaler = torch.cuda.amp.GradScaler(enabled=torch.cuda.is_available())\n',
       '        self.scaler = torch.amp.GradScaler("cuda", enabled=torch.cuda.is_available())\n'),
      why='hand: the scaler only'),
    C('blind-s15-c-tl701-narrow', 'blind_amp_legacy.py', 'TL701',
      ('        with torch.cpu.amp.autocast(dtype=torch.bfloat16):\n',
       '        with torch.amp.autocast("cpu", dtype=torch.bfloat16):\n'),
      ('            loss = nn.functional.cross_entropy(logits.float(), yb)\n',
       '        loss = nn.functional.cross_entropy(logits.float(), yb)\n'),
      why='hand: autocast around the forward only (the loss takes float logits anyway)'),
    B('blind-s15-b-tl701-fp16', 'blind_amp_legacy.py', 'TL701',
      ('        self.scaler = torch.cuda.amp.GradScaler(enabled=torch.cuda.is_available())\n',
       '        self.scaler = torch.amp.GradScaler("cuda", enabled=torch.cuda.is_available())\n'),
      ('        with torch.cpu.amp.autocast(dtype=torch.bfloat16):\n',
       '        with torch.amp.autocast("cpu", dtype=torch.float16):\n'),
      why='autocast dtype changed'),
    B('blind-s15-b-tl701-enabled', 'blind_amp_legacy.py', 'TL701',
      ('        self.scaler = torch.cuda.amp.GradScaler(enabled=torch.cuda.is_available())\n',
       '        self.scaler = torch.amp.GradScaler("cpu")\n'),
      why='scaler now enabled on the CPU (a different scaler state)', quick=True),
    B('blind-s15-b-tl703-end', 'blind_amp_legacy.py', 'TL703',
      ('        self.grid = torch.range(0, 1, 0.25)\n', '        self.grid = torch.arange(0, 1, 0.25)\n'),
      why='arange without the end point'),
    B('blind-s15-b-strict-nesterov', 'blind_amp_legacy.py', '',
      ('        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9, nesterov=True)\n',
       '        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)\n'),
      why='nesterov dropped'),
)
