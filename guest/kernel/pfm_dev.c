// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon2.ko: the pv-perfmon PCI device and the module's entry points.
 *
 * Every online CPU (vCPU) owns one command block: PVPFM_CMD_BLOCK_SIZE
 * bytes of physically contiguous guest RAM whose address the CPU itself
 * wrote to PVPFM_REG_CMD_BLOCK (the host binds a block to the vCPU that
 * writes it). A command is made by filling this CPU's block and writing
 * DOORBELL: one VM exit, after which the host's answer is in the block.
 * The block is used only with preemption disabled and never from an
 * interrupt handler, so the scheduler hooks (which run with preemption
 * disabled) and the calls of programs never meet in one block.
 *
 * Without the device the module refuses to load and says why.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/build_bug.h>
#include <linux/cpuhotplug.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/pci.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include "pfm_drv.h"

/* never an answer: the host writes 0 or -errno over it */
#define PFM_DEV_STATUS_PENDING	1
#define PFM_DEV_BLOCK_ORDER	get_order(PVPFM_CMD_BLOCK_SIZE)
/* MSI-X tables hold at most 2048 entries */
#define PFM_DEV_MAX_VECTORS	2048

static_assert(PAGE_SIZE == PVPFM_PAGE_SIZE);

struct pfm_dev {
	struct pci_dev *pdev;
	void __iomem *regs;
	int hp_state;		/* cpuhp state of the block registration */
};

/* the bound device; commands go through pfm_dev_live (RCU-sched) */
static struct pfm_dev pfm_dev;
static struct pfm_dev __rcu *pfm_dev_live;
static DEFINE_PER_CPU(struct pvpfm_cmd_hdr *, pfm_dev_block);

/* what probe found, for the message of module init */
static bool pfm_dev_seen;
static int pfm_dev_probe_err = -ENODEV;

struct pfm_dev_info pfm_dev_info;
struct pfm_dev_stats pfm_dev_stats;

int pfm_dev_exec_locked(struct pfm_dev_req *req)
{
	struct pvpfm_cmd_hdr *hdr;
	struct pfm_dev *dev;
	s32 status;

	lockdep_assert_preemption_disabled();
	dev = rcu_dereference_sched(pfm_dev_live);
	hdr = this_cpu_read(pfm_dev_block);
	if (!dev || !hdr)
		return -ENODEV;
	if (req->arg_size > PVPFM_CMD_ARGS_MAX)
		return -E2BIG;

	hdr->version = PVPFM_ABI_VERSION;
	hdr->cmd = req->cmd;
	hdr->ctx_id = req->ctx_id;
	hdr->count = req->count;
	hdr->status = PFM_DEV_STATUS_PENDING;
	hdr->arg_size = req->arg_size;
	hdr->err_index = 0;
	hdr->tid = current->pid;
	hdr->tgid = current->tgid;
	if (req->arg_size)
		memcpy(hdr + 1, req->arg, req->arg_size);
	atomic64_inc(&pfm_dev_stats.commands);

	/* one VM exit: the host has answered when the write completes */
	writel(1, dev->regs + PVPFM_REG_DOORBELL);

	status = READ_ONCE(hdr->status);
	if (status == PFM_DEV_STATUS_PENDING) {
		atomic64_inc(&pfm_dev_stats.lost);
		return -EIO;
	}
	req->status = status <= 0 && status >= -MAX_ERRNO ? status : -EIO;
	req->err_index = hdr->err_index;
	req->ctx_id = hdr->ctx_id;
	req->count = hdr->count;
	/* the out fields of every entry, also when the call failed */
	if (req->arg_size)
		memcpy(req->arg, hdr + 1, req->arg_size);
	return 0;
}

int pfm_dev_exec(struct pfm_dev_req *req)
{
	int ret;

	preempt_disable();
	ret = pfm_dev_exec_locked(req);
	preempt_enable();
	return ret;
}

int pfm_dev_call(struct pfm_dev_req *req)
{
	int ret = pfm_dev_exec(req);

	return ret ? ret : req->status;
}

/*
 * CPU hotplug (CPUHP_AP_ONLINE_DYN): runs on @cpu itself, in its hotplug
 * thread, when the CPU comes online and for every online CPU at probe.
 * A block stays allocated while its CPU is offline and is registered
 * again when it returns.
 */
