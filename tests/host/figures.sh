#!/bin/sh
# Figures of a `make check` run, from its logs (boot-l1.sh's LOGDIR):
# L1 boot time, host tests run and their results, the stress and
# use-after-free loops' summaries (t_stress, t_uaf).
logs=${1:?usage: figures.sh LOGDIR}
echo "== host test figures ($logs)"
[ -f "$logs/result" ] && sed -n 's/^boot: /L1 boot: /p; s/^total_s=/rig total (s): /p' "$logs/result"
pl=$logs/payload.log
if [ -f "$pl" ]; then
	echo "host test programs: $(grep -c '^=== t_.*: rc=' "$pl")"
	echo "host test checks: $(grep -c -E '^(PASS|FAIL): ' "$pl")"
	grep -E '^stress: ' "$pl" | grep -v -e '^stress: progress' -e '^stress: VM ' |
		sed 's/^/  /'
	grep -E '^uaf: ' "$pl" | grep -v -e '^uaf: progress' | sed 's/^/  /'
	grep -E '^host: [0-9]+ passed' "$pl" || echo "host: no summary (run did not finish)"
	grep -E '^FAIL: ' "$pl" | sed 's/^/  /'
fi
