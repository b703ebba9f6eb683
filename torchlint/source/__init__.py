"""The user's source: which folders and files git ignores, reading files faithfully and writing
them safely (bounded, regular-file reads; atomic writes), notebooks' JSON and IPython syntax, parsing
with limits, the parse tree (fast child access), where nodes are in the text and the edits that
change them, call arguments against signatures, and the Python grammar of the target version."""
