"""The overlap scan's compiled cheap test (simcore/contamination/kernel.c), built in place by
`pip install -e .` (scripts/install.sh) or `python setup.py build_ext --inplace`; everything else is
in pyproject.toml. Optional: where it cannot be built, simcore runs the same scan in numpy."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("simcore.contamination.kernel", ["simcore/contamination/kernel.c"],
                             extra_compile_args=["-O3"], optional=True)])
