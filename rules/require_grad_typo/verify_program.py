"""TL307 verification program: fine-tuning a head on a "frozen" backbone.

The script means to freeze the backbone (`p.require_grad = False`, the
typo) and train only the head, in a `main()` as scripts are written;
torchlint's TL307 fix spells `requires_grad`, which really freezes it.
"""

import os

import torch
from torch import nn

QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
STEPS, BATCH, FEATURES = (4, 16, 8) if QUICK else (20, 64, 32)


def main() -> None:
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(FEATURES, FEATURES), nn.ReLU())
    head = nn.Linear(FEATURES, 1)
    for p in backbone.parameters():
        p.require_grad = False  # type: ignore[attr-defined]
    optimizer = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.05, momentum=0.9)
    inputs, targets = torch.randn(BATCH, FEATURES), torch.randn(BATCH, 1)
    for step in range(STEPS):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(head(backbone(inputs)), targets)
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        print(f"step {step} loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
