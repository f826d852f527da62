"""``python -m keyshape.cli``: the ``keyshape`` command (``python -m keyshape`` is the same)."""

from keyshape.cli.main import main

if __name__ == "__main__":
    main(prog_name="keyshape")
