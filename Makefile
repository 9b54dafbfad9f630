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

# test-STAGE (a pattern rule, below) is not listed: make skips the
# pattern rules for a phony target
.PHONY: all deps engine kmod unit unit-run fuzz fuzz-run checkpatch test \
	guest qemu qemu-series bench host-tools \
	test-host-debug test-stress test-vm-smp \
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

# kvm-perfmon-stat and kvm-perfmon-exporter (host-tools/README.md), the
# host's man pages (kvm-perfmon-libvirt-config's too), and the exporter's
# unit as systemd-analyze reads it
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
# make test: the stages of tests/stages (their order, lanes, rig slots,
# kernels and retries), run by scripts/stages.sh, each timed and logged to
# build/logs/ by scripts/stage.sh, which also fails a stage on a compiler
# warning in project code; make test-STAGE runs one, as make test would
# (its entry point is tests/STAGE/run). doc/TESTING.md describes them.
STAGES := $(TOP)/scripts/stages.sh

test:
	@$(STAGES) all

test-%:
	@$(STAGES) run $*

# tests/host's t_stress alone at its full 1,000,000 command blocks
test-stress:
	$(SUBMAKE) -C $(TOP)/tests/host stress

# the host stage's tests on an L1 kernel with lockdep and KASAN
# (tests/rig/debug-kernel.sh): not in make test, as the kernel's cold
# build takes about 20 minutes on both cores and a run about 18, where
# Debian's kernel takes under 4 (tests/host/README: its cost)
test-host-debug:
	$(SUBMAKE) -C $(TOP)/tests/host check-debug

# the vm stage's guest tests on a two-CPU L1, L2's two vCPUs unpinned
# (tests/vm-smp/run): not in make test, as L2 resets there now and then
# (doc/TESTING.md, "Longer runs")
test-vm-smp:
	RIG_SLOT=1 RIG_L1_KERNEL=$${RIG_L1_KERNEL-trixie} \
		RIG_L2_KERNEL=$${RIG_L2_KERNEL-trixie} RIG_L2_HANG_RETRIES=0 \
		$(TOP)/tests/vm-smp/run

# the main job: profile a bundled workload inside a guest with pfmon
# (installs, builds, boots: directly on a KVM host, else through the rig,
# which boots L1 again after a hung L2 as often as make test's run stage)
run:
	@RIG_L2_HANG_RETRIES=$${RIG_L2_HANG_RETRIES-$$($(STAGES) field run retries)} \
		$(TOP)/scripts/run.sh

# ---------------------------------------------------------------------------
# make install: what a host and a guest need, as `make install` users expect
# (DESTDIR for staging, PREFIX for the programs). The modules go in as DKMS
# source trees (scripts/dkms-tree.sh): `dkms install` builds them for the
# kernel that will load them. Host: kvm-perfmon.ko's DKMS tree, its
# modules-load.d entry and udev rule, the operator's tools with the
# exporter's unit, the libvirt pieces (AppArmor drop-in,
# kvm-perfmon-libvirt-config: the operator runs its enable) and
# /etc/kvm-perfmon/ for event maps and filters. Guest:
# perfmon2.ko's DKMS tree, libperfmon2 and pfmon. Each program's man page
# goes in $(MANDIR) beside it (section 1 pfmon, 8 the host's). QEMU (install-qemu): the
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
MANDIR ?= $(PREFIX)/share/man
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
		DESTDIR=$(DESTDIR) UNITDIR=$(UNITDIR) SYSUSERSDIR=$(SYSUSERSDIR) \
		MANDIR=$(MANDIR)
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
		DESTDIR=$(DESTDIR) MANDIR=$(MANDIR)

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
	@echo "kvm-perfmon: make TARGET (README.md; make test: doc/TESTING.md)"
	@echo "  all (default)    build everything: engine, unit, fuzz, kmod, guest,"
	@echo "                   bench, host-tools"
	@echo "  deps             install the Debian packages the project needs"
	@echo "  engine kmod guest host-tools bench unit fuzz   build one part"
	@echo "  qemu             the patched QEMU (cached build; prints its path)"
	@echo "  qemu-series      check that qemu-patches/ is format-patch's output"
	@echo "  checkpatch       checkpatch.pl over the kernel code"
	@echo "  unit-run fuzz-run   run the unit tests, the fuzzers"
	@echo "  test             every stage below, timed (what CI runs)"
	@$(STAGES) help
	@echo "  test-stress test-vm-smp   longer rig runs"
	@echo "  test-host-debug  the host stage's tests on a lockdep and KASAN L1"
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
