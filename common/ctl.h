/* What approvalctl and auditctl share: finding and greeting their daemon. */
#ifndef AS_CTL_H
#define AS_CTL_H

#include "config.h"
#include "frame.h"

#define CTL_TIMEOUT_MS	10000

void	 ctl_open(struct channel *, const char *, const char *,
	    struct as_config *);
int	 ctl_error(const struct msg *);
int	 ctl_request(struct channel *, uint32_t, const void *, size_t,
	    struct msg *);
int	 ctl_ping(struct channel *);

#endif
