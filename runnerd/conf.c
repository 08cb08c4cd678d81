/* SPDX-License-Identifier: ISC */
/*
 * The engine's configuration, which every layer reads: set once by
 * main() (runnerd.c), kept apart from it so that unit tests link the
 * layers without main.
 */
#include "config.h"
#include "runnerd.h"

struct as_config	 runnerd_conf;
