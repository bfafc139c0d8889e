#!/bin/bash
# Remakes the real Django and sympy runner logs in this folder (see README.md): downloads the sdists,
# makes two virtual environments, adds the demo tests below and runs the runners as SWE-bench does.
# Needs PyPI and pyenv's Python 3.9 and 3.11. Usage: capture.sh WORKDIR (then copy WORKDIR/out/*).
set -eu
work=$(realpath "$1"); mkdir -p "$work/demo" "$work/out"; cd "$work"
python=${PYTHON:-python3}
$python -m pip download -q --no-deps --no-binary :all: Django==3.0.14 Django==4.2.16 sympy==1.1.1 sympy==1.12 2>/dev/null ||
  for p in Django==3.0.14 Django==4.2.16 sympy==1.1.1 sympy==1.12; do $python -m pip download -q --no-deps --no-binary :all: $p; done
for f in Django-3.0.14 Django-4.2.16 sympy-1.1.1 sympy-1.12; do [ -d $f ] || tar xzf $f.tar.gz; done
[ -d venv39 ] || { "$(pyenv root)/versions/3.9.18/bin/python" -m venv venv39 && venv39/bin/pip install -q "asgiref~=3.2" pytz sqlparse mpmath; }
[ -d venv311 ] || { "$(pyenv root)/versions/3.11.7/bin/python" -m venv venv311 && venv311/bin/pip install -q "asgiref>=3.6" sqlparse mpmath; }

cat > demo/tests_pass.py <<'EOF'
import unittest

from django.test import SimpleTestCase


