"""``python -m gemenvs.training CONFIG [key=value ...]`` (same as ``gemenvs-train``)."""
import sys

from gemenvs.training.cli import main

sys.exit(main())
