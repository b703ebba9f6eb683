"""The last `torchlint verify` run recorded for the docs (data only, no torch).

Re-run `torchlint verify` on your own hardware for numbers that matter to you;
these say what was measured where, nothing more.
"""

from __future__ import annotations

from typing import Dict, Tuple

HARDWARE = (
    "CPU only: AMD EPYC, 1 thread of 2 cores, torch 2.13.0+cpu, Python 3.11.7, Linux; "
    "the machine was busy (load average 7.7), so timings are rough; no GPU was available"
)
HEADER: Tuple[str, ...] = ("Equivalence", "Original", "Fixed", "Speedup [95% CI]", "Timing", "Peak memory")
ROWS: Dict[str, Tuple[str, ...]] = {
    "TL101": ("equivalent", "6.51 ms", "6.34 ms", "1.02x [0.98, 1.08]", "no measurable difference",
              "+44.8 MiB -> +44.8 MiB"),
    "TL201": ("equivalent", "587 ms", "466 ms", "1.28x [1.19, 1.42]", "faster", "+14.0 MiB -> +14.1 MiB"),
    "TL301": ("equivalent", "108 ms", "90.9 ms", "1.20x [1.15, 1.23]", "faster", "+41.8 MiB -> +33.7 MiB"),
    "TL302": ("equivalent", "48.4 ms", "47.3 ms", "1.04x [1.00, 1.10]", "no measurable difference",
              "+103.1 MiB -> +105.8 MiB"),
    "TL401": ("equivalent", "70.9 ms", "75.2 ms", "0.93x [0.89, 1.04]", "no measurable difference",
              "+80.9 MiB -> +96.8 MiB"),
}
