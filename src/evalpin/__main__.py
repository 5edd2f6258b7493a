"""`python -m evalpin` runs the same command line as the console script."""

from evalpin.cli import main

main()
