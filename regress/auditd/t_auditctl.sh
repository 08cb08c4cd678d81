#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# auditd through auditctl: a call's trail, tail and follow, stats,
# rotation, readers and writers kept apart, scrubbing on the way in, the
# chain checked by verify (tampering pinned to the record), and recovery
# from kill -9.

. "$(atf_get_srcdir)/../lib/suite.subr"

EMIT="$(atf_get_srcdir)/emit.py"

emit()
{
	python3 "$EMIT" "$AS_RUN/audit.sock" "$@"
}

actl()
{
	"$(as_bin auditctl)" -f conf.yaml "$@"
}

# The pid of the auditd we started last.
auditd_pid()
{
	awk '$2 == "auditd" { p = $1 } END { print p }' pids
}

# Still alive (no seccomp kill) and answering.
alive()
{
	atf_check -o match:"alive" "$(as_bin auditctl)" -f conf.yaml ping
}

atf_test_case trail cleanup
trail_head()
{
	atf_set "descr" "show returns one call's whole trail, in order, among other calls"
}
trail_body()
{
	as_conf
	as_start auditd
	emit --trail 00000000000000aa >/dev/null &
	a=$!
	emit --trail 00000000000000bb >/dev/null &
	b=$!
	emit -n 5 -r cc >/dev/null
	wait $a $b
	actl show --request-id req-00000000000000aa > trail.txt
	atf_check -o inline:"runnerd tool.request
approvald guardrail.decision
brokerd credential.issued
runnerd sandbox.started
runnerd sandbox.completed
brokerd credential.revoked
runnerd tool.result
" awk '{ print $3, $4 }' trail.txt
	# In seq order, and every record is this call's.
	atf_check -o empty sh -c "awk '{ print substr(\$2, 2) }' trail.txt | sort -nc"
	atf_check -o inline:"7\n" sh -c "grep -c ' req-00000000000000aa ' trail.txt"
	atf_check -o match:'"request_id":"req-00000000000000bb"' \
	    -o not-match:'req-00000000000000aa' \
	    "$(as_bin auditctl)" -f conf.yaml show --request-id req-00000000000000bb --json
	atf_check -s exit:1 -e match:"no records for req-0000000000000fff" \
	    "$(as_bin auditctl)" -f conf.yaml show --request-id req-0000000000000fff
	atf_check -s exit:1 -e match:"not a request id" \
	    "$(as_bin auditctl)" -f conf.yaml show --request-id 42
	alive
	as_stop
}
trail_cleanup()
{
	as_kill_all
}

atf_test_case tail_follow_stats cleanup
tail_follow_stats_head()
{
	atf_set "descr" "tail -n, tail -f sees new records as they commit, stats counts them"
}
tail_follow_stats_body()
{
	as_conf
	as_start auditd
	emit -n 12 -e sandbox.started >/dev/null
	atf_check -o match:"^.*Z #13 runnerd sandbox.started req-0000000000000001 \{\}$" \
	    "$(as_bin auditctl)" -f conf.yaml tail -n 1
	atf_check -o inline:"3\n" sh -c "$(as_bin auditctl) -f conf.yaml tail -n 3 | wc -l"
	"$(as_bin auditctl)" -f conf.yaml -j tail -f -n 0 > follow.txt &
	fpid=$!
	sleep 0.3
	emit -n 2 -e tool.result -r 77 >/dev/null
	i=0
	while [ "$(wc -l < follow.txt)" -lt 2 ] && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
	done
	kill $fpid
	atf_check -o inline:"2\n" sh -c "grep -c '\"event\":\"tool.result\",.*\"request_id\":\"req-0000000000000077\"' follow.txt"
	atf_check -o match:'"events":15' -o match:'"seq":15' -o match:'"followers":0' \
	    "$(as_bin auditctl)" -f conf.yaml -j stats
	atf_check -o match:'^seq: 15$' -o match:'^head: [0-9a-f]{64}$' \
	    "$(as_bin auditctl)" -f conf.yaml stats
	alive
	as_stop
}
tail_follow_stats_cleanup()
{
	as_kill_all
}

