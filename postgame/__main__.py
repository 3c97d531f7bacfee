"""`python -m postgame` is the `postgame` command."""

from postgame.cli import main

main()
