"""``python -m unifab``: the same as the ``unifab`` command."""

from unifab.cli import main

main()