atf_test_case readers_writers cleanup
readers_writers_head()
{
	atf_set "descr" "a writer may only write, a reader may only read"
}
readers_writers_body()
{
	as_conf
	sed -i 's/^  readers: .*/  readers: { users: [4242] }/' conf.yaml
	as_start auditd
	emit -n 1 >/dev/null
	for c in "tail" "stats" "rotate" "show --request-id req-0000000000000001"; do
		atf_check -s exit:1 -e match:"not allowed for uid" \
		    "$(as_bin auditctl)" -f conf.yaml $c
	done
	as_stop
	as_conf
	sed -i 's/^  peers: { users: \[[0-9]*\] }$/  peers: { users: [4242] }/' conf.yaml
	as_start auditd
	atf_check -s exit:1 -e match:"AUDIT_EVENT: not allowed for uid" \
	    python3 "$EMIT" "$AS_RUN/audit.sock" -n 1
	# Reading still works; the refused event left no record.
	atf_check -o match:"#1 auditd audit.origin" -o match:"#2 runnerd" \
	    -o match:"#3 auditd log.checkpoint" -o not-match:"#4" \
	    "$(as_bin auditctl)" -f conf.yaml tail
	as_stop
}
readers_writers_cleanup()
{
	as_kill_all
}

atf_test_case scrub_live cleanup
scrub_live_head()
{
	atf_set "descr" "secret-shaped strings sent by a writer never reach the file"
}
scrub_live_body()
{
	as_conf
	as_start auditd
	jwt="eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJl"
	pem="-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5\\n-----END EC PRIVATE KEY-----"
	emit -e credential.issued -d brokerd -F "{
	  \"scope\": \"k8s-pod-reader\", \"lease_id\": \"kubernetes/creds/r/x1\",
	  \"ttl\": 600, \"service_account_token\": \"$jwt\",
	  \"vault\": {\"client_token\": \"hvs.CAESIJ0aB1cD2eF3gH4iJ5kL6mN7\"},
	  \"$jwt\": [\"s.Ga8jKp2Rz7XqWmNb3LcVdTyH\", {\"k\": \"id=AKIAIOSFODNN7EXAMPLE\"}],
	  \"stdout\": \"export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\\nkey: $pem\\nbearer $jwt done\",
	  \"callback\": \"GET /cb?id_token%3D$jwt%26state%3D1\",
	  \"stderr\": \"using keyAKIAQ3EGUV7NH4XWZKPM; mysql -uroot -pMyS3cretPw app\"
	}" >/dev/null
	as_stop
	atf_check -o match:'"scope":"k8s-pod-reader"' -o match:'"ttl":600' \
	    -o match:'"lease_id":"kubernetes/creds/r/x1"' cat var/audit.jsonl
	atf_check -o match:'<redacted:jwt>' -o match:'<redacted:aws-secret>' \
	    -o match:'<redacted:private-key>' -o match:'<redacted:vault-token>' \
	    -o match:'id_token%3D<redacted:jwt>%26' \
	    -o match:'key<redacted:aws-key-id>;' \
	    -o match:'-p<redacted:secret-value> app' cat var/audit.jsonl
	! grep -q MyS3cretPw var/audit.jsonl || atf_fail "mysql's -p is in the log"
	atf_check -o empty "$(atf_get_srcdir)/secret_grep.sh" var/audit.jsonl
}
scrub_live_cleanup()
{
	as_kill_all
}

# The log's origin and ten records, auditd stopped, verify happy.
ten_records()
{
	as_conf
	as_start auditd
	emit -n 10 >/dev/null
	as_stop
	atf_check -o match:"chain intact: 12 records, seq 1..12" \
	    -o match:"checkpoints: 1 signed, the latest \(seq 11\) reached" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
	cp var/audit.jsonl good.jsonl
}

