"""Output files, all or nothing: the one policy for opening an output target (``batch -o``,
its Dask engine's ``-o`` files and Parquet folders, ``graph --svg``, ``plot --png``), in
:func:`open_target`.

The bytes go to a temporary file beside the target, which is renamed over it only once
they are all written, so a full disk, a signal or an error never leaves a truncated file
where a good one was (a new file gets the mode ``>`` would give it; an existing one keeps
its own).  ``batch -o`` streams its lines into the same kind of target (cli/batch/io.py).

The temporary file of FILE is ``.FILE.PID.XXXXXXXX.tmp`` in FILE's folder (PID: the writing
process; XXXXXXXX: random), held under an exclusive ``flock`` while it is written.  Only a
process killed outright (SIGKILL, a crash, a power cut) leaves one behind; the next write to
the same FILE removes it (:func:`make_temporary`): one of these names, a regular file of this
user, whose process is gone and which no process holds locked.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import select
import shutil
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


#: paths that name one of this process's open descriptors
_FD_PATH = re.compile(
    r"/(?:dev/(?:fd/(\d+)|(stdout)|(stderr))"
    r"|proc/(?:self|thread-self)/fd/(\d+))\Z"
)


def descriptor_of(path: str) -> int | None:
    """N for ``/dev/stdout`` (1), ``/dev/stderr`` (2), ``/dev/fd/N``, ``/proc/self/fd/N``."""
    m = _FD_PATH.match(os.path.abspath(path))
    if m is None:
        return None
    fd, out, err, proc = m.groups()
    return 1 if out else 2 if err else int(fd or proc)


class Unwritable(Exception):
    """An output target that cannot be opened.  ``reason``: why (the system's words);
    ``problem``: "folder" (a folder where a file is wanted), "input" (the input file
    itself), "file" (a file where a folder is wanted), "others" (a folder holding other
    files than ours: ``reason`` names one), or None (the system refused); ``existed``: a
    file was there, and is left as it was."""

    def __init__(self, reason: str, problem: str | None = None, existed: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.problem = problem
        self.existed = existed


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or exc.__class__.__name__


class Target:
    """An opened output file (:func:`open_target`): ``fd`` to write to; ``tmp`` the
    temporary file renamed over ``target`` by :meth:`commit` (None: written straight
    through); ``existed``: the file was there before (it is replaced only on success)."""

    def __init__(self, fd: int, tmp: str | None = None, target: str | None = None, existed=False):
        self.fd = fd
        self.tmp = tmp
        self.target = target
        self.existed = existed

    def write(self, data: bytes) -> None:
        write_all(self.fd, data)

    def commit(self) -> None:
        """Close; rename the temporary file over the target.  OSError: it failed."""
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)  # NFS and friends report a full disk here
        if self.tmp is not None:
            os.replace(self.tmp, self.target)
            self.tmp = None

    def abort(self) -> None:
        """Close, and remove the temporary file (the target stays as it was)."""
        fd, self.fd = self.fd, None
        tmp, self.tmp = self.tmp, None
        with contextlib.suppress(OSError):
            if fd is not None:
                os.close(fd)
        with contextlib.suppress(OSError):
            if tmp is not None:
                os.unlink(tmp)


class FolderTarget:
    """An output folder (:func:`open_target` with ``parts``): files are written into the
    temporary folder ``tmp``, which :meth:`commit` renames over ``path`` (an existing one
    is replaced only when it holds nothing but files named like ``parts``)."""

    def __init__(self, path: str, tmp: str):
        self.path = path
        self.tmp = tmp

    def commit(self) -> None:
        """Put the temporary folder in the path's place.  OSError: it failed."""
        old = None
        if os.path.isdir(self.path):
            old = tempfile.mkdtemp(
                prefix=f".{os.path.basename(self.path)}.old.",
                dir=os.path.dirname(os.path.abspath(self.path)),
            )
            os.replace(self.path, os.path.join(old, "x"))
        os.replace(self.tmp, self.path)
        self.tmp = None
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


def _new_mode() -> int:
    """The mode ``>`` (or ``mkdir``) gives a new file (folder): 0o666 (0o777) less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return ~umask


def open_target(path: str, *, source_stat=None, blocking=None, parts=None):
    """The one policy for opening an output file (``batch -o``, ``--svg``, ``--png``):

    * a regular file, or a new one: a temporary file next to it (a symlink is followed to
      its final target, a dangling one to the file it names), with the file's permission
      bits (and owner, where allowed), renamed over it by ``commit``; ``abort`` removes it
      and the file stays as it was.
    * a FIFO or a device: opened for writing (never truncated) and written straight
      through (``blocking``: a context manager around the open, which waits for a FIFO's
      reader); ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``: that descriptor itself
      (duplicated, never reopened: ``>> log`` keeps appending).
    * a folder, or the input file (``source_stat``: same device and inode, however
      spelled): :class:`Unwritable`, before anything is created.
    * ``parts`` (a pattern of file names): the target is a folder of such files, made as a
      temporary folder beside it and renamed over it (:class:`FolderTarget`).

    Returns a :class:`Target` (or :class:`FolderTarget`); raises :class:`Unwritable`."""
    if parts is not None:
        return _open_folder(path, parts)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise Unwritable(_reason(exc)) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise Unwritable("it is a folder", "folder", existed=True)
    if (
        st is not None
        and source_stat is not None
        and not stat.S_ISCHR(st.st_mode)
        and (st.st_dev, st.st_ino) == (source_stat.st_dev, source_stat.st_ino)
    ):
        raise Unwritable("it is the input file", "input", existed=True)
    number = descriptor_of(path) if st is not None else None
    try:
        if number is not None:  # written through that descriptor: its offset, its O_APPEND
            return Target(os.dup(number))
        if st is not None and not stat.S_ISREG(st.st_mode):
            flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
            with blocking() if blocking is not None else contextlib.nullcontext():
                return Target(os.open(path, flags))
    except OSError as exc:
        raise Unwritable(_reason(exc)) from None
    return _open_temporary(path, st)


def _open_temporary(path: str, st) -> Target:
    target = os.path.realpath(path)  # a symlink's final target (existing or not)
    if st is not None and not os.access(target, os.W_OK):
        raise Unwritable(os.strerror(errno.EACCES), existed=True)
    directory, base = os.path.split(target)
    try:
        fd, tmp = make_temporary(directory, base)
    except OSError as exc:
        raise Unwritable(_reason(exc), existed=st is not None) from None
    fchmod, fchown = getattr(os, "fchmod", None), getattr(os, "fchown", None)
    try:
        if fchmod is None:
            pass
        elif st is None:  # a new file: the mode `>` would give it (mkstemp's is 0600)
            fchmod(fd, 0o666 & _new_mode())
        else:
            mine = os.fstat(fd)
            if fchown is not None and (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
                try:
                    fchown(fd, st.st_uid, st.st_gid)
                except OSError:
                    with contextlib.suppress(OSError):
                        fchown(fd, -1, st.st_gid)
            fchmod(fd, stat.S_IMODE(st.st_mode))  # after chown, which may clear set-id
    except OSError:
        pass
    return Target(fd, tmp, target, existed=st is not None)


def _open_folder(path: str, parts: re.Pattern) -> FolderTarget:
    if os.path.lexists(path):
        if not os.path.isdir(path) or os.path.islink(path):
            raise Unwritable("it is not a folder", "file", existed=True)
        others = [n for n in os.listdir(path) if not parts.match(n)]
        if others:
            raise Unwritable(others[0], "others", existed=True)
    parent, base = os.path.split(os.path.abspath(path))
    try:
        tmp = tempfile.mkdtemp(prefix=f".{base}.", suffix=".tmp", dir=parent)
        os.chmod(tmp, 0o777 & _new_mode())  # as `mkdir` would make it (mkdtemp: 0700)
    except OSError as exc:
        raise Unwritable(_reason(exc)) from None
    return FolderTarget(path, tmp)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a short write is retried, then an error)."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:  # a non-blocking descriptor (inherited): wait until writable
            select.select([], [fd], [])
            continue
        if n <= 0:
            raise OSError(errno.EIO, "short write: the output took no more bytes")
        view = view[n:]


def write_atomically(path: str, data: bytes, option: str) -> None:
    """Write ``data`` to ``path`` whole (:func:`open_target`'s policy), or raise OSError
    naming ``option`` and the path."""

    def failed(reason: str, kept: bool) -> OSError:
        tail = f" ({path!r} is left as it was)" if kept else ""
        return OSError(f"{option}: cannot write {path!r}: {reason}{tail}")

    try:
        target = open_target(path)
    except Unwritable as exc:
        raise failed(exc.reason, exc.existed) from None
    try:
        target.write(data)
        target.commit()
    except OSError as exc:
        raise failed(_reason(exc), target.existed) from None
    finally:
        target.abort()
