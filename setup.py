"""The C extension only (setuptools' pyproject.toml ext-modules is still experimental);
everything else about the package is declared in pyproject.toml."""

import importlib.util
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup

CAPTURE = Path("rocetrace/capture")


def _load_source_hash() -> ModuleType:
    """rocetrace/capture/_source_hash.py, by path: nothing is installed yet."""
    spec = importlib.util.spec_from_file_location("_source_hash", CAPTURE / "_source_hash.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_sources = _load_source_hash()
_files = [str(f) for f in _sources.source_files(CAPTURE)]

setup(
    ext_modules=[
        Extension(
            "rocetrace.capture._kernels",
            sources=[f for f in _files if f.endswith(".c")],
            depends=[f for f in _files if f.endswith(".h")],
            # Compiled in, so an import of an out-of-date build asks for a rebuild.
            define_macros=[("KERNELS_SOURCE_HASH", f'"{_sources.source_hash(CAPTURE)}"')],
            extra_compile_args=["-O3"],
        )
    ]
)
