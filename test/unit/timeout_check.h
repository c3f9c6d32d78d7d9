/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What test_timeout and test_timeout_adapt share: the controller's configuration their
 * arithmetic is written for, and a flat calibration.
 */
#ifndef OR_TEST_TIMEOUT_CHECK_H
#define OR_TEST_TIMEOUT_CHECK_H

#include <stdint.h>

#include "optireduce.h"
#include "lib/bounded/ctl/timeout.h"

#define KB 1024u
#define SZ (64 * KB) /* the size class most tests use */

static struct or_tmo_config base_cfg(void)
{
	struct or_tmo_config c;

	or_tmo_config_default(&c);
	c.min_us = 10;
	c.max_us = 1000000;
	c.initial_us = c.max_us;
	/* The arithmetic below is written for these, whatever the defaults become. */
	c.calib_percentile = 95.0;
	c.calib_margin = 1.5;
	c.calib_slack_us = 0;
	return c;
}

/* Calibrates SZ with n completions of us each, then takes the deadline. */
static void calibrate_flat(struct or_tmo *t, uint32_t n, uint64_t us)
{
	for (uint32_t i = 0; i < n; i++)
		or_tmo_complete(t, SZ, us, 0, 0.0);
	or_tmo_decide(t, SZ);
}

#endif
