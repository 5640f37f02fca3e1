#!/bin/sh
# Regenerates docs/topology-page.png, the README's picture of the topology page: the browser test drives Debian's
# Chromium (/usr/bin/chromium; scripts/install-test-tools.sh installs it) against the demo on free ports, stops
# the near zone under steady load, and once the page shows it down copies its screenshot to the docs.
set -eu
cd "$(dirname "$0")/.."
UPDATE_SCREENSHOT=1 exec npx vitest run test/browser/topology-page.e2e.test.ts
