// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/perfmon, as perfmon2 laid it out:
 *
 *   version                  "2.81": PFM_VERSION, major.minor
 *   syscall                  PFM_SYSCALL_BASE: where libpfm-3's own
 *                            syscall wrappers look for perfmon2's calls
 *   pmu_desc/model           the host's PMU personality (e.g. "amd64")
 *   pmu_desc/mappings        one line per register, PMCs then PMDs:
 *                            PMC0:0x100000:0x30fffcfffff:PERFSEL0
 *                            name:default value:mask:description, where
 *                            the mask, as perfmon2 printed it, has the
 *                            reserved bits at 0 (the host's REG_DESC
 *                            rsvd_msk inverted)
 *   pmu_desc/pmcN/, pmdN/    one directory per implemented register, as
 *                            perfmon2 v2.8x: name, dfl_val, rsvd_msk
 *                            (reserved bits 1, v2.8x's convention, so the
 *                            inverse of the mappings' mask), width (a
 *                            counting PMD's hardware width, else 64) and
 *                            addr (the MSR the register stands for; 0 for
 *                            a virtual PMD)
 *   formats/default/version  the default sampling format, when the host
 *                            has it (PVPFM_F_SAMPLING)
 *   task_group, sys_group, arg_mem_max, smpl_buffer_mem_max,
 *   smpl_buffer_mem_cur      perfmon2 v2.8x's controls, where it had them:
 *                            the same files as in controls/ (below)
 *   task_sessions_count,
 *   sys_sessions_count       per-thread and system-wide contexts loaded
 *   debug, mode, reset_stats perfmon2's: debug kept, unused; mode only 0
 *                            (no expert mode); writing reset_stats zeroes
 *                            the device/ counters and the per-CPU
 *                            statistics (debugfs perfmon/cpuN/,
 *                            pfm_stats.c)
 *   controls/                task_group, sys_group (-1: any group),
 *                            arg_mem_max (bytes per vector argument),
 *                            smpl_buffer_mem_max (bytes of all sampling
 *                            buffers), max_ctx_per_user (contexts
 *                            alive per user, CAP_SYS_ADMIN exempt),
 *                            user_kernel_ip (1: contexts of users
 *                            without CAP_PERFMON see guest kernel IPs
 *                            in samples and messages; 0, the default:
 *                            zeroed, perf_event_paranoid's rule): root
 *                            may write them; and smpl_buffer_mem_cur
 *                            (read-only)
 *   device/                  the pv-perfmon device and host limits,
 *                            and command/SWITCH counters (read-only)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include "pfm_drv.h"

/* the largest vector entry: one of each must always fit */
#define PFM_ARG_MEM_MIN		sizeof(pfarg_setinfo_t)

struct pfm_controls pfm_controls = {
	.task_group = -1,
	.sys_group = 0,
	.arg_mem_max = PAGE_SIZE,
	.smpl_buffer_mem_max = 0,	/* set at init: a quarter of RAM */
};

static struct kobject *pfm_kobj, *pfm_formats_kobj, *pfm_pmu_desc_kobj;

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u.%u\n", PFM_VERSION_MAJOR(PFM_VERSION),
			  PFM_VERSION_MINOR(PFM_VERSION));
}

static struct kobj_attribute version_attr = __ATTR_RO(version);

/*
 * There are no perfmon2 system calls: the twelve calls are ioctls
 * (libperfmon2). A binary still built on libpfm-3's own wrappers issues
 * syscall(base + 0..11) with the base read here; without this file it
 * guesses a base that lands on read(), write(), open()... This base puts
 * all twelve far above every x86_64 system call (about 460 today, the
 * x32 entries end at 547) and below the x32 bit (0x40000000), so each
 * fails with ENOSYS, in a 32-bit process too.
 */
#define PFM_SYSCALL_BASE	1024

static ssize_t syscall_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", PFM_SYSCALL_BASE);
}

static struct kobj_attribute syscall_attr = __ATTR_RO(syscall);

/* pmu_desc */

static ssize_t model_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", pfm_dev_info.pmu.model);
}

