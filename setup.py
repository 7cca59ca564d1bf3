"""Compile the rules engine with mypyc where a C compiler is at hand; otherwise install it as pure Python.

The compiled modules are built from the same sources as the pure ones (no second copy of a rule). Everything
else about the package lives in pyproject.toml. ``DURAK_PURE=1`` at install time skips the compile; a compile
that fails (no compiler, a mypyc error) warns and leaves the pure build. At run time
``referee.engine.engine_build()`` says which one is loaded, and ``DURAK_PURE=1`` loads the pure one even where
the compiled one is installed (referee/engine/build.py).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

#: The modules mypyc compiles: the engine and the vocabulary its hot paths use. One group, one shared library,
#: kept inside the protocol package so that everything a bot imports sits in two folders (docs/ISOLATION.md).
COMPILED = [
    "protocol/cards.py",
    "protocol/actions.py",
    "referee/engine/errors.py",
    "referee/engine/rng.py",
    "referee/engine/tables.py",
    "referee/engine/deal.py",
    "referee/engine/game.py",
    "referee/engine/bout.py",
    "referee/engine/fools_fool.py",
    "referee/engine/search.py",
]
GROUP = "protocol._compiled"  # mypyc names the library protocol/_compiled__mypyc (protocol/build.py)


def _warn(message: str) -> None:
    print(f"durak-referee: {message}; installing the pure-Python engine", file=sys.stderr)


class OptionalBuildExt(build_ext):
    """build_ext that falls back to the pure build when compiling fails, removing any half-built modules."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # a missing or failing C compiler: CCompilerError, CompileError, OSError...
            _warn(f"compiling the engine failed ({exc})")
            for path in self.get_outputs() + [self._inplace_path(ext) for ext in self.extensions]:
                if os.path.exists(path):
                    os.remove(path)
            return
        # mypyc leaves an unchanged module's file alone; protocol/build.py takes a source newer than the shared
        # library for an edit not compiled yet, so mark the modules of a checkout as built now.
        for path in [self._inplace_path(ext) for ext in self.extensions]:
            if os.path.exists(path):
                os.utime(path)

    def _inplace_path(self, ext: Any) -> str:
        return os.path.join(*ext.name.split(".")[:-1], os.path.basename(self.get_ext_filename(ext.name)))


def compiled_extensions() -> list[Any]:
    if os.environ.get("DURAK_PURE") == "1":
        return []
    try:
        from mypyc.build import mypycify

        return list(mypycify(COMPILED, group_name=GROUP, opt_level="3", debug_level="0"))
    except (Exception, SystemExit) as exc:  # mypyc missing, or it rejected the code
        _warn(f"mypyc could not compile the engine ({exc!r})")
        return []


setup(ext_modules=compiled_extensions(), cmdclass={"build_ext": OptionalBuildExt})
