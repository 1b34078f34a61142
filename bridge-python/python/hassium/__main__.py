"""``python -m hassium``: run an unmodified NumPy program on Hassium.

Usage::

    python -m hassium [--stats] prog.py [args...]   run prog.py as __main__
    python -m hassium [--stats] -c "code" [args...]
    python -m hassium [--stats] -m module [args...]
    python -m hassium --info                        config, stacks, engines, cache dir
    python -m hassium --list-stacks                 one usable stack name per line

How NumPy is swapped, and why libraries still get the real one
---------------------------------------------------------------
The program's ``import numpy as np`` must give Hassium; matplotlib, scipy, NumPy's own
lazily loaded submodules and every compiled library must keep the real NumPy (they
subclass ``np.ndarray``, check ``numpy.ufunc``'s C layout, call NumPy's C API). Putting
Hassium into ``sys.modules["numpy"]`` cannot serve both: C code -- ``PyImport_Import``,
Cython's and pybind11's module init, Hassium's own extension -- reads ``sys.modules``
directly, whoever asks.

So ``sys.modules`` keeps the real NumPy, and the swap happens where Python code imports:
a ``builtins.__import__`` hook answers ``import numpy``, ``import numpy.random``,
``import numpy.linalg as la``, ``from numpy.random import default_rng`` ... with
``hassium``, ``hassium.random`` and ``hassium.linalg`` when the importing module is the
program's -- the script (``__main__``), ``-c`` code, and modules that live outside the
standard library and site-packages (the program's own helpers). Imports from library
files get NumPy as usual. Other submodules (``numpy.fft``, ``numpy.ma``, ...) stay
NumPy's, also when reached as attributes of Hassium (``np.fft``); NumPy functions called
on Hassium arrays come back to Hassium through ``__array_function__``, and a Hassium
array handed to a library converts through ``__array__`` without a copy.

Not covered: ``importlib.import_module("numpy")`` and ``sys.modules["numpy"]`` in the
program give the real NumPy (they bypass ``__import__``).

At exit everything recorded is flushed, and ``HASSIUM_STATS=1`` (or ``--stats``) prints
the runtime's counters.
"""

import builtins
import os
import runpy
import site
import sys
import sysconfig
import types

USAGE = __doc__.split("How NumPy")[0].strip()


class _NumpySwap:
    """The hook's state: Hassium's modules by NumPy name, and where library code lives."""

    def __init__(self):
        import numpy

        import hassium
        import hassium.linalg
        import hassium.random

        self.hassium = {
            "numpy": hassium,
            "numpy.random": hassium.random,
            "numpy.linalg": hassium.linalg,
        }
        roots = set()
        paths = sysconfig.get_paths()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            if key in paths:
                roots.add(paths[key])
        for getter in (site.getsitepackages, site.getusersitepackages):
            try:
                found = getter()
            except AttributeError:  # old virtualenv's site module lacks them
                continue
            roots.update([found] if isinstance(found, str) else found)
        roots.add(os.path.dirname(numpy.__file__))
        roots.add(os.path.dirname(hassium.__file__))
        self.roots = tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)
        self._cache = {}

    def is_program(self, globals_):
        """Whether the module whose globals these are belongs to the program."""
        if globals_ is None:
            return False  # PyImport_ImportModule from compiled code: a library
        if globals_.get("__name__") == "__main__":
            return True
        path = globals_.get("__file__")
        if not path:
            return False  # frozen and built-in modules
        cached = self._cache.get(path)
        if cached is None:
            cached = not os.path.realpath(path).startswith(self.roots)
            self._cache[path] = cached
        return cached

    def install(self):
        original_import = builtins.__import__
        swap = self
        replaced = self.hassium

        def hassium_import(name, globals=None, locals=None, fromlist=(), level=0):
            module = original_import(name, globals, locals, fromlist, level)
            if (
                level == 0
                and (name == "numpy" or name.startswith("numpy."))
                and swap.is_program(globals)
            ):
                if fromlist:
                    # `from numpy.random import x` binds from the named module itself.
                    return replaced.get(name, module)
                # `import numpy[.sub] [as x]` binds the top-level package.
                return replaced["numpy"]
            return module

        builtins.__import__ = hassium_import


def swap_numpy():
    """Install the import hook described in the module doc; returns its state."""
    swap = _NumpySwap()
    swap.install()
    return swap


def _print_info():
    from . import _hassium
    from ._report import format_info

    info = dict(_hassium.info())
    info.setdefault("stacks", list(_hassium.stacks()))
    print(format_info(info))


def _run_code(code, argv):
    sys.argv = ["-c", *argv]
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    exec(compile(code, "<string>", "exec"), main.__dict__)  # noqa: S102 (python -m hassium -c)


def _join_start():
    """Waits for the engine's start thread (``hassium/__init__.py``), if one runs: the
    runner's options and the program may write the environment, which must not be
    written while that thread reads it. Then undoes the package's OPENBLAS_MAIN_FREE."""
    import hassium

    started = getattr(hassium, "_prestarted", None)
    if started is None:
        return
    if started == "thread":
        hassium._hassium.prestart_join()
    if hassium._main_free_added:
        os.environ.pop("OPENBLAS_MAIN_FREE", None)


def main(argv=None):
    _join_start()
    args = list(sys.argv[1:] if argv is None else argv)
    while args and args[0].startswith("-"):
        opt = args.pop(0)
        if opt in ("-h", "--help"):
            print(USAGE)
            return 0
        if opt == "--info":
            _print_info()
            return 0
        if opt == "--list-stacks":
            from . import _hassium

            for name in _hassium.stacks():
                print(name)
            return 0
        if opt == "--stats":
            os.environ["HASSIUM_STATS"] = "1"
            continue
        if opt in ("-c", "-m"):
            if not args:
                print(
                    f"python -m hassium: option {opt} needs an argument",
                    file=sys.stderr,
                )
                return 2
            target = args.pop(0)
            swap_numpy()
            if opt == "-c":
                _run_code(target, args)
            else:
                sys.argv = [target, *args]
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            return 0
        if opt == "--":
            break
        print(f"python -m hassium: unknown option {opt}\n\n{USAGE}", file=sys.stderr)
        return 2
    if not args:
        print(USAGE, file=sys.stderr)
        return 2
    program = args[0]
    if not os.path.exists(program):
        print(f"python -m hassium: can't open file {program!r}", file=sys.stderr)
        return 2
    sys.argv = list(args)
    sys.path[0] = os.path.dirname(os.path.abspath(program))
    swap_numpy()
    runpy.run_path(program, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
