"""``python -m twinrank.cli``: the ``twinrank`` command."""
import sys

from twinrank.cli import command

sys.exit(command())
