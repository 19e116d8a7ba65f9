// SPDX-License-Identifier: GPL-2.0
/*
 * QEMU TCG plugin: count the instructions each translated block executes
 * between two executions of a marker address (arg mark=HEX, a user page the
 * guest calls before and after the code to profile), then write
 * "VADDR INSNS" per block start to the file given by arg out=PATH.
 * Built by scripts/get-qemu-plugin.sh, used by scripts/profile.sh.  With
 * -icount the vCPUs run in one thread, so the counters need no atomics.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct tbrec {
	uint64_t vaddr, insns;
	unsigned int n;
	struct tbrec *next;
};

static struct tbrec *recs;
static uint64_t mark;
static int counting, marks;
static const char *out = "tbprof.txt";

static void tb_exec(unsigned int vcpu, void *udata)
{
	struct tbrec *r = udata;

	if (r->vaddr == mark) {
		counting = !counting;
		marks++;
		return;
	}
	if (counting)
		r->insns += r->n;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct tbrec *r = calloc(1, sizeof(*r));

	r->vaddr = qemu_plugin_tb_vaddr(tb);
	r->n = qemu_plugin_tb_n_insns(tb);
	r->next = recs;
	recs = r;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec,
					     QEMU_PLUGIN_CB_NO_REGS, r);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	FILE *f = fopen(out, "w");
	struct tbrec *r;

	if (!f)
		return;
	fprintf(f, "# marks %d\n", marks);
	for (r = recs; r; r = r->next)
		if (r->insns)
			fprintf(f, "%" PRIx64 " %" PRIu64 "\n", r->vaddr, r->insns);
	fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "mark=", 5))
			mark = strtoull(argv[i] + 5, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			out = strdup(argv[i] + 4);
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