static int pfm_dev_cpu_online(unsigned int cpu)
{
	struct pvpfm_cmd_hdr *blk = per_cpu(pfm_dev_block, cpu);
	bool fresh = !blk;
	struct page *page;
	phys_addr_t pa;
	int status;

	if (fresh) {
		page = alloc_pages_node(cpu_to_node(cpu),
					GFP_KERNEL | __GFP_ZERO,
					PFM_DEV_BLOCK_ORDER);
		if (!page) {
			pr_err("CPU %u: no memory for the command block\n", cpu);
			return -ENOMEM;
		}
		blk = page_address(page);
	}
	pa = virt_to_phys(blk);

	preempt_disable();
	if (WARN_ON_ONCE(smp_processor_id() != cpu)) {
		status = -EINVAL;
	} else {
		writeq(pa, pfm_dev.regs + PVPFM_REG_CMD_BLOCK);
		status = readl(pfm_dev.regs + PVPFM_REG_STATUS);
	}
	preempt_enable();

	if (status) {
		pr_err("CPU %u: the host refused the command block at %pa (status %d)\n",
		       cpu, &pa, status);
		if (fresh)
			free_pages((unsigned long)blk, PFM_DEV_BLOCK_ORDER);
		return -EIO;
	}
	per_cpu(pfm_dev_block, cpu) = blk;
	return 0;
}

static void pfm_dev_free_blocks(void)
{
	struct pvpfm_cmd_hdr *blk;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		blk = per_cpu(pfm_dev_block, cpu);
		per_cpu(pfm_dev_block, cpu) = NULL;
		if (blk)
			free_pages((unsigned long)blk, PFM_DEV_BLOCK_ORDER);
	}
}

/* the PMU description: PMU_INFO, then REG_DESC in chunks */
static int pfm_dev_fetch_info(struct device *dev)
{
	struct pvpfm_pmu_info *pmu = &pfm_dev_info.pmu;
	struct pfm_dev_req req = {
		.cmd = PVPFM_CMD_PMU_INFO,
		.arg = pmu,
		.arg_size = sizeof(*pmu),
	};
	struct pvpfm_reg_desc *regs;
	u32 total, chunk, want, n;
	int ret;

	ret = pfm_dev_call(&req);
	if (ret) {
		dev_err(dev, "the host refused PMU_INFO (%d)\n", ret);
		return ret;
	}
	pmu->model[PVPFM_MODEL_LEN - 1] = '\0';
	total = pmu->num_pmcs + pmu->num_pmds;
	if (!pmu->num_pmcs && !pmu->num_pmds) {
		dev_err(dev, "the host describes no PMU registers\n");
		return -EPROTO;
	}
	if (pmu->num_pmcs > PFM_MAX_PMCS || pmu->num_pmds > PFM_MAX_PMDS ||
	    !pmu->max_vector) {
		dev_err(dev, "PMU_INFO out of range (%u PMCs, %u PMDs, vector %u)\n",
			pmu->num_pmcs, pmu->num_pmds, pmu->max_vector);
		return -EPROTO;
	}

	regs = kcalloc(total, sizeof(*regs), GFP_KERNEL);
	if (!regs)
		return -ENOMEM;
	chunk = min_t(u32, pmu->max_vector, PVPFM_CMD_ARGS_MAX / sizeof(*regs));
	for (n = 0; n < total; n += req.count) {
		want = min(chunk, total - n);
		req = (struct pfm_dev_req){
			.cmd = PVPFM_CMD_REG_DESC,
			.ctx_id = n,
			.count = want,
			.arg = regs + n,
			.arg_size = want * sizeof(*regs),
		};
		ret = pfm_dev_call(&req);
		if (ret) {
			dev_err(dev, "the host refused REG_DESC at %u (%d)\n",
				n, ret);
			kfree(regs);
			return ret;
		}
		if (!req.count || req.count > want)
			break;
	}
	for (want = 0; want < n; want++)
		regs[want].name[PVPFM_REG_NAME_LEN - 1] = '\0';
	if (n != total)
		dev_warn(dev, "the host described %u of %u registers\n",
			 n, total);
	pfm_dev_info.regs = regs;
	pfm_dev_info.nr_regs = n;
	return 0;
}

static irqreturn_t pfm_dev_irq(int irq, void *data)
{
	u64 start = ktime_get_ns();

	pfm_notify_irq();
	pfm_stat_add(PFM_ST_OVFL_INTR_ALL_COUNT, 1);
	pfm_stat_add(PFM_ST_OVFL_INTR_NS, ktime_get_ns() - start);
	return IRQ_HANDLED;
}

