from keyshape.cli.main import main

main()
