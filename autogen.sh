#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
set -e
cd "$(dirname "$0")"
autoreconf -fi
