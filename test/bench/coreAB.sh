#!/usr/bin/env bash
# A/B of the core claim/complete figures between a base commit and this checkout, on PGlite in-process
# at 100,000 cards (test/bench/core.ts's build and measure phases, each in a fresh process), three
# interleaved rounds (ROUNDS=n for more); prints each round and the medians. Used for "complete without review is no
# slower": test/bench/coreAB.sh 9fb7556   (the commit before the review gate)
# Needs node_modules here; the base gets a temporary worktree that shares them. About a minute.
set -euo pipefail
base="${1:?usage: test/bench/coreAB.sh BASE_COMMIT [CARDS]}"
cards="${2:-100000}"
here="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d /tmp/bt-ab-XXXXXX)"
trap 'git -C "$here" worktree remove --force "$tmp/base-tree" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$here" worktree add -q --detach "$tmp/base-tree" "$base"
ln -s "$here/node_modules" "$tmp/base-tree/node_modules"
measure() { # tree dir -> "pair claim complete handOver page" p50s and the CPU per pair, in ms
	(cd "$1" && node --import tsx test/bench/core.ts --phase measure "$2" "$cards") | grep '^PHASE_JSON' |
		node -e 'const j=JSON.parse(require("fs").readFileSync(0,"utf8").slice(11));
			console.log(["pairP50","claimP50","completeP50","handOverP50","pageP50","pairCpuMs"].map(k=>j[k].toFixed(3)).join(" "))'
}
for side in base head; do
	tree="$here"; [ "$side" = base ] && tree="$tmp/base-tree"
	(cd "$tree" && node --import tsx test/bench/core.ts --phase build "$tmp/$side" "$cards" >/dev/null)
done
echo "side  round  claim+complete  claim  complete  hand-over  ready-page   (p50, ms)  CPU per pair (ms)"
for round in $(seq 1 "${ROUNDS:-3}"); do
	for side in base head; do
		tree="$here"; [ "$side" = base ] && tree="$tmp/base-tree"
		rm -rf "$tmp/run"; cp -a "$tmp/$side" "$tmp/run"
		echo "$side $round $(measure "$tree" "$tmp/run")" | tee -a "$tmp/results"
	done
done
node -e '
const rows=require("fs").readFileSync(process.argv[1],"utf8").trim().split("\n").map(l=>l.split(" "));
const med=a=>{const s=[...a].sort((x,y)=>x-y);return s[Math.floor(s.length/2)]};
const names=["claim+complete","claim","complete","hand-over","ready page","CPU per pair"];
for (let i=0;i<6;i++){const b=med(rows.filter(r=>r[0]==="base").map(r=>+r[2+i]));const h=med(rows.filter(r=>r[0]==="head").map(r=>+r[2+i]));
console.log(`${names[i].padEnd(15)} base ${b.toFixed(3)}  head ${h.toFixed(3)}  ${(h-b>=0?"+":"")}${(h-b).toFixed(3)} ms (${(100*(h-b)/b).toFixed(1)} %)`)}' "$tmp/results"
