/* SPDX-License-Identifier: ISC */
/*
 * The approvals database.  Every state change runs in one BEGIN
 * IMMEDIATE transaction whose UPDATE names the state it leaves, is
 * recorded by auditd before COMMIT, and is rolled back when auditd
 * cannot record it.  WAL with synchronous=FULL: a commit is on disk
 * before the caller hears of it, so kill -9 cannot undo a spend.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "approvald.h"
#include "audit.h"
#include "cjson.h"
#include "log.h"

#define EXPIRE_BATCH	32	/* per sweep; the next sweep takes the rest */

static sqlite3	*db;
static void	(*notify)(const char *);
static int	(*before_commit)(const char *, const char *);

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS approvals ("
	" id TEXT PRIMARY KEY,"
	" state TEXT NOT NULL CHECK (state IN ('pending','approved',"
	"  'denied','expired','spent')),"
	" tool TEXT NOT NULL,"
	" arguments TEXT NOT NULL,"
	" params_digest TEXT NOT NULL,"
	" plan_digest TEXT,"
	" request_id TEXT NOT NULL,"
	" summary TEXT NOT NULL,"
	" plan_text TEXT NOT NULL,"
	" destructive INTEGER NOT NULL,"
	" created_at INTEGER NOT NULL,"
	" expires_at INTEGER NOT NULL,"
	" decided_at INTEGER, decided_uid INTEGER, decided_user TEXT,"
	" reason TEXT,"
	" spent_at INTEGER, spent_request TEXT,"
	" requester_uid INTEGER, requester TEXT,"
	" any_client INTEGER NOT NULL DEFAULT 0,"
	" requirement TEXT);"
	"CREATE INDEX IF NOT EXISTS approvals_live ON approvals"
	" (state, expires_at);"
	/* Each operator's word on an approval: one per uid. */
	"CREATE TABLE IF NOT EXISTS reviews ("
	" approval_id TEXT NOT NULL REFERENCES approvals (id),"
	" uid INTEGER NOT NULL,"
	" user TEXT NOT NULL,"
	" gids TEXT NOT NULL,"
	" verdict TEXT NOT NULL CHECK (verdict IN ('approve','deny')),"
	" reason TEXT,"
	" at INTEGER NOT NULL,"
	" PRIMARY KEY (approval_id, uid));"
	/* Notifications not yet acknowledged by notifyd (outbox.c). */
	"CREATE TABLE IF NOT EXISTS outbox ("
	" seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" event_id TEXT UNIQUE NOT NULL,"
	" event TEXT NOT NULL,"
	" approval_id TEXT NOT NULL,"
	" payload TEXT NOT NULL);"
	/*
	 * The webhooks an outbox row reached, by the SHA-256 of the URL
	 * (a Slack URL is itself a credential, kept out of this file).
	 */
	"CREATE TABLE IF NOT EXISTS outbox_delivered ("
	" event_id TEXT NOT NULL REFERENCES outbox (event_id),"
	" webhook TEXT NOT NULL,"
	" PRIMARY KEY (event_id, webhook));";

#define COLUMNS	"id, state, tool, arguments, params_digest, plan_digest," \
	" request_id, summary, plan_text, destructive, created_at," \
	" expires_at, decided_at, decided_uid, decided_user, reason," \
	" spent_at, spent_request, requester_uid, requester, any_client," \
	" requirement"

enum col {
	C_ID, C_STATE, C_TOOL, C_ARGS, C_PARAMS, C_PLAN, C_REQID, C_SUMMARY,
	C_PLANTEXT, C_DESTRUCTIVE, C_CREATED, C_EXPIRES, C_DECIDED_AT,
	C_DECIDED_UID, C_DECIDED_USER, C_REASON, C_SPENT_AT, C_SPENT_REQ,
	C_REQ_UID, C_REQUESTER, C_ANY_CLIENT, C_REQUIREMENT
};

/*
 * Columns added since the first schema, for a database made before
 * them.  A record from then has no requester: only an approval for
 * any client can spend it; and no requirement: one operator decides.
 */
static const struct {
	const char	*name;
	const char	*def;
} added[] = {
	{ "requester_uid", "INTEGER" },
	{ "requester", "TEXT" },
	{ "any_client", "INTEGER NOT NULL DEFAULT 0" },
	{ "requirement", "TEXT" },
};

static int
exec(const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		log_warnx("sqlite: %s: %s", sql, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

static sqlite3_stmt	*prepare(const char *);
static json_t		*json_col(sqlite3_stmt *, int);
static json_t		*str_col(sqlite3_stmt *, int);

/* 1 when the approvals table has column name, 0 if not, -1. */
static int
has_column(const char *name)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	if ((st = prepare("SELECT name FROM pragma_table_info('approvals')"))
	    == NULL)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (strcmp((const char *)sqlite3_column_text(st, 0), name) ==
		    0)
			found = 1;
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? found : -1;
}

static int
migrate(void)
{
	char sql[128];
	size_t i;
	int r;

	for (i = 0; i < sizeof(added) / sizeof(added[0]); i++) {
		if ((r = has_column(added[i].name)) == -1)
			return -1;
		if (r == 1)
			continue;
		snprintf(sql, sizeof(sql), "ALTER TABLE approvals ADD COLUMN"
		    " %s %s", added[i].name, added[i].def);
		if (exec(sql) == -1)
			return -1;
		log_info("approvals: column %s added", added[i].name);
	}
	return 0;
}

int
db_open(const char *path)
{
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		log_warnx("%s: %s", path, db ? sqlite3_errmsg(db) : "?");
		return -1;
	}
	/* temp_store: no temporary files outside the Landlock rules. */
	if (exec("PRAGMA journal_mode=WAL") == -1 ||
	    exec("PRAGMA synchronous=FULL") == -1 ||
	    exec("PRAGMA temp_store=MEMORY") == -1 ||
	    exec(schema) == -1 || migrate() == -1)
		return -1;
	return 0;
}

void
db_close(void)
{
	sqlite3_close(db);
	db = NULL;
}

void
db_set_notify(void (*cb)(const char *))
{
	notify = cb;
}

/* cb(id, event) runs inside each change's transaction, before COMMIT. */
void
db_set_outbox(int (*cb)(const char *, const char *))
{
	before_commit = cb;
}

void
format_time(time_t t, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static sqlite3_stmt *
prepare(const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		log_warnx("sqlite: %s: %s", sql, sqlite3_errmsg(db));
		return NULL;
	}
	return st;
}

static void
bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s == NULL)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

