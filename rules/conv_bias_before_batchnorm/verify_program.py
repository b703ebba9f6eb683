"""TL401 verification program: a small CNN whose convolutions feed batch norms.

Parameters get values that depend only on their names, so the model with and
without the conv biases starts from the same weights.  It trains a few SGD
steps, then evaluates one batch in eval mode (`eval_logits`).  torchlint's
TL401 fix passes `bias=False` to the convolutions.
"""

import math
import os
import zlib
from typing import Dict

import torch
from torch import nn

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
STEPS, BATCH, SIZE, WIDTH = (3, 8, 8, 8) if QUICK else (5, 32, 32, 32)


class Net(nn.Module):
    def __init__(self, width: int, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1),
            nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1),
            nn.BatchNorm2d(width),
            nn.ReLU(),
        )
        self.head = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.head(self.features(x).mean(dim=(2, 3)))
        return logits


def init_by_name(model: nn.Module) -> None:
    """Set every parameter from a generator seeded by its name."""
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            generator = torch.Generator().manual_seed(zlib.crc32(name.encode()))
            values = torch.randn(parameter.shape, generator=generator)
            if parameter.dim() > 1:
                values = values / math.sqrt(parameter[0].numel())
            elif name.endswith("bias"):
                values = values * 0.5
            else:
                values = 1.0 + 0.1 * values
            parameter.copy_(values)


data = torch.Generator().manual_seed(1)
images = torch.randn(STEPS, BATCH, 3, SIZE, SIZE, generator=data).to(device)
labels = torch.randint(0, 10, (STEPS, BATCH), generator=data).to(device)

model = Net(WIDTH).to(device)
init_by_name(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return loss.detach()


losses = torch.stack([train_step(images[i], labels[i]) for i in range(STEPS)])
grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
model.eval()
with torch.no_grad():
    eval_logits = model(images[0])
model.train()


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {
        "losses": losses,
        "grads": grads,
        "model": model,
        "optimizer": optimizer,
        "eval_logits": eval_logits,
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: one training step."""
    train_step(images[0], labels[0])
