"""The tournament seed as a secret: read from, or written to, a file only its owner can read.

Every deck of a tournament follows from its seed (RULES.md 8), so a bot that reads it knows every hand. The
seed therefore lives in no config: it is drawn at a tournament's first run and kept in the results database
(mode 600). A user who wants a chosen seed (a reproducible run, or the seed of another database) writes it to
a seed file and passes ``durak tournament --seed-file PATH``; ``durak seed DB`` prints the stored seed, or
writes such a file, when asked (to publish it after the tournament). A seed file must be a regular file of
the referee's own user with no permission bits for group or others, holding one decimal integer.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

#: Seeds are 63-bit: they fit an SQLite integer.
SEED_LIMIT = 2**63
_MAX_TEXT = 64  # bytes read from a seed file: a 19-digit number with any whitespace around it
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # no hang on a FIFO


class SeedFileError(ValueError):
    """A seed file that cannot be used; the message is one line naming it and saying what to do."""


def read_seed_file(path: str | os.PathLike[str]) -> int:
    """The seed in ``path``: one integer from 0 to 2**63 - 1, from a file only its owner (us) can read.

    :raises SeedFileError: the file is missing, not a regular file, not ours, open to group or others
        (mode bits 077), or does not hold one such integer.
    """
    label = os.fspath(path)
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise SeedFileError(f"seed file {label}: cannot read it: {exc.strerror}") from None
    try:
        info = os.fstat(fd)  # the file opened, not a path that may change under us
        _check_private(label, info)
        data = os.read(fd, _MAX_TEXT + 1)
    except OSError as exc:
        raise SeedFileError(f"seed file {label}: cannot read it: {exc.strerror}") from None
    finally:
        os.close(fd)
    return parse_seed(label, data)


def _check_private(label: str, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise SeedFileError(f"seed file {label}: not a regular file")
    if info.st_uid != os.geteuid():
        raise SeedFileError(f"seed file {label}: owned by uid {info.st_uid}, not by you (uid {os.geteuid()}): "
                            "its owner can read it")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise SeedFileError(f"seed file {label}: mode {mode:o} lets group or others at it (bots may be able to "
                            f"read it): chmod 600 {label}")


def parse_seed(label: str, data: bytes) -> int:
    """The integer a seed file holds (surrounding whitespace allowed)."""
    text = data.strip()
    if len(data) > _MAX_TEXT or not text.isdigit() or not text.isascii() or int(text) >= SEED_LIMIT:
        raise SeedFileError(f"seed file {label}: must hold one integer from 0 to 2**63 - 1 and nothing else")
    return int(text)


def write_seed_file(path: str | os.PathLike[str], seed: int) -> None:
    """Write ``seed`` (and a newline) to ``path`` as a new file of mode 600, replacing any file there.

    Written to a private temporary file beside it, then renamed over it: whoever had the old file open
    never sees the seed, and a link at ``path`` is replaced, not followed.

    :raises OSError: it cannot be written (no such folder, a folder at ``path``, no permission).
    """
    target = Path(path)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")  # mode 600
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(b"%d\n" % seed)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def protected_path(path: str | os.PathLike[str]) -> str:
    """The absolute path of a seed file, for the paths no sandbox may show."""
    return str(Path(path).resolve())
