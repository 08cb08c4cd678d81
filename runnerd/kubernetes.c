/* SPDX-License-Identifier: ISC */
/*
 * The kubernetes backend, the engine's side: start, kill and sessions
 * become messages to the kubernetes helper (kube/kube.c), started
 * before runnerd sandboxes itself, over the gvisor launcher's protocol
 * (LMSG_*) and channel (helper.c).  Whether the cluster has sessions
 * (the agent-sandbox controller) the helper finds out: without, it
 * ends each session with the reason (kube/session.c).  With terraform's
 * claim, saved plans are rendered on this host (kube/renderer.c), which
 * needs bubblewrap and sandbox-init here, as the gvisor backend does.
 */
#include <sys/stat.h>

#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "kube.h"
#include "launcher.h"
#include "log.h"

void
kubernetes_init(const struct as_config *conf, sbx_done_cb done,
    sbx_swept_cb swept, sbx_session_cb session)
{
	const char *path = conf->kubernetes.pvc_path;
	struct stat st;

	if (access(conf->kubernetes.kubeconfig, R_OK) == -1)
		fatal("kubernetes backend: kubeconfig %s (kubernetes."
		    "kubeconfig)", conf->kubernetes.kubeconfig);
	if ((conf->kubernetes.pvc[0] != '\0') != (path[0] != '\0'))
		fatalx("kubernetes backend: kubernetes.pvc and kubernetes."
		    "pvc_path go together: the claim, and where this host "
		    "sees it");
	if (conf->kubernetes.provider_mirror_pvc[0] != '\0' &&
	    conf->runnerd.terraform_mirror[0] == '\0')
		fatalx("kubernetes backend: kubernetes.provider_mirror_pvc "
		    "needs runnerd.terraform_mirror, where this host sees the "
		    "mirror, to know which allowed providers it holds");
	if (path[0] != '\0' && (path[0] != '/' || path[1] == '\0' ||
	    path[strlen(path) - 1] == '/' || stat(path, &st) == -1 ||
	    !S_ISDIR(st.st_mode)))
		fatalx("kubernetes backend: kubernetes.pvc_path %s is not an "
		    "absolute path to a directory (without a trailing /)",
		    path);
	/* Saved plans are rendered on this host (kube/renderer.c). */
	if (path[0] != '\0' && access(RENDER_BWRAP, X_OK) == -1)
		fatalx("kubernetes backend: no %s: install the Debian package "
		    "bubblewrap (apt-get install bubblewrap); with "
		    "kubernetes.pvc, plans are shown for approval in a sandbox "
		    "of it on this host", RENDER_BWRAP);
	if (path[0] != '\0' && sandbox_init_find(NULL) == -1)
		fatalx("kubernetes backend: no %s beside runnerd: make builds "
		    "it and make install installs it; the plan's render runs "
		    "under it", sandbox_init_path());
	helper_start("kubernetes helper", conf, "-K", done, swept, session,
	    NULL);
}
