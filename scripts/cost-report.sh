#!/usr/bin/env bash
# Regenerates the measured-throughput section of docs/cost.md: every row of the shared
# throughput CSV set beside trace's roofline bound. Only the text between the markers
# <!-- throughput:begin --> and <!-- throughput:end --> is replaced; the rest of the file (the
# formulas) is left as it is. Usage: scripts/cost-report.sh [REFERENCE_DIR] [DOC]
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:-../shared/reference}
doc=${2:-docs/cost.md}
begin='<!-- throughput:begin -->'
end='<!-- throughput:end -->'
generated=$(mktemp)
trap 'rm -f "$generated" "$doc.tmp"' EXIT
{
  echo "$begin"
  cat scripts/cost-report-header.md
  build/trace throughput "$ref/throughput.csv" --configs "$ref/hf-configs" \
    --configs tests/data/configs --markdown
  echo "$end"
} > "$generated"
if [ ! -f "$doc" ]; then
  printf '# Cost: time, throughput and price\n\n' > "$doc"
fi
begins=$(grep -cxF "$begin" "$doc" || true)
ends=$(grep -cxF "$end" "$doc" || true)
if [ "$begins" = 0 ] && [ "$ends" = 0 ]; then
  { cat "$doc"; echo; cat "$generated"; } > "$doc.tmp"
elif [ "$begins" = 1 ] && [ "$ends" = 1 ]; then
  awk -v begin="$begin" -v end="$end" -v file="$generated" '
    $0 == begin { while ((getline line < file) > 0) print line; skipping = 1; next }
    $0 == end { skipping = 0; next }
    !skipping { print }' "$doc" > "$doc.tmp"
else
  echo "$doc: expected one '$begin' and one '$end' line" >&2
  exit 2
fi
mv "$doc.tmp" "$doc"
echo "wrote $doc"