atf_test_case verify_tamper
verify_tamper_head()
{
	atf_set "descr" "verify names the exact record after a byte flip, a deleted line, swapped lines"
}
verify_tamper_body()
{
	ten_records
	# Flip one bit inside record 5 (tool.request -> tnol.request).
	python3 -c '
import sys
l = open("good.jsonl", "rb").read().split(b"\n")
i = l[4].index(b"\"event\":\"t") + 10
l[4] = l[4][:i] + bytes([l[4][i] ^ 1]) + l[4][i + 1:]
open("flip.jsonl", "wb").write(b"\n".join(l))'
	atf_check -s exit:2 -o match:"^flip.jsonl:5: seq 5: altered" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f flip.jsonl
	atf_check -s exit:2 -o match:'"line":5' -o match:'"seq":5' -o match:'"ok":false' \
	    "$(as_bin auditctl)" -f conf.yaml -j verify -f flip.jsonl
	sed 5d good.jsonl > del.jsonl
	atf_check -s exit:2 -o match:"^del.jsonl:5: seq 6: record 5 is missing" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f del.jsonl
	awk 'NR == 5 { l = $0; next } { print } NR == 6 { print l }' \
	    good.jsonl > swap.jsonl
	atf_check -s exit:2 \
	    -o match:"^swap.jsonl:5: seq 6: out of order: seq 5 belongs here and is at line 6" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f swap.jsonl
	# A changed prev breaks the link on both sides of record 7.
	sed '7s/"prev":"[0-9a-f]/"prev":"x/' good.jsonl > prev.jsonl
	atf_check -s exit:2 -o match:"^prev.jsonl:7: seq 7: altered" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f prev.jsonl
	sed '3s/,"seq"/, "seq"/' good.jsonl > space.jsonl
	atf_check -s exit:2 -o match:"^space.jsonl:3: seq 3: altered: not in canonical form" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f space.jsonl
	sed '8s/^{/[/' good.jsonl > junk.jsonl
	atf_check -s exit:2 -o match:"^junk.jsonl:8: seq 8: not valid JSON" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f junk.jsonl
	printf '{"daemon":"run' >> good.jsonl
	atf_check -s exit:2 -o match:"^good.jsonl:13: seq 13: torn" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f good.jsonl
	atf_check -s exit:1 -o match:"No such file" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f missing.jsonl
	# Without -f: the configured log.
	atf_check -o match:"chain intact: 12 records" "$(as_bin auditctl)" -f conf.yaml verify
}

atf_test_case verify_live cleanup
verify_live_head()
{
	atf_set "descr" "with auditd up, verify also catches an altered, cut or forged tail"
}
verify_live_body()
{
	as_conf
	as_start auditd
	emit -n 5 >/dev/null
	atf_check -o match:"chain intact: 6 records" -o match:"auditd's head" \
	    "$(as_bin auditctl)" -f conf.yaml verify
	cp var/audit.jsonl good.jsonl
	# In place (auditd keeps its descriptor): flip a bit of the last record.
	python3 -c '
l = open("good.jsonl", "rb").read().split(b"\n")
i = l[5].index(b"\"event\":\"t") + 10
l[5] = l[5][:i] + bytes([l[5][i] ^ 1]) + l[5][i + 1:]
open("var/audit.jsonl", "wb").write(b"\n".join(l))'
	atf_check -s exit:2 -o match:"audit.jsonl:6: seq 6: altered: its digest is not auditd's head" \
	    "$(as_bin auditctl)" -f conf.yaml verify
	sed '$d' good.jsonl > var/audit.jsonl.new
	cat var/audit.jsonl.new > var/audit.jsonl
	atf_check -s exit:3 -o match:"audit.jsonl:5: seq 5: truncated: records after this one are missing: auditd wrote up to seq 6" \
	    "$(as_bin auditctl)" -f conf.yaml verify
	# A forged record that links correctly is still not auditd's.
	python3 -c '
import hashlib, json
last = open("good.jsonl", "rb").read().split(b"\n")[5]
r = json.loads(last)
r.update(seq=7, prev=hashlib.sha256(last).hexdigest(), event="tool.result")
open("var/audit.jsonl", "wb").write(open("good.jsonl", "rb").read() +
    json.dumps(r, sort_keys=True, separators=(",", ":")).encode() + b"\n")'
	atf_check -s exit:2 -o match:"audit.jsonl:7: seq 7: not written by auditd, whose last record is seq 6" \
	    "$(as_bin auditctl)" -f conf.yaml verify
	atf_check -o match:"chain intact: 7 records" "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
	cat good.jsonl > var/audit.jsonl
	atf_check -o match:"auditd's head" "$(as_bin auditctl)" -f conf.yaml verify
	alive
	as_stop
}
verify_live_cleanup()
{
	as_kill_all
}

