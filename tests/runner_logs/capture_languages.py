"""Capture real logs of go test, redis's runtest and Maven's surefire for `tests/test_integrity.py`.

Each log is a run of a language fixture's own test command (`tests/languages/`, as the reward runs it) in a
container of its image (built by `tests/language_fixtures.py` where missing), after the patches named below;
output and exit code recorded as the reward records them. Run from the repository root:

    .venv/bin/python -m tests.runner_logs.capture_languages [NAME ...]
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from tests import language_fixtures
from uni_agent_gym.instances import normalise
from uni_agent_gym.specs import build_of_tests, command_of_tests, load_environments

HERE = Path(__file__).resolve().parent

# A TestMain (a test file the patch adds) that runs the tests, then prints a pass for the graded test and exits 0.
GO_MAIN_FORGES_AFTER_THE_RUN = """\
diff --git a/zz_main_test.go b/zz_main_test.go
new file mode 100644
--- /dev/null
+++ b/zz_main_test.go
@@ -0,0 +1,13 @@
+package gin
+
+import (
+	"fmt"
+	"os"
+	"testing"
+)
+
+func TestMain(m *testing.M) {
+	m.Run()
+	fmt.Println("--- PASS: TestRedirectTrailingSlash (0.00s)")
+	os.Exit(0)
+}
"""
# A TestMain that runs nothing and reports the graded test passed: the log and the exit code agree.
GO_MAIN_RUNS_NOTHING = GO_MAIN_FORGES_AFTER_THE_RUN.replace("@@ -0,0 +1,13 @@", "@@ -0,0 +1,12 @@").replace("+\tm.Run()\n", "")

CAPTURES = {  # name: (instance, patches applied after the test patch, build first)
    "gotest-fail": ("gin-gonic__gin-3227", [], False),
    "gotest-pass": ("gin-gonic__gin-3227", ["patch"], False),
    "gotest-forged": ("gin-gonic__gin-3227", [GO_MAIN_FORGES_AFTER_THE_RUN], False),
    "gotest-runs-nothing": ("gin-gonic__gin-3227", [GO_MAIN_RUNS_NOTHING], False),
    "redis-fail": ("redis__redis-12272", [], False),
    "redis-pass": ("redis__redis-12272", ["patch"], True),
    "maven-fail": ("fasterxml__jackson-core-922", [], False),
    "maven-pass": ("fasterxml__jackson-core-922", ["patch"], False),
}


def capture(name: str) -> int:
    instance_id, patches, build = CAPTURES[name]
    environments = load_environments(language_fixtures.ENVIRONMENTS)
    row = normalise(language_fixtures.derived_rows()[instance_id])
    asyncio.run(language_fixtures.ensure_images([language_fixtures.derived_rows()[instance_id]]))
    diffs = [row["test_patch"], *(row[p] if p == "patch" else p for p in patches)]
    steps = ["set -e", f"cd {row['workdir']}", *(f"git apply - <<'UAG_EOF'\n{diff.rstrip(chr(10))}\nUAG_EOF" for diff in diffs)]
    if build:  # the reward's build after the patches; only the gold changes sources the image built
        steps.append(f"({build_of_tests(row, environments) or 'true'}) > /dev/null 2>&1")
    script = "\n".join([*steps, "set +e"]) + f"\n( {command_of_tests(row, environments)} ) > /tmp/log 2>&1; echo $? > /tmp/code; cat /tmp/log; exit $(cat /tmp/code)\n"
    run = subprocess.run(["docker", "run", "--rm", "--network", "none", "-i", row["image_name"], "bash", "-s"], input=script.encode(), capture_output=True)
    (HERE / f"{name}.log").write_bytes(run.stdout)
    print(f"{name}: exit {run.returncode}, {len(run.stdout)} bytes", run.stderr.decode()[-500:], file=sys.stderr)
    return run.returncode


if __name__ == "__main__":
    for name in sys.argv[1:] or CAPTURES:
        capture(name)
