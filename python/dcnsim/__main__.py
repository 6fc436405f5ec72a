import sys

from dcnsim.cli import main

sys.exit(main())
