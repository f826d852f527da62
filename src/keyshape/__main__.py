"""``python -m keyshape``: the ``keyshape`` command, for environments without the console script."""

from keyshape.cli.main import main

if __name__ == "__main__":
    main(prog_name="keyshape")
