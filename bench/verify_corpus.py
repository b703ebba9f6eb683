"""The verify corpus's figures: how many broken changes `torchlint verify` flags and how many
correct ones it passes (tests/verify_corpus/; issue 24).

    python bench/verify_corpus.py [--only TL306,strict] [--list]

Runs every change (or those of the named contracts) the way the slow test does, checking the
scripts' folders after every run and leftover processes after every script, then prints the
figures and, with ``--list``, every case's verdict.  A broken change counts as flagged when
verify says "not equivalent", "random stream changed" where the contract does not expect it,
an error, or "inconclusive" with its reason; a correct one passes unless it is "not
equivalent" or an error.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "verify_corpus")]

from manifest import CHANGES  # noqa: E402
from test_verify_corpus import figures, flagged, run_corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated rule codes (`strict` for no rule)")
    parser.add_argument("--list", action="store_true", help="print every case's verdict")
    args = parser.parse_args()
    wanted = {part.strip().upper() for part in args.only.split(",") if part.strip()}
    changes = [c for c in CHANGES if not wanted or (c.rule or "STRICT") in wanted]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="verify-corpus-") as folder:
        outcomes = run_corpus(changes, Path(folder))
    print(figures(outcomes))
    print(f"({time.monotonic() - started:.0f} s)")
    if args.list:
        for change, result in outcomes:
            good = flagged(result) if change.kind == "broken" else not (result.failed or result.errored)
            print(f"  {'ok ' if good else 'BAD'} {change.id:36} {change.kind:8} {change.rule or 'strict':6} {result.status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
