# SPDX-License-Identifier: GPL-2.0
#
# For the Makefiles of the guest's programs (guest/tests, guest/tools): the
# project's flags, and libperfmon2 with its headers, which guest/lib builds
# into build/guest. Include with TOP set to the repo root; the including
# Makefile's `all` is the default goal.

-include $(TOP)/scripts/flags.mk
CFLAGS_PROJECT ?= -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes
CFLAGS := $(CFLAGS_PROJECT) $(EXTRA_CFLAGS)

GUEST := $(TOP)/build/guest
INC := $(GUEST)/include
LIBDIR := $(GUEST)/lib
CPPFLAGS := -I$(INC)

.PHONY: all lib
all:

lib:
	$(MAKE) --no-print-directory -C $(TOP)/guest/lib
$(LIBDIR)/libperfmon2.a $(LIBDIR)/libperfmon2.so $(INC)/perfmon/perfmon.h: lib
