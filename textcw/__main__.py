"""``python -m textcw``: the same as the ``textcw`` script."""

from textcw.cli import main

main()
