"""``python -m torchlint``."""

from torchlint.interfaces.cli import main

main()
