"""The C extensions only (setuptools' pyproject.toml ext-modules is still experimental);
everything else about the package is declared in pyproject.toml."""

import importlib.util
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup


def _load_source_hash() -> ModuleType:
    """rocetrace/_source_hash.py, by path: nothing is installed yet."""
    path = Path("rocetrace/_source_hash.py")
    spec = importlib.util.spec_from_file_location("_source_hash", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_sources = _load_source_hash()


def _extension(module: str) -> Extension:
    files = [str(Path("rocetrace") / name) for name in _sources.EXTENSIONS[module]]
    return Extension(
        module,
        sources=[f for f in files if f.endswith(".c")],
        depends=[f for f in files if f.endswith(".h")],
        # Compiled in, so an import of an out-of-date build asks for a rebuild.
        define_macros=[("SOURCE_HASH", f'"{_sources.source_hash(module)}"')],
        extra_compile_args=["-O3"],
    )


setup(ext_modules=[_extension(module) for module in _sources.EXTENSIONS])
