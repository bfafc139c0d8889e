#!/usr/bin/env bash
# Make sure a Docker engine answers: install docker.io (and debootstrap, for base images) from
# Debian if missing, start dockerd if it is not running, and wait until it answers.
set -euo pipefail

if docker info >/dev/null 2>&1; then
  # An engine that answers but lost its default bridge (another dockerd on this host removed docker0)
  # cannot start a container: restart it, which makes the bridge again.
  if [ "$(id -u)" = 0 ] && command -v ip >/dev/null 2>&1 && ! ip link show docker0 >/dev/null 2>&1 \
     && docker network inspect bridge >/dev/null 2>&1 && [ -f /var/run/docker.pid ]; then
    echo "ensure-docker: the engine answers but its bridge docker0 is gone: restarting dockerd"
    kill "$(cat /var/run/docker.pid)" 2>/dev/null || true
    for _ in $(seq 1 30); do pgrep -x dockerd >/dev/null 2>&1 || break; sleep 1; done
  else
    exit 0
  fi
fi
if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "ensure-docker: docker.io is not installed and installing it needs root" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
fi
if ! pgrep -x dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "ensure-docker: dockerd is not running and starting it needs root" >&2
    exit 1
  fi
  rm -f /var/run/docker.pid  # left behind when the machine's previous dockerd was killed
  nohup dockerd >/var/log/uni-agent-gym-dockerd.log 2>&1 &
fi
for _ in $(seq 1 90); do
  if docker info >/dev/null 2>&1; then
    echo "ensure-docker: the Docker engine is up"
    exit 0
  fi
  sleep 1
done
echo "ensure-docker: dockerd did not answer within 90 s; see /var/log/uni-agent-gym-dockerd.log" >&2
tail -n 20 /var/log/uni-agent-gym-dockerd.log >&2 || true
exit 1
