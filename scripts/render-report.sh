#!/usr/bin/env bash
# Renders a sieve report.html in headless Chromium.
#   scripts/render-report.sh REPORT.html OUT.png [DOM.html]
# Writes a full-page screenshot to OUT.png and, when given, the rendered DOM
# to DOM.html. Chromium's console messages go to stderr (--enable-logging),
# so a caller can check the page ran without script errors.
set -euo pipefail
report=$(realpath "$1")
png=$2
dom=${3:-}
browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$browser" ]; then
  echo "render-report: no chromium found (Debian: apt-get install chromium)" >&2
  exit 3
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --hide-scrollbars --user-data-dir="$profile" --enable-logging=stderr --v=0)
"$browser" "${flags[@]}" --window-size=1100,5600 --screenshot="$png" "file://$report"
if [ -n "$dom" ]; then
  "$browser" "${flags[@]}" --dump-dom "file://$report" > "$dom"
fi
