#!/usr/bin/env bash
# Installs Debian's chromium (once) for the browser end-to-end tests, which drive it headless
# with puppeteer-core: no browser download, only the distribution's package.
source "$(dirname "$0")/lib.sh"

ensure_command chromium chromium
