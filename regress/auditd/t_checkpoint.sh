#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Signed checkpoints: the attacks a whole hash chain alone misses
# (truncation across a restart, a consistent rewrite) and the ways a
# checkpoint itself can be wrong.

. "$(atf_get_srcdir)/../lib/suite.subr"

EMIT="$(atf_get_srcdir)/emit.py"

emit()
{
	python3 "$EMIT" "$AS_RUN/audit.sock" "$@"
}

auditd_pid()
{
	awk '$2 == "auditd" { p = $1 } END { print p }' pids
}

# The log's origin (seq 1) and n records, then a stop: the last one is
# the shutdown checkpoint.
logged()
{
	as_conf
	as_start auditd
	emit -n "$1" >/dev/null
	as_stop
}

# The origin a log's first record names.
origin_of()
{
	sed -n '1s/.*"origin":"\([^"]*\)".*/\1/p' "$1"
}

# Recomputes every seq and prev from the first line on, as an intruder
# without the key would after an edit.
rechain()
{
	python3 -c '
import hashlib, json, sys
prev = "0" * 64
out = []
for i, line in enumerate(open(sys.argv[1], "rb").read().splitlines()):
    r = json.loads(line)
    r.update(seq=i + 1, prev=prev)
    b = json.dumps(r, sort_keys=True, separators=(",", ":"),
        ensure_ascii=False).encode()
    prev = hashlib.sha256(b).hexdigest()
    out.append(b)
open(sys.argv[1], "wb").write(b"\n".join(out) + b"\n")' "$1"
}

atf_test_case truncated_stopped cleanup
truncated_stopped_head()
{
	atf_set "descr" "the tail cut while auditd is stopped: verify says truncated, auditd records log.truncated and chains from the checkpoint"
}
truncated_stopped_body()
{
	logged 30
	head -20 var/audit.jsonl > t && cat t > var/audit.jsonl
	atf_check -s exit:3 -e ignore \
	    -o match:"truncated: the log ends at seq 20, a checkpoint signed seq 31" "$(as_bin auditctl)" -f conf.yaml verify
	as_start auditd
	atf_check -o match:'^#[0-9]+ auditd log.truncated .*"seq_expected":31,"seq_found":20' \
	    sh -c "$(as_bin auditctl) -f conf.yaml tail -n 1 | cut -d' ' -f2-"
	# The new segment goes on from the checkpoint: seq 32 links to it.
	atf_check -o match:'"seq":32' -o match:'"previous_file":"audit.jsonl.000000000020"' \
	    head -1 var/audit.jsonl
	atf_check -o match:"chain intact" -o match:"first record links to an earlier file" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
	as_stop
}
truncated_stopped_cleanup()
{
	as_kill_all
}

atf_test_case truncated_refuse cleanup
truncated_refuse_head()
{
	atf_set "descr" "on_truncation: refuse: auditd does not start on a truncated log"
}
truncated_refuse_body()
{
	logged 10
	AS_AUDITD_EXTRA="  on_truncation: refuse"
	as_conf
	head -5 var/audit.jsonl > t && cat t > var/audit.jsonl
	atf_check -s not-exit:0 -e match:"log.truncated \(on_truncation: refuse\)" \
	    "$(as_bin auditd)" -d -f conf.yaml
	atf_check -o inline:"5\n" sh -c "wc -l < var/audit.jsonl"
}
truncated_refuse_cleanup()
{
	as_kill_all
}

atf_test_case truncated_running cleanup
truncated_running_head()
{
	atf_set "descr" "the tail cut while auditd runs: verify says truncated"
}
truncated_running_body()
{
	as_conf
	as_start auditd
	emit -n 8 >/dev/null
	head -5 var/audit.jsonl > t && cat t > var/audit.jsonl
	atf_check -s exit:3 -e ignore -o match:"truncated: .*auditd wrote up to seq 9" "$(as_bin auditctl)" -f conf.yaml verify
	as_stop
}
truncated_running_cleanup()
{
	as_kill_all
}

