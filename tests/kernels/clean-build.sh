# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# What a clean build of a module for a kernel is, for every build that
# judges one (tests/kernels/run.sh's cells, tests/rig/modules.sh's for
# the debug kernel): make with CLEAN_KCFLAGS, and no line of its output
# matching CLEAN_WARN_RE (the compiler's warnings, and modpost's, which
# -Werror does not turn into errors).
# shellcheck disable=SC2034 # for the sourcing script
CLEAN_KCFLAGS=-Werror
# shellcheck disable=SC2034
CLEAN_WARN_RE='warning:|WARNING'
