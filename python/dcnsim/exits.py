"""How the ``dcnsim`` process ends: its exit statuses and the line it prints when
Ctrl-C ends a command. Shared by the process's entry point (``dcnsim.__main__``,
which needs them before the command line is imported) and the command line
(``dcnsim.cli``); this module imports nothing, so the entry point's Ctrl-C handler
is installed as early as before."""

#: The exit status of bad input (one line on stderr, ``error: <message>``).
EXIT_BAD_INPUT = 2

#: The exit status of a command ended by Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130

#: What a command ended by Ctrl-C prints on stderr.
INTERRUPTED = "error: interrupted"
