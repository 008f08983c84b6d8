"""``python -m textcw.cli``: the same as the ``textcw`` script."""

from textcw.cli import main

main()
