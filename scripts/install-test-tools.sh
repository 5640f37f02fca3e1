#!/bin/sh
# Installs from Debian's packages what the test suite needs beyond npm: Chromium for the browser test
# (test/browser: /usr/bin/chromium, driven by playwright-core, which downloads no browser of its own) and
# iproute2 for the Kubernetes end-to-end test's network namespace (test/kube: `ip netns`). Fast and quiet when
# both are there; called by .ci/run.
set -eu

PACKAGES=""
[ -x /usr/bin/chromium ] || PACKAGES="$PACKAGES chromium fonts-dejavu-core"
command -v ip >/dev/null 2>&1 || PACKAGES="$PACKAGES iproute2"
# The README walkthrough test pastes its curl lines as a newcomer would.
command -v curl >/dev/null 2>&1 || PACKAGES="$PACKAGES curl"
# ...and its kubectl lines against the demo's member clusters (test/kube/kubectl-demo-members.e2e.test.ts too).
# Debian's kubernetes-client is old (1.20): `get` and `delete` work with it, `create` needs kubectl 1.27 or later.
command -v kubectl >/dev/null 2>&1 || PACKAGES="$PACKAGES kubernetes-client"
command -v openssl >/dev/null 2>&1 || PACKAGES="$PACKAGES openssl"
if [ -z "$PACKAGES" ]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-test-tools: apt-get not found; install these yourself:$PACKAGES" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-test-tools: not root and no sudo; install these packages yourself:$PACKAGES" >&2
    exit 1
  fi
fi

echo "install-test-tools: apt-get update"
$SUDO apt-get update -qq
echo "install-test-tools: apt-get install -y --no-install-recommends$PACKAGES"
# shellcheck disable=SC2086 # the package list is meant to split
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
if [ ! -x /usr/bin/chromium ]; then
  echo "install-test-tools: /usr/bin/chromium still missing after install" >&2
  exit 1
fi
if ! command -v ip >/dev/null 2>&1; then
  echo "install-test-tools: ip (iproute2) still missing after install" >&2
  exit 1
fi
echo "install-test-tools: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium), $(ip -V 2>/dev/null || echo iproute2)"
