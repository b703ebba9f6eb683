"""Slurm batch scripts: their ``#SBATCH`` directives, the Python they launch,
and the rules that check the two against each other.

The shell is not run: a small, documented subset of it is read
(docs/slurm.md).  What cannot be read with certainty is left unknown,
and a rule that needs it stays silent.
"""

from torchlint.jobscript.model import Directive, JobScript, Launch, Launcher, Resources
from torchlint.jobscript.parse import has_directives, is_job_script_file, parse_job_script

__all__ = [
    "Directive",
    "JobScript",
    "Launch",
    "Launcher",
    "Resources",
    "has_directives",
    "is_job_script_file",
    "parse_job_script",
]
