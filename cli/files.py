"""Files the tool writes whole (an image from ``graph --svg``, ``plot --png``): all or nothing.

The bytes go to a temporary file beside the target, which is renamed over it only once
they are all written, so a full disk, a signal or an error never leaves a truncated file
where a good one was (a new file gets the mode ``>`` would give it; an existing one keeps
its own).  ``batch -o`` does the same for its stream of lines (cli/batch.py).
"""

from __future__ import annotations

import os
import stat
import tempfile


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
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=directory or ".")
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
