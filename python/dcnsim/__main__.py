"""The ``dcnsim`` program as a process (``python -m dcnsim``, and the ``dcnsim``
command, whose entry point is :func:`main`): Ctrl-C at any moment ends it with
exit status 130 and one line, ``error: interrupted``; SIGTERM (what ``kill``,
``timeout``, Slurm and Kubernetes send) the same way, with exit status 143 and
``error: terminated``: everything said below of Ctrl-C holds for it, its
exception being :class:`dcnsim.exits.Terminated`, a KeyboardInterrupt.

Until the command starts, Ctrl-C (SIGINT) ends the process at once: nothing has
been done that needs undoing. That handler is the first thing this module does,
before the command line (argparse, the scenario code) is imported, and
``dcnsim/__init__.py`` imports nothing, so only the interpreter's own start-up
(tens of ms: its handler not yet installed, or its site and runpy imports) comes
before it: a Ctrl-C there ends the process as it ends any Python program, by the
signal (status 130 to a shell), having run nothing of dcnsim. numpy is
imported in that phase too, for the commands that run many simulations: imported
first by the core, on its first array, a Ctrl-C during the import would be a
panic inside the core instead of a KeyboardInterrupt. ``run`` does without it:
the core makes a column's array only when asked for (``_core.Columns``), and the
command's summary imports numpy itself before it asks for one, so ``dcnsim run
--out`` on a run without TCP flows loads no numpy at all. Once the command runs,
Ctrl-C raises KeyboardInterrupt, so that what it was writing is cleaned up
before :func:`dcnsim.cli.main` prints the line; once it has returned, Ctrl-C is
ignored while the process exits.

A Ctrl-C whose KeyboardInterrupt is raised inside a finalizer (a generator closed
or an object's ``__del__`` run as the garbage is collected) cannot propagate, and
the interpreter would only print it as "Exception ignored" and go on, the run
with it (a run that went on after Ctrl-C was seen once in some 700 Ctrl-C's of
start-up; this is the one way we know to lose one). While the command runs, such
an interrupt is raised again where it can propagate (:func:`_interrupt_again`).
"""

# _signal, not signal: the interpreter has it loaded already, whereas signal's
# enums take a while to import, and a Ctrl-C then would come before the handler.
import _signal
import _thread
import os
import sys

from dcnsim.exits import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    INTERRUPTED,
    TERMINATED,
    Terminated,
    ending,
)

#: The commands that run many simulations, so import numpy before they start.
_SIMULATING = {"bench", "study", "sweep"}


def _exit_at_once(signum: int, frame: object) -> None:
    if signum == _signal.SIGTERM:
        os.write(2, f"{TERMINATED}\n".encode())
        os._exit(EXIT_TERMINATED)
    os.write(2, f"{INTERRUPTED}\n".encode())
    os._exit(EXIT_INTERRUPTED)


def _raise_terminated(signum: int, frame: object) -> None:
    """SIGTERM while the command runs: raised as Ctrl-C's KeyboardInterrupt is."""
    raise Terminated


def _interrupt_again(unraisable: "sys.UnraisableHookArgs") -> None:
    """``sys.unraisablehook``: a KeyboardInterrupt that could not propagate (raised
    in a finalizer) is raised again in the main thread, at its next check for
    signals, without a word; anything else is reported as Python reports it. The
    interrupt comes from a new thread: asked for here, it would be raised at once,
    inside this hook, and be lost again."""
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        signum = _signal.SIGTERM if issubclass(unraisable.exc_type, Terminated) else _signal.SIGINT
        _thread.start_new_thread(_thread.interrupt_main, (signum,))
    else:
        sys.__unraisablehook__(unraisable)


def main() -> int:
    """Run the command of ``sys.argv``; its exit status."""
    _signal.signal(_signal.SIGINT, _exit_at_once)
    _signal.signal(_signal.SIGTERM, _exit_at_once)
    sys.unraisablehook = _interrupt_again
    # Imported only now, deliberately: a Ctrl-C while argparse and the scenario
    # code load must already end the process at once (see the module's docstring).
    from dcnsim import cli

    if _SIMULATING.intersection(sys.argv[1:2]):
        import numpy  # noqa: F401  (see the module's docstring)
    try:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
        _signal.signal(_signal.SIGTERM, _raise_terminated)
        return cli.main()
    except KeyboardInterrupt as exc:  # after the handler changed, before cli.main caught it
        word, status = ending(exc)
        print(f"error: {word}", file=sys.stderr)
        return status
    finally:
        _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
