#!/bin/sh
# Figures of a `make check` run, from its logs (boot-l1.sh's LOGDIR):
# L1 boot time, host tests run and their results, stress command count.
logs=${1:?usage: figures.sh LOGDIR}
echo "== host test figures ($logs)"
[ -f "$logs/result" ] && sed -n 's/^boot: /L1 boot: /p; s/^total_s=/rig total (s): /p' "$logs/result"
pl=$logs/payload.log
if [ -f "$pl" ]; then
	echo "host test programs: $(grep -c '^=== t_.*: rc=' "$pl")"
	echo "host test checks: $(grep -c -E '^(PASS|FAIL): ' "$pl")"
	grep -E '^stress: ' "$pl" | sed 's/^/  /'
	grep -E '^host: [0-9]+ passed' "$pl" || echo "host: no summary (run did not finish)"
	grep -E '^FAIL: ' "$pl" | sed 's/^/  /'
fi
