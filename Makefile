# SPDX-License-Identifier: GPL-2.0
#
# kvm-perfmon: perfmon2 for KVM guests. Top-level build; see README.md.
#
#   make deps    install the Debian packages the project needs (root)
#   make         build everything that exists
#   make test    deps, then build and run every test; fails on any failure
#                or compiler warning in project code (this is what CI runs)
#   make install PREFIX=/usr/local DESTDIR=   host and guest, see below
#   make deb     the Debian packages for trixie (debian/ and qemu-deb/),
#                into build/deb/
#   make help    every target
#   make clean

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
include $(TOP)/scripts/flags.mk
export TOP

# ---------------------------------------------------------------------------
B := $(TOP)/build
STAGE := $(TOP)/scripts/stage.sh
SUBMAKE := $(MAKE) --no-print-directory

UNIT_DIR := $(TOP)/tests/unit
FUZZ_DIR := $(TOP)/tests/fuzz

ENGINE_OBJS := $(patsubst $(TOP)/kvm/engine/%.c,$(B)/engine/%.o,$(ENGINE_SRCS))
ENGINE_LIB := $(B)/engine/libpfm_engine.a

.PHONY: all deps engine kmod unit unit-run fuzz fuzz-run checkpatch test \
	test-deps test-build test-unit test-kbuild test-checkpatch test-fuzz \
	test-host test-kernels test-images test-qemu test-vm test-migrate \
	test-operator test-libvirt \
	test-bench \
	test-run guest \
	qemu qemu-series bench host-tools \
	bench-l1-smp2 test-host-smp2 test-stress \
	run install install-host install-qemu install-guest deb \
	qemu-deb help clean

# Everything: the engine as userspace C, the unit and fuzz programs, the
# kernel module, the guest side, the benchmark and the operator's tools.
all: engine unit fuzz kmod guest bench host-tools

# The package list is in scripts/deps.sh, which also runs without make;
# the nested rig's own list is in tests/rig/deps.sh.
deps:
	@$(TOP)/scripts/deps.sh
	@$(TOP)/tests/rig/deps.sh

# The engine compiled as userspace C: a build check (the unit tests and
# fuzzers compile it their own way) and a library for later userspace users.
engine: $(ENGINE_LIB)

$(ENGINE_LIB): $(ENGINE_OBJS)
	@test -n "$^" || { echo "make: no kvm/engine/*.c" >&2; exit 1; }
	rm -f $@
	$(AR) rcs $@ $^

$(B)/engine/%.o: $(TOP)/kvm/engine/%.c $(ENGINE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_PROJECT) $(CFLAGS_PROJECT) -c -o $@ $<

# The kernel module, kvm/kvm-perfmon.ko, against the newest installed Debian
# headers (scripts/kver.sh build); KDIR=... picks another tree.
kmod:
	$(SUBMAKE) -C $(TOP)/kvm

# The guest side: perfmon2.ko, libperfmon2, the guest test programs,
# pfmon and its workload.
guest:
	$(SUBMAKE) -C $(TOP)/guest/kernel
	$(SUBMAKE) -C $(TOP)/guest/lib
	$(SUBMAKE) -C $(TOP)/guest/tests
	$(SUBMAKE) -C $(TOP)/guest/tools

# kvm-perfmon-stat and kvm-perfmon-exporter (host-tools/README.md), and
# the exporter's unit as systemd-analyze reads it
host-tools:
	$(SUBMAKE) -C $(TOP)/host-tools all check-unit

# tests/bench's b_exits (runs in the rig's L2: test-bench)
bench: guest
	$(SUBMAKE) -C $(TOP)/tests/bench

# QEMU 10.0 from Debian trixie's source with qemu-patches/ (cached by
# content, outside the tree); prints the binary's path last
qemu:
	$(TOP)/scripts/qemu-build.sh

# qemu-patches/ is what `git format-patch` gives from a branch on Debian's
# tree (scripts/qemu-series.sh: branch DIR / export DIR to change it)
qemu-series:
	$(TOP)/scripts/qemu-series.sh check

unit:
	$(SUBMAKE) -C $(UNIT_DIR) all

unit-run:
	$(SUBMAKE) -C $(UNIT_DIR) run

fuzz:
	$(SUBMAKE) -C $(FUZZ_DIR) all

fuzz-run:
	$(SUBMAKE) -C $(FUZZ_DIR) run

checkpatch:
	@$(TOP)/scripts/checkpatch.sh

