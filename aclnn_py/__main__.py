"""``python -m aclnn_py`` is the ``aclnn-py`` command."""

from .cli import main

main()
