#!/usr/bin/env bash
# Make sure a Docker engine answers: install docker.io (and debootstrap, for base images) from
# Debian if missing, start dockerd if it is not running, and wait until it answers.
set -euo pipefail

if docker info >/dev/null 2>&1; then
  exit 0
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
