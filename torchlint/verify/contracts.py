"""What each rule's fix promises to keep, as data that rule docs can quote.

`torchlint verify` checks exactly these promises (see ``compare.py``).  The
words used for levels of equivalence:

- **identical**: the same bits (``0.0`` and ``-0.0`` count as equal);
- **close**: equal up to floating-point rounding, with a tolerance calibrated
  from the dtype and from how much the original differs from itself;
- **same distribution**: values drawn from a different random stream: same
  shape, dtype, device and layout, and a two-sample Kolmogorov-Smirnov test
  that does not reject "same distribution";
- **changed**: a deliberate, documented difference, reported but not hidden.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Tuple


@dataclass(frozen=True)
class Contract:
    """The equivalence a rule's fix promises, and what verify checks."""

    code: str
    name: str
    level: str  # one line: the level of equivalence of the common case
    promise: str  # what stays the same, in a sentence or two
    checks: Tuple[str, ...]  # what `torchlint verify` checks, in order
    differences: Tuple[str, ...]  # known differences, always reported
    speed: str  # what the fix is expected to buy


CONTRACTS: Dict[str, Contract] = {
    contract.code: contract
    for contract in (
        Contract(
            code="TL101",
            name="tensor-created-then-moved",
            level="identical (deterministic factories); same distribution (random factories)",
            promise=(
                "A tensor or layer created directly on the device equals the one created on the "
                "CPU and then moved: `zeros`, `ones`, `full`, `eye`, `arange`, `linspace`, `tensor` "
                "give the same values; random factories give values of the same shape, dtype, "
                "device and distribution, but not the same numbers, because the CPU and CUDA "
                "generators are different algorithms."
            ),
            checks=(
                "every output has the same shape, dtype, device, layout, `requires_grad` and "
                "leaf status as before",
                "outputs that do not depend on the seed (found by re-running the original with "
                "another seed) are identical; on CUDA, floating `arange`/`linspace` results may "
                "also differ in the last bit, within the dtype's default tolerance",
                "outputs that depend on the seed pass a two-sample Kolmogorov-Smirnov test "
                "(rejected at p < 0.001)",
                "the CPU random generator's state after the run is compared",
            ),
            differences=(
                "On CUDA the fixed code no longer draws from the CPU generator, so every later "
                "CPU random number (sampler order, CPU-side dropout or augmentation) shifts; "
                "verify reports this as an RNG-stream shift.",
                "A factory with `requires_grad=True` moved by `.to()` is a non-leaf copy that "
                "never receives `.grad`; created on the device it is a leaf.  Verify reports the "
                "change as not equivalent.",
            ),
            speed=(
                "Saves the host allocation, the CPU fill or random draw and the host-to-device "
                "copy: large for big random tensors and layers on a GPU, nothing on a CPU, where "
                "`.to('cpu')` is already free."
            ),
        ),
        Contract(
            code="TL201",
            name="dataloader-without-workers",
            level="identical",
            promise=(
                "A map-style dataset whose `__getitem__` is deterministic yields the same batches "
                "in the same order with worker processes as without, for a seeded sampler."
            ),
            checks=(
                "every output (the batches the program collected) is identical",
                "each dataset the program loads from is probed: an `IterableDataset`, or a "
                "`__getitem__` that returns different values under different seeds, is reported",
                "the main process's random generator state after the run is compared",
            ),
            differences=(
                "Random augmentations inside `__getitem__` draw from per-worker seeds, so their "
                "values change with workers (and with the worker count), and the main process's "
                "random stream is no longer consumed by them.",
                "An `IterableDataset` that does not shard itself with `get_worker_info()` yields "
                "every sample once per worker.",
                "With `persistent_workers=True` the shuffle order differs from the second epoch "
                "on unless the sampler has its own generator.",
            ),
            speed=(
                "Loading overlaps with training: large when loading is I/O-bound or the machine "
                "has spare cores, none when the data is already in memory; worker start-up costs "
                "time every epoch."
            ),
        ),
        Contract(
            code="TL301",
            name="eval-without-no-grad",
            level="identical on CPU; close on CUDA",
            promise=(
                "An evaluation function decorated with `@torch.no_grad()` computes the same "
                "values; its results just no longer require gradients."
            ),
            checks=(
                "every output has the same value (identical on CPU; close on CUDA, where the "
                "attention kernel chosen may depend on `requires_grad`)",
                "every output has the same shape, dtype and device; outputs that required grad "
                "may stop requiring it, and at least one should",
                "peak memory of both runs is reported",
            ),
            differences=(
                "Results no longer require grad and have no `grad_fn`: a caller that calls "
                "`backward()` on them breaks.",
                "`nn.TransformerEncoder` with a padding mask takes its fast path under `no_grad` "
                "and returns zeros at padded positions.",
            ),
            speed=(
                "No autograd graph is recorded: lower peak memory (the saved activations) and "
                "somewhat less time per batch."
            ),
        ),
        Contract(
            code="TL302",
            name="zero-grad-not-set-to-none",
            level="identical",
            promise=(
                "When every parameter receives a gradient in every step, training with "
                "`zero_grad(set_to_none=True)` gives the same parameters and optimizer state, "
                "step by step, for SGD, Adam and the other built-in optimizers."
            ),
            checks=(
                "every output (parameters, optimizer state, losses) is identical",
                "at each optimizer step, the parameters with no gradient (`None` after the fix, "
                "all zeros before) are counted",
            ),
            differences=(
                "A parameter that gets no gradient in a step is skipped by the optimizer when its "
                "gradient is `None`, but updated with a zero gradient before the fix: momentum, "
                "weight decay and Adam's moment estimates still move it, and Adam's step count "
                "advances.",
                "Code that reads `p.grad` between `zero_grad()` and `backward()` gets `None`.",
            ),
            speed=(
                "Saves one memset per parameter per step and lets backward write gradients "
                "instead of adding to zeros: a few percent for parameter-heavy, small-batch steps."
            ),
        ),
        Contract(
            code="TL401",
            name="conv-bias-before-batchnorm",
            level="close (train mode); eval mode within a stated bound",
            promise=(
                "In train mode a batch norm subtracts the per-channel batch mean, so the bias of "
                "the convolution before it cancels: with the other weights the same, outputs and "
                "gradients match up to rounding."
            ),
            checks=(
                "the fixed outputs lack only the removed biases (their state-dict entries, "
                "gradients and optimizer state); nothing else is missing or added",
                "every train-mode output, gradient, weight and running variance is close",
                "each removed bias's gradient in the original is rounding noise next to its "
                "weight's gradient (proof that the batch norm cancels it)",
                "each following batch norm's running mean differs by the part of the old bias it "
                "absorbed: `bias * (1 - (1 - momentum) ** steps)`",
                "outputs whose name starts with `eval` may differ by the bias not yet absorbed, "
                "about `|bias| * (1 - momentum) ** steps` at the norm's input; the observed "
                "difference is reported",
            ),
            differences=(
                "Eval-mode outputs differ until the running means have absorbed the old bias, or "
                "until it is folded in with `bn.running_mean -= conv.bias`.",
                "The `state_dict` loses the conv's `bias`: strictly loading an old checkpoint "
                "fails with an unexpected key, and a saved optimizer state no longer matches its "
                "parameter groups.",
            ),
            speed=(
                "Removes one bias add in forward and one reduction in backward: a few percent at "
                "most, often within noise."
            ),
        ),
    )
}

GENERIC = Contract(
    code="",
    name="",
    level="close",
    promise="The fixed program computes the same values up to floating-point rounding.",
    checks=("every output is close, with the same shape, dtype, device and autograd status",),
    differences=(),
    speed="",
)


def contract_for(code: str) -> Contract:
    """The contract of a rule, or the generic "close" contract if it has none."""
    return CONTRACTS.get(code.upper(), GENERIC)
