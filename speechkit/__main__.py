import sys

from speechkit.cli import main

sys.exit(main())
