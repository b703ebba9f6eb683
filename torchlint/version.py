"""torchlint's version, in a module of its own: everything that reports or keys
on it reads it here, so nothing inside the package imports the package itself."""

__version__ = "0.1.0"
