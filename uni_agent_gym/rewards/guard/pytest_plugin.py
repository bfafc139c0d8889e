"""uni-agent-gym's grading guard for pytest: written into the sandbox for one grading, with its key and record
path filled in, and loaded by pytest before the code under test (`PYTEST_PLUGINS`). The gym never imports it.

The code under test runs inside the test runner, so it can change how the runner judges the tests: patch its
report classes, register a hook that swallows failures. The guard, from outside the report objects:
- records each test phase's outcome where the runner computes it (the call's exception, before any report is
  made of it), one signed line each, in a file the grader made and reads back after the run;
- snapshots the runner's machinery as it loaded (the functions and classes of `_pytest`, `pytest`, `pluggy`)
  and, when the session ends, names what was replaced, and the plugin objects whose hooks are the
  repository's own code (not pytest's, not a conftest file's, not an installed plugin's);
- signs an `end` line last: a run that never reaches it (the guard unregistered, the process killed or made
  to exit early) vouches for nothing.
It runs on the sandbox's Python (3.6 and later) with the repository's pytest (4.6 and later).
"""

import hashlib
import hmac
import json
import os
import shutil
import sys

import pytest

_KEY = bytes.fromhex("__UAG_KEY__")
_RECORD = "__UAG_RECORD__"
_WATCHED = ("_pytest", "pytest", "pluggy")
_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.getcwd()


def _leave_no_trace():
    """Children (a pytest the tests start) do not load the guard again, and its source (the key) leaves the disk."""
    names = [name for name in os.environ.get("PYTEST_PLUGINS", "").split(",") if name.strip() and name.strip() != __name__]
    if names:
        os.environ["PYTEST_PLUGINS"] = ",".join(names)
    else:
        os.environ.pop("PYTEST_PLUGINS", None)
    paths = [path for path in os.environ.get("PYTHONPATH", "").split(os.pathsep) if path and os.path.abspath(path) != _HERE]
    if paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    else:
        os.environ.pop("PYTHONPATH", None)
    shutil.rmtree(_HERE, ignore_errors=True)


_FD = os.open(_RECORD, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
_leave_no_trace()


def _emit(kind, payload):
    body = json.dumps([kind, payload], sort_keys=True)
    mac = hmac.new(_KEY, body.encode(), hashlib.sha256).hexdigest()
    os.write(_FD, (mac + " " + body + "\n").encode())


def _machinery():
    """(module, attribute) -> object for the runner's functions and classes, and each class's behaviour."""
    seen = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in _WATCHED:
            continue
        for attribute, value in list(vars(module).items()):
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                seen[(name, attribute)] = value
                for key, member in list(vars(value).items()):
                    if _behaviour(key, member):
                        seen[(name, attribute + "." + key)] = member
            elif callable(value) and getattr(value, "__module__", None) == name:
                seen[(name, attribute)] = value
    return seen


def _behaviour(key, member):
    """A class member that decides what the class does (a method, property or other descriptor), not its data."""
    if key in ("__dict__", "__weakref__", "__doc__", "__module__", "__qualname__", "__abstractmethods__", "_abc_impl"):
        return False
    return callable(member) or hasattr(type(member), "__get__")


def _origin(value):
    """The file a function, method, property or class was written in ('' when it has none)."""
    for attribute in ("fget", "__func__", "__wrapped__"):
        value = getattr(value, attribute, None) or value
    if isinstance(value, type):
        module = sys.modules.get(getattr(value, "__module__", ""), None)
        return getattr(module, "__file__", "") or ""
    code = getattr(value, "__code__", None)
    return code.co_filename if code is not None else ""


def _the_runners_own(value):
    """Whether `value` was written in pytest's, pluggy's own files (pytest patches itself: legacypath's
    properties, set as it configures) and not in the repository under test."""
    parts = os.path.abspath(_origin(value) or os.sep).split(os.sep)
    return bool(set(parts) & set(_WATCHED)) and not _in_repository_path(_origin(value))


def _changed(before):
    """What was replaced, added or removed since `before`, unless pytest's own code did it."""
    after = _machinery()
    changed = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, _changed), after.get(key, _changed)
        if old is new or (new is not _changed and _the_runners_own(new)):
            continue
        changed.append(key[0] + "." + key[1])
    return changed


_BEFORE = _machinery()
_emit("start", {"pid": os.getpid()})


def _outcome(call):
    excinfo = call.excinfo
    if excinfo is None:
        return "passed"
    return "skipped" if excinfo.errisinstance(pytest.skip.Exception) else "failed"


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """Under pytest-xdist the tests run in worker processes the guard is not loaded in (it took itself out of
    their environment): it says so, and the grader falls back to the log's own checks."""
    option = session.config.option
    if getattr(option, "numprocesses", None) or getattr(option, "dist", "no") != "no":
        _emit("unguarded", "pytest-xdist runs the tests in worker processes")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    _emit("test", [item.nodeid, call.when, _outcome(call)])
    yield


def _in_repository_path(path):
    return bool(path) and os.path.abspath(path).startswith(_ROOT + os.sep)


def _in_repository(path):
    """Whether code at `path` is the repository's own (the grader starts the tests in its root), outside the
    runner's packages and the conftest files (those are restored to the start commit before the run)."""
    parts = os.path.abspath(path or os.sep).split(os.sep)
    return _in_repository_path(path) and os.path.basename(path) != "conftest.py" and not set(parts) & set(_WATCHED)


def _foreign_plugins(config):
    """Plugin objects whose hooks are the repository's code: a verdict rewritten from the code under test."""
    found = []
    for name, plugin in config.pluginmanager.list_name_plugin():
        if plugin is None or type(plugin).__name__ == "module":
            continue
        for attribute in dir(plugin):
            hook = getattr(plugin, attribute, None) if attribute.startswith("pytest_") else None
            code = getattr(getattr(hook, "__func__", hook), "__code__", None)
            if code is not None and _in_repository(code.co_filename):
                found.append("%s (%s in %s)" % (name, attribute, os.path.relpath(code.co_filename, _ROOT)))
    return sorted(found)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    _emit("end", {"changed": _changed(_BEFORE), "plugins": _foreign_plugins(session.config)})
