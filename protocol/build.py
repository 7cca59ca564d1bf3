"""Which build of the engine is loaded: the mypyc-compiled modules (setup.py) or the pure-Python sources.

Both come from the same sources. Where the compiled modules are installed they load first; ``DURAK_PURE=1`` in
the environment loads the sources instead (for tests that compare the builds, and to rule the compiler out when
chasing a bug). Installing with ``DURAK_PURE=1`` skips the compile altogether.

In a source checkout (an editable install) a compiled module older than its source is stale: somebody edited
the engine since ``pip install -e .``. Then every module loads from the sources, with a warning, so that an edit
is never silently ignored; reinstalling compiles it again.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

PURE_ENV = "DURAK_PURE"
#: The packages whose modules setup.py compiles; under DURAK_PURE=1 their modules load from the sources.
COMPILED_PACKAGES = ("protocol", "referee.engine")
#: The compiled modules' shared library (mypyc's group; setup.py builds it).
SHARED_LIBRARY = "protocol._compiled__mypyc"


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


def stale_compiled_modules(root: Path) -> list[str]:
    """The sources under ``root`` (a checkout) edited since they were compiled, as relative paths.

    Each compiled module is a small stub; the code of them all is in one shared library (setup.py's GROUP),
    rewritten at every build: a source newer than it is stale.
    """
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    library = root / (SHARED_LIBRARY.replace(".", "/") + suffix)
    if not library.exists():
        return []
    built = library.stat().st_mtime
    stale = []
    for package in COMPILED_PACKAGES:
        for source in sorted((root / package.replace(".", "/")).glob("*.py")):
            if source.with_name(source.stem + suffix).exists() and source.stat().st_mtime > built:
                stale.append(str(source.relative_to(root)))
    return stale


def load_sources_if_asked() -> None:
    """Put :class:`SourcesOnly` first on the import path (once) under ``DURAK_PURE=1``, or where the compiled
    modules of a checkout are stale."""
    if SourcesOnly in sys.meta_path:
        return
    root = Path(__file__).resolve().parent.parent
    if os.environ.get(PURE_ENV) == "1":
        sys.meta_path.insert(0, SourcesOnly)
    elif (root / "pyproject.toml").is_file():
        stale = stale_compiled_modules(root)
        if stale:
            warnings.warn(f"the compiled engine is older than {', '.join(stale)}: loading the pure-Python engine; "
                          "pip install -e . compiles it again", stacklevel=2)
            sys.meta_path.insert(0, SourcesOnly)
