#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Notifications from approvald's outbox through notifyd to a webhook
# receiver on 127.0.0.1 (receiver.py), signed as Standard Webhooks say:
# every change arrives, at least once under one id, whatever the
# receiver does and whichever daemon is killed.

. "$(atf_get_srcdir)/../approvald/approvald.subr"

# approvald with notifiers, notifyd's section with one standard and one
# Slack webhook to the receiver's port $1, a fresh secret.
nt_setup()
{
	ad_setup
	printf 'whsec_%s\n' "$(head -c 32 /dev/urandom | base64 -w0)" > secret
	chmod 600 secret
	sed -i "s/^approvald:$/approvald:\n  notifiers: { users: [$(id -u)] }/" conf.yaml
	cat >> conf.yaml <<CONF
notifyd:
  user: ""
  webhooks:
    - { url: "http://127.0.0.1:$1/hook" }
    - { url: "http://127.0.0.1:$1/slack", format: slack }
  secret_file: $(pwd)/secret
  timeout: 2s
  retry_max: 2s
CONF
	echo ok > mode
	touch hook.log
}

# The receiver on port $1 (0: any) with key file $2 (secret); its port
# in $PORT.
nt_receiver()
{
	rm -f port
	python3 "$(atf_get_srcdir)/receiver.py" "$1" port hook.log \
	    "${2:-secret}" mode 2>receiver.err &
	echo "$! receiver" >> pids
	ad_wait_socket_file port
	PORT=$(cat port)
}