static void pfm_dev_free_irqs(struct pci_dev *pdev)
{
	int i;

	for (i = 0; i < pfm_dev_info.nr_irqs; i++)
		free_irq(pci_irq_vector(pdev, i), &pfm_dev);
	if (pfm_dev_info.nr_irqs)
		pci_free_irq_vectors(pdev);
	pfm_dev_info.nr_irqs = 0;
}

/*
 * Vector i belongs to vCPU i: all or none. Without them, read() and
 * poll() still work, by asking the host (pfm_notify.c).
 */
static void pfm_dev_setup_irqs(struct pci_dev *pdev)
{
	u32 n = pfm_dev_info.nr_vcpus;
	int i, ret;

	if (n > PFM_DEV_MAX_VECTORS) {
		dev_warn(&pdev->dev, "%u vCPUs, more than MSI-X vectors: messages are polled\n",
			 n);
		return;
	}
	ret = pci_alloc_irq_vectors(pdev, n, n, PCI_IRQ_MSIX);
	if (ret < 0) {
		dev_warn(&pdev->dev, "no MSI-X vectors (%d): messages are polled\n",
			 ret);
		return;
	}
	for (i = 0; i < n; i++) {
		ret = request_irq(pci_irq_vector(pdev, i), pfm_dev_irq, 0,
				  PFM_DRV_NAME, &pfm_dev);
		if (ret) {
			dev_warn(&pdev->dev, "MSI-X vector %d: %d: messages are polled\n",
				 i, ret);
			while (i--)
				free_irq(pci_irq_vector(pdev, i), &pfm_dev);
			pci_free_irq_vectors(pdev);
			return;
		}
	}
	pfm_dev_info.nr_irqs = n;
}

/* undo probe; commands in flight finish first (RCU-sched) */
static void pfm_dev_teardown(struct pci_dev *pdev)
{
	RCU_INIT_POINTER(pfm_dev_live, NULL);
	synchronize_rcu();
	pfm_dev_free_irqs(pdev);
	if (pfm_dev.hp_state > 0)
		cpuhp_remove_state_nocalls(pfm_dev.hp_state);
	pfm_dev.hp_state = 0;
	pfm_dev_free_blocks();
	kfree(pfm_dev_info.regs);
	pfm_dev_info.regs = NULL;
	pfm_dev_info.nr_regs = 0;
	pfm_dev.regs = NULL;
	pfm_dev.pdev = NULL;
}

static int pfm_dev_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	void __iomem *regs;
	int ret;

	pfm_dev_seen = true;
	if (pfm_dev.pdev) {
		dev_err(dev, "a pv-perfmon device is bound already (%s); one per VM\n",
			pci_name(pfm_dev.pdev));
		return -EBUSY;
	}
	ret = pcim_enable_device(pdev);
	if (ret) {
		dev_err(dev, "cannot enable the device (%d)\n", ret);
		return ret;
	}
	if (pci_resource_len(pdev, 0) < PVPFM_BAR0_SIZE) {
		dev_err(dev, "BAR0 is %llu bytes, the registers need %u\n",
			(u64)pci_resource_len(pdev, 0), PVPFM_BAR0_SIZE);
		return -ENODEV;
	}
	ret = pcim_iomap_regions(pdev, BIT(0), PFM_DRV_NAME);
	if (ret) {
		dev_err(dev, "cannot map BAR0 (%d)\n", ret);
		return ret;
	}
	regs = pcim_iomap_table(pdev)[0];

	pfm_dev_info.abi_version = readl(regs + PVPFM_REG_VERSION);
	if (pfm_dev_info.abi_version != PVPFM_ABI_VERSION) {
		dev_err(dev, "the device speaks pv-perfmon ABI %u, this driver %u\n",
			pfm_dev_info.abi_version, PVPFM_ABI_VERSION);
		return -ENODEV;
	}
	pfm_dev_info.features = readl(regs + PVPFM_REG_FEATURES);
	pfm_dev_info.nr_vcpus = readl(regs + PVPFM_REG_NR_VCPUS);
	pfm_dev_info.personality = readl(regs + PVPFM_REG_PERSONALITY);
	pfm_dev_info.counters = readl(regs + PVPFM_REG_COUNTERS);
	if (!pfm_dev_info.nr_vcpus) {
		dev_err(dev, "the device reports no vCPUs\n");
		return -ENODEV;
	}
	if (num_possible_cpus() > pfm_dev_info.nr_vcpus)
		dev_warn(dev, "%u possible CPUs, the device serves %u vCPUs\n",
			 num_possible_cpus(), pfm_dev_info.nr_vcpus);

	pfm_dev.pdev = pdev;
	pfm_dev.regs = regs;
	pci_set_master(pdev);

	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "perfmon2/pv-perfmon:online",
				pfm_dev_cpu_online, NULL);
	if (ret < 0) {
		dev_err(dev, "cannot register the command blocks (%d)\n", ret);
		goto fail;
	}
	pfm_dev.hp_state = ret;
	rcu_assign_pointer(pfm_dev_live, &pfm_dev);

	ret = pfm_dev_fetch_info(dev);
	if (ret)
		goto fail;
	pfm_dev_setup_irqs(pdev);
	ret = pfm_sysfs_init();
	if (ret) {
		dev_err(dev, "cannot create /sys/kernel/perfmon (%d)\n", ret);
		goto fail;
	}
	pfm_notify_init();
	ret = pfm_create_init();
	if (ret) {
		dev_err(dev, "cannot create /dev/perfmon2 (%d)\n", ret);
		pfm_sysfs_exit();
		goto fail;
	}
	dev_info(dev, "pv-perfmon ABI %u: %s, %u PMCs, %u PMDs, %u vCPUs, features %#x, %d MSI-X vectors\n",
		 pfm_dev_info.abi_version, pfm_dev_info.pmu.model,
		 pfm_dev_info.pmu.num_pmcs, pfm_dev_info.pmu.num_pmds,
		 pfm_dev_info.nr_vcpus, pfm_dev_info.features, pfm_dev_info.nr_irqs);
	pfm_dev_probe_err = 0;
	return 0;