atf_test_case rewrite cleanup
rewrite_head()
{
	atf_set "descr" "a consistent rewrite (every hash recomputed) without the key is tampered"
}
rewrite_body()
{
	logged 10
	sed -i '4s/"event":"tool.request"/"event":"tool.nothing"/' var/audit.jsonl
	rechain var/audit.jsonl
	atf_check -s exit:2 -o match:"rewritten: checkpoint at seq 11 does not match" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
	# Without the checkpoint records the checkpoint file still knows.
	grep -v log.checkpoint var/audit.jsonl > t && cat t > var/audit.jsonl
	rechain var/audit.jsonl
	atf_check -s exit:2 -o match:"rewritten: checkpoint at seq 11 does not match" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
	# auditd sees it too at start, and goes on from the checkpoint.
	as_start auditd
	atf_check -o match:'"event":"log.rewritten"' -o match:'"seq":12' \
	    head -1 var/audit.jsonl
	as_stop
}
rewrite_cleanup()
{
	as_kill_all
}

atf_test_case bad_signature cleanup
bad_signature_head()
{
	atf_set "descr" "a checkpoint whose signature does not hold, in the log or in the file"
}
bad_signature_body()
{
	logged 5
	cp var/audit.jsonl good.jsonl
	# Re-signed with a key of our own: consistent, but not auditd's.
	python3 -c '
import sys
l = open("good.jsonl").read().splitlines()
l[6] = l[6].replace("\"sig\":\"", "\"sig\":\"AAAA", 1).replace("AAAA" + l[6].split("\"sig\":\"")[1][:4], "AAAA", 1)
open("var/audit.jsonl", "w").write("\n".join(l) + "\n")'
	rechain var/audit.jsonl
	atf_check -s exit:2 -o match:"forged: checkpoint at seq 6: bad signature" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl -k audit-checkpoint.pub -c ckpt/checkpoint.json
	cp good.jsonl var/audit.jsonl
	# Four characters of the signature, past the note's key hash.
	sed -i '$s/\(.* .\{8\}\)..../\1AAAA/' ckpt/checkpoint.json
	atf_check -s exit:2 -o match:"forged: the checkpoint file's signature does not hold" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
}
bad_signature_cleanup()
{
	as_kill_all
}

atf_test_case checkpoint_age cleanup
checkpoint_age_head()
{
	atf_set "descr" "a checkpoint file older than the log is fine, one newer than the log means truncated"
}
checkpoint_age_body()
{
	logged 5
	cp ckpt/checkpoint.json old.json
	as_start auditd
	emit -n 5 >/dev/null
	as_stop
	atf_check -o match:"chain intact: 13 records" -o match:"the latest \(seq 6\) reached" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl -c old.json
	# A log replaced by an older copy of itself.
	head -6 var/audit.jsonl > older.jsonl
	atf_check -s exit:3 -o match:"truncated: the log ends at seq 6, a checkpoint signed seq 12" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f older.jsonl
	cp older.jsonl var/audit.jsonl
	as_start auditd
	atf_check -o match:'"event":"log.truncated"' head -1 var/audit.jsonl
	as_stop
}
checkpoint_age_cleanup()
{
	as_kill_all
}

atf_test_case missing_key cleanup
missing_key_head()
{
	atf_set "descr" "without a public key verify says so and does not call the log intact"
}
missing_key_body()
{
	logged 3
	rm audit-checkpoint.pub
	atf_check -s exit:1 -o match:"chain intact" \
	    -e match:"no public key to check checkpoints with .*audit-checkpoint.pub" "$(as_bin auditctl)" -f conf.yaml verify
	atf_check -s exit:1 -e match:"nokey.pub: not an Ed25519 public key" \
	    "$(as_bin auditctl)" -f conf.yaml verify -k nokey.pub
}
missing_key_cleanup()
{
	as_kill_all
}

atf_test_case spliced cleanup
spliced_head()
{
	atf_set "descr" "a record spliced in from another log, even rechained, is tampered"
}
spliced_body()
{
	logged 6
	cp var/audit.jsonl a.jsonl
	mkdir other && (cd other && logged 6)
	sed -n 3p other/var/audit.jsonl > rec
	sed '3r rec' a.jsonl > var/audit.jsonl
	atf_check -s exit:2 -o match:"seq 3: " "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
	rechain var/audit.jsonl
	atf_check -s exit:2 -o match:"rewritten: checkpoint at seq 7 does not match" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
	# Another log's origin record, rechained, names another log.
	sed -n 1p other/var/audit.jsonl > rec
	sed '3r rec' a.jsonl > var/audit.jsonl
	rechain var/audit.jsonl
	atf_check -s exit:2 -o match:"^var/audit.jsonl:4: seq 4: spliced: names log agent-sandbox/audit/[0-9a-f/]+, the records before are of log" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
}
spliced_cleanup()
{
	as_kill_all
	(cd other 2>/dev/null && as_kill_all)
}

