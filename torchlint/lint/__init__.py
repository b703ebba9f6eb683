"""Linting: the resolved configuration (``settings``), which files a run lints (``discovery``),
one file through the engine (parse once, every rule in one traversal), many files through the
runner (worker pool, cache), job scripts, suppression comments, baselines, fix passes and
notebooks' cells."""