static ssize_t mappings_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	const struct pvpfm_reg_desc *r;
	int len = 0;
	u32 i;

	for (i = 0; i < pfm_dev_info.nr_regs; i++) {
		r = &pfm_dev_info.regs[i];
		len += sysfs_emit_at(buf, len, "%s%u:0x%llx:0x%llx:%s\n",
				     r->type == PVPFM_REG_PMC ? "PMC" : "PMD",
				     r->num, r->dfl_val, ~r->rsvd_msk, r->name);
	}
	return len;
}

static struct kobj_attribute model_attr = __ATTR_RO(model);
static struct kobj_attribute mappings_attr = __ATTR_RO(mappings);

static struct attribute *pmu_desc_attrs[] = {
	&model_attr.attr,
	&mappings_attr.attr,
	NULL
};

static const struct attribute_group pmu_desc_group = {
	.attrs = pmu_desc_attrs,
};

/*
 * pmu_desc/pmcN/ and pmdN/: perfmon2 v2.8x's per register files, same
 * names and formats (its perfmon_sysfs.c). Each directory holds a copy
 * of the host's description, so it never looks at pfm_dev_info.regs.
 */
struct pfm_reg_kobj {
	struct kobject kobj;
	struct pvpfm_reg_desc desc;
};

static struct pfm_reg_kobj **pfm_reg_kobjs;
static u32 pfm_nr_reg_kobjs;

static const struct pvpfm_reg_desc *to_reg(struct kobject *kobj)
{
	return &container_of(kobj, struct pfm_reg_kobj, kobj)->desc;
}

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", to_reg(kobj)->name);
}

static ssize_t dfl_val_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", to_reg(kobj)->dfl_val);
}

/* reserved bits 1, as perfmon2 v2.8x's pfm_regmap_desc.rsvd_msk */
static ssize_t rsvd_msk_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", to_reg(kobj)->rsvd_msk);
}

/*
 * As perfmon2: a counting PMD's hardware width (perfmon2 extended it to
 * 64 bits, as the host does), 64 for other registers; the personality's
 * counters' width, whatever counter of the host backs the PMD
 */
static ssize_t width_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	const struct pvpfm_pers_desc *d = pvpfm_pers_desc(pfm_dev_info.personality);
	const struct pvpfm_reg_desc *r = to_reg(kobj);
	bool counter = r->type == PVPFM_REG_PMD &&
		       !(r->flags & PVPFM_REGF_VIRTUAL);

	return sysfs_emit(buf, "%u\n", counter && d ? d->counter_width : 64);
}

/*
 * As perfmon2: the MSR the register stands for on the personality's
 * hardware (the guest reaches none), 0 for a virtual PMD
 */
static ssize_t addr_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	const struct pvpfm_pers_desc *d = pvpfm_pers_desc(pfm_dev_info.personality);
	const struct pvpfm_reg_desc *r = to_reg(kobj);
	u32 msr = 0;

	if (d && !(r->flags & PVPFM_REGF_VIRTUAL))
		msr = pvpfm_reg_msr(d, r->type == PVPFM_REG_PMC, r->num);
	return sysfs_emit(buf, "0x%x\n", msr);
}

static struct kobj_attribute reg_name_attr = __ATTR_RO(name);
static struct kobj_attribute reg_dfl_val_attr = __ATTR_RO(dfl_val);
static struct kobj_attribute reg_rsvd_msk_attr = __ATTR_RO(rsvd_msk);
static struct kobj_attribute reg_width_attr = __ATTR_RO(width);
static struct kobj_attribute reg_addr_attr = __ATTR_RO(addr);

static struct attribute *pfm_reg_attrs[] = {
	&reg_name_attr.attr,
	&reg_dfl_val_attr.attr,
	&reg_rsvd_msk_attr.attr,
	&reg_width_attr.attr,
	&reg_addr_attr.attr,
	NULL
};
ATTRIBUTE_GROUPS(pfm_reg);

static void pfm_reg_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct pfm_reg_kobj, kobj));
}

static const struct kobj_type pfm_reg_ktype = {
	.release = pfm_reg_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = pfm_reg_groups,
};

static void pfm_sysfs_del_regs(void)
{
	u32 i;

	for (i = 0; i < pfm_nr_reg_kobjs; i++)
		kobject_put(&pfm_reg_kobjs[i]->kobj);
	kfree(pfm_reg_kobjs);
	pfm_reg_kobjs = NULL;
	pfm_nr_reg_kobjs = 0;
}

