"""What keeps a run of `torchlint verify` inside its bounds (standard library only).

The harness loads this file by path in its child processes; the parent
imports it too (for ``descendants``).  Four things, Linux first, each
degrading to nothing elsewhere:

- **Processes.**  ``become_subreaper`` makes a process adopt its orphaned
  descendants (``prctl(PR_SET_CHILD_SUBREAPER)``), so a run's children that
  left its process group (``os.fork()``, ``start_new_session``) stay
  reachable; ``end_descendants`` finds every descendant through ``/proc`` and
  ends it (SIGTERM, then SIGKILL), however it detached.
- **Memory.**  ``limit_memory`` bounds each process of a run with
  ``RLIMIT_AS`` (``RLIMIT_DATA`` where CUDA is in use: CUDA reserves far
  more address space than it uses).
- **The user's files.**  ``protect`` makes the user's folder (and anything a
  run reaches outside its scratch copy through a link) unwritable for the
  run: a Landlock ruleset where the kernel offers one (every write outside
  those folders stays allowed), and always an audit hook that refuses
  Python's own writes there (``open``, ``os.remove``, ``torch.save`` ...)
  with an error naming the file.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import sys
import time
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
GRACE_SECONDS = 0.5

# -- processes ---------------------------------------------------------------------------


def _libc() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = _libc()
    if libc is None:
        return False
    return int(libc.prctl(option, value, 0, 0, 0)) == 0


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux); False where the kernel cannot."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def end_with_parent(sig: int = signal.SIGTERM) -> bool:
    """Receive ``sig`` when the parent process dies (Linux)."""
    return _prctl(PR_SET_PDEATHSIG, int(sig))


def _parents() -> Dict[int, int]:
    """pid -> parent pid of every process in /proc (empty without /proc)."""
    parents: Dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return parents
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                text = handle.read().decode("ascii", "replace")
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields follow the last ')'.
        fields = text[text.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1].isdigit():
            parents[int(name)] = int(fields[1])
    return parents


def descendants(pid: int) -> List[int]:
    """Every live descendant of ``pid`` (children first), from /proc; [] where there is none."""
    children: Dict[int, List[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found: List[int] = []
    pending = list(children.get(pid, ()))
    seen: Set[int] = set()
    while pending:
        current = pending.pop(0)
        if current in seen or current == pid:
            continue
        seen.add(current)
        found.append(current)
        pending.extend(children.get(current, ()))
    return found


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return True
    fields = text[text.rfind(")") + 2:].split()
    return bool(fields) and fields[0] in ("Z", "X")


def reap() -> None:
    """Collect every child that has ended (orphans adopted as a subreaper included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def end_descendants(pid: Optional[int] = None, grace: float = GRACE_SECONDS) -> int:
    """End every descendant of ``pid`` (default: this process): SIGTERM, then SIGKILL
    after ``grace`` seconds; repeated while new ones appear.  Returns how many there were."""
    root = os.getpid() if pid is None else pid
    ended: Set[int] = set()
    for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGKILL):
        alive = [p for p in descendants(root) if not _zombie(p)]
        if not alive:
            break
        for process in alive:
            ended.add(process)
            try:
                os.kill(process, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + (grace if sig == signal.SIGTERM else 2.0)
        while time.monotonic() < deadline:
            if root == os.getpid():
                reap()
            if not [p for p in descendants(root) if not _zombie(p)]:
                break
            time.sleep(0.02)
    if root == os.getpid():
        reap()
    return len(ended)


# -- memory ---------------------------------------------------------------------------------


def _virtual_size() -> int:
    """This process's address-space size in bytes (VmSize), 0 if unknown."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def limit_memory(extra: int, cuda: bool) -> str:
    """Bound this process (and what it forks) to its current size plus ``extra`` bytes.

    Returns how, in words ("" when it could not: no ``resource`` module, or
    ``extra`` is 0).  ``RLIMIT_AS`` counts address space; CUDA maps far more
    than it uses, so runs on a GPU get ``RLIMIT_DATA`` (private writable memory).
    """
    if extra <= 0:
        return ""
    try:
        import resource
    except ImportError:  # Windows
        return ""
    kind = getattr(resource, "RLIMIT_DATA" if cuda else "RLIMIT_AS", None)
    if kind is None:
        return ""
    limit = _virtual_size() + extra
    try:
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(kind, (limit, limit if hard == resource.RLIM_INFINITY else hard))
    except (ValueError, OSError):
        return ""
    return "RLIMIT_DATA" if cuda else "RLIMIT_AS"


# -- the user's files --------------------------------------------------------------------------

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
# Audit events that change the file system, and which of their arguments name what they change.
_CHANGES: Dict[str, Tuple[int, ...]] = {
    "os.remove": (0,), "os.rename": (0, 1), "os.truncate": (0,), "os.chmod": (0,), "os.chown": (0,),
    "os.utime": (0,), "os.mkdir": (0,), "os.rmdir": (0,), "os.link": (0, 1), "os.symlink": (1,),
    "os.chflags": (0,), "os.lchflags": (0,), "os.setxattr": (0,), "os.removexattr": (0,),
    "os.mkfifo": (0,), "os.mknod": (0,), "shutil.rmtree": (0,), "shutil.copyfile": (1,),
    "shutil.copymode": (1,), "shutil.copystat": (1,), "shutil.move": (0, 1), "shutil.chown": (0,),
}


class Guard:
    """Refuses writes under the protected folders, with an error that names the file.

    Installed as an audit hook (``open``, ``os.remove``, ``os.rename`` ...) and
    around ``torch.save``, whose writer opens files in C++ where no audit event
    is raised.  Writes that bypass Python altogether are Landlock's to refuse.
    """

    def __init__(self, roots: Iterable[str]) -> None:
        self.roots: Tuple[str, ...] = tuple(sorted({os.path.realpath(root) for root in roots}))
        self.refused: List[str] = []

    def covers(self, path: Any) -> Optional[str]:
        """The real path of ``path`` if it lies under a protected folder, else None."""
        if isinstance(path, int) or path is None:
            return None
        try:
            text = os.fsdecode(os.fspath(path))
        except TypeError:
            return None
        real = os.path.realpath(text)
        for root in self.roots:
            if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                return real
        return None

    def refuse(self, real: str) -> None:
        if real not in self.refused:
            self.refused.append(real)
        raise PermissionError(errno.EACCES, "torchlint verify: a run may not write your files "
                                            "(it works in a scratch copy)", real)

    def audit(self, event: str, args: Tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writes:
                real = self.covers(path)
                if real is not None:
                    self.refuse(real)
            return
        positions = _CHANGES.get(event)
        if positions is None:
            return
        for position in positions:
            if position < len(args):
                real = self.covers(args[position])
                if real is not None:
                    self.refuse(real)

    def wrap_save(self, save: Callable[..., Any]) -> Callable[..., Any]:
        guard = self

        def guarded_save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
                real = guard.covers(f)
                if real is not None:
                    guard.refuse(real)
            return save(obj, f, *args, **kwargs)

        guarded_save.__wrapped__ = save  # type: ignore[attr-defined]
        guarded_save.__doc__ = save.__doc__
        return guarded_save


def install_guard(roots: Sequence[str]) -> Optional[Guard]:
    """The audit hook and the ``torch.save`` wrapper for ``roots``; None without roots."""
    if not roots:
        return None
    guard = Guard(roots)
    sys.addaudithook(guard.audit)
    torch: Any = sys.modules.get("torch")
    if torch is not None:
        saved = guard.wrap_save(torch.save)
        setattr(torch, "save", saved)
        serialization = getattr(torch, "serialization", None)
        if serialization is not None:
            setattr(serialization, "save", saved)
    return guard


# Landlock (Linux 5.19+ for what is used here): deny every write beneath the protected folders.
_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446
_RULE_PATH_BENEATH = 1
_FS_WRITE_FILE, _FS_REMOVE_DIR, _FS_REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
_FS_MAKE = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_FS_REFER, _FS_TRUNCATE = 1 << 13, 1 << 14
LANDLOCK_MAX_RULES = 20000


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none."""
    if not sys.platform.startswith("linux") or os.environ.get("TORCHLINT_VERIFY_LANDLOCK") == "0":
        return 0
    libc = _libc()
    if libc is None:
        return 0
    version = int(libc.syscall(_SYS_CREATE, None, 0, 1))
    return max(version, 0)


def _allowed_entries(roots: FrozenSet[str]) -> Optional[List[Tuple[str, bool]]]:
    """(path, is a directory) of everything beside the protected folders: the entries of
    each of their ancestors that neither is nor holds one.  None past LANDLOCK_MAX_RULES."""
    partial: Set[str] = set()
    for root in roots:
        parent = os.path.dirname(root)
        while True:
            partial.add(parent)
            if parent == os.path.dirname(parent):
                break
            parent = os.path.dirname(parent)
    entries: List[Tuple[str, bool]] = []
    for folder in sorted(partial):
        try:
            listing = list(os.scandir(folder))
        except OSError:
            continue
        for entry in listing:
            if entry.path in roots or entry.path in partial:
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            entries.append((entry.path, is_dir))
            if len(entries) > LANDLOCK_MAX_RULES:
                return None
    return entries


def landlock(roots: Sequence[str]) -> str:
    """Forbid writes beneath ``roots`` for this process and its children (kernel-enforced).

    Returns "" on success, else why not (no Landlock, too many entries beside the
    folders, a refused syscall); the audit hook then guards alone.
    """
    abi = landlock_abi()
    if abi < 2:  # ABI 1 refuses every rename across folders: too much for real programs
        return "the kernel offers no Landlock (ABI 2 or newer)"
    real = frozenset(os.path.realpath(root) for root in roots)
    real = frozenset(root for root in real if not any(
        root != other and root.startswith(other.rstrip(os.sep) + os.sep) for other in real))
    entries = _allowed_entries(real)
    if entries is None:
        return f"more than {LANDLOCK_MAX_RULES} entries beside the protected folders"
    handled = _FS_WRITE_FILE | _FS_REMOVE_DIR | _FS_REMOVE_FILE | _FS_MAKE | _FS_REFER
    file_rights = _FS_WRITE_FILE
    if abi >= 3:
        handled |= _FS_TRUNCATE
        file_rights |= _FS_TRUNCATE
    libc = _libc()
    attr = _RulesetAttr(handled)
    ruleset = int(libc.syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.sizeof(attr), 0))
    if ruleset < 0:
        return f"landlock_create_ruleset failed ({os.strerror(ctypes.get_errno())})"
    try:
        for path, is_dir in entries:
            try:
                fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = _PathBeneath(handled if is_dir else file_rights, fd)
                if int(libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0)) != 0:
                    # A symlink or special file may refuse rights; writes through it stay denied.
                    continue
            finally:
                os.close(fd)
        if not _prctl(PR_SET_NO_NEW_PRIVS, 1):
            return "prctl(PR_SET_NO_NEW_PRIVS) failed"
        if int(libc.syscall(_SYS_RESTRICT, ruleset, 0)) != 0:
            return f"landlock_restrict_self failed ({os.strerror(ctypes.get_errno())})"
    finally:
        os.close(ruleset)
    return ""


def protect(roots: Sequence[str]) -> Dict[str, Any]:
    """Make ``roots`` unwritable for this process and its children; what was done."""
    if not roots:
        return {"roots": [], "landlock": "", "guard": False}
    guard = install_guard(roots)
    why_not = landlock(roots)
    return {"roots": list(guard.roots) if guard else [], "landlock": why_not or "on", "guard": guard is not None,
            "_guard": guard}