/* Runs a statement that returns no rows; the number of rows changed. */
static int
step_done(sqlite3_stmt *st)
{
	int r;

	r = sqlite3_step(st);
	sqlite3_finalize(st);
	if (r != SQLITE_DONE) {
		log_warnx("sqlite: %s", sqlite3_errmsg(db));
		return -1;
	}
	return sqlite3_changes(db);
}

/*
 * Ends the transaction of one state change: auditd records it, then it
 * commits; if auditd cannot, it is undone (fail closed).
 */
static int
commit_audited(const char *id, const char *event, uint64_t reqid,
    json_t *fields)
{
	if (before_commit != NULL && before_commit(id, event) == -1) {
		json_decref(fields);
		exec("ROLLBACK");
		return -1;
	}
	if (audit_emit(event, reqid, fields) == -1) {
		exec("ROLLBACK");
		return -1;
	}
	if (exec("COMMIT") == -1) {
		exec("ROLLBACK");
		return -1;
	}
	if (notify != NULL)
		notify(id);
	return 0;
}

static void
new_id(char id[APPROVAL_ID_LEN])
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		fatal("getrandom");
	memcpy(id, "apr-", 4);
	hex_encode(r, sizeof(r), id + 4);
}

/* A pending approval; its id and expiry, or -1 (database or audit). */
int
db_create(const struct approval_req *rq, char id[APPROVAL_ID_LEN],
    time_t *expires)
{
	char rid[REQID_STR_LEN], exp[32];
	sqlite3_stmt *st;
	time_t now = time(NULL);
	json_t *summary;
	int destructive;

	new_id(id);
	reqid_format(rq->reqid, rid);
	*expires = now + rq->ttl;
	summary = json_loads(rq->summary, 0, NULL);
	destructive = json_is_true(json_object_get(summary, "destructive"));
	json_decref(summary);
	if (exec("BEGIN IMMEDIATE") == -1)
		return -1;
	if ((st = prepare("INSERT INTO approvals (id, state, tool, arguments,"
	    " params_digest, plan_digest, request_id, summary, plan_text,"
	    " destructive, created_at, expires_at, requester_uid, requester,"
	    " requirement)"
	    " VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) ==
	    NULL) {
		exec("ROLLBACK");
		return -1;
	}
	bind_text(st, 1, id);
	bind_text(st, 2, rq->tool);
	bind_text(st, 3, rq->arguments);
	bind_text(st, 4, rq->params_digest);
	bind_text(st, 5, rq->plan_digest);
	bind_text(st, 6, rid);
	bind_text(st, 7, rq->summary);
	bind_text(st, 8, rq->plan_text);
	sqlite3_bind_int(st, 9, destructive);
	sqlite3_bind_int64(st, 10, now);
	sqlite3_bind_int64(st, 11, *expires);
	sqlite3_bind_int64(st, 12, rq->by.uid);
	bind_text(st, 13, rq->by.client);
	bind_text(st, 14, rq->requirement);
	if (step_done(st) != 1) {
		exec("ROLLBACK");
		return -1;
	}
	format_time(*expires, exp, sizeof(exp));
	return commit_audited(id, "approval.requested", rq->reqid,
	    json_pack("{s:s, s:s, s:s, s:s?, s:b, s:s, s:{s:I, s:s}}",
	    "approval_id", id, "tool", rq->tool, "params_digest",
	    rq->params_digest, "plan_digest", rq->plan_digest, "destructive",
	    destructive, "expires_at", exp, "requester", "uid",
	    (json_int_t)rq->by.uid, "client", rq->by.client));
}

struct row {
	char		 state[16];
	char		 params[SHA256_HEX_LEN + 1];
	char		 plan[SHA256_HEX_LEN + 1];
	char		 reqid[REQID_STR_LEN];
	time_t		 expires;
	struct requester by;		/* uid -1: none recorded */
	int		 any_client;
	json_t		*requirement;	/* NULL: one operator decides */
};

static int	 approvers_meet(const char *, const struct row *, char *,
		    size_t);

static const char *
col_text(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return s != NULL ? s : "";
}

/* 1 and the row (row_clear it), 0 when there is none, -1 on error. */
static int
row_get(const char *id, struct row *r)
{
	sqlite3_stmt *st;
	int rc;

	r->requirement = NULL;
	if ((st = prepare("SELECT state, params_digest, plan_digest,"
	    " request_id, expires_at, requester_uid, requester, any_client,"
	    " requirement FROM approvals WHERE id = ?")) == NULL)
		return -1;
	bind_text(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		strlcpy(r->state, col_text(st, 0), sizeof(r->state));
		strlcpy(r->params, col_text(st, 1), sizeof(r->params));
		strlcpy(r->plan, col_text(st, 2), sizeof(r->plan));
		strlcpy(r->reqid, col_text(st, 3), sizeof(r->reqid));
		r->expires = sqlite3_column_int64(st, 4);
		r->by.uid = sqlite3_column_type(st, 5) == SQLITE_NULL ?
		    (uid_t)-1 : (uid_t)sqlite3_column_int64(st, 5);
		strlcpy(r->by.client, col_text(st, 6), sizeof(r->by.client));
		r->any_client = sqlite3_column_int(st, 7);
		if (sqlite3_column_type(st, 8) != SQLITE_NULL)
			r->requirement = json_loads(col_text(st, 8), 0, NULL);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

static void
row_clear(struct row *r)
{
	json_decref(r->requirement);
	r->requirement = NULL;
}

static int
live(const struct row *r, time_t now)
{
	return strcmp(r->state, "pending") == 0 ||
	    strcmp(r->state, "approved") == 0 ? r->expires > now : 0;
}

/* Whether by may spend the approval of r. */
static int
client_may(const struct row *r, const struct requester *by)
{
	return r->any_client || (r->by.uid == by->uid &&
	    strcmp(r->by.client, by->client) == 0);
}

/*
 * Why an approval cannot be spent (or decided) now, for the refusal;
 * by is the spender, NULL for a decision.
 */
static void
why_not(const char *id, const struct row *r, int found, time_t now,
    const struct requester *by, const char *params, const char *plan,
    char *why, size_t len)
{
	const char *s = NULL;

	if (!found)
		s = "is unknown";
	else if (strcmp(r->state, "spent") == 0)
		s = "is already spent";
	else if (strcmp(r->state, "denied") == 0)
		s = "was denied";
	else if (strcmp(r->state, "expired") == 0 || !live(r, now))
		s = "has expired";
	else if (strcmp(r->state, "pending") == 0)
		s = "is pending, not approved";
	else if (by != NULL && !client_may(r, by))
		s = "was asked for by another client: only that client may "
		    "spend it, unless an operator approves it for any client "
		    "(approvalctl approve --any-client)";
	else if (params != NULL && strcmp(r->params, params) != 0)
		s = "is bound to other parameters";
	else if (params != NULL && strcmp(r->plan, plan ? plan : "") != 0)
		s = "is bound to another plan";
	else
		s = "is not pending";
	snprintf(why, len, "approval %.40s %s", id, s);
}

/*
 * Spends an approved approval presented by the client that asked for it
 * (or any, when so approved) with exactly the parameters and plan it was
 * granted for.  The UPDATE's WHERE is the whole check, so of any number
 * of concurrent spends one changes the row.  A spend that
 * presents no plan (plan_given 0) takes the bound one, returned in
 * bound: the presenter must then prove the plan file has that digest.
 */
enum spend_result
db_spend(const char *id, const struct requester *by, const char *params,
    const char *plan, int plan_given, uint64_t reqid,
    char bound[SHA256_HEX_LEN + 1], char *why, size_t whylen)
{
	char rid[REQID_STR_LEN], missing[512];
	sqlite3_stmt *st;
	struct row r;
	time_t now = time(NULL);
	int n, found, met;

	reqid_format(reqid, rid);
	bound[0] = '\0';
	if (exec("BEGIN IMMEDIATE") == -1)
		return SPEND_ERROR;
	if ((st = prepare("UPDATE approvals SET state = 'spent',"
	    " spent_at = ?, spent_request = ? WHERE id = ? AND"
	    " state = 'approved' AND expires_at > ? AND params_digest = ?"
	    " AND (? = 0 OR plan_digest IS ?) AND (any_client = 1 OR"
	    " (requester_uid = ? AND requester = ?))")) == NULL) {
		exec("ROLLBACK");
		return SPEND_ERROR;
	}
	sqlite3_bind_int64(st, 1, now);
	bind_text(st, 2, rid);
	bind_text(st, 3, id);
	sqlite3_bind_int64(st, 4, now);
	bind_text(st, 5, params);
	sqlite3_bind_int(st, 6, plan_given);
	bind_text(st, 7, plan);
	sqlite3_bind_int64(st, 8, by->uid);
	bind_text(st, 9, by->client);
	if ((n = step_done(st)) == -1) {
		exec("ROLLBACK");
		return SPEND_ERROR;
	}
	found = row_get(id, &r);
	/* The threshold again, in the spend's own transaction. */
	if (n == 1 && found == 1 && (met = approvers_meet(id, &r, missing,
	    sizeof(missing))) != 1) {
		exec("ROLLBACK");
		row_clear(&r);
		if (met == -1)
			return SPEND_ERROR;
		snprintf(why, whylen, "approval %.40s lacks approvals: %s", id,
		    missing);
		return SPEND_REFUSED;
	}
	row_clear(&r);
	if (n == 1 && found == 1) {
		strlcpy(bound, r.plan, SHA256_HEX_LEN + 1);
		return commit_audited(id, "approval.spent", reqid,
		    json_pack("{s:s, s:s, s:s?, s:{s:I, s:s}}", "approval_id",
		    id, "params_digest", params, "plan_digest",
		    bound[0] != '\0' ? bound : NULL, "client", "uid",
		    (json_int_t)by->uid, "client", by->client)) == 0 ?
		    SPEND_OK : SPEND_ERROR;
	}
	exec("ROLLBACK");
	if (found == -1 || n == 1)
		return SPEND_ERROR;
	why_not(id, &r, found, now, by, params, plan_given ? plan : r.plan,
	    why, whylen);
	return SPEND_REFUSED;
}

/* The reviews of id, oldest first; only those of verdict if given. */
static json_t *
reviews_get(const char *id, const char *verdict)
{
	sqlite3_stmt *st;
	json_t *a;
	char at[32];
	int rc;

	if ((st = prepare("SELECT uid, user, gids, verdict, reason, at FROM"
	    " reviews WHERE approval_id = ? AND (? IS NULL OR verdict = ?)"
	    " ORDER BY at, rowid")) == NULL)
		return NULL;
	bind_text(st, 1, id);
	bind_text(st, 2, verdict);
	bind_text(st, 3, verdict);
	if ((a = json_array()) == NULL) {
		sqlite3_finalize(st);
		return NULL;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		format_time(sqlite3_column_int64(st, 5), at, sizeof(at));
		json_array_append_new(a, json_pack("{s:I, s:s, s:o, s:s, s:o,"
		    " s:s}", "uid", (json_int_t)sqlite3_column_int64(st, 0),
		    "user", col_text(st, 1), "gids", json_col(st, 2),
		    "verdict", col_text(st, 3), "reason", str_col(st, 4),
		    "at", at));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/*
 * In an open transaction: 1 when r's approvers meet its requirement (a
 * record without one was decided by one operator), 0 with what is
 * missing, -1.
 */
static int
approvers_meet(const char *id, const struct row *r, char *missing,
    size_t len)
{
	json_t *approvers;
	int met;

	missing[0] = '\0';
	if (r->requirement == NULL)
		return 1;
	if ((approvers = reviews_get(id, "approve")) == NULL)
		return -1;
	met = threshold_met(r->requirement, approvers, missing, len);
	json_decref(approvers);
	return met;
}

/*
 * In an open transaction: the row of a live approval an operator may
 * still decide (pending; approved too for a withdrawal).  1 and the
 * row, 0 refused (why), -1.
 */
static int
open_row(const char *id, int withdraw, time_t now, struct row *r,
    char *why, size_t whylen)
{
	int found, open;

	if ((found = row_get(id, r)) == -1)
		return -1;
	open = found && (strcmp(r->state, "pending") == 0 || (withdraw &&
	    strcmp(r->state, "approved") == 0));
	if (open && live(r, now))
		return 1;
	why_not(id, r, found, now, NULL, NULL, NULL, why, whylen);
	row_clear(r);
	return 0;
}

/* In an open transaction: r moves on to state, decided by op. */
static int
set_state(const char *id, const struct row *r, const char *state,
    int any_client, const struct operator *op, const char *reason,
    time_t now)
{
	sqlite3_stmt *st;

	if ((st = prepare("UPDATE approvals SET state = ?, decided_at = ?,"
	    " decided_uid = ?, decided_user = ?, reason = ?, any_client = ?"
	    " WHERE id = ? AND state = ? AND expires_at > ?")) == NULL)
		return -1;
	bind_text(st, 1, state);
	sqlite3_bind_int64(st, 2, now);
	sqlite3_bind_int64(st, 3, op->uid);
	bind_text(st, 4, op->user);
	bind_text(st, 5, reason);
	sqlite3_bind_int(st, 6, any_client || r->any_client);
	bind_text(st, 7, id);
	bind_text(st, 8, r->state);
	sqlite3_bind_int64(st, 9, now);
	return step_done(st) == 1 ? 0 : -1;
}

/* What the audit record of a decision says of it. */
static json_t *
decision_fields(const char *id, const struct operator *op,
    const char *reason, int any_client, time_t now)
{
	char at[32];
	json_t *fields;

	format_time(now, at, sizeof(at));
	fields = json_pack("{s:s, s:{s:I, s:s}, s:s, s:s?}", "approval_id",
	    id, "operator", "uid", (json_int_t)op->uid, "user", op->user,
	    "at", at, "reason", reason);
	if (fields != NULL && any_client)
		json_object_set_new(fields, "any_client", json_true());
	return fields;
}

static uint64_t
row_reqid(const struct row *r)
{
	uint64_t reqid = 0;

	(void)reqid_parse(r->reqid, &reqid);
	return reqid;
}

/*
 * Whether op may review r: 0, 1 refused (why), -1.  The uid whose MCP
 * client asked never approves its own request, whatever its groups,
 * unless self_approval lets root (control.c) on a one-person machine.
 */
static int
review_refused(const char *id, const struct row *r, int approve,
    const struct operator *op, const char *reason, char *why, size_t len)
{
	sqlite3_stmt *st;
	int rc;

	if (!approve)
		return 0;
	if (op->uid == r->by.uid && !op->self_approves) {
		snprintf(why, len, "approval %.40s was asked for by an MCP "
		    "client of uid %u: that uid cannot approve it", id,
		    (unsigned)op->uid);
		return 1;
	}
	if (r->requirement == NULL)
		return 0;
	if (json_is_true(json_object_get(r->requirement, "reason_required"))
	    && (reason == NULL || *reason == '\0')) {
		snprintf(why, len, "approval %.40s needs a reason "
		    "(approvalctl approve ID --reason TEXT)", id);
		return 1;
	}
	if (!threshold_counts(r->requirement, op->groups, op->ngroups)) {
		snprintf(why, len, "approval %.40s needs approvals from "
		    "groups %s is not in", id, op->user);
		return 1;
	}
	if ((st = prepare("SELECT 1 FROM reviews WHERE approval_id = ? AND"
	    " uid = ?")) == NULL)
		return -1;
	bind_text(st, 1, id);
	sqlite3_bind_int64(st, 2, op->uid);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return -1;
	snprintf(why, len, "approval %.40s: %s (uid %u) has already approved "
	    "it; another operator must", id, op->user, (unsigned)op->uid);
	return 1;
}

/* Approved for any client by one approver: the grant will be too. */
static int
mark_any_client(const char *id)
{
	sqlite3_stmt *st;

	if ((st = prepare("UPDATE approvals SET any_client = 1 WHERE id = ?"))
	    == NULL)
		return -1;
	bind_text(st, 1, id);
	return step_done(st) == 1 ? 0 : -1;
}

static int
review_insert(const char *id, int approve, const struct operator *op,
    const char *reason, time_t now)
{
	sqlite3_stmt *st;
	json_t *gids;
	char *text;
	size_t i;

	if ((gids = json_array()) == NULL)
		return -1;
	for (i = 0; i < op->ngroups; i++)
		json_array_append_new(gids, json_integer(op->groups[i]));
	text = json_dumps(gids, JSON_COMPACT);
	json_decref(gids);
	/* A second word of one operator is a deny (an approval twice is
	   refused before): it replaces the approval. */
	if (text == NULL || (st = prepare("INSERT OR REPLACE INTO reviews"
	    " (approval_id, uid, user, gids, verdict, reason, at) VALUES"
	    " (?, ?, ?, ?, ?, ?, ?)")) == NULL) {
		free(text);
		return -1;
	}
	bind_text(st, 1, id);
	sqlite3_bind_int64(st, 2, op->uid);
	bind_text(st, 3, op->user);
	bind_text(st, 4, text);
	bind_text(st, 5, approve ? "approve" : "deny");
	bind_text(st, 6, reason);
	sqlite3_bind_int64(st, 7, now);
	free(text);
	return step_done(st) == 1 ? 0 : -1;
}

/*
 * An operator approves or denies a pending approval: 0, 1 refused
 * (why), -1.  A deny settles it at once (deny wins); an approval is
 * recorded, and grants it when the approvers now meet its requirement.
 * An approval for any client (any_client) may be spent by a client
 * other than the one that asked for it.
 */
int
db_review(const char *id, int approve, int any_client,
    const struct operator *op, const char *reason, char *why, size_t whylen)
{
	char missing[512];
	struct row r;
	time_t now = time(NULL);
	const char *event;
	json_t *fields;
	int met = 0, rc;

	any_client = approve && any_client;
	if (exec("BEGIN IMMEDIATE") == -1)
		return -1;
	if ((rc = open_row(id, 0, now, &r, why, whylen)) != 1) {
		exec("ROLLBACK");
		return rc == 0 ? 1 : -1;
	}
	if ((rc = review_refused(id, &r, approve, op, reason, why,
	    whylen)) != 0) {
		exec("ROLLBACK");
		row_clear(&r);
		return rc;
	}
	if (review_insert(id, approve, op, reason, now) == -1 ||
	    (approve && (met = approvers_meet(id, &r, missing,
	    sizeof(missing))) == -1))
		goto fail;
	if (!approve || met) {
		event = approve ? "approval.granted" : "approval.denied";
		if (set_state(id, &r, approve ? "approved" : "denied",
		    any_client, op, reason, now) == -1)
			goto fail;
	} else {
		/* Short of its approvers: it waits, and says for whom. */
		event = "approval.reviewed";
		if (any_client && mark_any_client(id) == -1)
			goto fail;
	}
	fields = decision_fields(id, op, reason, any_client, now);
	if (fields != NULL && r.requirement != NULL)
		json_object_set_new(fields, "approvers", reviews_get(id,
		    "approve"));
	if (fields != NULL && !met && approve)
		json_object_set_new(fields, "missing", json_string(missing));
	rc = commit_audited(id, event, row_reqid(&r), fields);
	row_clear(&r);
	return rc;
fail:
	exec("ROLLBACK");
	row_clear(&r);
	return -1;
}

/*
 * The client that asked gave up (tasks/cancel): the approval can no
 * longer be spent.  It reads as denied, with the reason saying why.
 */
int
db_withdraw(const char *id, const struct operator *by, char *why,
    size_t whylen)
{
	static const char reason[] = "withdrawn: the client cancelled the "
	    "call waiting for it";
	struct row r;
	time_t now = time(NULL);
	int rc;

	if (exec("BEGIN IMMEDIATE") == -1)
		return -1;
	if ((rc = open_row(id, 1, now, &r, why, whylen)) != 1) {
		exec("ROLLBACK");
		return rc == 0 ? 1 : -1;
	}
	if (set_state(id, &r, "denied", 0, by, reason, now) == -1) {
		exec("ROLLBACK");
		row_clear(&r);
		return -1;
	}
	rc = commit_audited(id, "approval.withdrawn", row_reqid(&r),
	    decision_fields(id, by, reason, 0, now));
	row_clear(&r);
	return rc;
}

/*
 * Moves pending and approved records past their TTL to expired, each
 * audited.  Spends check the time themselves, so a sweep that cannot
 * record (auditd down) leaves nothing spendable.  The number expired,
 * or -1.
 */
int
db_expire(void)
{
	struct {
		char	 id[APPROVAL_ID_LEN];
		char	 reqid[REQID_STR_LEN];
		char	 was[16];
	} due[EXPIRE_BATCH];
	sqlite3_stmt *st;
	time_t now = time(NULL);
	uint64_t reqid;
	size_t i, n = 0;

	if ((st = prepare("SELECT id, request_id, state FROM approvals"
	    " WHERE state IN ('pending', 'approved') AND expires_at <= ?"
	    " LIMIT ?")) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_int(st, 2, EXPIRE_BATCH);
	while (n < EXPIRE_BATCH && sqlite3_step(st) == SQLITE_ROW) {
		strlcpy(due[n].id, col_text(st, 0), sizeof(due[n].id));
		strlcpy(due[n].reqid, col_text(st, 1), sizeof(due[n].reqid));
		strlcpy(due[n].was, col_text(st, 2), sizeof(due[n].was));
		n++;
	}
	sqlite3_finalize(st);
	for (i = 0; i < n; i++) {
		reqid = 0;
		(void)reqid_parse(due[i].reqid, &reqid);
		if (exec("BEGIN IMMEDIATE") == -1)
			return -1;
		if ((st = prepare("UPDATE approvals SET state = 'expired'"
		    " WHERE id = ? AND state IN ('pending', 'approved')")) ==
		    NULL) {
			exec("ROLLBACK");
			return -1;
		}
		bind_text(st, 1, due[i].id);
		if (step_done(st) != 1) {
			exec("ROLLBACK");
			return -1;
		}
		if (commit_audited(due[i].id, "approval.expired", reqid,
		    json_pack("{s:s, s:s}", "approval_id", due[i].id, "was",
		    due[i].was)) == -1)
			return -1;
	}
	return (int)n;
}

static json_t *
json_col(sqlite3_stmt *st, int i)
{
	json_t *j;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	if ((j = json_loads(col_text(st, i), JSON_DECODE_ANY, NULL)) == NULL)
		return json_null();
	return j;
}

static json_t *
str_col(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	return json_string(col_text(st, i));
}

static json_t *
time_col(sqlite3_stmt *st, int i)
{
	char buf[32];

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	format_time(sqlite3_column_int64(st, i), buf, sizeof(buf));
	return json_string(buf);
}

/* One record as approvalctl shows it; full adds the plan. */
static json_t *
row_json(sqlite3_stmt *st, int full)
{
	const char *state = col_text(st, C_STATE);
	json_t *j, *by = json_null(), *asker = json_null();

	/* A record past its TTL is expired, whether or not swept yet. */
	if ((strcmp(state, "pending") == 0 || strcmp(state, "approved") ==
	    0) && sqlite3_column_int64(st, C_EXPIRES) <= time(NULL))
		state = "expired";
	if (sqlite3_column_type(st, C_DECIDED_UID) != SQLITE_NULL)
		by = json_pack("{s:I, s:o}", "uid",
		    (json_int_t)sqlite3_column_int64(st, C_DECIDED_UID),
		    "user", str_col(st, C_DECIDED_USER));
	if (sqlite3_column_type(st, C_REQ_UID) != SQLITE_NULL)
		asker = json_pack("{s:I, s:o}", "uid",
		    (json_int_t)sqlite3_column_int64(st, C_REQ_UID),
		    "client", str_col(st, C_REQUESTER));
	j = json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:o, s:b, s:o, s:o,"
	    " s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
	    "approval_id", col_text(st, C_ID), "state", state,
	    "tool", col_text(st, C_TOOL), "arguments", json_col(st, C_ARGS),
	    "request_id", col_text(st, C_REQID),
	    "params_digest", col_text(st, C_PARAMS),
	    "plan_digest", str_col(st, C_PLAN),
	    "destructive", sqlite3_column_int(st, C_DESTRUCTIVE),
	    "created_at", time_col(st, C_CREATED),
	    "expires_at", time_col(st, C_EXPIRES),
	    "decided_at", time_col(st, C_DECIDED_AT),
	    "decided_by", by, "reason", str_col(st, C_REASON),
	    "spent_at", time_col(st, C_SPENT_AT),
	    "spent_by_request", str_col(st, C_SPENT_REQ),
	    "requester", asker,
	    "for_any_client", sqlite3_column_int(st, C_ANY_CLIENT));
	if (j != NULL)
		json_object_set_new(j, "requirement",
		    json_col(st, C_REQUIREMENT));
	if (j != NULL && full) {
		json_object_set_new(j, "summary", json_col(st, C_SUMMARY));
		json_object_set_new(j, "plan_text", str_col(st, C_PLANTEXT));
	}
	return j;
}

/*
 * One record with its reviews and, while it is pending, what its
 * approvers still lack; NULL when there is none.
 */
json_t *
db_get(const char *id, int full)
{
	char missing[512];
	sqlite3_stmt *st;
	json_t *j = NULL, *approvers;
	const json_t *req;

	if ((st = prepare("SELECT " COLUMNS " FROM approvals WHERE id = ?"))
	    == NULL)
		return NULL;
	bind_text(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		j = row_json(st, full);
	sqlite3_finalize(st);
	if (j == NULL)
		return NULL;
	json_object_set_new(j, "reviews", reviews_get(id, NULL));
	req = json_object_get(j, "requirement");
	if (json_is_object(req) && strcmp(json_string_value(json_object_get(j,
	    "state")), "pending") == 0 && (approvers = reviews_get(id,
	    "approve")) != NULL) {
		if (!threshold_met(req, approvers, missing, sizeof(missing)))
			json_object_set_new(j, "missing", json_string(missing));
		json_decref(approvers);
	}
	return j;
}

/* Records still waiting for an operator or a spend; all with all. */
json_t *
db_list(int all)
{
	sqlite3_stmt *st;
	json_t *a;

	if ((a = json_array()) == NULL)
		return NULL;
	st = prepare(all ? "SELECT " COLUMNS " FROM approvals ORDER BY"
	    " created_at, id" : "SELECT " COLUMNS " FROM approvals WHERE"
	    " state IN ('pending', 'approved') AND expires_at > ?"
	    " ORDER BY created_at, id");
	if (st == NULL) {
		json_decref(a);
		return NULL;
	}
	if (!all)
		sqlite3_bind_int64(st, 1, time(NULL));
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(a, row_json(st, 0));
	sqlite3_finalize(st);
	return a;
}

/* In the open transaction of a change: its notification, for notifyd. */
int
db_outbox_insert(const char *event_id, const char *event, const char *id,
    const char *payload)
{
	sqlite3_stmt *st;

	if ((st = prepare("INSERT INTO outbox (event_id, event, approval_id,"
	    " payload) VALUES (?, ?, ?, ?)")) == NULL)
		return -1;
	bind_text(st, 1, event_id);
	bind_text(st, 2, event);
	bind_text(st, 3, id);
	bind_text(st, 4, payload);
	return step_done(st) == 1 ? 0 : -1;
}

/* The words of text, separated by spaces, as an array. */
static json_t *
words(const char *text)
{
	json_t *a = json_array();
	const char *end;

	while (a != NULL && *text != '\0') {
		if ((end = strchr(text, ' ')) == NULL)
			end = text + strlen(text);
		json_array_append_new(a, json_stringn(text, end - text));
		text = *end != '\0' ? end + 1 : end;
	}
	return a;
}

/*
 * Unacknowledged rows after seq, oldest first, at most limit, each
 * with the webhooks it reached; *last.
 */
json_t *
db_outbox_since(int64_t seq, int limit, int64_t *last)
{
	sqlite3_stmt *st;
	json_t *a;

	if ((a = json_array()) == NULL || (st = prepare("SELECT seq,"
	    " event_id, event, payload, (SELECT group_concat(webhook, ' ')"
	    " FROM outbox_delivered d WHERE d.event_id = o.event_id)"
	    " FROM outbox o WHERE seq > ? ORDER BY seq LIMIT ?")) == NULL) {
		json_decref(a);
		return NULL;
	}
	sqlite3_bind_int64(st, 1, seq);
	sqlite3_bind_int(st, 2, limit);
	*last = seq;
	while (sqlite3_step(st) == SQLITE_ROW) {
		*last = sqlite3_column_int64(st, 0);
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:o}",
		    "event_id", col_text(st, 1), "event", col_text(st, 2),
		    "payload", col_text(st, 3), "delivered",
		    words(col_text(st, 4))));
	}
	sqlite3_finalize(st);
	return a;
}

/* notifyd delivered it to webhook: 1 noted, 0 unknown or noted, -1. */
int
db_outbox_delivered(const char *event_id, const char *webhook)
{
	sqlite3_stmt *st;

	if ((st = prepare("INSERT OR IGNORE INTO outbox_delivered (event_id,"
	    " webhook) SELECT event_id, ? FROM outbox WHERE event_id = ?")) ==
	    NULL)
		return -1;
	bind_text(st, 1, webhook);
	bind_text(st, 2, event_id);
	return step_done(st);
}

/* notifyd delivered it everywhere: 1 removed, 0 unknown, -1. */
int
db_outbox_ack(const char *event_id)
{
	sqlite3_stmt *st;
	int r;

	if (exec("BEGIN IMMEDIATE") == -1)
		return -1;
	if ((st = prepare("DELETE FROM outbox_delivered WHERE event_id = ?"))
	    == NULL) {
		exec("ROLLBACK");
		return -1;
	}
	bind_text(st, 1, event_id);
	if (step_done(st) == -1 || (st = prepare("DELETE FROM outbox WHERE"
	    " event_id = ?")) == NULL) {
		exec("ROLLBACK");
		return -1;
	}
	bind_text(st, 1, event_id);
	if ((r = step_done(st)) == -1 || exec("COMMIT") == -1) {
		exec("ROLLBACK");
		return -1;
	}
	return r;
}