atf_test_case torn_tail cleanup
torn_tail_head()
{
	atf_set "descr" "after kill -9 a torn tail is cut, the cut is recorded, the chain goes on"
}
torn_tail_body()
{
	as_conf
	as_start auditd
	emit -n 5 >/dev/null
	kill -9 "$(auditd_pid)"
	printf '{"daemon":"runnerd","event":"tool.re' >> var/audit.jsonl
	as_start auditd
	emit -n 1 -e tool.result >/dev/null
	atf_check -o match:"#7 auditd audit.recovered - .*\"truncated_bytes\":36" \
	    -o match:"#8 runnerd tool.result" \
	    "$(as_bin auditctl)" -f conf.yaml tail -n 2
	atf_check -o match:"chain intact: 8 records" \
	    "$(as_bin auditctl)" -f conf.yaml verify
	alive
	as_stop
}
torn_tail_cleanup()
{
	as_kill_all
}

atf_test_case kill9_under_load cleanup
kill9_under_load_head()
{
	atf_set "descr" "kill -9 while writers write: every acknowledged event survives, the chain holds"
	atf_set "timeout" "120"
}
kill9_under_load_body()
{
	as_conf
	as_start auditd
	ws=""
	for w in 1 2 3 4; do
		emit -n 100000 -r $w > acked.$w 2>/dev/null &
		ws="$ws $!"
	done
	# Under load: events acknowledged already, more on the way.
	i=0
	while [ -z "$(cat acked.* 2>/dev/null)" ] && [ $i -lt 200 ]; do
		i=$((i + 1))
		sleep 0.05
	done
	sleep 0.5
	kill -9 "$(auditd_pid)"
	wait $ws
	acked=$(cat acked.* | sort -n | tail -1)
	[ -n "$acked" ] || atf_fail "no event was acknowledged"
	as_start auditd
	# Every acknowledged seq is on disk (comm wants sort's order).
	for s in $(cat acked.*); do echo "$s"; done | sort > want
	atf_check -o match:"chain intact" "$(as_bin auditctl)" -f conf.yaml verify
	grep -o '"seq":[0-9]*' var/audit.jsonl | cut -d: -f2 | sort > have
	atf_check -o empty comm -23 want have
	alive
	as_stop
}
kill9_under_load_cleanup()
{
	as_kill_all
}

