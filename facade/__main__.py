"""`python -m autograd_cli` runs the command line."""

from autograd_cli.cli.entry import main

if __name__ == "__main__":
    main()
