/* Placeholder until the bounded channel lands: bounded mode is refused. */
#include "bounded.h"
#include "internal.h"

int or_bounded_create(struct optireduce_comm *comm, struct or_bounded **out)
{
	(void)comm;
	*out = NULL;
	return -OPTIREDUCE_ENOSYS;
}
void or_bounded_destroy(struct or_bounded *b)
{
	(void)b;
}
const char *or_bounded_provider(const struct or_bounded *b)
{
	(void)b;
	return "none";
}
int or_bounded_getname(struct or_bounded *b, void *buf, size_t *len)
{
	(void)b, (void)buf, (void)len;
	return -OPTIREDUCE_ENOSYS;
}
int or_bounded_connect(struct or_bounded *b, const void *names, size_t stride)
{
	(void)b, (void)names, (void)stride;
	return -OPTIREDUCE_ENOSYS;
}
int or_bounded_poll(struct or_bounded *b)
{
	(void)b;
	return 0;
}
int or_bounded_wait(struct or_bounded *b, struct or_ofi *rdm, int timeout_ms)
{
	(void)b;
	return or_ofi_wait(rdm, timeout_ms);
}
int or_bounded_op_start(struct or_bounded *b, struct or_coll *c)
{
	(void)b, (void)c;
	return -OPTIREDUCE_ENOSYS;
}
int or_bounded_op_finish(struct or_bounded *b, struct or_coll *c)
{
	(void)b, (void)c;
	return -OPTIREDUCE_ENOSYS;
}
void or_bounded_op_abort(struct or_bounded *b, struct or_coll *c)
{
	(void)b, (void)c;
}