static int pfm_sysfs_add_regs(void)
{
	const struct pvpfm_reg_desc *r;
	struct pfm_reg_kobj *rk;
	u32 i;
	int ret;

	pfm_reg_kobjs = kcalloc(pfm_dev_info.nr_regs, sizeof(*pfm_reg_kobjs),
				GFP_KERNEL);
	if (!pfm_reg_kobjs && pfm_dev_info.nr_regs)
		return -ENOMEM;
	for (i = 0; i < pfm_dev_info.nr_regs; i++) {
		r = &pfm_dev_info.regs[i];
		rk = kzalloc(sizeof(*rk), GFP_KERNEL);
		if (!rk)
			return -ENOMEM;
		rk->desc = *r;
		ret = kobject_init_and_add(&rk->kobj, pfm_kobj_type(&pfm_reg_ktype),
					   pfm_pmu_desc_kobj, "%s%u",
					   r->type == PVPFM_REG_PMC ?
					   "pmc" : "pmd", r->num);
		if (ret) {
			/* the put frees it */
			kobject_put(&rk->kobj);
			return ret;
		}
		pfm_reg_kobjs[pfm_nr_reg_kobjs++] = rk;
	}
	return 0;
}

/* formats */

static ssize_t dfl_version_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u.%u\n", PFM_DFL_SMPL_VERSION_MAJ,
			  PFM_DFL_SMPL_VERSION_MIN);
}

static struct kobj_attribute dfl_version_attr =
	__ATTR(version, 0444, dfl_version_show, NULL);

static struct attribute *dfl_format_attrs[] = {
	&dfl_version_attr.attr,
	NULL
};

static const struct attribute_group dfl_format_group = {
	.name = PFM_DFL_SMPL_NAME,
	.attrs = dfl_format_attrs,
};

/* controls */

/*
 * A read-write control of pfm_controls: shown with @_fmt; a write is
 * parsed into a @_type by @_parse (0 or -errno), then stored
 */
#define PFM_CONTROL(_name, _fmt, _type, _parse)				\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, _fmt "\n", READ_ONCE(pfm_controls._name));	\
}									\
static ssize_t _name##_store(struct kobject *kobj,			\
			     struct kobj_attribute *attr,		\
			     const char *buf, size_t count)		\
{									\
	_type val;							\
	int ret = _parse(buf, &val);					\
									\
	if (ret)							\
		return ret;						\
	WRITE_ONCE(pfm_controls._name, val);				\
	return count;							\
}									\
static struct kobj_attribute _name##_attr = __ATTR_RW(_name)

/* a group id, or -1 for any group */
static int pfm_control_parse_group(const char *buf, int *gid)
{
	int ret = kstrtoint(buf, 0, gid);

	if (ret)
		return ret;
	return *gid < -1 ? -EINVAL : 0;
}

/* a u32 control's new value, refused (-EINVAL) outside [@min, @max] */
static int pfm_control_parse_u32(const char *buf, u32 min, u32 max, u32 *val)
{
	int ret = kstrtou32(buf, 0, val);

	if (ret)
		return ret;
	return *val < min || *val > max ? -EINVAL : 0;
}

/* at least one entry of every call, at most what a command block holds */
static int pfm_control_parse_arg_mem_max(const char *buf, u32 *val)
{
	return pfm_control_parse_u32(buf, PFM_ARG_MEM_MIN, PVPFM_CMD_ARGS_MAX,
				     val);
}

/* up to all of RAM; buffers already allocated are not touched */
static int pfm_control_parse_smpl_buffer_mem_max(const char *buf, u64 *val)
{
	int ret = kstrtou64(buf, 0, val);

	if (ret)
		return ret;
	return *val > (u64)totalram_pages() << PAGE_SHIFT ? -EINVAL : 0;
}

/* 0 (only root creates contexts) up to the host's max_contexts */
static int pfm_control_parse_max_ctx_per_user(const char *buf, u32 *val)
{
	return pfm_control_parse_u32(buf, 0, pfm_dev_info.pmu.max_contexts,
				     val);
}

/* 0 or 1; taken at pfm_create_context: existing contexts keep theirs */
static int pfm_control_parse_user_kernel_ip(const char *buf, u32 *val)
{
	return pfm_control_parse_u32(buf, 0, 1, val);
}

