#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pfmon's cases, run in the guest by `make run` (scripts/run.sh) after the
# demo, from the directory holding pfmon and workload. Each case runs one
# pfmon command and prints, between markers, its exit status, stdout,
# stderr and the -o file if there is one; nothing is judged here:
# tests/run/check_pfmon.py judges them in L0 (python3's csv and json
# parse the CSV and JSON), so a judgment can be read beside what it saw.
#
#   @@@ case NAME rc=N
#   @@@ out / @@@ err / @@@ file    the lines of each
#   @@@ end
#
# POSIX sh (the guest's busybox ash).

# the guest kernel's console messages would cut into these lines
dmesg -n 1 2>/dev/null

# case NAME [-f FILE] -- CMD...: run CMD, print what it did (FILE: its -o)
case_() {
	name=$1
	shift
	file=
	if [ "$1" = -f ]; then
		file=$2
		shift 2
	fi
	[ "$1" = -- ] && shift
	rm -f "$file" /tmp/case.out /tmp/case.err
	"$@" >/tmp/case.out 2>/tmp/case.err
	case_print $?
}

# case_signal NAME SIG AFTER -- CMD...: CMD sent SIG by a process (kill)
# AFTER seconds into its run, as case_ prints it. CMD runs in the
# foreground, where the shell leaves SIGINT as it found it (it ignores
# SIGINT in a background job of a script), and says its pid first.
case_signal() {
	name=$1 sig=$2 after=$3 file=
	shift 3
	[ "$1" = -- ] && shift
	rm -f /tmp/case.out /tmp/case.err /tmp/case.pid
	(sleep "$after"; kill -"$sig" "$(cat /tmp/case.pid)") &
	killer=$!
	sh -c 'echo $$ >/tmp/case.pid; exec "$@"' sh "$@" \
		>/tmp/case.out 2>/tmp/case.err
	rc=$?
	wait $killer
	case_print $rc
}

# the case's lines; $name, $file and /tmp/case.* say what it did
case_print() {
	echo "@@@ case $name rc=$1"
	echo "@@@ out"
	cat /tmp/case.out
	echo "@@@ err"
	cat /tmp/case.err
	if [ -n "$file" ]; then
		echo "@@@ file"
		[ -f "$file" ] && cat "$file"
	fi
	echo "@@@ end"
}

