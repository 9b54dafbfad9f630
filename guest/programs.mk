# SPDX-License-Identifier: GPL-2.0
#
# For the Makefiles of the guest's programs (guest/tests, guest/tools): the
# project's flags, and libperfmon2 with its headers, which guest/lib builds
# into build/guest. Include with TOP set to the repo root; the including
# Makefile's `all` is the default goal.
# GUEST_LIB, not LIBDIR: make install passes LIBDIR, where libperfmon2
# goes on the target system.

-include $(TOP)/scripts/flags.mk
CFLAGS_PROJECT ?= -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes
CFLAGS := $(CFLAGS_PROJECT) $(EXTRA_CFLAGS)

GUEST := $(TOP)/build/guest
INC := $(GUEST)/include
GUEST_LIB := $(GUEST)/lib
CPPFLAGS := -I$(INC)

.PHONY: all lib
all:

lib:
	$(MAKE) --no-print-directory -C $(TOP)/guest/lib
$(GUEST_LIB)/libperfmon2.a $(GUEST_LIB)/libperfmon2.so $(INC)/perfmon/perfmon.h: lib