PFM_CONTROL(task_group, "%d", int, pfm_control_parse_group);
PFM_CONTROL(sys_group, "%d", int, pfm_control_parse_group);
PFM_CONTROL(arg_mem_max, "%u", u32, pfm_control_parse_arg_mem_max);
PFM_CONTROL(smpl_buffer_mem_max, "%llu", u64,
	    pfm_control_parse_smpl_buffer_mem_max);
PFM_CONTROL(max_ctx_per_user, "%u", u32, pfm_control_parse_max_ctx_per_user);
PFM_CONTROL(user_kernel_ip, "%d", u32, pfm_control_parse_user_kernel_ip);

static ssize_t smpl_buffer_mem_cur_show(struct kobject *kobj,
					struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&pfm_smpl_mem_cur));
}

static struct kobj_attribute smpl_buffer_mem_cur_attr =
	__ATTR_RO(smpl_buffer_mem_cur);

static struct attribute *controls_attrs[] = {
	&task_group_attr.attr,
	&sys_group_attr.attr,
	&arg_mem_max_attr.attr,
	&smpl_buffer_mem_max_attr.attr,
	&smpl_buffer_mem_cur_attr.attr,
	&max_ctx_per_user_attr.attr,
	&user_kernel_ip_attr.attr,
	NULL
};

static const struct attribute_group controls_group = {
	.name = "controls",
	.attrs = controls_attrs,
};

/* a read-only file: @_val shown with @_fmt */
#define PFM_DEV_U32(_name, _fmt, _val)					\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, _fmt "\n", _val);			\
}									\
static struct kobj_attribute _name##_attr = __ATTR_RO(_name)

/*
 * perfmon2 v2.8x's own files at the top: its controls (the same files as
 * controls/), its session counts, and debug, mode and reset_stats, which
 * programs and pfmon write. debug is kept and does nothing (the driver
 * has no debug levels); mode takes only 0: perfmon2's 1 let writes bypass
 * the reserved bits' defaults, which the host never lets through.
 */
static int pfm_control_parse_debug(const char *buf, int *val)
{
	return kstrtoint(buf, 0, val);
}

PFM_CONTROL(debug, "%d", int, pfm_control_parse_debug);

static ssize_t mode_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "0\n");
}

static ssize_t mode_store(struct kobject *kobj, struct kobj_attribute *attr,
			  const char *buf, size_t count)
{
	u32 val;
	int ret = pfm_control_parse_u32(buf, 0, 0, &val);

	return ret ? ret : count;
}

static struct kobj_attribute mode_attr = __ATTR_RW(mode);

/*
 * reads 0; a write zeroes the device's command and SWITCH counters and
 * the per-CPU statistics (pfm_stats.c)
 */
static ssize_t reset_stats_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0\n");
}

static ssize_t reset_stats_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	atomic64_set(&pfm_dev_stats.commands, 0);
	atomic64_set(&pfm_dev_stats.lost, 0);
	atomic64_set(&pfm_dev_stats.switches, 0);
	atomic64_set(&pfm_dev_stats.switch_errors, 0);
	atomic_set(&pfm_dev_stats.last_switch_error, 0);
	pfm_stats_reset();
	return count;
}

static struct kobj_attribute reset_stats_attr = __ATTR_RW(reset_stats);

PFM_DEV_U32(task_sessions_count, "%d", atomic_read(&pfm_task_sessions));
PFM_DEV_U32(sys_sessions_count, "%d", atomic_read(&pfm_sys_sessions));

static struct attribute *native_attrs[] = {
	&task_group_attr.attr,
	&sys_group_attr.attr,
	&arg_mem_max_attr.attr,
	&smpl_buffer_mem_max_attr.attr,
	&smpl_buffer_mem_cur_attr.attr,
	&task_sessions_count_attr.attr,
	&sys_sessions_count_attr.attr,
	&debug_attr.attr,
	&mode_attr.attr,
	&reset_stats_attr.attr,
	NULL
};

static const struct attribute_group native_group = {
	.attrs = native_attrs,
};

/* device */

