"""TL607 verification program: log(1 + x), exp(x) - 1 and log(sum(exp(x))) in float32.

Moderate inputs (where the old expressions are accurate enough) give values
and gradients; tiny inputs measure the error against a float64 reference;
large logits show the overflow.  torchlint's TL607 fix turns the expressions
into `torch.log1p`, `torch.expm1` and `torch.logsumexp`.
"""

import os
from typing import Dict

import torch

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
ROWS, COLUMNS = (8, 16) if QUICK else (512, 1024)

generator = torch.Generator().manual_seed(3)
moderate = (torch.rand(ROWS, COLUMNS, generator=generator) * 2.5 - 0.5).to(device).requires_grad_()
tiny = (torch.rand(ROWS, COLUMNS, generator=generator) * 1e-4 + 1e-9).to(device)
logits = (torch.randn(ROWS, COLUMNS, generator=generator) * 4).to(device).requires_grad_()
large = (torch.randn(ROWS, COLUMNS, generator=generator) + 100).to(device)


def log_of_one_plus(x: torch.Tensor) -> torch.Tensor:
    return torch.log(1 + x)


def exp_minus_one(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(x) - 1


def log_sum_exp(x: torch.Tensor) -> torch.Tensor:
    return torch.log(torch.sum(torch.exp(x), dim=1))


log1p_values = log_of_one_plus(moderate)
expm1_values = exp_minus_one(moderate)
lse_values = log_sum_exp(logits)
(log1p_values.sum() + expm1_values.sum() + lse_values.sum()).backward()  # type: ignore[no-untyped-call]

exact = tiny.double()
log1p_error = (log_of_one_plus(tiny).double() - torch.log1p(exact)).abs().max()
expm1_error = (exp_minus_one(tiny).double() - torch.expm1(exact)).abs().max()
lse_large = log_sum_exp(large)


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares (see verify_compare.py for the error keys)."""
    return {
        "log1p_values": log1p_values.detach(),
        "expm1_values": expm1_values.detach(),
        "lse_values": lse_values.detach(),
        "moderate_grad": moderate.grad,
        "logits_grad": logits.grad,
        "log1p_error": log1p_error,
        "expm1_error": expm1_error,
        "lse_large": lse_large,
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: the three expressions on moderate inputs."""
    with torch.no_grad():
        log_of_one_plus(moderate)
        exp_minus_one(moderate)
        log_sum_exp(logits)
