#!/bin/sh
# Installs Debian's Chromium for the browser test (test/browser): /usr/bin/chromium, driven by playwright-core,
# which downloads no browser of its own. Fast and quiet when Chromium is already there; called by .ci/run.
set -eu

if [ -x /usr/bin/chromium ]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: apt-get not found; install Chromium at /usr/bin/chromium yourself" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-chromium: not root and no sudo; install the chromium package yourself" >&2
    exit 1
  fi
fi

echo "install-chromium: apt-get update"
$SUDO apt-get update -qq
echo "install-chromium: apt-get install -y --no-install-recommends chromium fonts-dejavu-core"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
if [ -x /usr/bin/chromium ]; then
  echo "install-chromium: installed $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
else
  echo "install-chromium: /usr/bin/chromium still missing after install" >&2
  exit 1
fi
