#!/usr/bin/env bash
# Rehearse CI on a new machine: remove everything the project and its tests build or cache here (their
# images, ~/.cache/uni-agent-gym*, pip's cache, wheelhouses, mirrors, local venvs and workspaces; not the
# system packages), clone main afresh beside ../shared, run .ci/run in the clone, and print the wall
# time of each phase.
#
#   scripts/ci-fresh.sh            # the whole rehearsal (about 20 minutes on a 2-core machine)
#   scripts/ci-fresh.sh --keep     # keep the clone (its path is printed) to look into afterwards
#   scripts/ci-fresh.sh --alone tests/test_grade.py tests/test_soak.py::test_64_concurrent_trajectories_with_random_container_kills
#                                  # instead of .ci/run: each test (file or node id) alone on a new machine, forgetting before each
#
# It removes shared state of this machine: do not run it while another test run uses Docker here.
set -euo pipefail
keep=false
alone=()
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=true ;;
    --alone) shift; alone=("$@"); break ;;
    *) echo "ci-fresh: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done
here=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$here/../shared" 2>/dev/null && pwd) || { echo "ci-fresh: no ../shared beside $here" >&2; exit 1; }
started=$SECONDS

phase() {
  local name=$1 t=$SECONDS
  shift
  local rc=0
  "$@" || rc=$?
  echo "ci-fresh: phase '$name' took $((SECONDS - t)) s"
  return $rc
}

forget_machine() {
  # the ray deployment's test cluster (its nodes' engines hold pulled images) and its registry's storage
  if [ -x "$here/.venv/bin/python" ]; then (cd "$here" && .venv/bin/python -m tests.ray_cluster stop) || true; fi
  rm -rf "${UNI_AGENT_GYM_TEST_CLUSTER:-/var/lib/uag-test-cluster}"
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
    docker ps -aq --filter label=uni-agent-gym | xargs -r docker rm -f >/dev/null
    # the images the project names: base images, instance images (official swebench/ and mswebench/ names), anything it labelled
    docker images --format '{{.Repository}}:{{.Tag}}' \
      | grep -E '^([0-9.]+:[0-9]+/)?(uni-agent-gym[-/]|swebench/|mswebench/)' | xargs -r docker rmi -f >/dev/null || true
    for label in uni-agent-gym.base-recipe uni-agent-gym.history uni-agent-gym.toolchain; do
      docker images -q --filter "label=$label" | xargs -r docker rmi -f >/dev/null || true
    done
    docker image prune -f >/dev/null
    docker builder prune -af >/dev/null 2>&1 || true
  fi
  rm -rf "$HOME"/.cache/uni-agent-gym* "$HOME/.cache/pip" /tmp/uni-agent-gym-*
}

workdir=$(mktemp -d /tmp/ci-fresh.XXXXXX)
ln -s "$shared" "$workdir/shared"
phase forget forget_machine
phase clone git clone --quiet --branch main "$here" "$workdir/main"
status=0
if [ ${#alone[@]} -eq 0 ]; then
  phase ci bash "$workdir/main/.ci/run" || status=$?
  echo "ci-fresh: .ci/run exited $status after $((SECONDS - started)) s in all"
else
  (cd "$workdir/main" && phase docker scripts/ensure-docker.sh && phase setup make setup)
  for test in "${alone[@]}"; do
    phase "forget before $test" forget_machine
    (cd "$workdir/main" && CI=true phase "$test alone" .venv/bin/python -m pytest -q -ra -p no:cacheprovider "$test") || status=$?
  done
  echo "ci-fresh: the tests alone exited $status after $((SECONDS - started)) s in all"
fi
if $keep; then echo "ci-fresh: the clone is at $workdir/main"; else rm -rf "$workdir"; fi
exit $status
