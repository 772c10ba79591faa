"""The package version (one place: the package, the CLI and the bench read it here)."""

__version__ = "0.1.0"
