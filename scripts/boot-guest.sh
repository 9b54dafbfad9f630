#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Boot a guest with KVM and the pv-perfmon device: a Debian kernel and an
# initramfs from tests/rig/mkinitramfs.sh --l2 (its /init runs /payload/run,
# dumps the kernel log and powers off). The guest's serial console is this
# script's stdout.
#
#   boot-guest.sh [OPTIONS] QEMU KERNEL INITRD [-- EXTRA_QEMU_ARGS...]
#
#   --limit S        kill QEMU after S seconds (default 600); the guest's own
#                    limit for /payload/run is S - 30
#   --firmware DIR   a directory with bios-256k.bin, linuxboot_dma.bin and
#                    kvmvapic.bin; repeatable. Default: Debian's (packages
#                    seabios and qemu-system-data): the patched QEMU,
#                    built from Debian's source, has none of its own (the
#                    +ds source drops the blobs)
#   --accel ACCEL    -accel (default kvm), e.g. kvm,dirty-ring-size=4096
#   --cpu MODEL      -cpu (default host)
#   --smp N          vCPUs (default 2)
#   --mem SIZE       -m (default 1G)
#   --pin CPUS       run QEMU under taskset -c CPUS
#   --append ARGS    more kernel command line
#
# POSIX sh (busybox too): `make run` runs it on a KVM host
# (scripts/run.sh, direct mode), and the nested rig's L1 runs it through
# tests/rig/run-l2.sh, so every rig run exercises the direct path.
# Exit status: QEMU's (0 when the guest powered off; 137 when killed at
# the limit).
set -u

limit=600
accel=kvm
cpu=host
smp=2
mem=1G
pin=
append=
firmware=
usage() {
	echo "usage: boot-guest.sh [--limit S] [--firmware DIR]... [--accel ACCEL] [--cpu MODEL] [--smp N] [--mem SIZE] [--pin CPUS] [--append ARGS] QEMU KERNEL INITRD [-- QEMU_ARGS...]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	--limit | --firmware | --accel | --cpu | --smp | --mem | --pin | --append)
		[ $# -ge 2 ] || usage
		case "$1" in
		--limit) limit=$2 ;;
		--firmware) firmware="$firmware $2" ;;
		--accel) accel=$2 ;;
		--cpu) cpu=$2 ;;
		--smp) smp=$2 ;;
		--mem) mem=$2 ;;
		--pin) pin=$2 ;;
		--append) append=$2 ;;
		esac
		shift 2
		;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -ge 3 ] || usage
qemu=$1
kernel=$2
initrd=$3
shift 3
if [ $# -gt 0 ]; then
	[ "$1" = -- ] || usage
	shift
fi
case "$limit" in
'' | *[!0-9]*) echo "boot-guest.sh: --limit must be seconds" >&2; exit 2 ;;
esac
[ "$limit" -gt 30 ] || { echo "boot-guest.sh: --limit must exceed 30 s" >&2; exit 2; }
for f in "$kernel" "$initrd"; do
	[ -r "$f" ] || { echo "boot-guest.sh: $f is not readable" >&2; exit 2; }
done

[ -n "$firmware" ] || firmware="/usr/share/qemu /usr/share/seabios"
# -L may be given several times; QEMU searches them in order, then its own
fwargs=
for d in $firmware; do
	[ -d "$d" ] && fwargs="$fwargs -L $d"
done
[ -n "$fwargs" ] || { echo "boot-guest.sh: no firmware directory among:$firmware" >&2; exit 2; }

# -M q35 -nodefaults: a modern machine with no default devices (no NIC, no
#   VGA: no option ROMs beyond the three above)
# -no-reboot: the guest's poweroff or panic (panic=-1) ends QEMU
# rig.level=2: /init (tests/rig/init.sh) as a guest: no KVM of its own
# $fwargs unquoted below on purpose: one word per option and directory
set -- -accel "$accel" -cpu "$cpu" -M q35 -nodefaults -display none \
	-serial stdio -no-reboot -smp "$smp" -m "$mem" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 loglevel=5 panic=-1 rig.level=2 rig.timeout=$((limit - 30))${append:+ $append}" \
	"$@"
if [ -n "$pin" ]; then
	# shellcheck disable=SC2086
	exec timeout -s KILL "$limit" taskset -c "$pin" "$qemu" $fwargs "$@" </dev/null 2>&1
fi
# shellcheck disable=SC2086
exec timeout -s KILL "$limit" "$qemu" $fwargs "$@" </dev/null 2>&1
