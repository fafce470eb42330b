#!/usr/bin/env bash
# Renders spec/openapi.yaml with Redoc (pinned in package.json here, installed from npm; no CDN),
# opens the page in headless Chromium, keeps a screenshot and checks that the rendered reference
# lists the seven webhook events. Run through `make docs-check` (CI calls it; .ci/run installs
# Chromium). Without Chromium it skips and says why.
#
# Usage: spec/docs/check.sh OUT_DIR   (writes OUT_DIR/reference.html, reference.png, dom.html)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/bin/docs}"

chrome="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chrome" ]; then
  echo "docs-check: SKIP: chromium is not installed (.ci/run installs it: apt-get install chromium)"
  exit 0
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error --omit=peer --ignore-scripts)
cp "$here/node_modules/redoc/bundles/redoc.standalone.js" "$out/redoc.standalone.js"
spec_json="$(cd "$here" && node -e 'const y = require("js-yaml"), fs = require("fs");
  process.stdout.write(JSON.stringify(y.load(fs.readFileSync("../openapi.yaml", "utf8"))).replace(/<\//g, "<\\/"));')"
cat > "$out/reference.html" <<HTML
<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>Mediaspec media generation API</title>
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <div id="redoc"></div>
  <script src="redoc.standalone.js"></script>
  <script>
    // Once rendered, open the Events group of the side menu so that the picture shows the events.
    Redoc.init(${spec_json}, { expandResponses: "200,201", disableSearch: true }, document.getElementById("redoc"), function () {
      var events = document.querySelector('[data-item-id="tag/Events"]');
      if (events) { events.click(); }
      // Clicking scrolls to the section; back to the top, where the picture is taken.
      setTimeout(function () { window.scrollTo(0, 0); }, 1000);
    });
  </script>
</body>
</html>
HTML

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
  --disable-sync --no-first-run --user-data-dir="$profile" --virtual-time-budget=15000 --window-size=1400,2400)
page="file://$out/reference.html"
"$chrome" "${flags[@]}" --screenshot="$out/reference.png" "$page" >/dev/null 2>&1
# The rendered document without its scripts (the inline description names every event too).
"$chrome" "${flags[@]}" --dump-dom "$page" 2>/dev/null | perl -0pe 's#<script.*?</script>##gs' > "$out/dom.html"

missing=0
for ev in generation.completed generation.failed batch.settled workflow_run.completed workflow_run.failed credits.low webhook.test; do
  if ! grep -q "role=\"menuitem\" aria-label=\"$ev: " "$out/dom.html"; then
    echo "docs-check: the rendered reference's menu does not list the event $ev"
    missing=1
  fi
done
if ! grep -q 'role="menuitem"' "$out/dom.html"; then
  echo "docs-check: Redoc did not render (no side menu in $out/dom.html)"
  missing=1
fi
# A blank page draws to about 15 KB; the rendered reference is several hundred.
if [ "$(wc -c < "$out/reference.png" 2>/dev/null || echo 0)" -lt 100000 ]; then
  echo "docs-check: the screenshot $out/reference.png is missing or blank"
  missing=1
fi
if [ "$missing" -ne 0 ]; then exit 1; fi
echo "docs-check: Redoc lists the seven events; screenshot in $out/reference.png"
