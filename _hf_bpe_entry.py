"""The ``hf-bpe`` console script: Ctrl-C is handled from this module's first instruction on.

The script pip writes runs ``from _hf_bpe_entry import run`` before anything else. An entry inside the package
(``hf_bpe._entry``) cannot catch a Ctrl-C that arrives while ``hf_bpe/__init__.py`` runs, because Python imports the
package before the entry module: that printed a ``KeyboardInterrupt`` traceback (issue 22). This module lives outside
the package, so importing it runs nothing of hf_bpe. Its first instruction replaces Python's SIGINT handler by one
that exits at once, status 130, with one line (nothing has been read or written yet); ``hf_bpe._entry.run`` puts
Python's handler back, inside its ``try``, once the command's modules are loaded, so that a later Ctrl-C stops the
command through ``KeyboardInterrupt`` and its clean-up.
"""

import _signal  # built in: importing it runs no Python code that a Ctrl-C could interrupt

__all__ = ["run"]


def _interrupted_while_loading(signum: int, frame: object) -> None:
    import os  # already loaded by the interpreter's start-up

    os.write(2, b"hf-bpe: interrupted\n")
    os._exit(130)


# An ignored SIGINT (a background job of a non-interactive shell) or an embedding program's handler is left alone.
if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _interrupted_while_loading)


def run() -> None:
    """Run ``hf-bpe`` with ``sys.argv`` and exit with its status."""
    from hf_bpe._entry import run as run_command

    run_command()
