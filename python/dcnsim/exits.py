"""How the ``dcnsim`` process ends: its exit statuses and the line it prints when
Ctrl-C (SIGINT) or SIGTERM (what ``kill``, ``timeout``, Slurm and Kubernetes send)
ends a command. Shared by the process's entry point (``dcnsim.__main__``, which
needs them before the command line is imported) and the command line
(``dcnsim.cli``); this module imports nothing, so the entry point's handlers are
installed as early as before."""

#: The exit status of bad input (one line on stderr, ``error: <message>``).
EXIT_BAD_INPUT = 2

#: The exit status of a command ended by Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130

#: What a command ended by Ctrl-C prints on stderr.
INTERRUPTED = "error: interrupted"

#: The exit status of a command ended by SIGTERM (128 + SIGTERM).
EXIT_TERMINATED = 143

#: What a command ended by SIGTERM prints on stderr.
TERMINATED = "error: terminated"


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt would be, so that whatever a
    command cleans up on Ctrl-C (temporary output, worker processes, a sweep's
    catalog) it cleans up on SIGTERM too."""


class Stopped(KeyboardInterrupt):
    """Ctrl-C or SIGTERM (``signal``, the KeyboardInterrupt it raised) stopped a
    command that keeps what it finished (a sweep's runs, an estimate's link runs, a
    study's runs); the message is the line the command ends with after ``error: ``:
    the word, what is kept and that running it again resumes."""

    def __init__(self, line: str, signal: KeyboardInterrupt) -> None:
        super().__init__(line)
        self.signal = signal


def ending(exc: KeyboardInterrupt) -> tuple[str, int]:
    """The word (``interrupted`` or ``terminated``) and exit status of a command
    ended by ``exc`` (a ``Stopped``: by its signal)."""
    if isinstance(exc, Stopped):
        exc = exc.signal
    if isinstance(exc, Terminated):
        return "terminated", EXIT_TERMINATED
    return "interrupted", EXIT_INTERRUPTED