atf_test_case rotation cleanup
rotation_head()
{
	atf_set "descr" "rotation by size, SIGHUP and auditctl rotate keeps one chain across files"
}
rotation_body()
{
	AS_AUDITD_EXTRA="  rotate_size: 4k"
	as_conf
	as_start auditd
	emit -n 40 -F '{"output": "'"$(printf '%0200d' 0)"'"}' >/dev/null
	kill -HUP "$(auditd_pid)"
	sleep 0.2
	atf_check -o match:"previous_file: .*/var/audit.jsonl.0000000000" \
	    "$(as_bin auditctl)" -f conf.yaml rotate
	emit -n 1 >/dev/null
	n=$(ls var/audit.jsonl.* | wc -l)
	[ "$n" -ge 4 ] || atf_fail "only $n rotated files"
	for f in var/audit.jsonl.*; do
		head -1 "$f"
	done | grep -c audit.rotated > /dev/null
	args=""
	for f in $(ls var/audit.jsonl.* | sort) var/audit.jsonl; do
		args="$args -f $f"
	done
	atf_check -o match:"chain intact: $((1 + 40 + 1 + n)) records, seq 1\.\.$((42 + n)) in $((n + 1)) files" \
	    "$(as_bin auditctl)" -f conf.yaml verify $args
	# Each new file starts with audit.rotated linking to the old one.
	atf_check -o match:'"event":"audit.rotated"' head -1 var/audit.jsonl
	# One log across the files: the first record of each names its origin.
	for f in var/audit.jsonl*; do
		head -1 "$f" | grep -o '"origin":"[^"]*"' || echo "none: $f"
	done | sort | uniq -c > origins
	atf_check -o match:"^ *$((n + 1)) \"origin\":\"agent-sandbox/audit/" \
	    -o inline:"$(head -1 origins)\n" cat origins
	atf_check -s exit:0 -o match:"first record links to an earlier file" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
	alive
	as_stop
}
rotation_cleanup()
{
	as_kill_all
}

atf_test_case export cleanup
export_head()
{
	atf_set "descr" "export writes the records as they are (jsonl) or as OCSF events, filtered by request id and time, from the files alone"
}
export_body()
{
	as_conf
	as_start auditd
	emit --trail 00000000000000aa >/dev/null
	emit --trail 00000000000000bb >/dev/null
	as_stop
	# jsonl: byte for byte the log, and no daemon is needed.
	actl export > all.jsonl
	atf_check cmp all.jsonl var/audit.jsonl
	actl export --request-id req-00000000000000bb > bb.jsonl
	atf_check -o inline:"7\n" grep -c '"request_id":"req-00000000000000bb"' \
	    bb.jsonl
	atf_check -o inline:"7\n" sh -c "wc -l < bb.jsonl"
	atf_check -o inline:"0\n" sh -c "$(as_bin auditctl) -f conf.yaml \
	    export --since 2999-01-01T00:00:00Z | wc -l"
	atf_check -o inline:"$(wc -l < var/audit.jsonl)\n" sh -c \
	    "$(as_bin auditctl) -f conf.yaml export --since \
	    2000-01-01T00:00:00Z | wc -l"
	# OCSF: every record, each with its class, activity and type.
	actl export --format ocsf > all.ocsf
	python3 - all.ocsf var/audit.jsonl <<'PY' || atf_fail "OCSF mapping"
import json, sys
ocsf = [json.loads(l) for l in open(sys.argv[1])]
recs = [json.loads(l) for l in open(sys.argv[2])]
assert len(ocsf) == len(recs), (len(ocsf), len(recs))
want = {"sandbox.started": (1007, 1), "sandbox.completed": (1007, 2),
        "credential.issued": (6003, 1), "credential.revoked": (6003, 4),
        "tool.request": (6003, 99)}
for o, r in zip(ocsf, recs):
    c, a = want.get(r["event"], (6003, 99))
    assert (o["class_uid"], o["activity_id"]) == (c, a), (o, r)
    assert o["type_uid"] == c * 100 + a and o["category_uid"] == c // 1000
    assert o["time"] > 1e12 and o["metadata"]["sequence"] == r["seq"]
    assert o["metadata"]["correlation_uid"] == r["request_id"]
    assert o["metadata"]["product"]["name"] == "agent-sandbox"
    assert o["unmapped"]["prev"] == r["prev"]
    if c == 6003:
        assert o["api"]["operation"] == r["event"]
PY
	atf_check -s exit:2 -e match:"usage" \
	    "$(as_bin auditctl)" -f conf.yaml export --format csv
	atf_check -s exit:1 -e match:"not a time" \
	    "$(as_bin auditctl)" -f conf.yaml export --since yesterday
}
export_cleanup()
{
	as_kill_all
}

