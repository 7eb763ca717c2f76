"""Files the tool writes whole (an image from ``graph --svg``, ``plot --png``): all or nothing.

The bytes go to a temporary file beside the target, which is renamed over it only once
they are all written, so a full disk, a signal or an error never leaves a truncated file
where a good one was (a new file gets the mode ``>`` would give it; an existing one keeps
its own).  ``batch -o`` does the same for its stream of lines (cli/batch.py).

The temporary file of FILE is ``.FILE.PID.XXXXXXXX.tmp`` in FILE's folder (PID: the writing
process; XXXXXXXX: random), held under an exclusive ``flock`` while it is written.  Only a
process killed outright (SIGKILL, a crash, a power cut) leaves one behind; the next write to
the same FILE removes it (:func:`make_temporary`): one of these names, a regular file of this
user, whose process is gone and which no process holds locked.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile

try:
    import fcntl
except ImportError:  # not POSIX: no locks, and leftovers are not removed
    fcntl = None


def _temporary_names(base: str) -> re.Pattern:
    """The names of FILE's temporary files (``base``: FILE's name): ``.FILE.PID.XXXXXXXX.tmp``.
    PID and XXXXXXXX hold no dot, so no other FILE's temporary file has such a name."""
    return re.compile(re.escape(f".{base}.") + r"([0-9]+)\.[a-z0-9_]{8}\.tmp")


def _process_gone(pid: int) -> bool:
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)  # signal 0: is there such a process (sends nothing)
    except ProcessLookupError:
        return True
    except OSError:  # there is one (another user's), or we cannot tell
        return False
    return False


def _remove_if_stale(path: str, pid: int) -> bool:
    """Remove ``path`` (a temporary file name of process ``pid``) if it is a leftover: a
    regular file of this user, its process gone, and no process holding its lock."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or not _process_gone(pid):
        return False
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        mine = os.fstat(fd)
        if (mine.st_dev, mine.st_ino) != (st.st_dev, st.st_ino):
            return False  # replaced since it was looked at
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: a live writer holds it
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def remove_leftovers(directory: str, base: str) -> list[str]:
    """Remove the temporary files of FILE (``directory``/``base``) that killed runs left
    behind (see the module's docstring); returns their names."""
    if fcntl is None or not hasattr(os, "getuid"):
        return []
    names = _temporary_names(base)
    removed = []
    try:
        entries = os.listdir(directory or ".")
    except OSError:
        return []
    for name in entries:
        m = names.fullmatch(name)
        if m is not None and _remove_if_stale(os.path.join(directory, name), int(m.group(1))):
            removed.append(name)
    return removed


def make_temporary(directory: str, base: str) -> tuple[int, str]:
    """A new temporary file for FILE (``directory``/``base``): (descriptor, path), mode 0600
    (``mkstemp``), locked for as long as the descriptor is open.  Leftovers of killed runs
    for the same FILE are removed first, each named in a note on stderr.  OSError: it could
    not be made."""
    for name in remove_leftovers(directory, base):
        from . import streams

        where = os.path.join(directory, name) if directory else name
        streams.say(
            f"autograd-cli: note: removed {where!r}, left by an earlier run that was killed"
        )
    fd, path = tempfile.mkstemp(
        prefix=f".{base}.{os.getpid()}.", suffix=".tmp", dir=directory or "."
    )
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a file system without locks: the process id still protects it
            pass
    return fd, path


def write_atomically(path: str, data: bytes, option: str) -> None:
    """Write ``data`` to ``path`` whole, or raise OSError naming ``option`` and the path."""

    def failed(reason: str, kept: bool) -> OSError:
        tail = f" ({path!r} is left as it was)" if kept else ""
        return OSError(f"{option}: cannot write {path!r}: {reason}{tail}")

    target = os.path.realpath(path)  # a symlink's final target (existing or not)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise failed(exc.strerror or str(exc), False) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise failed("it is a folder", True)
    if st is not None and not os.access(target, os.W_OK):
        raise failed(os.strerror(13), True)
    if st is not None and not stat.S_ISREG(st.st_mode):
        # a device or a pipe (/dev/stdout, /dev/full, a FIFO): written to, never replaced
        try:
            with open(target, "wb") as f:
                f.write(data)
        except OSError as exc:
            raise failed(exc.strerror or str(exc), False) from None
        return
    directory, base = os.path.split(target)
    try:
        fd, tmp = make_temporary(directory, base)
    except OSError as exc:
        raise failed(exc.strerror or str(exc), st is not None) from None
    try:
        try:
            if st is None:
                umask = os.umask(0)
                os.umask(umask)
                os.fchmod(fd, 0o666 & ~umask)
            else:
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
        except OSError:
            pass
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.close(fd)
        fd = -1
        os.replace(tmp, target)
    except OSError as exc:
        raise failed(exc.strerror or str(exc), st is not None) from None
    finally:
        if fd != -1:
            os.close(fd)
        if os.path.exists(tmp):
            os.unlink(tmp)
