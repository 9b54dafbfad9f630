# SPDX-License-Identifier: GPL-2.0
#
# The `run` recipe of a folder of test programs (tests/unit,
# host-tools/tests): every program of RUN_PROGRAMS runs, also after another
# one failed; then the command RUN_ALSO (named RUN_ALSO_NAME); last the
# line "=== RUN_SUMMARY: N/M programs passed". The recipe fails if any
# program or the command failed. Use:
#	run: all
#		$(run_programs)

define run_programs
@fail=0; total=0; \
for t in $(RUN_PROGRAMS); do \
	echo "=== $$(basename $$t)"; \
	$$t; rc=$$?; \
	if [ $$rc -ne 0 ]; then fail=$$((fail + 1)); \
		echo "*** $$(basename $$t): $$rc test(s) failed"; fi; \
	total=$$((total + 1)); \
done; \
echo "=== $(RUN_ALSO_NAME)"; \
$(RUN_ALSO) || fail=$$((fail + 1)); \
total=$$((total + 1)); \
echo "=== $(RUN_SUMMARY): $$((total - fail))/$$total programs passed"; \
[ $$fail -eq 0 ]
endef
