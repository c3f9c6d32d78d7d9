/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <time.h>

#include "config.h"

#include "internal.h"
#include "lib/topo/topology.h"

uint32_t optireduce_version(void)
{
	return OPTIREDUCE_API_VERSION;
}

const char *optireduce_version_string(void)
{
	return PACKAGE_VERSION;
}

int optireduce_init(uint32_t api_version, optireduce_ctx_t **ctx)
{
	optireduce_ctx_t *c;

	if (!ctx)
		return -OPTIREDUCE_EINVAL;
	/* Same major, and no newer minor than this library implements. */
	if (OPTIREDUCE_VERSION_MAJOR(api_version) != OPTIREDUCE_MAJOR_VERSION ||
	    OPTIREDUCE_VERSION_MINOR(api_version) > OPTIREDUCE_MINOR_VERSION)
		return -OPTIREDUCE_EVERSION;
	c = calloc(1, sizeof(*c));
	if (!c || or_handle_add(c)) {
		free(c);
		return -OPTIREDUCE_ENOMEM;
	}
	or_log_init();
	c->magic = OR_MAGIC_CTX;
	or_params_init(&c->params, or_select_check_param);
	or_log_level = (int)or_param_int(&c->params, OR_P_LOG_LEVEL);
	*ctx = c;
	return 0;
}

int optireduce_finalize(optireduce_ctx_t *ctx)
{
	if (!or_ctx_valid(ctx))
		return -OPTIREDUCE_EBADHANDLE;
	if (ctx->ncomms)
		return -OPTIREDUCE_EBUSY;
	or_handle_remove(ctx);
	or_topo_free(ctx->topo);
	ctx->magic = OR_MAGIC_DEAD;
	free(ctx);
	return 0;
}

int optireduce_ctx_set_param(optireduce_ctx_t *ctx, const char *name, const char *value)
{
	int ret;

	if (!or_ctx_valid(ctx))
		return -OPTIREDUCE_EBADHANDLE;
	ret = or_params_set(&ctx->params, name, value, OPTIREDUCE_PARAM_API, or_select_check_param);
	if (!ret && or_params_find(name) == OR_P_LOG_LEVEL)
		or_log_level = (int)or_param_int(&ctx->params, OR_P_LOG_LEVEL);
	return ret;
}

int optireduce_providers(enum optireduce_mode mode, optireduce_provider_cb cb, void *arg)
{
	if (!cb)
		return -OPTIREDUCE_EINVAL;
	return or_ofi_list(mode == OPTIREDUCE_MODE_BOUNDED ? OR_OFI_DGRAM : OR_OFI_RDM, cb, arg);
}

const char *optireduce_libfabric_version(void)
{
	return or_ofi_libfabric_version();
}

int optireduce_topology(char *buf, size_t len)
{
	return or_topology_describe(buf, len);
}
