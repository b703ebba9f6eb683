"""The ``--slurm`` branch of `torchlint verify`: the same command line, run
on a compute node (see :mod:`torchlint.verify.slurm_submit`)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence

import click

from torchlint.verify.slurm_submit import EXIT_ERROR, SlurmRequest, run_on_slurm
from torchlint.lint.settings import ConfigError, SettingsResolver

_LOCAL_ONLY = frozenset({"slurm", "sbatch_args", "slurm_setup", "json_file", "markdown_file", "record"})


def node_arguments(context: click.Context) -> List[str]:
    """The verify options the user gave, as arguments for the node (paths
    absolute; the report files are written by the job and copied back)."""
    args: List[str] = []
    command = context.command
    for parameter in command.params:
        name = parameter.name or ""
        if name in _LOCAL_ONLY or not isinstance(parameter, click.Option):
            continue
        value = context.params.get(name)
        source = context.get_parameter_source(name)
        if source is not click.core.ParameterSource.COMMANDLINE:
            continue
        flag = parameter.opts[-1] if parameter.opts[-1].startswith("--") else parameter.opts[0]
        if parameter.is_flag:
            if value:
                args.append(flag)
        elif parameter.multiple:
            for item in value or ():
                args += [flag, str(item)]
        else:
            args += [flag, str(value)]
    args += [str(Path(path).absolute()) for path in context.params.get("paths") or ()]
    return args


def verify_on_slurm(context: click.Context, sbatch_args: Sequence[str], setup: Optional[str]) -> int:
    """Submit the verification as a job and wait for it; the exit status."""
    try:
        configured = SettingsResolver().default.sbatch_args
    except ConfigError as error:
        click.echo(f"torchlint verify: error: {error}", err=True)
        return EXIT_ERROR
    if context.params.get("record"):
        click.echo("torchlint verify: error: --record cannot be used with --slurm", err=True)
        return EXIT_ERROR
    request = SlurmRequest(
        verify_args=node_arguments(context),
        sbatch_args=(*configured, *sbatch_args),
        setup=setup,
        json_file=context.params.get("json_file"),
        markdown_file=context.params.get("markdown_file"),
    )
    return run_on_slurm(request)