# ---------------------------------------------------------------------------
# make test: the stages in order, each timed and logged to build/logs/ by
# scripts/stage.sh, which also fails a stage on a compiler warning in
# project code. Stops at the first failing stage; prints the times, and
# how often each stage's rig runs were booted again after a hung L2.
# A stage of TEST_ALONGSIDE starts in the background and runs alongside
# the stages after it, up to the next stage of TEST_ALONE (which runs
# with nothing beside it) or the end: make test waits for it there, its
# output is printed (stage.sh --show) and its failure fails make test as
# any stage's would. On two cores:
# - fuzz beside host: the fuzzers keep one core busy, the host stage's
#   TCG L1 (one vCPU) the other;
# - images beside qemu: debootstrap for the libvirt stage's Debian root
#   filesystems (network and dpkg; minutes cold, nothing warm) while QEMU
#   builds (compiler-bound, the longest step cold);
# - kernels beside them and the rig's stages: cold it is debootstrap too,
#   warm seven module builds on one core, one after the other;
# - two lanes of rig runs, one L1 each: vm then libvirt in the rig's
#   first slot (libvirt builds its packages and copies its images while
#   vm's rig runs, then waits for the slot), migrate, operator, run and
#   bench one after the other in its second (RIG_SLOT=2,
#   tests/rig/boot-l1.sh). bench's figures are exit counts and ratios of
#   one run's own slices, not times: the other lane's L1 on the other
#   core does not move them.
TEST_STAGES := deps build unit kbuild checkpatch fuzz host kernels images \
	qemu migrate operator run bench libvirt vm
TEST_ALONGSIDE := fuzz kernels images migrate operator run bench libvirt
TEST_RIG_SLOT2 := migrate operator run bench
TEST_ALONE :=

test:
	@$(STAGE) --reset; bg=; failed=; \
	join() { \
		for j in $$bg; do \
			wait "$${j%%:*}" || failed="$$failed $${j#*:}"; \
			$(STAGE) --show "$${j#*:}"; \
		done; \
		bg=; \
	}; \
	for s in $(TEST_STAGES) ""; do \
		case " $(TEST_ALONGSIDE) " in *" $$s "*) \
			echo "== stage $$s: in the background, alongside the next ones"; \
			case " $(TEST_RIG_SLOT2) " in *" $$s "*) slot=2 ;; *) slot=1 ;; esac; \
			RIG_SLOT=$$slot $(STAGE) --alongside $$s $(SUBMAKE) -C $(TOP) test-$$s & \
			bg="$$bg $$!:$$s"; continue ;; \
		esac; \
		[ -n "$$s" ] || join; \
		case " $(TEST_ALONE) " in *" $$s "*) join ;; esac; \
		[ -n "$$failed" ] || [ -z "$$s" ] || \
			$(STAGE) $$s $(SUBMAKE) -C $(TOP) test-$$s || failed=$$s; \
		[ -n "$$failed" ] || continue; \
		join; \
		$(STAGE) --summary; \
		for f in $$failed; do echo "make test: FAILED at stage $$f"; done; \
		exit 1; \
	done; \
	$(STAGE) --summary; echo "make test: all stages passed"

# The Debian kernels the rig stages boot (scripts/kver.sh; unset, the
# machine's: bookworm's 6.1). trixie's 6.12 is the host operators run
# today: the L1s of vm, operator, bench, run and libvirt (its own trixie
# image's) boot it. The host stage's L1 boots unstable's 7.x, the newest
# KVM, which exports least to other modules. migrate's L1 stays on 6.1:
# it runs beside vm, and a 6.12 L1 there slowed vm's L2 until its
# sampling timing checks failed (tests/rig/README.md). vm's L2 boots 6.12
# too; the other L2s stay on 6.1, so that the guest module is loaded on
# both. Set in the environment, RIG_L1_KERNEL and RIG_L2_KERNEL win
# (empty: the machine's).
test-host: export RIG_L1_KERNEL ?= unstable
test-vm test-operator test-bench test-run: export RIG_L1_KERNEL ?= trixie
test-vm: export RIG_L2_KERNEL ?= trixie

test-deps: deps
test-build: engine unit guest bench host-tools
test-unit: unit-run
	$(SUBMAKE) -C $(TOP)/guest/lib check
	$(TOP)/tests/libvirt/config-test.sh
	$(SUBMAKE) -C $(TOP)/host-tools check
test-kbuild: kmod
test-checkpatch: checkpatch
# the fuzzers (clang, ASan + UBSan) are built in their own stage, which
# times them with their run
test-fuzz:
	$(SUBMAKE) fuzz
	$(SUBMAKE) fuzz-run

