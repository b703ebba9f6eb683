"""TL502 verification program: a DistributedSampler across epochs.

Rank 0 of 2 (given explicitly, so no process group is needed) trains for a
few epochs over a loader drawing from a `DistributedSampler`; torchlint's
TL502 fix inserts `sampler.set_epoch(epoch)` at the top of the epoch loop.
The program records, for each epoch, the order in which the sample indices
came.
"""

import os
from typing import Any, Dict, List

import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
SAMPLES, EPOCHS, FEATURES = (32, 3, 4) if QUICK else (256, 5, 16)

generator = torch.Generator().manual_seed(5)
features = torch.randn(SAMPLES, FEATURES, generator=generator)
dataset = TensorDataset(torch.arange(SAMPLES), features, features.sum(dim=1, keepdim=True))
sampler: "DistributedSampler[Any]" = DistributedSampler(dataset, num_replicas=2, rank=0, shuffle=True, seed=0)
loader = DataLoader(dataset, batch_size=4, sampler=sampler)
model = nn.Linear(FEATURES, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

orders: List[List[int]] = []
losses: List[float] = []

for epoch in range(EPOCHS):
    seen: List[int] = []
    for index, inputs, targets in loader:
        loss = nn.functional.mse_loss(model(inputs.to(device)), targets.to(device))
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        seen.extend(int(i) for i in index)
        losses.append(loss.item())
    orders.append(seen)


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {
        "orders": torch.tensor(orders, dtype=torch.int64),
        "losses": torch.tensor(losses, dtype=torch.float64),
        "samples": SAMPLES,
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: one pass over the rank's shard."""
    for _index, inputs, targets in loader:
        nn.functional.mse_loss(model(inputs.to(device)), targets.to(device)).backward()  # type: ignore[no-untyped-call]