atf_test_case sink cleanup
sink_head()
{
	atf_set "descr" "each checkpoint goes to the syslog socket as an RFC 5424 message whose text is the checkpoint's note"
	atf_set "timeout" "30"
}
sink_body()
{
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("sink.sock")
open("sink.ready", "w").close()
s.settimeout(20)
open("sink.txt", "wb").write(s.recv(4096))' &
	sink=$!
	while [ ! -e sink.ready ]; do sleep 0.05; done
	AS_AUDITD_EXTRA="  checkpoint_syslog: $(pwd)/sink.sock
  checkpoint_every: 3"
	as_conf
	as_start auditd
	emit -n 4 >/dev/null
	wait $sink
	atf_check -o match:'^<110>1 [0-9T:-]+Z - auditd [0-9]+ checkpoint - agent-sandbox/audit/[0-9a-f]{16}/[0-9a-f]{32}$' \
	    head -1 sink.txt
	# After the header, the note: seq 3 covers the origin and two events.
	python3 - sink.txt var/audit.jsonl <<'PY' || atf_fail "the witness's note"
import base64, json, sys
msg = open(sys.argv[1], "rb").read()
note = msg[msg.index(b" - ", msg.index(b" checkpoint ")) + 3:]
recs = open(sys.argv[2], "rb").read().split(b"\n")
origin = json.loads(recs[0])["fields"]["origin"].encode()
body, sig = note.split(b"\n\n")
assert body.split(b"\n") == [origin, b"3", base64.b64encode(
    bytes.fromhex(json.loads(recs[3])["prev"]))], body
assert sig.startswith("\u2014 ".encode() + origin + b" ") and \
    sig.endswith(b"\n") and len(base64.b64decode(sig.split()[2])) == 68, sig
PY
	as_stop
}
sink_cleanup()
{
	as_kill_all
}

# A receiver of N syslog datagrams on $1 (a socket path, or
# udp:127.0.0.1 for a port of its own, written to recv.port).
receiver()
{
	python3 - "$1" "$2" <<'PY' &
import socket, sys
where, n = sys.argv[1], int(sys.argv[2])
if where == "udp:127.0.0.1":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    open("recv.port", "w").write(str(s.getsockname()[1]))
else:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(where)
open("recv.ready", "w").close()
s.settimeout(20)
with open("recv.txt", "wb") as f:
    for _ in range(n):
        f.write(s.recv(70000) + b"\n")
PY
	recv=$!
	while [ ! -e recv.ready ]; do sleep 0.05; done
}

# Each message is an RFC 5424 header and the record, byte for byte.
check_forwarded()
{
	python3 - recv.txt var/audit.jsonl <<'PY' || atf_fail "forwarded records"
import re, sys
got = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
recs = [l for l in open(sys.argv[2], "rb").read().split(b"\n") if l]
hdr = re.compile(rb"^<110>1 \d{4}-\d\d-\d\dT[0-9:.]+Z - auditd \d+ record - ")
msgs = []
for g in got:
    m = hdr.match(g)
    assert m, g[:80]
    msgs.append(g[m.end():])
assert msgs == recs[:len(msgs)] and len(msgs) == 7, (len(msgs), len(recs))
PY
}

atf_test_case forward cleanup
forward_head()
{
	atf_set "descr" "forward_syslog sends every durable record, as it is in the log, to a local syslog receiver, over a Unix socket and over UDP to 127.0.0.1"
	atf_set "timeout" "60"
}
forward_body()
{
	receiver "$(pwd)/fwd.sock" 7
	AS_AUDITD_EXTRA="  forward_syslog: $(pwd)/fwd.sock"
	as_conf
	as_start auditd
	emit --trail 00000000000000aa >/dev/null
	wait $recv || atf_fail "the Unix receiver got fewer than 7 records"
	check_forwarded
	as_stop
	rm -rf var run recv.ready recv.txt
	receiver udp:127.0.0.1 7
	AS_AUDITD_EXTRA="  forward_syslog: udp:127.0.0.1:$(cat recv.port)"
	as_conf
	as_start auditd
	emit --trail 00000000000000bb >/dev/null
	wait $recv || atf_fail "the UDP receiver got fewer than 7 records"
	check_forwarded
	as_stop
	# Only loopback is a target.
	AS_AUDITD_EXTRA="  forward_syslog: udp:10.0.0.1:514"
	as_conf
	atf_check -s not-exit:0 -o ignore -e match:"forward_syslog" \
	    "$(as_bin auditd)" -d -f conf.yaml
}
forward_cleanup()
{
	as_kill_all
}

