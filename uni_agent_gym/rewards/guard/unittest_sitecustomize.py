"""uni-agent-gym's grading guard for unittest-based runners (Django's `tests/runtests.py`): written into the
sandbox for one grading as `sitecustomize.py`, with its key and record path filled in, in a directory put
first on `PYTHONPATH`, so that Python imports it as it starts, before the runner and the code under test.
The gym never imports it.

- Every test's `unittest.TestCase.run` gets a result that records what the test reports to it (`addSuccess`,
  `addFailure`, `addError`, `addSkip`, failed subtests, ...) before passing it on to the runner's own result:
  a result class the code under test forged still receives the failure, and the guard has seen it.
- The tests are named as the runner's verbose output names them (the result's `getDescription`: the test
  and its docstring's first line), one signed line each, in a file the grader made and reads back.
- It snapshots `unittest`'s machinery as it loaded and, at exit, names what was replaced; it signs an `end`
  line last (at exit: a process made to end early vouches for nothing).
- It takes its directory out of `PYTHONPATH` and its file off the disk as it loads, and imports the
  interpreter's own `sitecustomize`, if there is one, as Python would have.
It runs on the sandbox's Python (3.6 and later).
"""

import atexit
import hashlib
import hmac
import importlib.machinery
import importlib.util
import inspect
import json
import os
import shutil
import sys
import unittest

_KEY = bytes.fromhex("__UAG_KEY__")
_RECORD = "__UAG_RECORD__"
_HERE = os.path.dirname(os.path.abspath(__file__))
_WATCHED = ("unittest",)


def _leave_no_trace():
    """Children (a runner the tests start) do not load the guard again, and its source (the key) leaves the disk."""
    paths = [path for path in os.environ.get("PYTHONPATH", "").split(os.pathsep) if path and os.path.abspath(path) != _HERE]
    if paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    else:
        os.environ.pop("PYTHONPATH", None)
    shutil.rmtree(_HERE, ignore_errors=True)


def _load_the_interpreters_own():
    """The `sitecustomize` Python would have imported without this one (Debian's, a venv's)."""
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _HERE])
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_FD = os.open(_RECORD, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
_leave_no_trace()


def _emit(kind, payload):
    body = json.dumps([kind, payload], sort_keys=True)
    mac = hmac.new(_KEY, body.encode(), hashlib.sha256).hexdigest()
    os.write(_FD, (mac + " " + body + "\n").encode())


def _machinery():
    """(module, attribute) -> object for unittest's functions and classes, and each class's behaviour."""
    seen = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in _WATCHED:
            continue
        for attribute, value in list(vars(module).items()):
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                seen[(name, attribute)] = value
                for key, member in list(vars(value).items()):
                    if key not in ("__dict__", "__weakref__", "__doc__", "__module__", "__qualname__") and (callable(member) or hasattr(type(member), "__get__")):
                        seen[(name, attribute + "." + key)] = member
            elif inspect.isfunction(value) and value.__module__ == name:  # not state such as signals' handler object
                seen[(name, attribute)] = value
    return seen


class _Recorder(object):
    """The runner's result, with what each test reports to it written down first."""

    _REPORTS = {"addSuccess": "passed", "addFailure": "failed", "addError": "failed", "addSkip": "skipped",
                "addExpectedFailure": "skipped", "addUnexpectedSuccess": "failed"}  # fmt: skip

    def __init__(self, result, test):
        object.__setattr__(self, "_result", result)
        object.__setattr__(self, "_test", test)

    def __getattr__(self, name):
        value = getattr(self._result, name)
        if name in self._REPORTS:
            return self._recording(value, name)
        if name == "addSubTest":
            return self._subtest(value)
        return value

    def __setattr__(self, name, value):
        setattr(self._result, name, value)

    def _name(self, test):
        describe = getattr(self._result, "getDescription", None)
        try:
            return describe(test) if describe is not None else str(test)
        except Exception:  # a description the result cannot make: the runner could not print it either
            return str(test)

    def _recording(self, report, name):
        outcome = self._REPORTS[name]
        when = "call" if outcome == "passed" else name  # a failure stays one whatever is reported after it

        def recorded(test, *args, **kwargs):
            _emit("test", [self._name(test), when, outcome])
            return report(test, *args, **kwargs)

        return recorded

    def _subtest(self, report):
        def recorded(test, subtest, err):
            if err is not None:
                _emit("test", [self._name(test), "addSubTest", "failed"])
            return report(test, subtest, err)

        return recorded


_run = unittest.TestCase.run


def _guarded_run(self, result=None):
    if result is None:
        return _run(self, result)
    return _run(self, _Recorder(result, self))


unittest.TestCase.run = _guarded_run
_BEFORE = _machinery()
_emit("start", {"pid": os.getpid()})


def _changed():
    """What of the machinery that loaded with the guard was replaced, removed or added to (unittest modules
    imported later, `unittest.mock` say, are not the runner's)."""
    after = _machinery()
    modules = {module for module, _ in _BEFORE}
    keys = set(_BEFORE) | {key for key in after if key[0] in modules}
    return [key[0] + "." + key[1] for key in sorted(keys) if _BEFORE.get(key, _changed) is not after.get(key, _changed)]


def _end():
    if os.getpid() == _BEFORE_PID:  # not a forked worker leaving
        _emit("end", {"changed": _changed(), "plugins": []})


_BEFORE_PID = os.getpid()
atexit.register(_end)
_load_the_interpreters_own()
