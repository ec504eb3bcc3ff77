#!/bin/sh
# The README's printed examples are the program's own output: fail when they drift from it.
# usage: readme_examples.sh TRACE README
set -eu
trace=$1
readme=$2
status=0

# The CI example's verdict line (the comment after "# prints one line:").
expected=$(sed -n 's/^# \(fits: meta-llama\/Llama-3.1-8B qlora .*\)$/\1/p' "$readme")
actual=$("$trace" check meta-llama/Llama-3.1-8B --gpu l4 --mode qlora --seq-len 2048 --batch 2 \
  --grad-checkpointing full --optimizer paged_adamw_8bit)
if [ "$expected" != "$actual" ]; then
  echo "README CI example is stale: it says '$expected', trace prints '$actual'"
  status=1
fi

# The plan excerpt: its parameter total and its card rows are lines of the plan.
plan=$("$trace" meta-llama/Llama-3.1-8B --plan)
for pattern in '^  total ' '^  t4 ' '^  h100-80gb '; do
  line=$(grep -m1 -- "$pattern" "$readme")
  if ! printf '%s\n' "$plan" | grep -qxF -- "$line"; then
    echo "README plan excerpt is stale: '$line' is not a line of the plan"
    status=1
  fi
done
exit $status
