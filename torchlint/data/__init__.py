"""API facts as data: torch signatures and deprecations, library wrappers and framework arguments
(the TOML files beside this module), read and validated by :mod:`torchlint.data.apidata`; and the
release arithmetic they and the rules use (:mod:`torchlint.data.versions`)."""
