"""TL306 verification program: evaluating inside a training loop.

The loop evaluates after each epoch with `model.eval()` and never calls
`model.train()` again; torchlint's TL306 fix inserts `model.train()` after
the evaluation.  The program records, at each training step, the model's
mode, the fraction of activations dropout zeroed, and how far BatchNorm's
running mean moved.
"""

import os
from typing import Dict, List, Tuple

import torch
from torch import nn

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
EPOCHS, STEPS, BATCH, FEATURES = (3, 2, 16, 8) if QUICK else (4, 8, 64, 32)
DROPOUT = 0.5

generator = torch.Generator().manual_seed(7)
batches = [
    (torch.randn(BATCH, FEATURES, generator=generator).to(device),
     torch.randn(BATCH, 1, generator=generator).to(device))
    for _ in range(STEPS)
]
validation = torch.randn(BATCH, FEATURES, generator=generator).to(device)
first_layer, norm, dropout, last_layer = (
    nn.Linear(FEATURES, FEATURES), nn.BatchNorm1d(FEATURES), nn.Dropout(DROPOUT), nn.Linear(FEATURES, 1)
)
model = nn.Sequential(first_layer, norm, dropout, last_layer).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

modes: List[float] = []
dropped: List[float] = []
bn_moves: List[float] = []
losses: List[float] = []
scores: List[float] = []


def forward(inputs: torch.Tensor) -> Tuple[torch.Tensor, float]:
    """The model's output, and the fraction of nonzero activations dropout zeroed."""
    hidden = norm(first_layer(inputs))
    kept = dropout(hidden)
    zeroed = ((kept == 0) & (hidden != 0)).float().sum() / (hidden != 0).float().sum()
    return last_layer(kept), float(zeroed)


def running_mean() -> torch.Tensor:
    """BatchNorm's running mean, copied."""
    value = norm.running_mean
    assert isinstance(value, torch.Tensor)
    return value.clone()


model.train()
for epoch in range(EPOCHS):
    for inputs, targets in batches:
        running = running_mean()
        outputs, zeroed = forward(inputs)
        loss = nn.functional.mse_loss(outputs, targets)
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        modes.append(float(model.training))
        dropped.append(zeroed)
        bn_moves.append(float((running_mean() - running).norm()))
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        scores.append(float(model(validation).mean()))


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {
        "modes": torch.tensor(modes),
        "dropped": torch.tensor(dropped),
        "bn_moves": torch.tensor(bn_moves),
        "losses": torch.tensor(losses, dtype=torch.float64),
        "scores": torch.tensor(scores, dtype=torch.float64),
        "steps_per_epoch": STEPS,
        "dropout": DROPOUT,
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: one training step."""
    outputs, _ = forward(batches[0][0])
    nn.functional.mse_loss(outputs, batches[0][1]).backward()  # type: ignore[no-untyped-call]
