"""TL305 verification program: a training loop that sums its loss tensors.

`total_loss += loss` makes the running total a tensor that requires grad and
holds every step's graph; torchlint's TL305 fix adds `loss.detach()`.  The
program records, after each step, how many autograd nodes the total keeps
alive, along with the total itself and the trained parameters.
"""

import os
from typing import Any, Dict, List, Set

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


def graph_nodes(value: object) -> int:
    """How many autograd nodes ``value`` keeps reachable (0 for a number or a detached tensor)."""
    if not isinstance(value, torch.Tensor) or value.grad_fn is None:
        return 0
    seen: Set[object] = set()
    stack: List[Any] = [value.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def train_epoch() -> "tuple[object, List[int]]":
    """One pass over the batches; the summed loss and the graph it held after each step."""
    total_loss: object = 0.0
    held: List[int] = []
    for inputs, targets in batches:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss
        held.append(graph_nodes(total_loss))
    return total_loss, held


total, nodes_held = train_epoch()


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    value = total.detach() if isinstance(total, torch.Tensor) else torch.tensor(total)
    return {
        "total_loss": value,
        "graph_nodes": torch.tensor(nodes_held),
        "weights": [p.detach() for p in model.parameters()],
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: one epoch."""
    train_epoch()