atf_test_case other_log cleanup
other_log_head()
{
	atf_set "descr" "a copy of another suite's log checked with this suite's configuration: its checkpoint and key are another log's, said so with exit 4; tampered is still tampered"
}
other_log_body()
{
	logged 3
	mkdir other && (cd other && logged 4)
	cp other/var/audit.jsonl copy.jsonl
	mine=$(origin_of var/audit.jsonl)
	theirs=$(origin_of copy.jsonl)
	atf_check -s exit:4 -o match:"^copy.jsonl:0: seq 6: checkpoint is of log $mine; this log is $theirs$" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f copy.jsonl
	atf_check -s exit:4 -o match:'"kind":"other_log"' \
	    "$(as_bin auditctl)" -f conf.yaml -j verify -f copy.jsonl
	# Its own checkpoint, but our key: the log names its key.
	atf_check -s exit:4 -o match:"this log is $theirs, signed by key [0-9a-f]{16}; the key given is [0-9a-f]{16}$" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f copy.jsonl -c other/ckpt/checkpoint.json
	atf_check -o match:"chain intact: 6 records" -o match:"log: $theirs" \
	    -o match:"the latest \(seq 5\) reached" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f copy.jsonl \
	    -k other/audit-checkpoint.pub -c other/ckpt/checkpoint.json
	sed -i '3s/"event":"tool.request"/"event":"tool.nothing"/' copy.jsonl
	atf_check -s exit:2 -o match:"^copy.jsonl:3: seq 3: altered" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f copy.jsonl
	rechain copy.jsonl
	atf_check -s exit:2 -o match:"^copy.jsonl:6: seq 6: rewritten: checkpoint at seq 5 does not match" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f copy.jsonl
}
other_log_cleanup()
{
	as_kill_all
	(cd other 2>/dev/null && as_kill_all)
}

atf_test_case no_config cleanup
no_config_head()
{
	atf_set "descr" "verify -f without a configuration checks the chain alone and says that no checkpoint was compared"
}
no_config_body()
{
	logged 2
	atf_check -s exit:1 -o match:"chain intact: 4 records" \
	    -o match:"checkpoints: 0 signed; no checkpoint compared" \
	    -e match:"no configuration \(none.yaml\): the chain alone is checked" \
	    "$(as_bin auditctl)" -f none.yaml verify -f var/audit.jsonl
	atf_check -s exit:1 -o match:'"checkpoint_compared":false' -e ignore \
	    "$(as_bin auditctl)" -f none.yaml -j verify -f var/audit.jsonl
	atf_check -o match:"checkpoints: 1 signed, the latest \(seq 3\) reached$" \
	    "$(as_bin auditctl)" -f none.yaml verify -f var/audit.jsonl \
	    -k audit-checkpoint.pub -c ckpt/checkpoint.json
}
no_config_cleanup()
{
	as_kill_all
}

atf_test_case note_form cleanup
note_form_head()
{
	atf_set "descr" "the checkpoint file is a C2SP signed note any Ed25519 verifier checks; a witness's cosignature beside ours is left alone"
}
note_form_body()
{
	logged 3
	python3 - ckpt/checkpoint.json audit-checkpoint.pub var/audit.jsonl <<'PY' || atf_fail "not our note"
import base64, hashlib, json, subprocess, sys
note = open(sys.argv[1], "rb").read()
pub = subprocess.run(["openssl", "pkey", "-pubin", "-in", sys.argv[2],
    "-outform", "DER"], check=True, capture_output=True).stdout[-32:]
recs = open(sys.argv[3], "rb").read().split(b"\n")
origin = json.loads(recs[0])["fields"]["origin"].encode()
text, sigs = note.split(b"\n\n")
text += b"\n"
assert text == b"%s\n4\n%s\n" % (origin, base64.b64encode(
    hashlib.sha256(recs[3]).digest())), text
dash, name, sig = sigs.decode().split()
assert dash == "\u2014" and name == origin.decode(), sigs
raw = base64.b64decode(sig)
assert raw[:4] == hashlib.sha256(origin + b"\n\x01" + pub).digest()[:4]
open("text", "wb").write(text)
open("sig", "wb").write(raw[4:])
PY
	atf_check -o match:"Signature Verified Successfully" openssl pkeyutl \
	    -verify -pubin -inkey audit-checkpoint.pub -rawin -in text -sigfile sig
	printf '\342\200\224 witness.example/w1 %s\n' \
	    "$(head -c 68 /dev/urandom | base64 -w 0)" >> ckpt/checkpoint.json
	atf_check -o match:"checkpoints: 1 signed, the latest \(seq 4\) reached$" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
	# auditd reads it back at start: no truncation, no rewrite.
	as_start auditd
	as_stop
	atf_check -o inline:"5\n" sh -c "wc -l < var/audit.jsonl"
}
note_form_cleanup()
{
	as_kill_all
}

