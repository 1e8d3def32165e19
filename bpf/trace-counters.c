/* --counters FILE: every row counted by outcome and fallback reason (the
 * filters apply to the output only), written out each second they changed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "trace.h"

static const char *const outcome_names[5] = { "loaded", "direct", "failed", "unknown", "other" };

static void count_reason(struct counters *c, const char *why)
{
	unsigned i = 0;

	while (i < c->nreasons && strcmp(c->reasons[i].reason, why))
		i++;
	if (i == c->nreasons) {
		if (i == REASONS_MAX)
			return;
		snprintf(c->reasons[i].reason, sizeof(c->reasons[i].reason), "%s", why);
		c->nreasons++;
	}
	c->reasons[i].n++;
}

void count_row(struct counters *c, const struct row *r)
{
	unsigned k = 0;

	if (!c->path || !strcmp(r->outcome, "none"))
		return;
	while (k < 4 && strcmp(r->outcome, outcome_names[k]))
		k++;
	c->outcome[k]++;
	if (!strncmp(r->note, "fallback: ", 10))
		count_reason(c, r->note + 10);
	for (unsigned i = 0; r->libs && i < r->libs->n; i++)
		if (r->libs->v[i].p.has_reason) {
			char why[TX_REASON_BYTES + 1];
			snprintf(why, sizeof(why), "%.*s", TX_REASON_BYTES, r->libs->v[i].p.reason);
			count_reason(c, why);
		}
	c->dirty = true;
}

void counters_write(struct counters *c)
{
	char tmp[PATH_MAX + 16];
	FILE *f;

	if (!c->path || !c->dirty)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", c->path);
	if (!(f = fopen(tmp, "we"))) {
		err("--counters: %s: %s", tmp, strerror(errno));
		c->path = NULL;
		return;
	}
	for (unsigned k = 0; k < 5; k++)
		fprintf(f, "outcome %s %llu\n", outcome_names[k], c->outcome[k]);
	for (unsigned i = 0; i < c->nreasons; i++)
		fprintf(f, "fallback %llu %s\n", c->reasons[i].n, c->reasons[i].reason);
	if (fclose(f) != 0 || rename(tmp, c->path) != 0)
		err("--counters: %s: %s", c->path, strerror(errno));
	c->dirty = false;
}
