#!/usr/bin/env bash
# Regenerates docs/screenshot.png: the main screen at 1280×800 over a realistic workspace.
#
#   bash scripts/screenshot.sh
#
# Runs the browser test `screenshot_of_the_main_screen` (tests/integration/web_ui/layout.rs: a real `haico serve`
# with the replay provider, headless Chromium through chromedriver), which saves
# target/ui/main.png, then copies that to docs/screenshot.png. Needs Debian's `chromium` and
# `chromium-driver` (`.ci/run` installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in chromium chromedriver; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "$tool is missing: apt-get install chromium chromium-driver (.ci/run does it)" >&2
    exit 1
  }
done

rm -f target/ui/main.png
cargo test --test integration -- --exact web_ui::layout::screenshot_of_the_main_screen
test -s target/ui/main.png || { echo "the test did not write target/ui/main.png" >&2; exit 1; }
cp target/ui/main.png docs/screenshot.png
echo "docs/screenshot.png updated"
