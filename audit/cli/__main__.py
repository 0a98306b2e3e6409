import sys

from dpaudit.audit.cli import main

sys.exit(main())
