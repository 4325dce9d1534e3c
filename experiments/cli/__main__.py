"""``python -m experiments.cli``."""

from experiments.cli import main

raise SystemExit(main())