fail:
	pfm_dev_teardown(pdev);
	pfm_dev_probe_err = ret;
	return ret;
}

static void pfm_dev_remove(struct pci_dev *pdev)
{
	if (pdev != pfm_dev.pdev)
		return;
	/* open contexts stay; their calls fail with ENODEV from now on */
	pfm_sysfs_exit();
	pfm_dev_teardown(pdev);
	pfm_create_exit();
	pfm_notify_exit();
}

static const struct pci_device_id pfm_dev_ids[] = {
	{ PCI_DEVICE(PVPFM_PCI_VENDOR_ID, PVPFM_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, pfm_dev_ids);

static struct pci_driver pfm_dev_driver = {
	.name = PFM_DRV_NAME,
	.id_table = pfm_dev_ids,
	.probe = pfm_dev_probe,
	.remove = pfm_dev_remove,
	.driver = {
		/* module init needs to know now whether a device was bound */
		.probe_type = PROBE_FORCE_SYNCHRONOUS,
		/* contexts outlive an unbind badly: only removal unbinds */
		.suppress_bind_attrs = true,
	},
};

static int __init pfm_init(void)
{
	int ret;

	ret = pfm_ptrace_init();
	if (ret) {
		pr_err("cannot mount the module's procfs (%d)\n", ret);
		return ret;
	}
	ret = pfm_hooks_init();
	if (ret)
		goto no_hooks;
	ret = pci_register_driver(&pfm_dev_driver);
	if (ret) {
		pr_err("cannot register the PCI driver (%d)\n", ret);
		goto fail;
	}
	if (!pfm_dev.pdev) {
		if (!pfm_dev_seen)
			pr_err("no pv-perfmon device (PCI %04x:%04x): start the VM with -device pv-perfmon\n",
			       PVPFM_PCI_VENDOR_ID, PVPFM_PCI_DEVICE_ID);
		else
			pr_err("the pv-perfmon device is not usable (%d), see above\n",
			       pfm_dev_probe_err);
		pci_unregister_driver(&pfm_dev_driver);
		ret = -ENODEV;
		goto fail;
	}
	return 0;
fail:
	pfm_hooks_exit();
no_hooks:
	pfm_ptrace_exit();
	return ret;
}

static void __exit pfm_exit(void)
{
	pci_unregister_driver(&pfm_dev_driver);
	pfm_hooks_exit();
	pfm_ptrace_exit();
}

module_init(pfm_init);
module_exit(pfm_exit);

MODULE_DESCRIPTION("perfmon2 for KVM guests: the pv-perfmon device and /dev/perfmon2");
MODULE_LICENSE("GPL");
