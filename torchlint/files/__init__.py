"""Reading the user's files: which files a run lints (discovery, .gitignore), reading them faithfully and
writing them safely (sourcefile), notebooks' JSON and IPython syntax, parsing with limits, and the pre-check
(a cheap ``ast`` summary that decides which rules could report)."""
