"""The one version of citemark: pyproject.toml reads it (`[tool.setuptools.dynamic]`)."""

__version__ = "0.1.0"
