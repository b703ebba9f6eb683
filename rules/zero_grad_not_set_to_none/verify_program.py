"""TL302 verification program: two MLPs trained with `zero_grad(set_to_none=False)`.

One uses SGD with momentum and weight decay, the other Adam; every parameter
gets a gradient in every step.  torchlint's TL302 fix passes
`set_to_none=True`.
"""

import os
from typing import Dict

import torch
from torch import nn

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
STEPS, BATCH, FEATURES, HIDDEN = (3, 8, 16, 32) if QUICK else (8, 32, 512, 1024)


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(FEATURES, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, 1),
    ).to(device)


generator = torch.Generator().manual_seed(1)
inputs = torch.randn(STEPS, BATCH, FEATURES, generator=generator).to(device)
targets = torch.randn(STEPS, BATCH, 1, generator=generator).to(device)

sgd_model = make_model()
adam_model = make_model()
sgd = torch.optim.SGD(sgd_model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
adam = torch.optim.Adam(adam_model.parameters(), lr=1e-3)


def train_step(
    model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    optimizer.zero_grad(set_to_none=False)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return loss.detach()


sgd_losses = torch.stack([train_step(sgd_model, sgd, inputs[i], targets[i]) for i in range(STEPS)])
adam_losses = torch.stack([train_step(adam_model, adam, inputs[i], targets[i]) for i in range(STEPS)])


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares: weights, optimizer state, losses."""
    return {
        "sgd_model": sgd_model,
        "sgd": sgd,
        "sgd_losses": sgd_losses,
        "adam_model": adam_model,
        "adam": adam,
        "adam_losses": adam_losses,
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: one step of each model."""
    train_step(sgd_model, sgd, inputs[0], targets[0])
    train_step(adam_model, adam, inputs[0], targets[0])
