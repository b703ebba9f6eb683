"""Probe run by `torchlint verify` around each run of a program (needs torch).

Loaded by path in verify's child process (see ``Probe`` in
``torchlint/ruleapi/verification.py``).  At each ``torch.load`` the program makes
with a file, it tries the same call, with the same arguments, on a copy of
what was loaded whose storages say they were saved on a GPU this machine
does not have (``cuda:<device count>``): the checkpoint a bigger node would
have written.  It records whether that copy loads, onto the CPU, with the
values that were saved.

In a replay (``tools.replay`` is set), a ``torch.load`` without a
``map_location`` gets ``map_location="cpu"``, as the fix gives it.
"""

from __future__ import annotations

import functools
import io
import struct
import zipfile
from typing import Any, Callable, Dict, List


def retag(data: bytes, location: str) -> bytes:
    """A checkpoint saved on the CPU, rewritten to say each storage was saved on ``location``."""
    old = b"X" + struct.pack("<I", 3) + b"cpu"
    new = b"X" + struct.pack("<I", len(location)) + location.encode()
    source, target = io.BytesIO(data), io.BytesIO()
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as rewritten:
        for info in archive.infolist():
            content = archive.read(info)
            if info.filename.endswith("/data.pkl"):
                content = content.replace(old, new)
            rewritten.writestr(info, content)
    return target.getvalue()


class Probe:
    """Tries each load again on a copy saved on an absent GPU."""

    def __init__(self, tools: Any) -> None:
        self.replaying = tools.replay is not None
        self.flatten = tools.flatten
        self.loads: List[Dict[str, Any]] = []
        self._undo: List[Callable[[], None]] = []

    def __enter__(self) -> "Probe":
        import torch

        probe = self
        original_load, save = torch.load, torch.save
        absent = f"cuda:{torch.cuda.device_count() if torch.cuda.is_available() else 0}"

        def relocates(loaded: Any, args: Any, kwargs: Any) -> Dict[str, Any]:
            buffer = io.BytesIO()
            save(loaded, buffer)
            try:
                again = original_load(io.BytesIO(retag(buffer.getvalue(), absent)), *args, **kwargs)
            except Exception as error:  # noqa: BLE001 - what the program's own call would raise there
                return {"relocates": False, "error": f"{type(error).__name__}: {str(error)[:200]}"}
            saved, got = probe.flatten(loaded), probe.flatten(again)
            same = saved.keys() == got.keys() and all(
                not isinstance(got[key], torch.Tensor) or (got[key].device.type == "cpu" and torch.equal(
                    got[key], saved[key].cpu())) for key in got)
            return {"relocates": bool(same), "error": "" if same else "loaded other values, or not onto the CPU"}

        @functools.wraps(original_load)
        def recorded_load(f: Any, *args: Any, **kwargs: Any) -> Any:
            if probe.replaying and not args and "map_location" not in kwargs:
                kwargs["map_location"] = "cpu"
            named = isinstance(f, (str, bytes)) or hasattr(f, "__fspath__")
            try:
                loaded = original_load(f, *args, **kwargs)
            except Exception as error:  # the program's own load failed: recorded, then raised as it was
                if named:
                    probe.loads.append({"file": str(f).rsplit("/", 1)[-1], "absent": absent, "loaded": False,
                                        "relocates": False, "error": f"{type(error).__name__}: {str(error)[:200]}"})
                raise
            if named:
                entry: Dict[str, Any] = {"file": str(f).rsplit("/", 1)[-1], "absent": absent, "loaded": True}
                try:
                    entry.update(relocates(loaded, args, kwargs))
                except Exception as error:  # noqa: BLE001 - the copy could not be made
                    entry.update(relocates=None, error=f"not tried: {type(error).__name__}")
                probe.loads.append(entry)
            return loaded

        for owner in (torch, torch.serialization):
            if getattr(owner, "load", None) is original_load:
                setattr(owner, "load", recorded_load)
                self._undo.append(functools.partial(setattr, owner, "load", original_load))
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def result(self) -> Dict[str, Any]:
        return {"loads": self.loads}
