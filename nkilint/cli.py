"""The ``nkilint`` command line: the command group and the entry point.

Each subcommand lives in ``nkilint/commands/``; this module only assembles
them. Exit codes: 0 no findings at or above the failing level; 1 findings;
2 usage, configuration or internal error (including a crashed rule).
"""

from __future__ import annotations

import sys

import click

from . import __version__
from .commands.cached import clean_command
from .commands.check import check
from .commands.model import graph_command, stats_command
from .commands.releases import releases_command
from .commands.review import review_command
from .commands.rules import rule_command, rules_command
from .commands.server import server_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nkilint")
def cli() -> None:
    """nkilint: static analysis for NKI kernels (AWS Trainium / Inferentia).

    Reads kernel source, never imports or runs it.
    """


for _command in (check, rules_command, rule_command, releases_command, graph_command, stats_command, clean_command,
                 server_command, review_command):
    cli.add_command(_command)


def main() -> None:
    try:
        # Not click's standalone mode: it turns Ctrl-C into "Aborted!" and
        # exit 1, which CI reads as "findings". Ctrl-C is 130 (128 + SIGINT).
        try:
            code = cli.main(prog_name="nkilint", standalone_mode=False)
        except (click.exceptions.Abort, KeyboardInterrupt):
            click.echo("nkilint: interrupted; nothing was written", err=True)
            sys.exit(130)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)
    except SystemExit:
        # The report is written. Interpreter shutdown would run the cyclic
        # collector over every parsed module and kernel graph still alive
        # (a quarter of a run's CPU); nothing needs collecting now.
        import gc

        gc.freeze()
        raise
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)
    except Exception as exc:
        from .interrupts import caused_by_interrupt

        if caused_by_interrupt(exc):  # Ctrl-C that a library's clean-up turned into another error
            click.echo("nkilint: interrupted; nothing was written", err=True)
            sys.exit(130)
        # An unexpected error is an internal error (exit 2), never "findings" (1).
        import traceback

        traceback.print_exc()
        click.echo("nkilint: internal error (a bug in nkilint); please report it with the traceback above", err=True)
        sys.exit(2)


# click's own usage errors exit with 2 already; keep that contract explicit.
click.exceptions.UsageError.exit_code = 2