atf_test_case escapes cleanup
escapes_head()
{
	atf_set "descr" "tail and show print CSI, OSC, C1 and bidi controls of a record escaped, in text and JSON"
}
escapes_body()
{
	as_conf
	as_start auditd
	h='\u001b[2K\u001b[1A\u001b]0;t\u0007\u009b1A\u0085\u202e\u2066\r\u007f'
	emit -r dd -e tool.request \
	    -F "{\"arguments\":{\"command\":\"$h\"},\"$h\":1}" >/dev/null
	rid=req-00000000000000dd
	for j in "" -j; do
		atf_check -o save:tail$j.out "$(as_bin auditctl)" -f conf.yaml \
		    $j tail -n 1
		atf_check -o save:show$j.out "$(as_bin auditctl)" -f conf.yaml \
		    $j show --request-id $rid
	done
	raw=
	for f in tail.out show.out tail-j.out show-j.out; do
		as_no_raw_controls $f || raw="$raw $f"
	done
	[ -z "$raw" ] || atf_fail "raw control characters in$raw"
	grep -qF '"command":"\u001B[2K\u001B[1A\u001B]0;t\u0007\u009B1A' \
	    show.out || atf_fail "show: $(cat show.out)"
	grep -qF '\u0085\u202E\u2066\r\u007F"' show.out ||
	    atf_fail "show: $(cat show.out)"
	# JSON keeps every character.
	atf_check -o inline:"True\nTrue\n" python3 -c 'import json, sys
want = json.loads(sys.argv[1])
for f in ("tail-j.out", "show-j.out"):
    print(json.load(open(f))["fields"]["arguments"]["command"] == want)' "\"$h\""
	as_stop
}
escapes_cleanup()
{
	as_kill_all
}

atf_test_case nul_output cleanup
nul_output_head()
{
	atf_set "descr" "a record whose output holds NUL bytes is recorded whole, read back, and the chain verifies across a restart"
}
nul_output_body()
{
	as_conf
	as_start auditd
	emit -r ee -e tool.result \
	    -F '{"stdout":"a\u0000b\u0000","stderr":"\u0000"}' >/dev/null ||
	    atf_fail "the record was refused"
	atf_check -o save:tail.out "$(as_bin auditctl)" -f conf.yaml \
	    -j tail -n 1
	atf_check -o inline:"True\n" python3 -c 'import json
f = json.load(open("tail.out"))["fields"]
print(f["stdout"] == "a\0b\0" and f["stderr"] == "\0")'
	atf_check -o match:'"stdout":"a\\u0000b\\u0000"' \
	    "$(as_bin auditctl)" -f conf.yaml show --request-id req-00000000000000ee
	# A restart finds the record whole, the log's last (not a torn
	# tail), and links the next ones to it.
	as_stop
	as_start auditd
	atf_check -o inline:"4\n" python3 "$EMIT" "$AS_RUN/audit.sock" -r ef
	atf_check -o not-match:"torn" cat auditd.log
	atf_check -o match:"chain intact: 4 records" \
	    "$(as_bin auditctl)" -f conf.yaml verify
	as_stop
}
nul_output_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case nul_output
	atf_add_test_case export
	atf_add_test_case escapes
	atf_add_test_case trail
	atf_add_test_case tail_follow_stats
	atf_add_test_case readers_writers
	atf_add_test_case scrub_live
	atf_add_test_case verify_tamper
	atf_add_test_case verify_live
	atf_add_test_case torn_tail
	atf_add_test_case kill9_under_load
	atf_add_test_case rotation
}
