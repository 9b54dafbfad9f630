# SPDX-License-Identifier: GPL-2.0
#
# The out-of-tree build of one of the tree's modules (kvm/: kvm-perfmon.ko,
# guest/kernel/: perfmon2.ko); the module's Kbuild file says what goes in
# it. The including Makefile sets TOP (the repo root, or the DKMS tree's:
# scripts/dkms-tree.sh copies this file there) and KMOD_CLEAN (its build
# outputs below its own folder).
#   make            build against the newest installed Debian headers
#                   (DKMS always passes KDIR)
#   make KDIR=...   build against another kernel build tree
#   make clean

KDIR ?= $(shell $(TOP)/scripts/kver.sh build-dir)

.PHONY: all modules clean

all: modules

modules:
	@test -n "$(KDIR)" || { echo "$(notdir $(CURDIR)): no kernel build tree (run 'make deps')" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	@if [ -n "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	rm -f *.o .*.cmd *.mod *.mod.c *.ko Module.symvers modules.order \
		$(KMOD_CLEAN)
