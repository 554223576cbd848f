"""``python -m twinrank.cli``: the ``twinrank`` command."""
import sys

from twinrank.cli import main

sys.exit(main())
