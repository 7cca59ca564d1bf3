"""``durak-bot.toml``, the manifest an uploaded bot carries at its archive's root: its name, how to build and run it,
its environment. Untrusted input like the archive (:mod:`referee.league.archive`): every error is one line naming
the field, shown to the author as is.

Example::

    name = "clever-fox"
    command = "python3 bot.py"          # or ["python3", "bot.py"]
    build = ["make", "-j2"]             # optional, same forms
    description = "Throws in low trumps"  # optional, one short line

    [env]                               # optional; the loader's and the shells' variables are refused
    FOX_DEPTH = "3"
"""

from __future__ import annotations

import os
import shlex
import stat
import tomllib
from pathlib import Path

import msgspec

from referee.bots.plan import env_refusal
from referee.league.names import name_problem
from referee.text import visible
from referee.tournament.toml_errors import TomlSchema, describe, one_line

MANIFEST = "durak-bot.toml"
#: The most a manifest may hold: a few lines are plenty, and it is read whole.
MANIFEST_BYTES = 64 * 1024
#: The longest description, in characters: one line of a table.
DESCRIPTION_CHARS = 200
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class ManifestError(ValueError):
    """A manifest refused: one line, starting ``durak-bot.toml:``, naming the field and what is wrong."""


class Manifest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An uploaded bot's manifest, as written; :attr:`argv` and :attr:`build_argv` are its commands split."""

    name: str  # the bot's name in the league (:func:`referee.league.names.name_problem`)
    command: str | tuple[str, ...]  # how to run the bot: a string split as a shell would (shlex), or a list
    build: str | tuple[str, ...] | None = None  # how to build it first, in the same forms; None: nothing to build
    env: dict[str, str] = msgspec.field(default_factory=dict)  # set for the bot (and its build)
    description: str = ""  # one short line

    @property
    def argv(self) -> list[str]:
        """:attr:`command` as a program and its arguments."""
        return _split(self.command)

    @property
    def build_argv(self) -> list[str] | None:
        """:attr:`build` as a program and its arguments, or None."""
        return None if self.build is None else _split(self.build)


_SCHEMA = TomlSchema(root=Manifest, choices={}, top_key_errors={})


def read_manifest(folder: Path) -> Manifest:
    """The manifest at the root of an extracted bot's ``folder``, read without following a link.

    :raises ManifestError: it is missing, a link or no regular file, over :data:`MANIFEST_BYTES`, or invalid.
    """
    try:
        top = os.open(folder, _DIR_FLAGS)
    except OSError as exc:
        raise ManifestError(f"{MANIFEST}: cannot open the bot's folder ({exc.strerror})") from None
    try:
        return parse_manifest(_read(top))
    finally:
        os.close(top)


def _read(top: int) -> bytes:
    try:
        fd = os.open(MANIFEST, _READ_FLAGS, dir_fd=top)
    except FileNotFoundError:
        raise ManifestError(f"{MANIFEST}: missing; the archive needs one at its root (or in its only folder)") from None
    except OSError as exc:
        raise ManifestError(f"{MANIFEST}: cannot be read ({exc.strerror}; a link is never followed)") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ManifestError(f"{MANIFEST}: is no regular file")
        data = file.read(MANIFEST_BYTES + 1)
    if len(data) > MANIFEST_BYTES:
        raise ManifestError(f"{MANIFEST}: over {MANIFEST_BYTES:,} bytes")
    return data


def parse_manifest(text: str | bytes) -> Manifest:
    """A manifest from its text (bytes must be UTF-8), every field checked.

    :raises ManifestError: over :data:`MANIFEST_BYTES`, not UTF-8, bad TOML (with its line), an unknown key,
        a wrong type, a bad name, an empty or unsplittable command, a refused environment variable, or a
        description that is long or not one plain line.
    """
    data = text.encode() if isinstance(text, str) else text
    if len(data) > MANIFEST_BYTES:
        raise ManifestError(f"{MANIFEST}: over {MANIFEST_BYTES:,} bytes")
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{MANIFEST}: not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{MANIFEST}: bad TOML: {one_line(str(exc))}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table: a few KB of [[[[ ... ]]]]
        raise ManifestError(f"{MANIFEST}: bad TOML: nested too deep") from None
    try:
        manifest = msgspec.convert(raw, Manifest)
    except msgspec.ValidationError as exc:
        raise ManifestError(f"{MANIFEST}: {visible(one_line(describe(str(exc), data, _SCHEMA)))}") from None
    except RecursionError:
        raise ManifestError(f"{MANIFEST}: nested too deep") from None
    _check(manifest)
    return manifest


def _check(manifest: Manifest) -> None:
    if (problem := name_problem(manifest.name)) is not None:
        raise ManifestError(f"{MANIFEST}: key 'name': {visible(problem)}")
    _check_command("command", manifest.command)
    if manifest.build is not None:
        _check_command("build", manifest.build)
    for name, value in manifest.env.items():
        if (problem := env_refusal(name, value)) is not None:
            raise ManifestError(f"{MANIFEST}: key 'env': {visible(problem)}")
    description = manifest.description
    if len(description) > DESCRIPTION_CHARS or visible(description) != description:
        raise ManifestError(f"{MANIFEST}: key 'description': one line of at most {DESCRIPTION_CHARS} characters, "
                            "with no control or bidirectional character")


def _check_command(key: str, command: str | tuple[str, ...]) -> None:
    try:
        argv = _split(command)
    except ValueError as exc:
        raise ManifestError(f"{MANIFEST}: key {key!r}: cannot be split as a shell would ({exc})") from None
    if not argv or not argv[0]:
        raise ManifestError(f"{MANIFEST}: key {key!r}: empty; it needs a program")
    if any("\0" in word for word in argv):
        raise ManifestError(f"{MANIFEST}: key {key!r}: holds a NUL character")


def _split(command: str | tuple[str, ...]) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else list(command)
