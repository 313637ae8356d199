#!/usr/bin/env bash
# Install Debian's headless-capable Chromium and its matching chromedriver, which
# tests/test_browser.py drives through selenium. Needs root and the Debian mirrors;
# a no-op once both binaries are present.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  echo "chromium and chromedriver already installed: $(/usr/bin/chromium --version)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium chromium-driver
echo "installed: $(/usr/bin/chromium --version); $(/usr/bin/chromedriver --version)"
