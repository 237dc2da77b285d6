#!/usr/bin/env bash
# Make sure a headless Chromium is there for the browser-lab test (test_lab_viewer_node.py).
#
# Runs before the tests in `make test`. It installs Debian's chromium with apt-get only when
# no Chromium is found, this runs as root and apt-get exists (CI, Docker); anywhere else it
# installs nothing, says so, and the browser test skips with the reason. It never fails the
# build: a failed install is reported and the test skips. ARM_IK_NO_BROWSER_INSTALL=1 turns
# the install off.
set -uo pipefail

for name in chromium chromium-browser google-chrome; do
  if command -v "$name" >/dev/null 2>&1; then
    exit 0
  fi
done
if [ "${ARM_IK_NO_BROWSER_INSTALL:-0}" = 1 ]; then
  echo 'ensure_chromium: no chromium; ARM_IK_NO_BROWSER_INSTALL=1, the browser test will skip'
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo 'ensure_chromium: no chromium and no root apt-get here; the browser test will skip' \
       '(install it with: sudo apt-get install chromium)'
  exit 0
fi
echo 'ensure_chromium: installing chromium with apt-get (about a minute) ...'
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if apt-get update -qq >"$log" 2>&1 &&
   apt-get install -y -qq chromium >>"$log" 2>&1; then
  echo "ensure_chromium: $(chromium --version 2>/dev/null || echo chromium) installed"
else
  echo 'ensure_chromium: apt-get could not install chromium; the browser test will skip:'
  tail -n 5 "$log"
fi
rm -f "$log"
exit 0
