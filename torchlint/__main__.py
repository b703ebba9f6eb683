"""``python -m torchlint``."""

from torchlint.interfaces.quick import main

main()
