"""``python -m hassium``: run an unmodified NumPy program on Hassium.

Usage::

    python -m hassium [--stats] prog.py [args...]   run prog.py as __main__
    python -m hassium [--stats] -c "code" [args...]
    python -m hassium [--stats] -m module [args...]
    python -m hassium --info                        config, stacks, engines, cache dir
    python -m hassium --list-stacks                 one usable stack name per line

How NumPy is swapped, and why libraries still get the real one
---------------------------------------------------------------
``sys.modules["numpy"]``, ``["numpy.random"]`` and ``["numpy.linalg"]`` become
``hassium``, ``hassium.random`` and ``hassium.linalg`` before the program starts, so the
program's ``import numpy as np`` (and ``from numpy.random import default_rng``, ``import
numpy.linalg as la``, ...) records bytecode without a line changed.

Libraries are a different matter: matplotlib, scipy or NumPy's own lazily loaded
submodules subclass ``np.ndarray``, call C APIs that need real arrays, and rely on
internals Hassium does not mirror. So an ``import numpy`` statement is answered by *who
asks*: a ``builtins.__import__`` hook looks at the importing module's file, and code that
lives in the standard library or in site-packages (and NumPy and Hassium themselves)
gets the real ``numpy`` modules -- they are put back into ``sys.modules`` for the duration
of that import statement, so whatever the library imports in turn binds the real NumPy
too. The program's own files (the script and modules beside it, ``-c`` code) get Hassium.
Hassium arrays that reach a library still work there: NumPy converts them through
``__array__`` (zero-copy after a sync), and NumPy functions called on them come back to
Hassium through ``__array_function__``.

``import numpy.fft`` in the program (a submodule Hassium does not replace) is served by a
meta-path finder that imports the real submodule with the real NumPy in place;
``np.fft``, ``np.testing``, ``np.ma``, ... reach the real submodules through the
namespace's ``__getattr__``. What is not covered: ``importlib.import_module("numpy")`` in
a library returns Hassium (it bypasses ``__import__``), and threads importing NumPy
concurrently with the program's first imports may see the swap mid-way.

At exit everything recorded is flushed, and ``HASSIUM_STATS=1`` (or ``--stats``) prints
the runtime's counters.
"""

import builtins
import contextlib
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import site
import sys
import sysconfig
import types

SWAPPED = ("numpy", "numpy.random", "numpy.linalg")

USAGE = __doc__.split("How NumPy")[0].strip()


class _NumpySwap:
    """The state of the swap: the real modules, Hassium's, and who counts as a library."""

    def __init__(self):
        import numpy
        import numpy.linalg
        import numpy.random

        import hassium
        import hassium.linalg
        import hassium.random

        self.real = {name: sys.modules[name] for name in SWAPPED}
        self.hassium = {
            "numpy": hassium,
            "numpy.random": hassium.random,
            "numpy.linalg": hassium.linalg,
        }
        del numpy
        roots = set()
        paths = sysconfig.get_paths()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            if key in paths:
                roots.add(paths[key])
        for getter in (site.getsitepackages, site.getusersitepackages):
            try:
                found = getter()
            except Exception:  # some embedded or virtualenv setups lack these
                continue
            roots.update([found] if isinstance(found, str) else found)
        roots.add(os.path.dirname(self.real["numpy"].__file__))
        roots.add(os.path.dirname(hassium.__file__))
        self.roots = tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)
        self.depth = 0
        self._library_cache = {}
        self._module_cache = {}

    def is_library(self, globals_):
        """Whether the module whose globals these are is library code (not the program)."""
        if globals_ is None:
            return True  # PyImport_ImportModule from compiled code: a library
        if not globals_:
            return False
        package = globals_.get("__package__") or ""
        if package == "numpy" or package.startswith("numpy."):
            return True
        path = globals_.get("__file__")
        if not path or globals_.get("__name__") == "__main__":
            return False
        cached = self._library_cache.get(path)
        if cached is None:
            real = os.path.realpath(path)
            cached = real.startswith(self.roots)
            self._library_cache[path] = cached
        return cached

    def is_library_module(self, name):
        """Whether top-level module ``name`` is installed library code (not the program's)."""
        top = name.partition(".")[0]
        cached = self._module_cache.get(top)
        if cached is None:
            module = sys.modules.get(top)
            origin = getattr(module, "__file__", None) if module is not None else None
            if module is None:
                try:
                    spec = importlib.util.find_spec(top)
                except (ImportError, ValueError):
                    spec = None
                origin = spec.origin if spec is not None else None
            if origin in (None, "built-in", "frozen"):
                cached = module is not None or origin is not None  # builtins: stdlib
            else:
                cached = os.path.realpath(origin).startswith(self.roots)
            self._module_cache[top] = cached
        return cached

    def wants_real_numpy(self, name, globals_, level):
        """Whether this import statement runs with the real NumPy in ``sys.modules``.

        Yes when library code imports NumPy (or, relatively, part of it), and when any
        code imports a library: a compiled library (Cython, pybind11) looks ``numpy`` up
        in ``sys.modules`` directly while it initialises, bypassing ``__import__``.
        """
        if level > 0:
            package = (globals_ or {}).get("__package__") or ""
            return package.startswith("numpy") or self.is_library(globals_)
        if name == "numpy" or name.startswith("numpy."):
            return self.is_library(globals_)
        return self.is_library_module(name)

    @contextlib.contextmanager
    def real_numpy(self):
        """The real NumPy in ``sys.modules`` for the duration (re-entrant)."""
        self.depth += 1
        if self.depth == 1:
            sys.modules.update(self.real)
        try:
            yield
        finally:
            self.depth -= 1
            if self.depth == 0:
                sys.modules.update(self.hassium)

    def install(self):
        original_import = builtins.__import__
        swap = self

        def hassium_import(name, globals=None, locals=None, fromlist=(), level=0):
            if swap.depth == 0 and swap.wants_real_numpy(name, globals, level):
                with swap.real_numpy():
                    return original_import(name, globals, locals, fromlist, level)
            return original_import(name, globals, locals, fromlist, level)

        builtins.__import__ = hassium_import
        sys.meta_path.insert(0, _RealSubmoduleFinder(self))
        sys.modules.update(self.hassium)


class _Loaded(importlib.abc.Loader):
    """A loader handing out a module that is already imported."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class _RealSubmoduleFinder(importlib.abc.MetaPathFinder):
    """``import numpy.fft`` while ``numpy`` is Hassium: import the real submodule."""

    def __init__(self, swap):
        self.swap = swap

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("numpy.") or self.swap.depth:
            return None
        with self.swap.real_numpy():
            module = importlib.import_module(fullname)
        return importlib.util.spec_from_loader(fullname, _Loaded(module))


def swap_numpy():
    """Install the swap described in the module doc; returns its state."""
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
    exec(compile(code, "<string>", "exec"), main.__dict__)


def main(argv=None):
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
