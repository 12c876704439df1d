"""The subcommands of the ``nkilint`` command line, one module each."""
