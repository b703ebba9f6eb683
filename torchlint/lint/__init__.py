"""Linting: one file through the engine (parse once, every rule in one traversal), many files through the
runner (worker pool, cache), suppression comments, baselines, fix passes and notebooks' cells."""