ad_wait_socket_file()
{
	i=0
	until [ -s "$1" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && atf_fail "$1 did not appear"
		sleep 0.05
	done
}

# A free port, for a receiver that starts later.
free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

nt_notifyd()
{
	"$(as_bin notifyd)" -d -v -f "$(pwd)/conf.yaml" >>notifyd.log 2>&1 &
	echo "$! notifyd" >> pids
	echo $! > notifyd.pid
}

# Waits up to 20 s until hook.log holds $2 (default 1) valid deliveries
# of event $1 to each webhook.
nt_wait_event()
{
	i=0
	until [ "$(nt_count "$1")" -ge "${2:-1}" ]; do
		i=$((i + 1))
		[ $i -gt 400 ] && atf_fail "no $1 delivered: $(cat hook.log)"
		sleep 0.05
	done
}

# Distinct event ids of type $1 answered 200 at both webhooks.
nt_count()
{
	python3 - "$1" <<'PY'
import json, sys
seen = {}
for line in open("hook.log"):
    r = json.loads(line)
    kind = r["type"] or json.loads(r["body"]).get("text", "").split(":")[0]
    if r["valid"] and r["code"] == 200 and kind == sys.argv[1]:
        seen.setdefault(r["id"], set()).add("slack" if r["type"] is None
                                            else "standard")
print(sum(1 for v in seen.values() if len(v) == 2))
PY
}

# The outbox rows approvald still holds.
nt_outbox()
{
	python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from outbox").fetchone()[0])' var/approvals.db
}

# The webhook deliveries approvald has noted for rows it still holds.
nt_delivered()
{
	python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from outbox_delivered").fetchone()[0])' var/approvals.db
}

# The receiver, the audit stand-in, approvald and notifyd.
nt_start_all()
{
	port=$(free_port)
	nt_setup "$port"
	nt_receiver "$port"
	ad_audit_stub
	ad_start
	nt_notifyd
}

atf_test_case every_change cleanup
every_change_head()
{
	atf_set descr "requested, granted, spent, denied each reach a standard and a Slack webhook, signed, with the digest and commands and without the parameters"
}
every_change_body()
{
	nt_start_all
	id=$($CLIENT request run demo "$PLAN_A")
	nt_wait_event approval.requested
	atf_check -o ignore $CTL approve "$id"
	nt_wait_event approval.granted
	atf_check -o match:"^APPROVAL_SPENT" $CLIENT spend run "$id" demo "$PLAN_A"
	nt_wait_event approval.spent
	other=$($CLIENT request run demo "$PLAN_A")
	atf_check -o ignore $CTL deny "$other" --reason no
	nt_wait_event approval.denied
	python3 - "$id" <<'PY' || atf_fail "payloads: $(cat hook.log)"
import json, sys
aid = sys.argv[1]
for line in open("hook.log"):
    r = json.loads(line)
    body = json.loads(r["body"])
    assert r["valid"] and r["id"].startswith("msg_"), r
    if r["type"] is None:
        assert body["blocks"][0]["type"] == "header", body
        assert "approvalctl approve apr-" in body["blocks"][2]["text"]["text"]
        continue
    d = body["data"]
    for k in ("approval_id", "tool", "params_digest", "summary",
              "requester", "expires_at", "commands"):
        assert k in d, (k, d)
    assert "arguments" not in d and "plan_text" not in d, d
    assert d["commands"]["approve"] == "approvalctl approve " + d["approval_id"]
    assert d["summary"]["destructive"] is True, d
    if r["type"] == "approval.requested" and d["approval_id"] == aid:
        assert d["state"] == "pending" and d["tool"] == "terraform_apply"
PY
	i=0
	until [ "$(nt_outbox)" = 0 ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && atf_fail "the outbox keeps $(nt_outbox) rows"
		sleep 0.05
	done
	as_stop
}
every_change_cleanup()
{
	as_kill_all
}

atf_test_case receiver_trouble cleanup
receiver_trouble_head()
{
	atf_set descr "a receiver that is down, answers 500 or is slow loses nothing: each event arrives under one id"
}
receiver_trouble_body()
{
	port=$(free_port)
	nt_setup "$port"
	ad_audit_stub
	ad_start
	nt_notifyd
	id=$($CLIENT request run demo "$PLAN_A")
	ad_wait_log "not delivered" notifyd.log
	echo 500 > mode
	nt_receiver "$port"
	ad_wait_log '"valid": true' hook.log
	[ "$(nt_count approval.requested)" = 0 ] || atf_fail "approval.requested: not 0 delivery: $(cat hook.log)"
	echo ok > mode
	nt_wait_event approval.requested
	# Slow: past notifyd's 2 s timeout, then answered; sent again.
	echo "slow 3" > mode
	atf_check -o ignore $CTL approve "$id"
	ad_wait_log "Timeout was reached" notifyd.log
	echo ok > mode
	nt_wait_event approval.granted
	[ "$(nt_count approval.requested)" = 1 ] || atf_fail "approval.requested: not 1 delivery: $(cat hook.log)"
	[ "$(nt_count approval.granted)" = 1 ] || atf_fail "approval.granted: not 1 delivery: $(cat hook.log)"
	python3 - <<'PY' || atf_fail "ids: $(cat hook.log)"
import json
ids = {}
for line in open("hook.log"):
    r = json.loads(line)
    ids.setdefault(r["id"], []).append(r)
# Two events, two webhooks each: the same id on every attempt.
assert len(ids) == 2, ids.keys()
assert all(len(v) >= 2 for v in ids.values())
PY
	as_stop
}
receiver_trouble_cleanup()
{
	as_kill_all
}

atf_test_case restarts cleanup
restarts_head()
{
	atf_set descr "notifyd killed mid-delivery and approvald restarted with rows pending: every event still arrives"
}
restarts_body()
{
	nt_start_all
	echo "slow 5" > mode
	id=$($CLIENT request run demo "$PLAN_A")
	ad_wait_log '"type": "approval.requested"' hook.log
	kill -KILL "$(cat notifyd.pid)"
	echo 500 > mode
	atf_check -o ignore $CTL approve "$id"
	# approvald dies with both rows unacked, and comes back.
	kill -KILL "$(ad_pid)"
	ad_start
	echo ok > mode
	nt_notifyd
	nt_wait_event approval.requested
	nt_wait_event approval.granted
	[ "$(nt_count approval.requested)" = 1 ] || atf_fail "approval.requested: not 1 delivery: $(cat hook.log)"
	# approvald restarted under a running notifyd: it says hello again.
	kill -KILL "$(ad_pid)"
	ad_start
	atf_check -o ignore $CTL deny "$($CLIENT request run demo "$PLAN_A")"
	nt_wait_event approval.denied
	as_stop
}
restarts_cleanup()
{
	as_kill_all
}

atf_test_case partial cleanup
partial_head()
{
	atf_set descr "a row the standard webhook has and the Slack one refuses outlives a kill -9 of notifyd: approvald keeps which webhook has it, and the restarted notifyd posts it to the Slack webhook alone"
}
partial_body()
{
	nt_start_all
	echo "500 /slack" > mode
	$CLIENT request run demo "$PLAN_A" >/dev/null
	# approvald has noted the standard webhook, and Slack was refused.
	i=0
	until [ "$(nt_delivered)" = 1 ] &&
	    grep -q '"code": 500' hook.log; do
		i=$((i + 1))
		[ $i -gt 400 ] && atf_fail "no delivery noted: $(cat hook.log)"
		sleep 0.05
	done
	kill -KILL "$(cat notifyd.pid)"
	echo ok > mode
	nt_notifyd
	nt_wait_event approval.requested
	i=0
	until [ "$(nt_outbox)" = 0 ]; do
		i=$((i + 1))
		[ $i -gt 400 ] && atf_fail "the row was not acked"
		sleep 0.05
	done
	python3 - <<'PY' || atf_fail "posted again: $(cat hook.log)"
import json
log = [json.loads(l) for l in open("hook.log")]
standard = [r for r in log if r["type"] == "approval.requested"]
assert len(standard) == 1 and standard[0]["code"] == 200, standard
PY
	[ "$(nt_delivered)" = 0 ] || atf_fail "delivery notes outlive the row"
	as_stop
}
partial_cleanup()
{
	as_kill_all
}

atf_test_case forged cleanup
forged_head()
{
	atf_set descr "the receiver refuses forged, tampered and stale signatures and accepts those notifyd makes"
}
forged_body()
{
	nt_start_all
	$CLIENT request run demo "$PLAN_A" >/dev/null
	nt_wait_event approval.requested
	python3 - "$port" <<'PY' || atf_fail "forgeries: $(cat hook.log)"
import base64, hashlib, hmac, json, sys, time, urllib.request, urllib.error
port = sys.argv[1]
good = [json.loads(l) for l in open("hook.log") if json.loads(l)["type"]][0]
body = good["body"].encode()
other = base64.b64encode(b"x" * 32)
def post(msg_id, ts, sig, data):
    req = urllib.request.Request("http://127.0.0.1:%s/hook" % port, data,
        {"webhook-id": msg_id, "webhook-timestamp": str(ts),
         "webhook-signature": sig, "Content-Type": "application/json"})
    try:
        return urllib.request.urlopen(req).status
    except urllib.error.HTTPError as e:
        return e.code
now = int(time.time())
forged = base64.b64encode(hmac.new(base64.b64decode(other),
    b"%s.%d.%s" % (good["id"].encode(), now, body), hashlib.sha256).digest())
# Signed with another key; a changed body; a stale timestamp.
assert post(good["id"], now, "v1," + forged.decode(), body) == 401
assert post(good["id"], good["ts"], "v1," + "A" * 44, body) == 401
assert post(good["id"], now - 3600, "v1," + forged.decode(), body) == 401
tampered = body.replace(b"pending", b"approved")
assert post(good["id"], good["ts"], "", tampered) == 401
PY
	atf_check -o inline:"4\n" sh -c 'grep -c "\"valid\": false" hook.log'
	as_stop
}
forged_cleanup()
{
	as_kill_all
}

atf_test_case ed25519 cleanup
ed25519_head()
{
	atf_set descr "webhooks with an ed25519_key_file (a seed, and seed with public key) get v1a signatures that the receiver checks with the whpk_ public key alone; another key, a v1 HMAC and a key file that is not whsk_ are refused"
	atf_set require.progs python3
}
ed25519_body()
{
	python3 -c 'import cryptography' 2>/dev/null ||
	    atf_fail "python3-cryptography is needed to check Ed25519"
	port=$(free_port)
	nt_setup "$port"
	python3 - <<'PY'
import base64
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding, NoEncryption, PrivateFormat, PublicFormat)
k = Ed25519PrivateKey.generate()
seed = k.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
pub = k.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
for name, raw in [("seed.key", seed), ("pair.key", seed + pub)]:
    open(name, "w").write("whsk_" + base64.b64encode(raw).decode() + "\n")
open("signing.pub", "w").write("whpk_" + base64.b64encode(pub).decode() + "\n")
PY
	chmod 600 seed.key pair.key
	sed -i -e "s|/hook\" }|/hook\", ed25519_key_file: $(pwd)/seed.key }|" \
	    -e "s|/slack\", format: slack }|/slack\", format: slack, ed25519_key_file: $(pwd)/pair.key }|" \
	    conf.yaml
	atf_check -o match:"ed25519_key_file: \"$(pwd)/pair.key\"" \
	    -e inline:"configuration OK\n" \
	    "$(as_bin notifyd)" -n -v -f "$(pwd)/conf.yaml"
	nt_receiver "$port" signing.pub
	ad_audit_stub
	ad_start
	nt_notifyd
	$CLIENT request run demo "$PLAN_A" >/dev/null
	nt_wait_event approval.requested
	python3 - "$port" <<'PY' || atf_fail "v1a: $(cat hook.log)"
import base64, hashlib, hmac, json, sys, time, urllib.request, urllib.error
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
port = sys.argv[1]
log = [json.loads(l) for l in open("hook.log")]
assert log and all(r["valid"] and r["signature"].startswith("v1a,") and
                   " " not in r["signature"] for r in log), log
good = [r for r in log if r["type"]][0]
body = good["body"].encode()
def post(sig):
    now = int(time.time())
    req = urllib.request.Request("http://127.0.0.1:%s/hook" % port, body,
        {"webhook-id": good["id"], "webhook-timestamp": str(now),
         "webhook-signature": sig(b"%s.%d.%s" % (good["id"].encode(), now,
                                                 body)),
         "Content-Type": "application/json"})
    try:
        return urllib.request.urlopen(req).status
    except urllib.error.HTTPError as e:
        return e.code
other = Ed25519PrivateKey.generate()
secret = base64.b64decode(open("secret").read().strip()[len("whsec_"):])
# Signed by another Ed25519 key; an HMAC with the whsec_ secret.
assert post(lambda c: "v1a," + base64.b64encode(other.sign(c)).decode()) == 401
assert post(lambda c: "v1," + base64.b64encode(hmac.new(secret, c,
    hashlib.sha256).digest()).decode()) == 401
PY
	as_stop
	cp secret seed.key
	atf_check -s not-exit:0 -e match:"seed.key: not whsk_ and base64" \
	    "$(as_bin notifyd)" -n -f "$(pwd)/conf.yaml"
}
ed25519_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case every_change
	atf_add_test_case receiver_trouble
	atf_add_test_case restarts
	atf_add_test_case forged
	atf_add_test_case ed25519
	atf_add_test_case partial
}
