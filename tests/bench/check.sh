#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Judge the BENCH lines of b_exits (a file, or stdin):
#
#   BENCH name value unit
#
# Bounds, with why they are not the design's figures exactly: the figures
# are exits counted over a whole batch less a background (timer ticks,
# host interrupts, the rig's TCG-emulated L1 injecting its own events)
# estimated from a busy loop of the same length. That estimate is noisy,
# so each bound leaves half an exit per operation of room:
#
#   exits_per_call_mode (1-entry calls; the min for the slow 64-entry
#                     vectors) in [0.5, 1.5], exits_per_call (the mean less the
#                     background) <= 1.5 for the short calls
#                             design: 1 (one perfmon2 call = one DOORBELL
#                             write = one VM exit, whatever the vector
#                             length; ARCHITECTURE.md); >= 0.5 too, or
#                             the counting itself is broken
#   exits_per_sample  <= 1.0  design: 0 of its own (the host writes
#                             samples into guest memory; the guest is
#                             interrupted only when a notification is
#                             due). The host's interrupt that finds the
#                             overflow (task-clock's hrtimer on the rig, a
#                             PMI on a PMU) preempts the vCPU like any host
#                             interrupt: the mode between samples is that
#                             one exit, and over the background 0.36 was
#                             measured; anything the sample itself made
#                             the guest do would add a whole exit or more.
#                             Also below the guest's own perf cpu-clock.
#   guest_irqs_per_sample <= 0.5  design: 0 (no interrupt injected into
#                             the guest per sample; same noise)
#   sampling.buffer_full, sampling.notifications == 0 (the buffer has room)
#   perf_cpu_clock.exits_per_sample >= 0.5 (the comparison: the guest's
#                             own cpu-clock sampling takes a guest timer
#                             interrupt per sample, which costs exits; a
#                             figure near 0 means the measurement is blind)
#   switch.unmonitored.switch_cmds == 0; monitored SWITCH commands per
#   context switch <= 1.5 (design: 1: out when the monitored thread
#   leaves, in when it comes back)
#
# Also fails when a figure is missing or b_exits reported an error.
# Prints PASS/FAIL lines; exit status 1 on a failure.
set -u
# rig_awk_judge: the PASS/FAIL lines
# shellcheck source=tests/rig/protocol.sh
. "$(dirname "$0")/../rig/protocol.sh"
in=${1:--}
awk -v what=bench "$(rig_awk_judge)"'
/^BENCH-ERROR/ { sub(/\r$/, ""); judge(0, "b_exits ran", $0) }
/^BENCH / { v[$2] = $3 + 0; seen[$2] = 1 }
/^BENCH-DONE/ { done = 1 }
END {
	judge(done, "b_exits ran to the end", "no BENCH-DONE line")
	# 1-entry calls: the mode; the 64-entry ones take milliseconds on the
	# TCG rig and most gather a guest tick, so their mode flips between
	# 1 and 2 from run to run: the fewest exits any call made (min) there
	n = split("read_pmds_1 write_pmds_1_unloaded getinfo_evtsets_1 read_pmds_max_unloaded read_pmds_max", ops, " ")
	for (i = 1; i <= n; i++) {
		k = ops[i] (i <= 3 ? ".exits_per_call_mode" : ".exits_per_call_min")
		if (!(k in seen)) {
			judge(0, k, "missing")
			continue
		}
		judge(v[k] >= 0.5 && v[k] <= 1.5, k " " v[k] " in [0.5, 1.5]",
		      v[k] " exits per call; design 1")
	}
	# the mean over the background: only for calls short enough that the
	# background per call is small next to 1 (not read_pmds_max, whose
	# calls take milliseconds on the TCG rig)
	n = split("read_pmds_1 read_pmds_max_unloaded write_pmds_1_unloaded getinfo_evtsets_1", ops, " ")
	for (i = 1; i <= n; i++) {
		k = ops[i] ".exits_per_call"
		if (k in seen)
			judge(v[k] <= 1.5, k " " v[k] " <= 1.5",
			      v[k] " exits per call over the background; design 1")
	}
	k = "sampling.exits_per_sample"
	if (!(k in seen)) {
		judge(0, k, "missing")
	} else {
		judge(v["sampling.samples"] > 0, "sampling.samples " v["sampling.samples"] " > 0", "no samples")
		judge(v[k] <= 1.0, k " " v[k] " <= 1.0", v[k] " exits per sample; design 0 of its own")
		k = "sampling.guest_irqs_per_sample"
		if (k in seen)
			judge(v[k] <= 0.5, k " " v[k] " <= 0.5",
			      v[k] " guest interrupts per sample; design 0")
		judge(v["sampling.buffer_full"] == 0 && v["sampling.notifications"] == 0,
		      "sampling: no buffer-full notification",
		      v["sampling.buffer_full"] " overflows, " v["sampling.notifications"] " messages")
	}
	k = "perf_cpu_clock.exits_per_sample"
	if (!(k in seen)) {
		judge(0, k, "missing")
	} else {
		judge(v["perf_cpu_clock.samples"] > 0, "perf_cpu_clock.samples " v["perf_cpu_clock.samples"] " > 0", "no samples")
		judge(v[k] >= 0.5, k " " v[k] " >= 0.5",
		      v[k] " exits per sample of the guest'"'"'s own perf; it needs a timer interrupt each")
		p = "sampling.exits_per_sample"
		if (p in seen)
			judge(v[p] < v[k], p " " v[p] " < " k " " v[k],
			      "pv-perfmon sampling costs no fewer exits than the guest'"'"'s own perf")
	}
	k = "switch.monitored.switch_cmds_per_ctx_switch"
	if (!(k in seen)) {
		judge(0, k, "missing")
	} else {
		judge(v["switch.unmonitored.switch_cmds"] == 0,
		      "switch.unmonitored.switch_cmds 0",
		      v["switch.unmonitored.switch_cmds"] " SWITCH commands without a monitored thread")
		judge(v[k] > 0 && v[k] <= 1.5, k " " v[k] " in (0, 1.5]",
		      v[k] " SWITCH commands per context switch; design 1")
	}
	verdict()
}' "$in"
