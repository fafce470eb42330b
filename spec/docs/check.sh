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
  <style>body { margin: 0; padding: 0; visibility: hidden; }</style>
</head>
<body>
  <div id="redoc"></div>
  <script src="redoc.standalone.js"></script>
  <script>
    Redoc.init(${spec_json}, { expandResponses: "200,201", disableSearch: true }, document.getElementById("redoc"));
    // Redoc loads the description asynchronously. Once its menu is there, open the Events group
    // (clicking also scrolls to that section), go back to the top and only then show the page: a
    // picture taken earlier is blank, and the script below takes it again.
    var tries = 0;
    var poll = setInterval(function () {
      var events = document.querySelector('[data-item-id="tag/Events"]');
      if (events && events.getAttribute("aria-expanded") === "true") {
        clearInterval(poll);
        setTimeout(function () {
          window.scrollTo(0, 0);
          setTimeout(function () { document.body.style.visibility = "visible"; }, 500);
        }, 1000);
        return;
      }
      // A click toggles the group: click again only when one has had 5 s to open it, or a slow
      // render opening the first click's group would be closed by a second.
      if (events && tries++ % 25 === 0) { (events.querySelector("label") || events).click(); }
    }, 200);
  </script>
</body>
</html>
HTML

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
  --disable-sync --no-first-run --user-data-dir="$profile" --virtual-time-budget=30000 --window-size=1400,2400)
page="file://$out/reference.html"
# Headless Chromium takes its picture when its time budget runs out, which on a busy machine can be
# before Redoc is done; the page stays blank until then, so take it again (a few tries).
for try in 1 2 3 4 5; do
  "$chrome" "${flags[@]}" --screenshot="$out/reference.png" "$page" >/dev/null 2>&1 || true
  if [ "$(wc -c < "$out/reference.png" 2>/dev/null || echo 0)" -ge 100000 ]; then break; fi
  echo "docs-check: picture $try was taken before the page was ready; again"
done
# The rendered document without its scripts (the inline description names every event too).
for try in 1 2 3 4 5; do
  "$chrome" "${flags[@]}" --dump-dom "$page" 2>/dev/null | perl -0pe 's#<script.*?</script>##gs' > "$out/dom.html" || true
  if grep -q 'aria-label="Events" aria-expanded="true"' "$out/dom.html"; then break; fi
done

missing=0
for ev in generation.completed generation.failed batch.settled workflow_run.completed workflow_run.failed credits.low webhook.test; do
  if ! grep -q "role=\"menuitem\" aria-label=\"$ev: " "$out/dom.html"; then
    echo "docs-check: the rendered reference's menu does not list the event $ev"
    missing=1
  fi
done
if ! grep -q 'data-item-id="tag/Events" role="menuitem" aria-label="Events" aria-expanded="true"' "$out/dom.html"; then
  echo "docs-check: Redoc did not render with the Events group open (see $out/dom.html)"
  missing=1
fi
# A blank page draws to about 15 KB; the rendered reference is several hundred.
if [ "$(wc -c < "$out/reference.png" 2>/dev/null || echo 0)" -lt 100000 ]; then
  echo "docs-check: the screenshot $out/reference.png is missing or blank"
  missing=1
fi
if [ "$missing" -ne 0 ]; then exit 1; fi
echo "docs-check: Redoc lists the seven events; screenshot in $out/reference.png"