PFM_DEV_U32(abi_version, "%u", pfm_dev_info.abi_version);
PFM_DEV_U32(features, "%#x", pfm_dev_info.features);
PFM_DEV_U32(nr_vcpus, "%u", pfm_dev_info.nr_vcpus);
PFM_DEV_U32(personality, "%u", pfm_dev_info.personality);
PFM_DEV_U32(counters, "%u", pfm_dev_info.counters);
PFM_DEV_U32(msix_vectors, "%d", pfm_dev_info.nr_irqs);
PFM_DEV_U32(max_contexts, "%u", pfm_dev_info.pmu.max_contexts);
PFM_DEV_U32(max_sets, "%u", pfm_dev_info.pmu.max_sets);
PFM_DEV_U32(max_vector, "%u", pfm_dev_info.pmu.max_vector);
PFM_DEV_U32(max_smpl_buf, "%llu", pfm_dev_info.pmu.max_smpl_buf);
PFM_DEV_U32(set_timeout_res_ns, "%u", pfm_dev_info.pmu.set_timeout_res_ns);
PFM_DEV_U32(commands, "%lld", atomic64_read(&pfm_dev_stats.commands));
PFM_DEV_U32(commands_lost, "%lld", atomic64_read(&pfm_dev_stats.lost));
PFM_DEV_U32(switches, "%lld", atomic64_read(&pfm_dev_stats.switches));
PFM_DEV_U32(switch_errors, "%lld",
	    atomic64_read(&pfm_dev_stats.switch_errors));
PFM_DEV_U32(last_switch_error, "%d",
	    atomic_read(&pfm_dev_stats.last_switch_error));

static struct attribute *device_attrs[] = {
	&abi_version_attr.attr,
	&features_attr.attr,
	&nr_vcpus_attr.attr,
	&personality_attr.attr,
	&counters_attr.attr,
	&msix_vectors_attr.attr,
	&max_contexts_attr.attr,
	&max_sets_attr.attr,
	&max_vector_attr.attr,
	&max_smpl_buf_attr.attr,
	&set_timeout_res_ns_attr.attr,
	&commands_attr.attr,
	&commands_lost_attr.attr,
	&switches_attr.attr,
	&switch_errors_attr.attr,
	&last_switch_error_attr.attr,
	NULL
};

static const struct attribute_group device_group = {
	.name = "device",
	.attrs = device_attrs,
};

static const struct attribute_group *pfm_groups[] = {
	&native_group,
	&controls_group,
	&device_group,
	NULL
};

int pfm_sysfs_init(void)
{
	int ret;

	if (!pfm_controls.smpl_buffer_mem_max)
		pfm_controls.smpl_buffer_mem_max =
			((u64)totalram_pages() << PAGE_SHIFT) / 4;
	/* a quarter of the VM's contexts per user, at least one */
	pfm_controls.max_ctx_per_user =
		max(pfm_dev_info.pmu.max_contexts / 4, 1U);

	pfm_kobj = kobject_create_and_add("perfmon", kernel_kobj);
	if (!pfm_kobj)
		return -ENOMEM;
	ret = sysfs_create_file(pfm_kobj, &version_attr.attr);
	if (ret)
		goto fail;
	ret = sysfs_create_file(pfm_kobj, &syscall_attr.attr);
	if (ret)
		goto fail;
	ret = sysfs_create_groups(pfm_kobj, pfm_groups);
	if (ret)
		goto fail;
	pfm_pmu_desc_kobj = kobject_create_and_add("pmu_desc", pfm_kobj);
	if (!pfm_pmu_desc_kobj) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = sysfs_create_group(pfm_pmu_desc_kobj, &pmu_desc_group);
	if (ret)
		goto fail;
	ret = pfm_sysfs_add_regs();
	if (ret)
		goto fail;
	pfm_formats_kobj = kobject_create_and_add("formats", pfm_kobj);
	if (!pfm_formats_kobj) {
		ret = -ENOMEM;
		goto fail;
	}
	if (pfm_dev_info.features & PVPFM_F_SAMPLING) {
		ret = sysfs_create_group(pfm_formats_kobj, &dfl_format_group);
		if (ret)
			goto fail;
	}
	pfm_stats_init();
	return 0;
fail:
	pfm_sysfs_exit();
	return ret;
}

void pfm_sysfs_exit(void)
{
	pfm_stats_exit();
	/* removing a kobject removes its files and groups */
	pfm_sysfs_del_regs();
	kobject_put(pfm_pmu_desc_kobj);
	pfm_pmu_desc_kobj = NULL;
	kobject_put(pfm_formats_kobj);
	pfm_formats_kobj = NULL;
	kobject_put(pfm_kobj);
	pfm_kobj = NULL;
}
