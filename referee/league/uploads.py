"""An uploaded bot (``durak serve`` or ``durak submit``) carried out by the daemon: its archive checked and extracted
into a staging folder of the bot store, its build run in the sandbox, what the build left checked again with the
upload rules, then the gate, as for ``durak league add``/``update``.

Each step's outcome is written to the upload's row as it ends (``extract``, ``build``, ``check``, ``gate``), with
the build's and the gate's output, so the author follows it. Nothing of an upload runs outside the sandbox, and
nothing is written outside the staging folder (``league-bots/.uploads/ID``, removed at the end) but the version's
snapshot.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.league.archive import ArchiveCaps, ArchiveError, extract_archive
from referee.league.build import BuildLimits
from referee.league.config import ArenaSettings
from referee.league.manifest import Manifest, ManifestError, read_manifest
from referee.results.arena_store import ArenaStore, UploadRow, UploadStatus, UploadStep

_MIB = 1 << 20
#: Where an uploaded bot's command is looked up, unless its manifest sets PATH: the system's own folders, which
#: every sandbox level shows, never the daemon's PATH (a virtual environment or a version manager's shims there
#: are the organizer's, outside the sandbox).
UPLOAD_PATH = "/usr/local/bin:/usr/bin:/bin"


class UploadRefused(Exception):
    """A step refused the upload: ``step`` names it, the message is one line for the author."""

    def __init__(self, message: str, step: str = "") -> None:
        super().__init__(message)
        self.step = step


@dataclass(frozen=True)
class Unpacked:
    """An upload ready for the gate: the folder to snapshot, and what its manifest asks."""

    folder: Path
    manifest: Manifest


def archive_caps(arena: ArenaSettings) -> ArchiveCaps:
    """The upload rules with the league's archive cap."""
    return ArchiveCaps(archive_bytes=arena.archive_mb * _MIB)


def build_limits(arena: ArenaSettings) -> BuildLimits:
    return BuildLimits(wall_seconds=arena.build_seconds, memory_mb=arena.build_memory_mb,
                       scratch_mb=arena.build_scratch_mb, tar_mb=arena.archive_mb)


class UploadSteps:
    """Records an upload's steps in its row as they end, timed."""

    def __init__(self, store: ArenaStore, upload: UploadRow) -> None:
        self.store, self.upload = store, upload
        self._start = time.monotonic()

    def status(self, status: UploadStatus) -> None:
        self.store.step_upload(self.upload.id, status)
        self._start = time.monotonic()

    def done(self, step: str, detail: str, status: UploadStatus, **logs: str) -> None:
        """A step that passed (``status``: what comes next)."""
        self.store.step_upload(self.upload.id, status, UploadStep(step, True, detail, self._seconds()), **logs)
        self._start = time.monotonic()

    def refused(self, step: str, detail: str, **logs: str) -> None:
        self.store.step_upload(self.upload.id, "refused", UploadStep(step, False, detail, self._seconds()), **logs)

    def _seconds(self) -> float:
        return round(time.monotonic() - self._start, 3)


def unpack(archive: bytes, staging: Path, caps: ArchiveCaps, steps: UploadSteps, bot: str,
           build: Callable[[Path, list[str], Path], tuple[bool, str, str]]) -> Unpacked:
    """Extract and (where the manifest asks) build an upload in ``staging``, recording each step.

    Args:
        bot: the bot the upload was made for: its manifest must name it.
        build: runs a build command in the sandbox on a folder, writing what it left as a tar to a path;
            returns (passed, one-line outcome, output).

    :raises UploadRefused: a step refused it (already recorded).
    """
    if staging.exists():  # an interrupted attempt: done again from the start
        shutil.rmtree(staging)
    os.makedirs(staging, mode=0o700)
    packed = staging / "upload.archive"
    packed.write_bytes(archive)
    try:
        tree = extract_archive(packed, staging / "files", caps)
        manifest = read_manifest(staging / "files")
    except (ArchiveError, ManifestError) as exc:
        raise _refused(steps, "extract", str(exc)) from None
    except Exception as exc:
        raise _refused(steps, "extract", f"the archive cannot be read ({type(exc).__name__})") from None
    if manifest.name != bot:
        raise _refused(steps, "extract", f"the manifest names the bot {manifest.name!r}, not {bot!r}")
    if manifest.build_argv is None:
        steps.done("extract", f"{tree.files} files, {tree.bytes} bytes; no build command", "gating")
        return Unpacked(staging / "files", manifest)
    steps.done("extract", f"{tree.files} files, {tree.bytes} bytes", "building")
    built = staging / "built.tar"
    passed, outcome, output = build(staging / "files", manifest.build_argv, built)
    if not passed:
        raise _refused(steps, "build", outcome, build_log=output)
    steps.done("build", outcome, "building", build_log=output)
    try:  # what the build left is as untrusted as the upload: the same rules
        left = extract_archive(built, staging / "built", caps)
    except ArchiveError as exc:
        raise _refused(steps, "check", f"what the build left: {exc}") from None
    except Exception as exc:
        raise _refused(steps, "check", f"what the build left cannot be read ({type(exc).__name__})") from None
    steps.done("check", f"what the build left: {left.files} files, {left.bytes} bytes", "gating")
    return Unpacked(staging / "built", manifest)


def _refused(steps: UploadSteps, step: str, detail: str, **logs: str) -> UploadRefused:
    steps.refused(step, detail, **logs)
    return UploadRefused(detail, step)
