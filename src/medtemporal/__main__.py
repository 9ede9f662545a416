"""``python -m medtemporal`` runs the command line."""

import sys

from medtemporal.cli import main

if __name__ == "__main__":
    sys.exit(main())