atf_test_case old_form cleanup
old_form_head()
{
	atf_set "descr" "a log and checkpoint from before origins (JSON, v1) still verify; auditd gives that log its origin at its next start, once"
}
old_form_body()
{
	fx="$(atf_get_srcdir)/oldlog"
	atf_check -o match:"chain intact: 10 records" \
	    -o match:"checkpoints: 3 signed, the latest \(seq 9\) reached$" \
	    "$(as_bin auditctl)" -f none.yaml verify -f "$fx/audit.jsonl" \
	    -k "$fx/audit-checkpoint.pub" -c "$fx/checkpoint.json"
	as_conf
	mkdir ckpt
	cp "$fx/audit.jsonl" var/
	cp "$fx/checkpoint.json" "$fx/checkpoint.key" ckpt/
	cp "$fx/audit-checkpoint.pub" .
	as_start auditd
	emit -n 2 >/dev/null
	as_stop
	atf_check -o match:'"event":"audit.origin","fields":\{"key_id":"e31fa41c93b05ccf","origin":"agent-sandbox/audit/e31fa41c93b05ccf/[0-9a-f]{32}"\},.*"seq":11,' \
	    sed -n 11p var/audit.jsonl
	atf_check -o match:"chain intact: 14 records" -o match:"log: agent-sandbox/audit/e31fa41c93b05ccf/" \
	    -o match:"checkpoints: 4 signed, the latest \(seq 13\) reached$" \
	    "$(as_bin auditctl)" -f conf.yaml verify
	as_start auditd
	emit -n 1 >/dev/null
	as_stop
	atf_check -o inline:"1\n" grep -c audit.origin var/audit.jsonl
}
old_form_cleanup()
{
	as_kill_all
}

atf_test_case origin_restart cleanup
origin_restart_head()
{
	atf_set "descr" "auditd at start: a log naming another origin than its checkpoint is moved aside (log.rewritten) and the new segment goes on as the checkpoint's log"
}
origin_restart_body()
{
	logged 3
	mine=$(origin_of var/audit.jsonl)
	cp ckpt/checkpoint.json first.note
	rm var/audit.jsonl ckpt/checkpoint.json
	logged 3
	theirs=$(origin_of var/audit.jsonl)
	[ "$mine" != "$theirs" ] || atf_fail "one origin for two logs"
	cp first.note ckpt/checkpoint.json
	atf_check -s exit:4 -o match:"checkpoint is of log $mine; this log is $theirs" \
	    "$(as_bin auditctl)" -f conf.yaml verify
	as_start auditd
	as_stop
	atf_check -o match:'"event":"log.rewritten"' -o match:'"seq":5,' \
	    -o match:"\"origin\":\"$mine\"" -o match:"\"origin_found\":\"$theirs\"" \
	    head -1 var/audit.jsonl
	atf_check -o match:"chain intact" -o match:"log: $mine" \
	    -o match:"the latest \(seq 5\) reached" \
	    "$(as_bin auditctl)" -f conf.yaml verify -f var/audit.jsonl
}
origin_restart_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case other_log
	atf_add_test_case no_config
	atf_add_test_case note_form
	atf_add_test_case old_form
	atf_add_test_case origin_restart
	atf_add_test_case forward
	atf_add_test_case truncated_stopped
	atf_add_test_case truncated_refuse
	atf_add_test_case truncated_running
	atf_add_test_case rewrite
	atf_add_test_case bad_signature
	atf_add_test_case checkpoint_age
	atf_add_test_case missing_key
	atf_add_test_case spliced
	atf_add_test_case sink
}
