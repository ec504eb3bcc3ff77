#!/bin/sh
# The real binary against the fixture Hub: HF_ENDPOINT=http://127.0.0.1:PORT trace org/name --plan
# works cold (requests counted), and a warm run makes zero requests.
# usage: hub_fixture_plan.sh TRACE FIXTURE_HUB
set -eu
trace=$1
fixture=$2
work=$(mktemp -d)
trap 'exec 3>&-; rm -rf "$work"' EXIT
mkfifo "$work/in" "$work/out"
"$fixture" <"$work/in" >"$work/out" &
exec 3>"$work/in" 4<"$work/out"
read -r endpoint <&4
export HF_ENDPOINT="$endpoint" HF_HOME="$work/hf" HF_HUB_CACHE="$work/hf/hub" HF_TOKEN_PATH="$work/none"
unset HF_TOKEN HF_HUB_OFFLINE 2>/dev/null || true
"$trace" fixture-org/Llama-3.1-8B --plan --json >"$work/cold.json"
grep -q '"total": 8030261248' "$work/cold.json"
# the shards' headers reconciled with trace's inventory: 291 tensors, no delta
grep -q '"delta_params": 0' "$work/cold.json"
grep -q '"tensors": 291' "$work/cold.json"
echo stats >&3; read -r cold <&4
echo clear >&3
"$trace" fixture-org/Llama-3.1-8B --plan --json >"$work/warm.json"
grep -q '"total": 8030261248' "$work/warm.json"
grep -q '"delta_params": 0' "$work/warm.json"
echo stats >&3; read -r warm <&4
echo "cold: $cold; warm: $warm"
case "$warm" in "0 requests"*) ;; *) echo "warm run made requests" >&2; exit 1 ;; esac
