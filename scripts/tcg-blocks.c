/* A qemu TCG plugin for scripts/tcg-profile: counts, for every translation
 * block, how many times the guest executed it, and writes "VADDR INSNS
 * COUNT" per block (in hex, decimal, decimal) to the file named by its
 * argument out=PATH when qemu exits.  A block translated again (its page
 * rewritten, the cache flushed) gets a line of its own.
 *
 *   gcc -O2 -shared -fPIC -o tcg-blocks.so scripts/tcg-blocks.c
 *   qemu-system-x86_64 ... -plugin ./tcg-blocks.so,arg=out=blocks.txt
 *
 * The declarations below are qemu's plugin ABI, version 1 (qemu 4.2 to
 * 8.x; Debian 12 ships 7.2), stated here so that no qemu headers are
 * needed.  The counters are not atomic: with several vCPUs a count may
 * miss a few executions, which a profile over hundreds of starts absorbs. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
	const char *target_name;
	struct {
		int min, cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;
struct qemu_plugin_tb;
enum { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op, void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *), void *userdata);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;

struct block {
	uint64_t vaddr, insns, count;
	struct block *next;
};

static struct block *blocks;
static const char *out_path = "tcg-blocks.txt";

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = calloc(1, sizeof(*b));

	(void)id;
	if (!b)
		return;
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = qemu_plugin_tb_n_insns(tb);
	b->next = blocks; /* translation is serialised by qemu */
	blocks = b;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->count, 1);
}

static void on_qemu_exit(qemu_plugin_id_t id, void *unused)
{
	FILE *f = fopen(out_path, "w");

	(void)id, (void)unused;
	if (!f) {
		perror(out_path);
		return;
	}
	for (struct block *b = blocks; b; b = b->next)
		if (b->count)
			fprintf(f, "%016llx %llu %llu\n", (unsigned long long)b->vaddr, (unsigned long long)b->insns,
				(unsigned long long)b->count);
	fclose(f);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
