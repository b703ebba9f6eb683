"""TL503 verification program: a script's command line under torch ≥ 2.0's launcher.

`torch.distributed.launch` passes `--local-rank=N` since torch 2.0 (before:
`--local_rank=N`).  The parser below declares only the underscore spelling;
torchlint's TL503 fix adds the dashed one.  The program parses both command
lines the launcher may pass and records what came out.
"""

import argparse
from typing import Dict, List, Optional, Tuple

parser = argparse.ArgumentParser(prog="train.py")
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--epochs", type=int, default=1)

NEW_LAUNCHER = ["--local-rank=3", "--epochs=2"]
OLD_LAUNCHER = ["--local_rank=3", "--epochs=2"]


def parse(argv: List[str]) -> Tuple[bool, Optional[Dict[str, int]]]:
    """Whether ``argv`` parses, and the namespace it gives."""
    try:
        return True, dict(vars(parser.parse_args(argv)))
    except SystemExit:  # argparse's "unrecognized arguments" error
        return False, None


new_ok, new_args = parse(NEW_LAUNCHER)
old_ok, old_args = parse(OLD_LAUNCHER)


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {
        "dashed_parses": int(new_ok),
        "dashed_local_rank": (new_args or {}).get("local_rank", -100),
        "underscore_parses": int(old_ok),
        "underscore_local_rank": (old_args or {}).get("local_rank", -100),
        "underscore_epochs": (old_args or {}).get("epochs", -100),
        "destinations": ",".join(sorted(old_args or {})),
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: parsing the launcher's command line."""
    parse(OLD_LAUNCHER)