class Arithmetic(SimpleTestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_docstring(self):
        """Adding zero changes nothing."""
        self.assertEqual(3 + 0, 3)

    def test_prints(self):
        print("output from the code under test")
        self.assertTrue(True)

    def test_subtests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertGreaterEqual(i, 0)

    @unittest.skip("not on this platform")
    def test_skipped(self):
        pass

    @unittest.expectedFailure
    def test_known_bug(self):
        self.assertEqual(1, 2)
EOF

cat > demo/tests_fail.py <<'EOF'
import unittest

from django.test import SimpleTestCase


class Arithmetic(SimpleTestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_docstring(self):
        """Adding zero changes nothing."""
        self.assertEqual(3 + 0, 4)

    def test_wrong(self):
        self.assertEqual(2 * 2, 5)

    def test_crashes(self):
        raise RuntimeError("boom")

    def test_subtests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 1)

    @unittest.skip("not on this platform")
    def test_skipped(self):
        pass

    @unittest.expectedFailure
    def test_fixed_bug(self):
        self.assertEqual(1, 1)


class BrokenSetup(SimpleTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        raise RuntimeError("no fixture")

    def test_never_runs(self):
        pass
EOF

cat > demo/tests_forged.py <<'EOF'
"""The code under test prints lines in the runner's format: while a failing test runs, and at exit."""
import atexit
import os
import sys

from django.test import SimpleTestCase


def _forge_at_exit():
    sys.stderr.write("test_wrong (uag_demo.tests.Arithmetic) ... ok\n")
    sys.stderr.write("test_wrong (uag_demo.tests.Arithmetic.test_wrong) ... ok\n")
    sys.stderr.flush()
    os._exit(0)


class Arithmetic(SimpleTestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_wrong(self):
        self.assertEqual(2 * 2, 5)

    def test_forged_during(self):
        sys.stderr.write("\ntest_forged_during (uag_demo.tests.Arithmetic) ... ok\n")
        sys.stderr.write("test_forged_during (uag_demo.tests.Arithmetic.test_forged_during) ... ok\n")
        self.assertEqual(2 * 2, 5)

    def test_arms_exit_hook(self):
        atexit.register(_forge_at_exit)
EOF

cat > demo/tests_exits.py <<'EOF'
"""The code under test prints a pass for a test and ends the process before the runner reports."""
import os
import sys

from django.test import SimpleTestCase


class Arithmetic(SimpleTestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_wrong(self):
        sys.stderr.write("\ntest_wrong (uag_demo.tests.Arithmetic) ... ok\n")
        sys.stderr.write("test_wrong (uag_demo.tests.Arithmetic.test_wrong) ... ok\n")
        sys.stderr.flush()
        os._exit(0)
EOF

cat > demo/sympy_pass.py <<'EOF'
try:
    from sympy.testing.pytest import XFAIL, skip
except ImportError:  # sympy < 1.6
    from sympy.utilities.pytest import XFAIL, skip

from sympy import Symbol, expand

x = Symbol("x")


def test_expand():
    assert expand((x + 1) ** 2) == x**2 + 2 * x + 1


def test_prints():
    print("output from the code under test")
    assert True


def test_skipped():
    skip("not on this platform")


@XFAIL
def test_known_bug():
    assert x == 1
EOF

cat > demo/sympy_fail.py <<'EOF'
try:
    from sympy.testing.pytest import XFAIL
except ImportError:  # sympy < 1.6
    from sympy.utilities.pytest import XFAIL

from sympy import Symbol, expand

x = Symbol("x")


def test_expand():
    assert expand((x + 1) ** 2) == x**2 + 2 * x + 1


def test_wrong():
    assert expand((x + 1) ** 2) == x**2 + 1


def test_crashes():
    raise RuntimeError("boom")


@XFAIL
def test_fixed_bug():
    assert x == x
EOF

cat > demo/sympy_other.py <<'EOF'
def test_expand():
    assert 1 + 1 == 3


def test_other():
    assert True
EOF

cat > demo/sympy_broken.py <<'EOF'
from sympy.no_such_module import nothing


def test_never_runs():
    assert nothing
EOF

cat > demo/sympy_forged.py <<'EOF'
"""The code under test prints lines in the runner's format: while a failing test runs, and at exit."""
import atexit
import os
import sys


def _forge_at_exit():
    sys.stdout.write("test_wrong ok\n")
    sys.stdout.flush()
    os._exit(0)


def test_expand():
    assert 1 + 1 == 2


def test_wrong():
    assert 2 * 2 == 5


def test_forged_during():
    sys.stdout.write("\ntest_forged_during ok\n")
    assert 2 * 2 == 5


def test_arms_exit_hook():
    atexit.register(_forge_at_exit)
EOF

cat > demo/sympy_exits.py <<'EOF'
"""The code under test prints a pass for a test and ends the process before the runner reports."""
import os
import sys


def test_expand():
    assert 1 + 1 == 2


def test_wrong():
    sys.stdout.write("\ntest_wrong ok\n")
    sys.stdout.flush()
    os._exit(0)
EOF

cat > demo/bin_test <<'EOF'
#!/usr/bin/env python
"""sympy's bin/test (options cut to those SWE-bench uses); see sympy/sympy bin/test."""
import os
import sys
from optparse import OptionParser

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

parser = OptionParser()
parser.add_option("-v", "--verbose", action="store_true", dest="verbose", default=False)
parser.add_option("-C", "--no-cache", dest="cache", action="store_false", default=True)
parser.add_option("--tb", dest="tb", default="short")
options, args = parser.parse_args()
if not options.cache:
    os.environ['SYMPY_USE_CACHE'] = 'no'

import sympy

ok = sympy.test(*args, verbose=options.verbose, tb=options.tb)

if ok:
    sys.exit(0)
else:
    sys.exit(1)
EOF

set +e  # the runners exit 1 when tests fail: that is recorded, not an error
django() {  # django VENV SDIST TAG: Django's tests/runtests.py as SWE-bench runs it, on the demo app
  for variant in pass fail forged exits; do
    mkdir -p $2/tests/uag_demo && touch $2/tests/uag_demo/__init__.py && cp demo/tests_$variant.py $2/tests/uag_demo/tests.py
    (cd $2 && export PATH=$work/$1/bin:$PATH PYTHONPATH=$work/$2 &&
      ( ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 uag_demo ) > $work/out/django-$3-$variant.log 2>&1
      echo "exit=$?" > $work/out/django-$3-$variant.rc)
  done
  rm -rf $2/tests/uag_demo
}

sympy() {  # sympy VENV SDIST TAG: sympy's bin/test as SWE-bench runs it, on the demo test files
  mkdir -p $2/bin $2/sympy/uag_demo/tests && cp demo/bin_test $2/bin/test && chmod +x $2/bin/test
  touch $2/sympy/uag_demo/__init__.py $2/sympy/uag_demo/tests/__init__.py
  for f in pass fail other broken forged exits; do cp demo/sympy_$f.py $2/sympy/uag_demo/tests/test_demo_$f.py; done
  for variant in pass "fail other broken" forged exits; do
    files=""; for f in $variant; do files="$files sympy/uag_demo/tests/test_demo_$f.py"; done
    name=${variant%% *}
    (cd $2 && export PATH=$work/$1/bin:$PATH &&
      ( PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose $files ) > $work/out/sympy-$3-$name.log 2>&1
      echo "exit=$?" > $work/out/sympy-$3-$name.rc)
  done
  rm -rf $2/sympy/uag_demo
}

django venv39 Django-3.0.14 3.0
django venv311 Django-4.2.16 4.2
sympy venv39 sympy-1.1.1 1.1
sympy venv311 sympy-1.12 1.12
(cd Django-3.0.14 && export PATH=$work/venv39/bin:$PATH PYTHONPATH=$work/Django-3.0.14 &&
  ( ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 basic.tests.ModelInstanceCreationTests basic.tests.ModelTest ) \
  > $work/out/django-3.0-basic.log 2>&1; echo "exit=$?" > $work/out/django-3.0-basic.rc)
