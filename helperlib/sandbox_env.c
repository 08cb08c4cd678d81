/* SPDX-License-Identifier: ISC */
/*
 * The whole environment of every program that touches a module's or
 * the agent's files: a one-shot, session or pooled sandbox (runsc), the
 * render and the init cache's builder (bubblewrap), a kubernetes Job.
 * An allowlist: nothing of runnerd's own environment, and none of the
 * places a program looks for its configuration is the workspace.
 * HOME and the XDG directories are HOME_MOUNT, empty and read-only, a
 * new one for each sandbox; terraform's CLI configuration is /dev/null
 * (empty: -plugin-dir chooses the providers, the environment turns the
 * checks off); git reads no system or global file and never prompts,
 * should anything run it (module sources are local paths only,
 * tfsource.c).
 */
#include <stddef.h>

#include "launcher.h"

const struct env_var sandbox_env[] = {
	{ "PATH", "/usr/local/bin:/usr/bin:/bin" },
	{ "LANG", "C.UTF-8" },
	{ "HOME", HOME_MOUNT },
	{ "XDG_CONFIG_HOME", HOME_MOUNT },
	{ "XDG_CACHE_HOME", HOME_MOUNT },
	{ "XDG_DATA_HOME", HOME_MOUNT },
	{ "TMPDIR", "/tmp" },
	{ "TF_CLI_CONFIG_FILE", "/dev/null" },
	{ "GIT_CONFIG_NOSYSTEM", "1" },
	{ "GIT_CONFIG_GLOBAL", "/dev/null" },
	{ "GIT_TERMINAL_PROMPT", "0" },
	{ NULL, NULL }
};
