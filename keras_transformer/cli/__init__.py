"""The ``keras-transformer`` command: `main` (entry point), the argument
parser and the subcommands."""
