#!/usr/bin/env bash
# The benchmark session sets: N sessions of about TOTAL_MB MB in all in project directory DIR,
# made by arbor-gen (deterministic: sizes 0.25x to 1.75x the mean, seeds 1..N), named as pi
# names them. Used by listing.sh, browse.sh and sync.sh.
#
#   bench/gen-sessions.sh DIR N TOTAL_MB BIN      # BIN: the directory holding arbor-gen
set -euo pipefail
DIR=$1 N=$2 TOTAL_MB=$3 BIN=$4
mkdir -p "$DIR"
gen_one() { # I
	local i=$1 kb tmp id
	kb=$(awk -v t="$TOTAL_MB" -v n="$N" -v i="$i" 'BEGIN{printf "%d", t*1000/n*(0.25+1.5*((i*37)%100)/99)}')
	tmp="$DIR/.tmp-$i"
	id=$("$BIN/arbor-gen" --size "${kb}KB" --seed "$i" --summary "$tmp" | sed -n 's/.*"sessionId":"\([^"]*\)".*/\1/p')
	mv "$tmp" "$DIR/2025-11-20T23-33-01-550Z_$id-$i.jsonl"
}
export -f gen_one
export DIR TOTAL_MB N BIN
seq 1 "$N" | xargs -P "$(nproc)" -I{} bash -c 'gen_one {}'
