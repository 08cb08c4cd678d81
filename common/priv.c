#include <sys/types.h>

#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sandbox.h"

/*
 * Switches to the daemon's own user when started as root.  An empty
 * user name keeps the current one (development and tests only).
 */
void
priv_drop(const char *user)
{
	struct passwd *pw;
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0)
		return;
	if (user == NULL || *user == '\0') {
		log_warnx("running as root: no user configured");
		return;
	}
	if ((pw = getpwnam(user)) == NULL)
		fatalx("unknown user %s (create it with scripts/create-users)",
		    user);
	uid = pw->pw_uid;
	gid = pw->pw_gid;
	if (setgroups(1, &gid) == -1)
		fatal("setgroups");
	if (setresgid(gid, gid, gid) == -1)
		fatal("setresgid");
	if (setresuid(uid, uid, uid) == -1)
		fatal("setresuid");
	if (setuid(0) != -1 || geteuid() == 0)
		fatalx("could not drop root privileges");
	log_debug("running as %s (uid %u)", user, (unsigned)uid);
}
