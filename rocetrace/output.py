"""Output safety: an output never replaces an input, and it appears whole or not at all.

Every file rocetrace writes (report, JSON summary, bundle, packet table) goes through here:
`check_outputs` refuses an output that is an input (the same path, a symlink to it or a hard
link: the same inode) or another output, before anything is read or written;
`atomic_path` hands out a temporary file beside the target and renames it into place only
when the writing succeeded, so a full disk, a crash or Ctrl-C leaves the old file (or none),
never a truncated one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rocetrace.errors import OutputError

PathLike = str | os.PathLike[str]
STDIO = "-"  # stdin for an input, stdout for an output: never a file on disk


def _real(path: PathLike) -> Path:
    return Path(os.path.realpath(path))


def _same_file(a: Path, b: Path) -> bool:
    """One file under two names (a symlink or a hard link: os.path.samefile compares the
    device and inode); paths that do not both exist are the same when they resolve alike."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return _real(a) == _real(b)


def _files(paths: Iterable[PathLike | None]) -> list[Path]:
    return [Path(p) for p in paths if p is not None and str(p) != STDIO]


def check_outputs(inputs: Iterable[PathLike | None], outputs: Iterable[PathLike | None]) -> None:
    """OutputError (exit status 6) when an output is an input, or two outputs one file."""
    ins, outs = _files(inputs), _files(outputs)
    for out in outs:
        for source in ins:
            if _same_file(out, source):
                raise OutputError(f"{out}: is the input {source}; refusing to overwrite it")
    for k, out in enumerate(outs):
        for other in outs[:k]:
            if _same_file(out, other):
                raise OutputError(f"{out}: given for two outputs ({other}); choose another")


def _special(target: Path) -> bool:
    """An existing file that is not a regular file (/dev/stdout, a FIFO): written in place,
    a rename would replace the device node instead of writing to it."""
    try:
        return not stat.S_ISREG(os.stat(target).st_mode)
    except OSError:
        return False


def _temporary(target: Path) -> Path:
    """A fresh hidden file beside the target (O_EXCL: never an existing file or symlink),
    with the permissions a plain open() would give it (0666 less the umask)."""
    for _ in range(100):
        tmp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.part")
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        except FileExistsError:
            continue
        except OSError as exc:
            raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
        return tmp
    raise OutputError(f"cannot write {target}: no free temporary name beside it")


@contextmanager
def atomic_path(path: PathLike) -> Iterator[Path]:
    """A temporary path to write instead of `path`, renamed onto it when the block ends
    without an error and removed otherwise. A symlink's target is replaced, not the link."""
    target = _real(path)
    if _special(target):
        yield target
        return
    tmp = _temporary(target)
    try:
        yield tmp  # the block maps its own errors: an input's stay the input's
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_bytes(path: PathLike, data: bytes) -> Path:
    """`data` as the whole new content of `path`, atomically (OutputError on failure)."""
    with atomic_path(path) as tmp:
        try:
            tmp.write_bytes(data)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    return Path(path)


def write_text(path: PathLike, text: str) -> Path:
    """`text` (UTF-8) as the whole new content of `path`, atomically."""
    return write_bytes(path, text.encode("utf-8"))
