import sys

from dcnsim.program import main

sys.exit(main())
