"""``python -m unifab.cli``: the same as the ``unifab`` command."""

from unifab.cli import main

main()
