"""``python -m gemenvs``: the ``gemenvs`` command (play a game yourself, replay a saved game)."""
import sys

from gemenvs.cli import main

sys.exit(main())