# the host module for real: tests/host's programs on real KVM VMs inside
# the rig's L1 (QEMU/TCG with emulated SVM); fails on a failed test or a
# WARN, BUG, oops or leak in L1's kernel log
test-host:
	$(SUBMAKE) -C $(TOP)/tests/host check

# both modules against the Debian kernels they are for, as
# tests/kernels/matrix says (bullseye's 5.10 to unstable's 7.x): compile
# and link only, warnings fatal, each in its suite's debootstrap-made
# chroot (cached by content outside the tree: tests/kernels/chroot.sh)
# compile only, beside the rig stages: at the lowest priority, so that the
# rigs' TCG (whose guests' watchdogs count wall time) never waits for it
test-kernels:
	nice -n 19 $(TOP)/tests/kernels/run.sh

# tests/host's t_uaf on a two-CPU L1, where closing a counter can race its
# overflow handler on the other CPU (issue 9, finding 4; see t_uaf.c)
test-host-smp2:
	$(SUBMAKE) -C $(TOP)/tests/host check-smp2

# tests/host's t_stress alone at its full 1,000,000 command blocks
test-stress:
	$(SUBMAKE) -C $(TOP)/tests/host stress

test-qemu: qemu-series qemu

# the whole stack: L0 (TCG) -> L1 (KVM + kvm-perfmon.ko + patched QEMU)
# -> L2 (perfmon2.ko + libperfmon2 + the guest test programs)
test-vm:
	QEMU_PV=$$($(TOP)/scripts/qemu-build.sh --print-path) \
		$(TOP)/guest/tests/rig-run.sh $(B)/logs/vm

# live migration with monitoring active (issue 11): an L2 guest that
# counts with time-switched sets, samples and holds a thread blocked on
# notify moves between QEMUs in the rig's L1, twice, and is refused by a
# destination lacking an event and for a corrupted stream
# (tests/migrate/rig-migrate.sh)
test-migrate:
	QEMU_PV=$$($(TOP)/scripts/qemu-build.sh --print-path) \
		$(TOP)/tests/migrate/rig-migrate.sh $(B)/logs/migrate

# the operator's view (issue 15): two VMs in the rig's L1 whose guests
# count, sample and are refused on purpose; kvm-perfmon-stat there, the
# exporter scraped from here through QEMU's user network by promtool and
# a real Prometheus (tests/operator/rig-operator.sh)
test-operator:
	QEMU_PV=$$($(TOP)/scripts/qemu-build.sh --print-path) \
		$(TOP)/tests/operator/rig-operator.sh $(B)/logs/operator

# the rig's L1 as a real Debian KVM host: the project's trixie packages
# installed with apt into a debootstrap-made trixie image (6.12, systemd,
# AppArmor, libvirt 11.3; cached by content outside the tree), booted
# under TCG; a real libvirtd starts a domain with pv-perfmon whose
# debootstrap-made trixie guest (perfmon2-dkms, pfmon) counts and samples,
# is managed-saved and started, migrated live to a second libvirtd (first
# refused), destroyed while it samples (module stats at zero after), and
# a domain without the device starts (tests/libvirt/rig-libvirt.sh; the
# .debs of make deb)
# both at once (mkimage.sh locks each level's cache on its own)
test-images:
	$(TOP)/tests/libvirt/mkimage.sh l2 >/dev/null & l2=$$!; \
	$(TOP)/tests/libvirt/mkimage.sh l1 >/dev/null; rc=$$?; \
	wait $$l2 && exit $$rc

test-libvirt: deb
	$(TOP)/tests/libvirt/rig-libvirt.sh --debs $(B)/deb $(B)/logs/libvirt

# VM exits per operation, counted on the rig's L1 host for a program in
# L2 (tests/bench): one perfmon2 call, one guest context switch, one
# sample, and the guest's own perf cpu-clock sampling for comparison;
# then, in the same L2, the overhead side by side (b_overhead: a
# workload's slowdown under pv-perfmon's and the guest perf's sampling at
# 1, 5 and 20 kHz, and multiplexed against plain counting).
# tests/bench/check.sh holds the figures to the design's. Calls per batch:
# rig-bench.sh's default, or BENCH_N=... (make passes it on). The host's
# work per sample is held by its counters (no counter operation from
# outside the vCPU thread), which a one-CPU L1 shows as well as two.
test-bench:
	QEMU_PV=$$($(TOP)/scripts/qemu-build.sh --print-path) \
		$(TOP)/tests/bench/rig-bench.sh --all --timeout 900 $(B)/logs/bench

