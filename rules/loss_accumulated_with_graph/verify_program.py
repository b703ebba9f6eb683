"""TL305 verification program: a training loop that sums its loss tensors.

`total_loss += loss` makes the running total a tensor that requires grad and
holds every step's graph; torchlint's TL305 fix adds `loss.detach()`.  The
program exposes nothing of its own: verify compares what it leaves (the
total, the model, the optimizer) and prints, and the rule's probe counts the
graph the total keeps after each step.
"""

import os

import torch
from torch import nn

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
STEPS, BATCH, FEATURES, HIDDEN, CLASSES = (6, 16, 16, 32, 4) if QUICK else (40, 64, 128, 256, 10)

generator = torch.Generator().manual_seed(5)
batches = [
    (torch.randn(BATCH, FEATURES, generator=generator).to(device),
     torch.randint(0, CLASSES, (BATCH,), generator=generator).to(device))
    for _ in range(STEPS)
]
model = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()


def train_epoch() -> object:
    """One pass over the batches; the summed loss."""
    total_loss: object = 0.0
    for inputs, targets in batches:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss
    print(f"mean loss {total_loss / len(batches)}")  # type: ignore[operator]
    return total_loss


total = train_epoch()


def torchlint_step() -> None:
    """What `torchlint verify` times: one epoch."""
    train_epoch()
