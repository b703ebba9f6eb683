"""``python -m torchlint``."""

from torchlint.cli import main

main()
