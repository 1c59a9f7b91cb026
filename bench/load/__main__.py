"""`python -m bench.load`: see the package docstring."""

from bench.load.run import main

raise SystemExit(main())
