// SPDX-License-Identifier: GPL-2.0
/*
 * hostlib, module parameters: BIND_VM's limits and their ceilings,
 * allow_host_page_faults (hostlib.h, "module parameters").
 */
#include <errno.h>
#include <stdio.h>

#include "hostlib.h"

int hl_allow_host_page_faults(bool on)
{
	FILE *f = fopen("/sys/module/kvm_perfmon/parameters/"
			"allow_host_page_faults", "w");
	int ret = 0;

	if (!f)
		return -errno;
	if (fputs(on ? "Y\n" : "N\n", f) == EOF)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

bool hl_check_allow_host_page_faults(void)
{
	return t_check(!hl_allow_host_page_faults(true),
		       "allow_host_page_faults",
		       "cannot write the module parameter");
}

const char *const hl_lim_name[HL_LIM_N] = {
	"max_contexts", "max_sets", "max_vector", "max_smpl_buf",
};

uint64_t hl_ceiling(int l)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/module/kvm_perfmon/parameters/%s_ceiling", hl_lim_name[l]);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

void hl_lim_set(struct kvmpfm_bind_vm *b, int l, uint64_t v)
{
	switch (l) {
	case HL_LIM_CONTEXTS:
		b->max_contexts = v;
		break;
	case HL_LIM_SETS:
		b->max_sets = v;
		break;
	case HL_LIM_VECTOR:
		b->max_vector = v;
		break;
	default:
		b->max_smpl_buf = v;
	}
}

uint64_t hl_lim_of_bind(const struct kvmpfm_bind_vm *b, int l)
{
	switch (l) {
	case HL_LIM_CONTEXTS:
		return b->max_contexts;
	case HL_LIM_SETS:
		return b->max_sets;
	case HL_LIM_VECTOR:
		return b->max_vector;
	default:
		return b->max_smpl_buf;
	}
}

uint64_t hl_lim_of_info(const struct pvpfm_pmu_info *i, int l)
{
	switch (l) {
	case HL_LIM_CONTEXTS:
		return i->max_contexts;
	case HL_LIM_SETS:
		return i->max_sets;
	case HL_LIM_VECTOR:
		return i->max_vector;
	default:
		return i->max_smpl_buf;
	}
}
