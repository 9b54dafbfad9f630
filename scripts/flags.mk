# SPDX-License-Identifier: GPL-2.0
#
# Compiler flags for all userspace project code, in one place.
#
# Every sub-Makefile that compiles project code (tests/unit, tests/fuzz,
# later guest/lib, guest/tools, host-tools) starts with:
#
#	TOP := $(abspath ../..)		# the repo root, relative to that Makefile
#	include $(TOP)/scripts/flags.mk
#
# and compiles with
#
#	$(CC) $(CPPFLAGS_PROJECT) $(CFLAGS_PROJECT) -c ...
#
# CPPFLAGS_PROJECT puts the repo root on the include path (engine and uapi
# headers are reached as "kvm/engine/..." / "include/uapi/..." from there; the
# engine's own includes are relative and need nothing) and defines
# KVMPFM_VERSION, the version of debian/changelog. Warnings are errors:
# `make test` also fails on any "warning:" a compiler prints about project
# code, whatever flags a sub-Makefile used (scripts/stage.sh).
#
# The fuzzers use CC_FUZZ and CFLAGS_FUZZ (clang's libFuzzer with ASan and
# UBSan; the runtimes come from Debian's libclang-rt-14-dev) on top of
# CFLAGS_PROJECT, whose -O2 the later -O1 overrides.
#
# The kernel module does not use this file: kvm/Kbuild sets -Werror itself.

ifndef TOP
$(error set TOP (the repo root) before including scripts/flags.mk)
endif

CFLAGS_PROJECT := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes
# the project's one version string: debian/changelog's newest entry
PROJECT_VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' \
	$(TOP)/debian/changelog)
CPPFLAGS_PROJECT := -I$(TOP) -DKVMPFM_VERSION='"$(PROJECT_VERSION)"'

CC_FUZZ := $(shell command -v clang-14 || command -v clang || echo clang-14)
CFLAGS_FUZZ := -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

# The engine sources, for Makefiles that compile the engine themselves.
ENGINE_SRCS := $(wildcard $(TOP)/kvm/engine/*.c)
ENGINE_HDRS := $(wildcard $(TOP)/kvm/engine/*.h) $(wildcard $(TOP)/include/uapi/*.h)

export CFLAGS_PROJECT CPPFLAGS_PROJECT CC_FUZZ CFLAGS_FUZZ
