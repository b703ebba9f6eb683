"""`torchlint verify`: run original and fixed code, check each rule's contract, time both.

Only ``command`` (the click command), ``plan``, ``contracts``, ``results``, ``report``,
``timing`` and ``progress`` are safe to import without torch; ``session``,
``compare`` and ``main`` import it.  ``harness`` is the code the child
processes run.  See ``README.md`` in this directory.
"""
