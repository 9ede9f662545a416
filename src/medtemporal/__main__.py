"""``python -m medtemporal`` runs the command line."""

import sys

from medtemporal.cli import main

sys.exit(main())
