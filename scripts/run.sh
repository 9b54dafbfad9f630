#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make run`: install what is missing, build, and profile the bundled
# workload (guest/tools/workload.c) inside a guest with pfmon: its event
# list, counting with two time-switched event sets, printed with set
# scaling, counts every 250 ms as CSV, a count per task of a command
# that starts a thread and a process, and a sampling profile by
# function; then pfmon's cases (tests/run/pfmon-cases.sh), whose output
# stays in LOGDIR/console.log for tests/run/check.sh.
#
#   scripts/run.sh [--seconds N] [--direct|--rig] [--no-deps] [LOGDIR]
#
# Where the guest runs:
#   direct KVM   this host's KVM works and kvm-perfmon.ko loads (or is
#                loaded): the patched QEMU boots the guest here
#   nested rig   otherwise (tests/rig, TEST-RIG.md): QEMU/TCG boots an L1
#                with KVM and kvm-perfmon.ko, which boots the guest as L2
# --direct / --rig force one. LOGDIR (default build/run) keeps the logs.
# PFMON_RUN_EXTRA=SCRIPT: a sh script run in the guest after the rest
# (cwd with pfmon and workload), for trying other pfmon commands.
# Exit status 0 only if the guest ran pfmon to the end.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tests/rig/protocol.sh
. "$top/tests/rig/protocol.sh"
secs=2
mode=auto
deps=1
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) secs=$2; shift 2 ;;
	--direct) mode=direct; shift ;;
	--rig) mode=rig; shift ;;
	--no-deps) deps=0; shift ;;
	-h | --help) sed -n '4,21p' "$0"; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
logdir=${1:-$top/build/run}
mkdir -p "$logdir"
logdir=$(cd "$logdir" && pwd)
t0=$SECONDS

step() { printf '\n==> [%3ss] %s\n' $((SECONDS - t0)) "$*"; }
die() { echo "run.sh: $*" >&2; exit 1; }
# run a build step with its output in a log; on failure show the end of it
quiet() {
	local name=$1
	shift
	if ! "$@" >"$logdir/$name.log" 2>&1; then
		tail -n 30 "$logdir/$name.log" >&2
		die "$name failed (whole log: $logdir/$name.log)"
	fi
}

if [ "$deps" = 1 ]; then
	step "dependencies (scripts/deps.sh, tests/rig/deps.sh; apt only for what is missing)"
	quiet deps bash -c "'$top/scripts/deps.sh' && '$top/tests/rig/deps.sh'"
fi

step "building kvm-perfmon.ko, perfmon2.ko, libperfmon2, pfmon, workload"
quiet build-kvm make -C "$top/kvm"
quiet build-guest-kernel make -C "$top/guest/kernel"
quiet build-guest-lib make -C "$top/guest/lib"
quiet build-tools make -C "$top/guest/tools"

step "QEMU with -device pv-perfmon (scripts/qemu-build.sh; built once, then cached)"
"$top/scripts/qemu-build.sh" 2>&1 | tee "$logdir/qemu-build.log" |
	grep --line-buffered -E '^qemu-build' | sed 's/^/    /' || true
qemu=$("$top/scripts/qemu-build.sh" --print-path 2>>"$logdir/qemu-build.log") ||
	die "no QEMU with pv-perfmon (log: $logdir/qemu-build.log)"
[ -x "$qemu" ] || die "$qemu is not executable"

# direct: this host's KVM answers and kvm-perfmon.ko is (or gets) loaded
kvm_works() {
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	printf 'quit\n' | timeout 20 "$qemu" -accel kvm -M none -nodefaults \
		-display none -monitor stdio >/dev/null 2>&1
}
module_loads() {
	[ -e /dev/kvm-perfmon ] && return 0
	[ "$(id -u)" = 0 ] || return 1
	insmod "$top/kvm/kvm-perfmon.ko" 2>/dev/null && [ -e /dev/kvm-perfmon ]
}
if [ "$mode" = auto ]; then
	if kvm_works && module_loads; then
		mode=direct
	else
		mode=rig
	fi
fi

