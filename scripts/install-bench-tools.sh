#!/bin/sh
# Installs the peers and load generator that `npm run bench` compares against: nginx, haproxy, wrk.
# Debian/Ubuntu packages only; never needed by `npm test`. Safe to run twice: installs only what is missing.
set -eu

missing=""
command -v nginx >/dev/null 2>&1 || missing="$missing nginx"
command -v haproxy >/dev/null 2>&1 || missing="$missing haproxy"
command -v wrk >/dev/null 2>&1 || missing="$missing wrk"

if [ -z "$missing" ]; then
  echo "install-bench-tools: nginx, haproxy and wrk are already installed; nothing to do"
  exit 0
fi

echo "install-bench-tools: missing:$missing"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-bench-tools: apt-get not found; install$missing yourself (the bench skips what is missing)" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-bench-tools: not root and no sudo; install$missing yourself" >&2
    exit 1
  fi
fi

echo "install-bench-tools: apt-get update"
$SUDO apt-get update -qq

packages=""
for tool in $missing; do
  case "$tool" in
    # nginx-light is enough (no extra modules) where the distribution still ships it.
    nginx)
      if apt-cache show nginx-light >/dev/null 2>&1; then packages="$packages nginx-light"; else packages="$packages nginx"; fi
      ;;
    *) packages="$packages $tool" ;;
  esac
done
echo "install-bench-tools: apt-get install -y --no-install-recommends$packages"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $packages
for tool in $missing; do
  if command -v "$tool" >/dev/null 2>&1; then
    echo "install-bench-tools: installed $tool ($(command -v "$tool"))"
  else
    echo "install-bench-tools: $tool still missing after install" >&2
  fi
done
