#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a guest with the pv-perfmon device and perfmon2.ko loaded, and run
# a command in it: the one payload builder of the guest tests
# (guest/tests/rig-run.sh), the benchmarks (tests/bench/rig-bench.sh) and
# `make run` (scripts/run.sh).
#
#   tests/rig/pv-guest.sh [OPTIONS] LOGDIR FILE... -- COMMAND [ARG...]
#
# The guest's /payload/guest holds the FILEs (copied by name: a directory
# with its contents); COMMAND runs there after perfmon2.ko is loaded.
# Nested (default): L0 boots the rig's L1 under TCG (boot-l1.sh, one
# CPU), which loads kvm-perfmon.ko and boots the guest as L2 with KVM
# (run-l2): tests/rig/README.md. --direct: this host's KVM boots the guest
# (scripts/boot-guest.sh; kvm-perfmon.ko must be loaded already).
#
#   --direct          boot on this host, not in the rig
#   --smp N           the guest's vCPUs (default: run-l2's 1 in the rig,
#                     boot-guest.sh's 2 directly)
#   --timeout S       time limit of the whole run (default 900); the
#                     guest's own is S - 120
#   --eventmap FILE   the device's event map (pv-perfmon,eventmap=)
#   --intel           an Intel guest on the rig's AMD L1: L2's CPU says
#                     GenuineIntel (run-l2's RUN_L2_CPU) and the device
#                     has the intel_arch personality (nested only)
#   --l1-smp N        L1's CPUs (default 1: see tests/rig/README.md)
#   --l2-pin CPUS     L1's CPUs the guest's threads run on (taskset -c),
#                     or none (default 0: see run-l2.sh)
#   --l1-around FILE  in L1, run FILE with "start" just before the guest
#                     and "end" after it (tests/bench/l1-cost.sh; its
#                     failure at "end" fails the run), with
#                     tests/host's kvmpfm-stats beside it in /payload
#   --qemu-errors     in L1, before loading kvm-perfmon.ko, check that the
#                     device refuses to start without it (qemu-errors.sh);
#                     a failed check fails the run
#   --summary ERE     at the end, show the console lines that match ERE
#                     (the tests' own result lines), then why the run
#                     failed, if it did, and the result line
#   --l1-run FILE     in L1, FILE is /payload/run instead of the one
#                     that boots the guest once: it loads
#                     /payload/kvm-perfmon.ko and boots guests with
#                     /payload/qemu/run-l2 itself (tests/operator)
#   --l1-file FILE    FILE into L1's /payload too; repeatable
#   --hostfwd PORT    L0's 127.0.0.1:PORT reaches L1's PORT (boot-l1.sh);
#                     repeatable
#
# Environment:
#   QEMU_PV          a qemu-system-x86_64 with -device pv-perfmon
#                    (scripts/qemu-build.sh --print-path)
#   KVM_PERFMON_KO   the host module (default: tests/rig/modules.sh host,
#                    for L1's kernel)
#   PERFMON2_KO      the guest module (default: modules.sh guest, for L2's)
#   RIG_L1_KERNEL, RIG_L2_KERNEL   another Debian suite's kernel for L1,
#                    L2 (scripts/kver.sh)
#   RUN_L2_TRACE_EXITS=1   L1 traces its VM exits while L2 runs, and
#                    prints a lost L2's last ones (run-l2.sh)
# LOGDIR gets the logs: boot-l1.sh's (console.log, result, ...), or
# directly console.log and the verdict's files (protocol.sh).
# Exit status: 0 only if the guest ran COMMAND to exit status 0 and the
# run is clean (boot-l1.sh's verdict; directly, rig_judge's on the guest).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/rig/protocol.sh
. "$here/protocol.sh"

die() {
	echo "pv-guest.sh: $*" >&2
	exit 2
}
direct=0
smp=
timeout_s=900
eventmap=
intel=0
qemu_errors=0
summary=
l1_smp=1
l2_pin=0
l1_around=
l1_run=
l1_files=()
hostfwd=()
while [ $# -gt 0 ]; do
	case "$1" in
	--direct) direct=1 ;;
	--qemu-errors) qemu_errors=1 ;;
	--intel) intel=1 ;;
	--smp | --timeout | --eventmap | --summary | --l1-smp | --l2-pin | \
		--l1-around | --l1-run | --l1-file | --hostfwd)
		[ $# -ge 2 ] || die "$1 needs a value"
		case "$1" in
		--l1-run) l1_run=$2 ;;
		--l1-file) l1_files+=("$2") ;;
		--hostfwd) hostfwd+=(--hostfwd "$2") ;;
		--smp) smp=$2 ;;
		--l1-smp) l1_smp=$2 ;;
		--l2-pin) l2_pin=$2 ;;
		--l1-around) l1_around=$2 ;;
		--timeout) timeout_s=$2 ;;
		--eventmap) eventmap=$2 ;;
		--summary) summary=$2 ;;
		esac
		shift
		;;
	-h | --help) sed -n '4,50p' "$0"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || die "usage: pv-guest.sh [OPTIONS] LOGDIR FILE... -- COMMAND [ARG...]"