# what the guest runs (tests/rig/pv-guest.sh loads perfmon2.ko first):
# pfmon, the workload and this script, in its cwd
work=$(mktemp -d "${TMPDIR:-/tmp}/pfmon-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
files=("$top/build/guest/tools/pfmon" "$top/build/guest/tools/workload"
	"$top/build/guest/tools/cxxload"
	"$work/pfmon-demo" "$top/tests/run/pfmon-cases.sh")
if [ -n "${PFMON_RUN_EXTRA:-}" ]; then
	install -m 755 "$PFMON_RUN_EXTRA" "$work/extra"
	files+=("$work/extra")
fi
# The demo, then pfmon's cases (tests/run/pfmon-cases.sh: their output
# goes to console.log only, tests/run/check.sh judges it there).
cat >"$work/pfmon-demo" <<GUEST
#!/bin/sh
echo "===PFMON-BEGIN==="
echo "\$ pfmon -l | head -n 12     # every event of the personality's CPU model (libpfm4), probed"
./pfmon -l >/tmp/pfmon-l.txt
rc=\$?
head -n 12 /tmp/pfmon-l.txt
echo "  ..."
tail -n 4 /tmp/pfmon-l.txt
set0=vcpu_run_ns,vm_exits
set1=vm_exits,halt_exits,host_preempt,steal_ns
# where the host admin allows it (kvm-perfmon's allow_host_page_faults)
./pfmon -e host_page_faults -- true >/dev/null 2>&1 && set0=\$set0,host_page_faults
# hardware events where the host backs them (an event map alias here)
./pfmon -e cycles -- true >/dev/null 2>&1 && set0=cycles,\$set0
if ./pfmon -e instructions -- true >/dev/null 2>&1; then
	set1=instructions,\$set1
else
	echo
	echo "\$ pfmon -e instructions -- ./workload 0.1      # the host cannot back it here: a clear error"
	./pfmon -e instructions -- ./workload 0.1
fi
echo
echo "\$ pfmon -e \$set0 -e \$set1 --switch-timeout 10000000 -- ./workload $secs"
./pfmon -e \$set0 -e \$set1 --switch-timeout 10000000 -- ./workload $secs || rc=\$?
echo
echo "\$ pfmon -I 250 -x , -e vcpu_run_ns,vm_exits -- ./workload 1      # CSV every 250 ms"
./pfmon -I 250 -x , -e vcpu_run_ns,vm_exits -- ./workload 1 || rc=\$?
echo
echo "\$ pfmon --follow-all -e vm_exits -- ./workload --tasks 3000      # a result per task"
./pfmon --follow-all -e vm_exits -- ./workload --tasks 3000 || rc=\$?
echo
echo "\$ pfmon -e vcpu_run_ns --smpl-period 1000000 --smpl-outfile /tmp/workload.smpl -- ./workload $secs"
./pfmon -e vcpu_run_ns --smpl-period 1000000 --smpl-outfile /tmp/workload.smpl -- ./workload $secs || rc=\$?
if [ -x ./extra ]; then
	echo
	./extra || rc=\$?
fi
echo "===PFMON-TESTS==="
# the profile as other tools read it: run.sh keeps these in LOGDIR
dmesg -n 1 2>/dev/null
echo "===PFMON-FOLDED==="
./pfmon --report /tmp/workload.smpl --profile-format folded 2>/dev/null || rc=\$?
echo "===PFMON-FOLDED-END==="
echo "===PFMON-PERF-SCRIPT==="
./pfmon --report /tmp/workload.smpl --profile-format perf-script 2>/dev/null || rc=\$?
echo "===PFMON-PERF-SCRIPT-END==="
sh ./pfmon-cases.sh
echo "===PFMON-TESTS-END==="
echo "===PFMON-END rc=\$rc==="
exit \$rc
GUEST
chmod +x "$work/pfmon-demo"

# Show progress and the guest's pfmon lines as they come; keep everything.
filter() {
	local line inpf=0 l1_init l2_init
	l1_init=$(rig_tag L1 INIT)
	l2_init=$(rig_tag L2 INIT)
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$logdir/console.log"
		case "$line" in
		*"$l1_init"*) printf '    [%3ss] L1 booted (TCG), starting the guest (L2) with KVM\n' $((SECONDS - t0)) ;;
		*"$l2_init"*) printf '    [%3ss] guest kernel up, loading perfmon2.ko\n' $((SECONDS - t0)) ;;
		*===PFMON-BEGIN===*) inpf=1; echo ;;
		*===PFMON-TESTS-END===*) inpf=1 ;;
		*===PFMON-TESTS===*)
			inpf=0
			printf '(pfmon cases: tests/run/pfmon-cases.sh, output in %s)\n' "$logdir/console.log" ;;
		*===PFMON-END*) inpf=0; echo ;;
		*)
			if [ "$inpf" = 1 ]; then
				# kernel log lines of L1 or the guest: in console.log only
				[[ "$line" =~ ^\[\ *[0-9]+\.[0-9]+\]\  ]] ||
					printf '%s\n' "${line#guest: }"
			else
				case "$line" in
				guest:* | *"L2 payload"* | *FAIL* | *"timed out"* | *"boot-l1.sh: total"* | "rig: "*)
					printf '    %s\n' "$line" ;;
				esac
			fi
			;;
		esac
	done
}
: >"$logdir/console.log"
rc=0
if [ "$mode" = direct ]; then
	step "direct KVM: booting the guest here with $qemu -device pv-perfmon"
	opts=(--direct)
	boot_log=$logdir/direct