# The same on a two-CPU L1, where a kworker or a cross-CPU call per sample
# would cost the vCPU exits: not in make test, as L2 on a two-CPU L1
# resets now and then (tests/rig/README.md); run it and read its figures.
bench-l1-smp2:
	QEMU_PV=$$($(TOP)/scripts/qemu-build.sh --print-path) \
		$(TOP)/tests/bench/rig-bench.sh --l1-smp 2 --timeout 900 \
		$(B)/logs/bench-l1-smp2

# `make run` as a user runs it (its package step is the deps stage's),
# through the rig whatever this host has: a test does not insmod into the
# host's kernel. tests/run/check.sh judges the counts and the profile.
test-run:
	@mkdir -p $(B)/logs/run
	$(TOP)/scripts/run.sh --rig --no-deps $(B)/logs/run \
		>$(B)/logs/run/output.txt 2>&1; rc=$$?; \
	cat $(B)/logs/run/output.txt; \
	$(TOP)/tests/run/check.sh $(B)/logs/run/output.txt && exit $$rc

# the main job: profile a bundled workload inside a guest with pfmon
# (installs, builds, boots: directly on a KVM host, else through the rig)
run:
	@$(TOP)/scripts/run.sh

# ---------------------------------------------------------------------------
# make install: what a host and a guest need, as `make install` users expect
# (DESTDIR for staging, PREFIX for the programs). The modules go in as DKMS
# source trees (scripts/dkms-tree.sh): `dkms install` builds them for the
# kernel that will load them. Host: kvm-perfmon.ko's DKMS tree, its
# modules-load.d entry and udev rule, the operator's tools with the
# exporter's unit, the libvirt pieces (AppArmor drop-in,
# kvm-perfmon-libvirt-config: the operator runs its enable) and
# /etc/kvm-perfmon/ for event maps and filters. Guest:
# perfmon2.ko's DKMS tree, libperfmon2 and pfmon. QEMU (install-qemu): the
# patched QEMU as $(PREFIX)/bin/qemu-system-x86_64-pvperfmon (beside
# Debian's, never replacing it; scripts/qemu-build.sh's bundle). The Debian packages (debian/rules) split install-host and
# install-guest into packages.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
LIBDIR ?= $(PREFIX)/lib
DKMSDIR ?= /usr/src
UDEVRULESDIR ?= $(SYSCONFDIR)/udev/rules.d
MODULESLOADDIR ?= $(SYSCONFDIR)/modules-load.d
APPARMORDIR ?= $(SYSCONFDIR)/apparmor.d
DOCDIR ?= $(PREFIX)/share/doc/kvm-perfmon
UNITDIR ?= /lib/systemd/system
SYSUSERSDIR ?= /usr/lib/sysusers.d
DKMS_VER = $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(1)/dkms.conf)

install: install-host install-qemu install-guest

# the patched QEMU, for installs without packages (the Debian package of it
# is qemu-system-x86-pvperfmon, from its own source package: make qemu-deb):
# scripts/qemu-build.sh's bundle, which brings trixie's libraries, in
# $(PREFIX)/lib/kvm-perfmon/qemu, its launcher linked from $(PREFIX)/bin
install-qemu:
	qemu=$$($(TOP)/scripts/qemu-build.sh --print-path) && \
		install -d $(DESTDIR)$(PREFIX)/lib/kvm-perfmon/qemu && \
		cp -a "$${qemu%/bin/*}/bin" "$${qemu%/bin/*}/sysroot" \
			$(DESTDIR)$(PREFIX)/lib/kvm-perfmon/qemu/ && \
		install -d $(DESTDIR)$(PREFIX)/bin && \
		ln -sf ../lib/kvm-perfmon/qemu/bin/qemu-system-x86_64-pvperfmon \
			$(DESTDIR)$(PREFIX)/bin/qemu-system-x86_64-pvperfmon

