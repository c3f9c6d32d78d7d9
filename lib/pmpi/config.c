/* SPDX-License-Identifier: BSD-3-Clause */
/* The interposer's environment variables (listed in optireduce_pmpi.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmpi_internal.h"

struct orp_config orp_cfg = {.enable = 1};

/* "1", "yes", "true", "on" (any case) are true; "0", "no", ... false; else def. */
static int env_bool(const char *name, int def)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return def;
	if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") ||
	    !strcasecmp(v, "on"))
		return 1;
	if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") ||
	    !strcasecmp(v, "off"))
		return 0;
	if (orp_world_rank <= 0)
		orp_log(ORP_LOG_WARN, "%s='%s' is not a boolean; using %d", name, v, def);
	return def;
}

void orp_config_load(void)
{
	const char *pol = getenv("OPTIREDUCE_PMPI_BOUNDED");
	const char *comms = getenv("OPTIREDUCE_PMPI_BOUNDED_COMMS");
	const char *mode = getenv("OPTIREDUCE_MODE");
	char err[256];

	orp_cfg.enable = env_bool("OPTIREDUCE_PMPI_ENABLE", 1);
	orp_cfg.print_stats = env_bool("OPTIREDUCE_PMPI_STATS", 0);
	orp_cfg.thread_multiple_ok = env_bool("OPTIREDUCE_PMPI_THREAD_MULTIPLE", 0);
	if (orp_policy_parse(pol, &orp_cfg.policy, err, sizeof(err)) && orp_world_rank <= 0)
		orp_log(ORP_LOG_WARN, "OPTIREDUCE_PMPI_BOUNDED='%s': %s; bounded mode is off", pol,
		        err);
	if (orp_policy_parse_comms(comms, &orp_cfg.bounded_all_comms, err, sizeof(err)) &&
	    orp_world_rank <= 0)
		orp_log(ORP_LOG_WARN, "OPTIREDUCE_PMPI_BOUNDED_COMMS='%s': %s; using 'world'",
		        comms, err);
	/* Bounded mode is chosen per call by the policy, never behind the user's back. */
	if (mode && !strcasecmp(mode, "bounded") && orp_cfg.policy.nrules == 0 &&
	    orp_world_rank <= 0)
		orp_log(ORP_LOG_WARN, "OPTIREDUCE_MODE=bounded does not apply to MPI_Allreduce; "
		                      "set OPTIREDUCE_PMPI_BOUNDED (e.g. float,double:>=64k)");
	orp_cfg.digest = orp_policy_digest(&orp_cfg.policy, orp_cfg.bounded_all_comms);
}
