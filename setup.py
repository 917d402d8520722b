"""The C extension only (setuptools' pyproject.toml ext-modules is still experimental);
everything else about the package is declared in pyproject.toml."""

from setuptools import Extension, setup

KERNELS = "rocetrace/capture/_kernels"

setup(
    ext_modules=[
        Extension(
            "rocetrace.capture._kernels",
            sources=[f"{KERNELS}{part}.c" for part in ("", "_scan", "_walk", "_roce", "_columns")],
            depends=[f"{KERNELS}.h"],
            extra_compile_args=["-O3"],
        )
    ]
)