logdir=$1
shift
files=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	files+=("$1")
	shift
done
[ $# -ge 2 ] || die "no -- COMMAND after the files"
shift
if ! [[ "$timeout_s" =~ ^[0-9]+$ ]] || [ "$timeout_s" -le 180 ]; then
	die "--timeout must be a number of seconds above 180"
fi
limit=$((timeout_s - 120))

qemu=${QEMU_PV:?pv-guest.sh: set QEMU_PV to a qemu-system-x86_64 with -device pv-perfmon}
ko=${KVM_PERFMON_KO:-}
[ -n "$ko" ] || [ "$direct" = 1 ] || ko=$("$here/modules.sh" host) ||
	die "no kvm-perfmon.ko for L1's kernel"
guest_ko=${PERFMON2_KO:-}
[ -n "$guest_ko" ] || guest_ko=$("$here/modules.sh" guest) ||
	die "no perfmon2.ko for L2's kernel"
[ -x "$qemu" ] || die "$qemu is not executable"
"$qemu" -device help 2>/dev/null | grep -q '"pv-perfmon"' ||
	die "$qemu has no pv-perfmon device"
[ "$direct" = 1 ] || [ -f "$ko" ] || die "no $ko (make -C kvm)"
[ -f "$guest_ko" ] || die "no $guest_ko (make -C guest/kernel)"
[ -z "$eventmap" ] || [ -f "$eventmap" ] || die "no event map $eventmap"
for f in "${files[@]}" "${l1_files[@]}" ${l1_run:+"$l1_run"}; do
	[ -e "$f" ] || die "no $f"
done
[ "$direct" = 0 ] || [ -z "$l1_run$l1_around${hostfwd[*]}" ] ||
	die "--l1-run, --l1-around and --hostfwd are for the rig, not --direct"

work=$(mktemp -d "${TMPDIR:-/tmp}/pv-guest.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$logdir" "$work/l2/guest" "$work/l1" "$work/bin"

# The guest: perfmon2.ko, the files, and /payload/run (init.sh runs it)
# to load the one and run COMMAND among the others. No mknod: init.sh
# mounts devtmpfs, where /dev/perfmon2 appears as the driver registers it.
cp "$guest_ko" "$work/l2/perfmon2.ko"
[ "${#files[@]}" -eq 0 ] || cp -a "${files[@]}" "$work/l2/guest/"
cat >"$work/l2/run" <<'GUEST'
#!/bin/sh
. /etc/rig-protocol.sh
echo "guest: $(grep -c ^processor /proc/cpuinfo) vCPUs, kernel $(uname -r)"
if ! insmod /payload/perfmon2.ko; then
	rig_check 1 "insmod perfmon2.ko" "kernel log below"
	dmesg | grep -i perfmon2 | tail -n 10
	exit 1
fi
cd /payload/guest || exit 1
GUEST
# COMMAND, each word in single quotes (a ' in one as '\'')
printf 'exec%s\n' "$(printf " '%s'" "${@//\'/\'\\\'\'}")" >>"$work/l2/run"
chmod +x "$work/l2/run"

[ "$intel" = 0 ] || [ "$direct" = 0 ] || die "--intel is for the rig only"
if [ "$direct" = 1 ]; then
	device=pv-perfmon${eventmap:+,eventmap=$eventmap}
	vmlinuz=$("$top/scripts/kver.sh" l2-vmlinuz)
	"$here/mkinitramfs.sh" --l2 "$work/initrd.cpio.gz" "$work/l2"
	set +e
	"$top/scripts/boot-guest.sh" --limit "$limit" ${smp:+--smp "$smp"} \
		"$qemu" "$vmlinuz" "$work/initrd.cpio.gz" -- \
		-device "$device" | tr -d '\r' | tee "$logdir/console.log"
	qrc=${PIPESTATUS[0]}
	set -e
	fail=()
	rig_fail() { fail+=("$*"); }
	[ "$qrc" = 0 ] || rig_fail "QEMU exited with $qrc (137: killed after ${limit}s)"
	init_ran=0
	grep -q "$(rig_tag L2 INIT)" "$logdir/console.log" && init_ran=1
	rig_judge L2 "$logdir/console.log" "$logdir" "$here/bad-patterns" "$init_ran"
	for f in "${fail[@]}"; do echo "fail: $f"; done >"$logdir/result"
	status=ok
	[ "${#fail[@]}" -eq 0 ] || status=FAILED
	rig_result_line "$status" 0 "direct; logs in $logdir" |
		cat - "$logdir/result" >"$logdir/result.tmp"
	mv "$logdir/result.tmp" "$logdir/result"
	rc=0
	[ "$status" = ok ] || rc=1
else
	# L1: the device's refusals first (--qemu-errors), then kvm-perfmon.ko
	# and the guest as L2
	cp "$ko" "$work/l1/kvm-perfmon.ko"
	# qemu-errors.sh runs QEMU as another uid with util-linux's setpriv
	[ "$qemu_errors" = 0 ] ||
		cp "$here/qemu-errors.sh" "$(command -v setpriv)" "$work/l1/"
	[ -z "$eventmap" ] || cp "$eventmap" "$work/l1/eventmap"
	if [ -n "$l1_around" ]; then
		stats=$top/tests/host/out/bin/kvmpfm-stats
		[ -x "$stats" ] || make -s -C "$top/tests/host" "$stats"
		cp "$l1_around" "$work/l1/around"
		cp "$stats" "$work/l1/kvmpfm-stats"
	fi
	device=pv-perfmon${eventmap:+,eventmap=/payload/eventmap}
	l2_cpu=
	if [ "$intel" = 1 ]; then
		device=$device,personality=intel_arch
		# no KVM hypercalls (pv spinlock kicks, pv IPIs, pv yield): an
		# Intel guest issues VMCALL, which KVM on AMD patches into
		# VMMCALL by writing to the guest's read-only kernel text, an
		# oops in L2 (kvm_kick_cpu, "supervisor write access")
		l2_cpu=host,-xsave,vendor=GenuineIntel,-kvm-pv-unhalt,-kvm-pv-ipi,-kvm-pv-sched-yield
	fi
	cat >"$work/l1/run" <<L1
#!/bin/sh
errors=0
if [ -x /payload/qemu-errors.sh ]; then
	/payload/qemu-errors.sh /payload/qemu/bin/qemu-system-x86_64 /payload/qemu/share
	errors=\$?
fi
# the guest tests count HOST_PAGE_FAULTS, which the host admin allows
insmod /payload/kvm-perfmon.ko allow_host_page_faults=Y ||
	{ echo "L1: insmod kvm-perfmon.ko failed"; exit 1; }
[ -x /payload/around ] && /payload/around start
RUN_L2_PIN=$l2_pin RUN_L2_CPU=$l2_cpu RUN_L2_TRACE_EXITS=${RUN_L2_TRACE_EXITS:-} /payload/qemu/run-l2 $limit ${smp:+-smp $smp} -device $device
rc=\$?
if [ -x /payload/around ]; then
	/payload/around end || errors=1
fi
[ "\$rc" -ne 0 ] && exit "\$rc"
exit "\$errors"
L1
	chmod +x "$work/l1/run"
	if [ -n "$l1_run" ]; then
		install -m 0755 "$l1_run" "$work/l1/run"
	fi
	[ "${#l1_files[@]}" -eq 0 ] || cp -a "${l1_files[@]}" "$work/l1/"
	# add-qemu.sh copies the qemu-system-x86_64 it finds first in PATH
	ln -s "$qemu" "$work/bin/qemu-system-x86_64"
	PATH=$work/bin:$PATH "$here/add-qemu.sh" --l2-payload "$work/l2" "$work/l1"
	rc=0
	# L1 with one CPU unless asked: see tests/rig/README.md (L2 on a
	# 2-CPU L1 resets now and then)
	"$here/boot-l1.sh" --timeout "$timeout_s" --smp "$l1_smp" \
		"${hostfwd[@]}" "$work/l1" "$logdir" || rc=$?
fi

# the summary last, where a reader of a long log looks: the command's
# result lines, then why the run failed if it did, and the result
if [ -n "$summary" ]; then
	grep -aE "$summary" "$logdir/console.log" | sed 's/\r$//' || true
	sed -n 's/^fail: /pv-guest.sh: FAIL: /p' "$logdir/result" 2>/dev/null || true
	head -n 1 "$logdir/result" 2>/dev/null || true
fi
exit "$rc"
