# setup.py exists only to carry cffi_modules: cffi cannot be wired from pyproject.toml alone.
# Everything else about the package lives in pyproject.toml.
from setuptools import setup

setup(cffi_modules=["aclnn_py/_build.py:ffibuilder"])
