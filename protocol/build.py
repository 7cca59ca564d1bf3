"""Which build of the engine is loaded: the mypyc-compiled modules (setup.py) or the pure-Python sources.

Both come from the same sources. Where the compiled modules are installed they load first; ``DURAK_PURE=1`` in
the environment loads the sources instead (for tests that compare the builds, and to rule the compiler out when
chasing a bug). Installing with ``DURAK_PURE=1`` skips the compile altogether.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

PURE_ENV = "DURAK_PURE"
#: The packages whose modules setup.py compiles; under DURAK_PURE=1 their modules load from the sources.
COMPILED_PACKAGES = ("protocol", "referee.engine")


def build_of(module: ModuleType) -> str:
    """``"compiled"`` if ``module`` was loaded from an extension module, else ``"pure"``."""
    origin = getattr(module, "__file__", None) or ""
    return "compiled" if origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) else "pure"


class SourcesOnly:
    """A meta path finder that loads the modules of :data:`COMPILED_PACKAGES` from their ``.py`` files."""

    @classmethod
    def find_spec(cls, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package not in COMPILED_PACKAGES or package not in sys.modules:
            return None
        for folder in getattr(sys.modules[package], "__path__", []):
            source = os.path.join(folder, name + ".py")
            if os.path.isfile(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def load_sources_if_asked() -> None:
    """Under ``DURAK_PURE=1``, put :class:`SourcesOnly` first on the import path (once)."""
    if os.environ.get(PURE_ENV) == "1" and SourcesOnly not in sys.meta_path:
        sys.meta_path.insert(0, SourcesOnly)
