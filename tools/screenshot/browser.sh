#!/usr/bin/env bash
# The README's picture of the browser: runs the tmux end-to-end test with
# ARBOR_SCREENSHOT_DIR set (it saves the screens it checks, colours included), turns the
# picker and tree screens into HTML and has headless Chromium take the picture.
# Needs tmux and chromium (apt-get install tmux chromium fonts-noto-cjk).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=$(mktemp -d)
ARBOR_SCREENSHOT_DIR="$OUT" cargo test -q --release -p arbor-cli --test browse_tmux
for s in picker tree; do
	python3 tools/screenshot/ansi2html.py "$OUT/$s.ansi" > "$OUT/$s.html"
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$OUT/profile" --window-size=860,520 \
		--screenshot="docs/img/browser-$s.png" "file://$OUT/$s.html" 2>/dev/null
done
rm -rf "$OUT"
ls -l docs/img/browser-*.png
