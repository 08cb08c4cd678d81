#!/bin/sh
# SPDX-License-Identifier: ISC
# notifyd's benchmark (not a kyua test): the time from an approval
# request's commit to its signed notification at a webhook receiver on
# 127.0.0.1, COUNT requests one after another; prints p50, p95 and max
# against the target of 2 s at p95.  Real auditd when it acknowledges
# events, else the stand-in.
#
#   regress/notifyd/bench.sh [BUILD [COUNT]]
set -e

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin="$top/${1:-obj}/bin"
count=${2:-200}
W=$(mktemp -d /var/tmp/notifyd-bench.XXXXXX)
cd "$W"
client="python3 $here/../approvald/asclient.py"
. "$here/../lib/bench.subr"
trap bench_cleanup EXIT INT TERM
printf 'whsec_%s\n' "$(head -c 32 /dev/urandom | base64 -w0)" > secret
echo ok > mode
touch hook.log
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
bench_setup "  notifiers: { users: [$(id -u)] }"
cat >> conf.yaml <<CONF
notifyd:
  user: ""
  webhooks: [{ url: "http://127.0.0.1:$port/hook" }]
  secret_file: $W/secret
CONF

bench_audit
python3 "$here/receiver.py" "$port" port hook.log secret mode &
pids="$pids $!"
"$bin/approvald" -d -f conf.yaml > approvald.log 2>&1 &
pids="$pids $!"
bench_wait run/notify.sock
"$bin/notifyd" -d -f conf.yaml > notifyd.log 2>&1 &
pids="$pids $!"
bench_wait port
# Each request: the time just before it is sent (an upper bound on its
# commit), then its notification's arrival; one every 20 ms.
python3 - "$here/../approvald" "$count" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
import asclient
with open("sent", "w") as f:
    for _ in range(int(sys.argv[2])):
        f.write("%f\n" % time.time())
        asclient.new_approval("run", approve=False)
        time.sleep(0.02)
PY
python3 - "$count" <<'PY'
import json, sys, time
count = int(sys.argv[1])
deadline = time.time() + 60
while True:
    got = [json.loads(l) for l in open("hook.log")]
    got = [r for r in got if r["valid"] and r["type"] == "approval.requested"]
    if len(got) >= count or time.time() > deadline:
        break
    time.sleep(0.1)
sent = [float(l) for l in open("sent")]
got.sort(key=lambda r: r["received"])
lat = sorted(r["received"] - s for r, s in zip(got, sent))
if len(lat) < count:
    print("notifyd: only %d of %d notifications arrived" % (len(lat), count))
    sys.exit(1)
def pct(p):
    return lat[min(len(lat) - 1, int(p * len(lat)))]
print("requested -> notification: %d requests, p50 %.0f ms, p95 %.0f ms, "
      "max %.0f ms (target p95 <= 2000 ms)" % (count, pct(0.5) * 1000,
      pct(0.95) * 1000, lat[-1] * 1000))
sys.exit(0 if pct(0.95) <= 2.0 else 1)
PY
