"""Code that rewrites pytest's verdict from inside the process it judges, to prepend to a package the tests
import (its names start with _uag so that they shadow nothing of the package). Used by test_guard.py (this
machine's pytest, a tiny repository) and test_reward_attacks.py (flask on docker and local)."""

# TestReport.from_item_and_call replaced: every failure is reported passed, the log and exit code agree
REPORT_CLASS_PATCHED = """import _pytest.reports as _uag_reports
_uag_made = _uag_reports.TestReport.from_item_and_call.__func__


def _uag_forged(cls, item, call):
    report = _uag_made(cls, item, call)
    if report.outcome == "failed":
        report.outcome, report.longrepr = "passed", None
    return report


_uag_reports.TestReport.from_item_and_call = classmethod(_uag_forged)
"""
# a plugin registered with the running plugin manager: its pytest_runtest_call wrapper swallows every exception
PLUGIN_REGISTERED = """import gc as _uag_gc

import pytest as _uag_pytest
from _pytest.config import Config as _UagConfig


class _UagForge:
    @_uag_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        outcome = yield
        outcome.force_result(None)


for _uag_config in [o for o in _uag_gc.get_objects() if isinstance(o, _UagConfig)]:
    _uag_config.pluginmanager.register(_UagForge(), "forge")
"""