install-host:
	$(SUBMAKE) -C $(TOP)/host-tools install PREFIX=$(PREFIX) \
		DESTDIR=$(DESTDIR) UNITDIR=$(UNITDIR) SYSUSERSDIR=$(SYSUSERSDIR)
	$(TOP)/scripts/dkms-tree.sh \
		$(DESTDIR)$(DKMSDIR)/kvm-perfmon-$(call DKMS_VER,$(TOP)/kvm) >/dev/null
	install -D -m 644 $(TOP)/kvm/99-kvm-perfmon.rules \
		$(DESTDIR)$(UDEVRULESDIR)/99-kvm-perfmon.rules
	install -d $(DESTDIR)$(MODULESLOADDIR)
	echo kvm-perfmon >$(DESTDIR)$(MODULESLOADDIR)/kvm-perfmon.conf
	install -D -m 644 $(TOP)/libvirt/apparmor-kvm-perfmon \
		$(DESTDIR)$(APPARMORDIR)/abstractions/libvirt-qemu.d/kvm-perfmon
	install -D -m 755 $(TOP)/libvirt/kvm-perfmon-libvirt-config \
		$(DESTDIR)$(PREFIX)/sbin/kvm-perfmon-libvirt-config
	install -d $(DESTDIR)$(SYSCONFDIR)/kvm-perfmon
	install -D -m 644 $(TOP)/libvirt/pv-perfmon-domain.xml \
		$(DESTDIR)$(DOCDIR)/examples/pv-perfmon-domain.xml
	install -m 644 $(TOP)/README.md $(TOP)/doc/*.md $(DESTDIR)$(DOCDIR)/

install-guest:
	$(TOP)/scripts/dkms-tree.sh --guest \
		$(DESTDIR)$(DKMSDIR)/perfmon2-$(call DKMS_VER,$(TOP)/guest/kernel) \
		>/dev/null
	$(SUBMAKE) -C $(TOP)/guest/lib install PREFIX=$(PREFIX) \
		DESTDIR=$(DESTDIR) LIBDIR=$(LIBDIR)
	$(SUBMAKE) -C $(TOP)/guest/tools install PREFIX=$(PREFIX) \
		DESTDIR=$(DESTDIR)

# The Debian packages, built by dpkg-buildpackage in a copy of the tree
# (scripts/deb-build.sh); the .debs land in build/deb/
deb:
	$(TOP)/scripts/deb-build.sh --suite trixie $(B)/deb
	dsc=$$($(TOP)/scripts/qemu-deb-source.sh $(B)/qemu-deb/source) && \
		$(TOP)/scripts/deb-chroot.sh trixie "$$dsc" $(B)/deb

# qemu-system-x86-pvperfmon for trixie: the qemu-pvperfmon source package
# (Debian's qemu source with qemu-patches/ and qemu-deb/debian/) made by
# scripts/qemu-deb-source.sh, built by scripts/deb-chroot.sh in a clean
# trixie chroot without network; both cached by content (cold: 20 to 25
# minutes on 2 cores, most of it the QEMU build; warm: a second)
qemu-deb:
	dsc=$$($(TOP)/scripts/qemu-deb-source.sh $(B)/qemu-deb/source) && \
		$(TOP)/scripts/deb-chroot.sh trixie "$$dsc" $(B)/qemu-deb

help:
	@echo "kvm-perfmon: make TARGET (README.md has the details)"
	@echo "  all (default)    build everything: engine, unit, fuzz, kmod, guest,"
	@echo "                   bench, host-tools"
	@echo "  deps             install the Debian packages the project needs"
	@echo "  engine kmod guest host-tools bench unit fuzz   build one part"
	@echo "  qemu             the patched QEMU (cached build; prints its path)"
	@echo "  qemu-series      check that qemu-patches/ is format-patch's output"
	@echo "  checkpatch       checkpatch.pl over the kernel code"
	@echo "  unit-run fuzz-run   run the unit tests, the fuzzers"
	@echo "  test             every stage below, timed (what CI runs)"
	@echo "  test-STAGE       one stage: $(TEST_STAGES)"
	@echo "  test-host-smp2 test-stress bench-l1-smp2   longer rig runs"
	@echo "                   RIG_L1_KERNEL=SUITE, RIG_L2_KERNEL=SUITE: the"
	@echo "                   rig boots that Debian suite's kernel (trixie...)"
	@echo "  run              profile a bundled workload in a guest with pfmon"
	@echo "  install          install-host + install-qemu + install-guest"
	@echo "                   (PREFIX, DESTDIR)"
	@echo "  install-host     kvm-perfmon DKMS tree, udev rule, modules-load.d,"
	@echo "                   host tools, libvirt"
	@echo "  install-qemu     qemu-system-x86_64-pvperfmon (the cached build)"
	@echo "  install-guest    perfmon2 DKMS tree, libperfmon2, pfmon"
	@echo "  deb              the Debian packages for trixie (both source"
	@echo "                   packages, built in a trixie chroot): build/deb/"
	@echo "  qemu-deb         qemu-system-x86-pvperfmon for trixie: build/qemu-deb/"
	@echo "  clean            remove build outputs (not the QEMU cache)"

clean:
	-$(SUBMAKE) -C $(TOP)/kvm clean
	-$(SUBMAKE) -C $(TOP)/guest/kernel clean
	-$(SUBMAKE) -C $(UNIT_DIR) clean
	-$(SUBMAKE) -C $(FUZZ_DIR) clean
	-$(SUBMAKE) -C $(TOP)/tests/host clean
	rm -rf $(B)