w=./workload
# conventions: --help on stdout with exit 0, --version, exit statuses
case_ help -- ./pfmon --help
case_ version -- ./pfmon --version
case_ status_cmd -- ./pfmon -e vm_exits -- sh -c 'exit 3'
case_ status_signal -- ./pfmon -e vm_exits -- sh -c 'kill -TERM $$'
case_ status_notfound -- ./pfmon -- ./no-such-command
case_ status_noexec -- ./pfmon -- /proc/version
case_ bad_option -- ./pfmon --no-such-option -- true
case_ bad_number -- ./pfmon --switch-timeout 10x -e vm_exits -e halt_exits -- true
case_ bad_interval -- ./pfmon -I 5 -- true
case_ bad_sep -- ./pfmon -x : -- true
# events: the list, names, unit masks, levels, raw values, refusals
case_ list -- ./pfmon -l
case_ ev_cycles -- ./pfmon -v -e cycles -- $w 0.2
case_ ev_libpfm -- ./pfmon -v -e CPU_CLK_UNHALTED:u -- $w 0.2
case_ ev_level_k -- ./pfmon -v -e CPU_CLK_UNHALTED:k -- true
case_ ev_dfl_u -- ./pfmon -v -u -e CPU_CLK_UNHALTED -- true
case_ ev_umask -- ./pfmon -v -e DISPATCHED_FPU:OPS_MULTIPLY -- true
case_ ev_ext -- ./pfmon -v -e L3_CACHE_MISSES:READ_BLOCK_EXCLUSIVE -- true
case_ ev_notavail -- ./pfmon -e RETIRED_INSTRUCTIONS -- true
case_ ev_hyphen -- ./pfmon -v -e branch-misses -- true
case_ ev_unknown -- ./pfmon -e NO_SUCH_EVENT -- true
case_ ev_bad_umask -- ./pfmon -e CPU_CLK_UNHALTED:NO_SUCH_UMASK -- true
case_ ev_reserved -- ./pfmon -e r1000000000076 -- true
case_ ev_vpmd_level -- ./pfmon -e vm_exits:u -- true
# sets: each -e a set; --set is the same
case_ sets -- ./pfmon -e vcpu_run_ns,vm_exits -e halt_exits,steal_ns --set host_preempt -- $w 0.6
case_ sets_ms -- ./pfmon -e vm_exits -e halt_exits --switch-timeout 20ms -- $w 0.3
# output: -o, CSV, JSON, -I
case_ csv -f /tmp/pfmon.csv -- ./pfmon -o /tmp/pfmon.csv -x , -e vcpu_run_ns,vm_exits,cycles -e halt_exits,steal_ns -- $w 0.6
case_ json -f /tmp/pfmon.json -- ./pfmon -o /tmp/pfmon.json --json -e vcpu_run_ns,vm_exits -e halt_exits,cycles:u -- $w 0.6
case_ interval -f /tmp/pfmon-i.csv -- ./pfmon -o /tmp/pfmon-i.csv -x , -I 100 -e vcpu_run_ns,vm_exits -- $w 1
case_ interval_text -- ./pfmon -I 200 -e vcpu_run_ns -- $w 0.5
# the profile's other views (the default, by function, is make run's)
case_ smpl_line -- ./pfmon --smpl-period 1000000 --smpl-per-line -e vcpu_run_ns -- $w 0.6
case_ smpl_addr -- ./pfmon --smpl-period 1000000 --smpl-per-address -e vcpu_run_ns -- $w 0.6
case_ smpl_view_alone -- ./pfmon --smpl-per-line -- true
case_ smpl_random -- ./pfmon --smpl-period 1000000 --smpl-periods-random 0xffff:7 --smpl-buf-size 8192 -e vcpu_run_ns -- $w 0.6
# the raw samples and the map in a file, resolved later by --report
case_ smpl_outfile -- ./pfmon --smpl-period 1000000 --smpl-outfile /tmp/pfmon.smpl -e vcpu_run_ns -- $w 0.6
case_ smpl_entries -- grep -c "^entry tid=[0-9]* pid=[0-9]* ip=0x[0-9a-f]* tstamp=" /tmp/pfmon.smpl
case_ report -- ./pfmon --report /tmp/pfmon.smpl
case_ report_bad -- ./pfmon --report /proc/version
case_ smpl_buildids -- grep -c "^buildid [0-9a-f]* /" /tmp/pfmon.smpl
# a program rebuilt since its samples: resolved against nothing, said
cp $w /tmp/wl
case_ smpl_rebuilt_run -- ./pfmon --smpl-period 1000000 --smpl-outfile /tmp/wl.smpl -e vcpu_run_ns -- /tmp/wl 0.4
cp ./cxxload /tmp/wl
case_ smpl_rebuilt -- ./pfmon --report /tmp/wl.smpl
# following: a context per task, via ptrace (workload --tasks: the main
# thread N CPUIDs, a thread 2N, a forked child 3N; one VM exit each)
case_ follow_all -- ./pfmon --follow-all -e vm_exits,vcpu_run_ns -- $w --tasks 3000
case_ follow_fork -- ./pfmon --follow-fork -e vm_exits -- $w --tasks 3000
case_ follow_none -- ./pfmon -e vm_exits -- $w --tasks 3000
case_ follow_agg -- ./pfmon --follow-all --aggregate-results -x , -e vm_exits -- $w --tasks 3000
case_ follow_bad -- ./pfmon --aggregate-results -- true
# names as their authors wrote them: C++ demangled, JIT code by its map
case_ smpl_cxx -- ./pfmon --smpl-period 1000000 -e vcpu_run_ns -- ./cxxload 0.6
case_ smpl_jit -- ./pfmon --smpl-period 1000000 -e vcpu_run_ns -- $w --jit 0.6
# sampling every followed task: three tasks' CPUID loops, two processes
case_ smpl_follow -- ./pfmon --follow-all --smpl-period 200000 -e vcpu_run_ns -- $w --tasks 20000
# at scale: more tasks over a run than any fixed table would hold
case_ follow_many -- ./pfmon --follow-pthread --aggregate-results -x , -e vm_exits -- $w --threads 300

# the states (ps's letters, /proc/PID/stat's third field) of every
# workload process now running: R, S or D while one runs on as it was
workloads() {
	for p in $(pidof workload); do
		echo "workload state $(cut -d' ' -f3 /proc/$p/stat)"
	done
}

# a signal ends the session; pfmon prints what it gathered
case_signal sigint_count INT 2 -- ./pfmon -e vm_exits,vcpu_run_ns -- $w 30
case_signal sigterm_smpl TERM 2 -- ./pfmon --smpl-period 1000000 -e vcpu_run_ns -- $w 30
# the command ends by the signal; what it started in the background runs
# on, let go
case_signal sigint_follow INT 2 -- ./pfmon --follow-all -e vm_exits -- sh -c "$w 120 & exec $w 120"
name=sigint_follow_after file=
workloads >/tmp/case.out 2>/tmp/case.err
case_print $?
killall workload 2>/dev/null

# a task that exists, counted for a while: -t, a signal; it runs on
$w 120 >/dev/null &
daemon=$!
case_ attach_timeout -- ./pfmon --attach-task $daemon -t 2 -e vm_exits,vcpu_run_ns
case_signal attach_sigint INT 2 -- ./pfmon --attach-task $daemon -e vm_exits,vcpu_run_ns
case_ attach_follow_timeout -- ./pfmon --attach-task $daemon --follow-all -t 2 -e vm_exits
case_ smpl_attach -- ./pfmon --attach-task $daemon -t 2 --smpl-period 1000000 -e vcpu_run_ns
name=attach_after file=
workloads >/tmp/case.out 2>/tmp/case.err
case_print $?
kill $daemon
wait $daemon 2>/dev/null
# system-wide for a while: every CPU and their sum
case_ syswide_timeout -- ./pfmon --system-wide -t 2 -e vm_exits,vcpu_run_ns
case_ syswide_agg -- ./pfmon --system-wide -t 1 --aggregate-results -x , -e vcpu_run_ns
case_ smpl_syswide -- ./pfmon --system-wide --smpl-period 1000000 -e vcpu_run_ns -- $w 1
case_ timeout_cmd -- ./pfmon -t 2 -- true
exit 0
