"""How people and tools reach torchlint: the command line, the language server, the flake8 plugin, and
the generated docs (rule pages, the README's rule table)."""