else
	step "nested rig (no usable KVM with kvm-perfmon.ko here): L0 TCG -> L1 KVM + kvm-perfmon.ko -> guest (L2)"
	# one vCPU in the nested guest: a second one's bring-up sometimes
	# hangs the rig (tests/rig/README.md); a KVM host gets two
	opts=(--smp 1)
	# No PMU at any level of the rig: the host admin's event map aliases
	# cycles (amd64 and intel_arch encodings) to the vCPU thread's task
	# clock, marked emulated, as the vm stage's (guest/tests/rig-run.sh),
	# so that pfmon shows a hardware event counted by name; every other
	# hardware event stays refused. A real KVM host backs them with its PMU.
	cat >"$work/eventmap" <<'MAP'
# no PMU in the rig: count the vCPU's run time instead of cycles
generic 0x76 0x00 -> software task-clock emulated   # amd64 cycles
generic 0x3c 0x00 -> software task-clock emulated   # intel_arch cycles
MAP
	opts+=(--eventmap "$work/eventmap")
	boot_log=$logdir/rig
	echo "    packing QEMU, the guest kernel and initramfs into L1's payload; booting L1 under TCG (slow: a few minutes)"
fi
set +e
QEMU_PV=$qemu "$top/tests/rig/pv-guest.sh" "${opts[@]}" --timeout 900 \
	"$boot_log" "${files[@]}" -- ./pfmon-demo 2>&1 | filter
rc=${PIPESTATUS[0]}
set -e

prc=$(sed -n 's/.*===PFMON-END rc=\([0-9]*\)===.*/\1/p' "$logdir/console.log" | tail -n1)
# the sampling profile as folded stacks and as perf script's text, and
# its flame graph: flamegraph.pl as Debian ships it (in plprofiler)
# the last block between NAME's markers (a retried boot prints it again)
section() {
	awk -v b="===PFMON-$1===" -v e="===PFMON-$1-END===" '
		{ sub(/\r$/, ""); sub(/^guest: /, "") }
		index($0, e) { on = 0 }
		on && !/^\[ *[0-9]+\.[0-9]+\] / { text = text $0 "\n" }
		index($0, b) { on = 1; text = "" }
		END { printf "%s", text }
	' "$logdir/console.log"
}
section FOLDED >"$logdir/workload.folded"
section PERF-SCRIPT >"$logdir/workload.perf-script"
flamegraph=/usr/lib/python3/dist-packages/plprofiler/lib/FlameGraph/flamegraph.pl
if [ ! -f "$flamegraph" ]; then
	echo "run.sh: no $flamegraph (Debian's plprofiler; make deps): no flame graph" >&2
elif [ -s "$logdir/workload.folded" ]; then
	perl "$flamegraph" --title "pfmon --smpl-period 1000000 -e vcpu_run_ns -- ./workload $secs" \
		--countname samples "$logdir/workload.folded" >"$logdir/workload.svg" &&
		echo "flame graph of the workload's profile: $logdir/workload.svg"
fi
step "done ($mode): logs in $logdir"
if [ -z "$prc" ]; then
	echo "run.sh: the guest never finished pfmon (exit $rc); see $logdir/console.log" >&2
	exit 1
fi
[ "$prc" = 0 ] || { echo "run.sh: pfmon exited with $prc" >&2; exit 1; }
exit 0
