"""TL301 verification program: a validation loop that forgets `torch.no_grad()`.

The loop sums the loss tensor over batches, so without `no_grad` every batch's
autograd graph stays alive until the end.  torchlint's TL301 fix decorates
`evaluate` with `@torch.no_grad()`.
"""

import os
from typing import Dict, List, Tuple

import torch
from torch import nn

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
BATCHES, BATCH, FEATURES, HIDDEN, CLASSES = (3, 16, 32, 64, 10) if QUICK else (8, 128, 512, 1024, 100)

generator = torch.Generator().manual_seed(1)
batches = [
    (
        torch.randn(BATCH, FEATURES, generator=generator).to(device),
        torch.randint(0, CLASSES, (BATCH,), generator=generator).to(device),
    )
    for _ in range(BATCHES)
]
model = nn.Sequential(
    nn.Linear(FEATURES, HIDDEN),
    nn.ReLU(),
    nn.Linear(HIDDEN, HIDDEN),
    nn.ReLU(),
    nn.Linear(HIDDEN, CLASSES),
).to(device)


Batch = Tuple[torch.Tensor, torch.Tensor]


def evaluate(model: nn.Module, batches: List[Batch]) -> Tuple[torch.Tensor, torch.Tensor]:
    """Logits and mean loss over the validation batches."""
    model.eval()
    logits = []
    total_loss = torch.zeros((), device=device)
    for inputs, targets in batches:
        output = model(inputs)
        total_loss = total_loss + nn.functional.cross_entropy(output, targets, reduction="sum")
        logits.append(output)
    return torch.cat(logits), total_loss / (len(batches) * BATCH)


val_logits, val_loss = evaluate(model, batches)
labels = torch.cat([targets for _, targets in batches])
accuracy = (val_logits.argmax(dim=1) == labels).float().mean().item()


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"val_logits": val_logits, "val_loss": val_loss, "accuracy": accuracy}


def torchlint_step() -> None:
    """What `torchlint verify` times: one validation pass."""
    evaluate(model, batches)
