"""The `torchlint verify` command (placeholder; imports no torch at import time)."""

from __future__ import annotations

import click


@click.command()
def verify() -> None:
    """Run original and fixed code and compare them (not built yet)."""
    raise click.UsageError("verify is not available yet")
