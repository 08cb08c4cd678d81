#!/bin/sh
# SPDX-License-Identifier: ISC
# mkcerts.sh DIR: a test CA and a certificate for 127.0.0.1 signed by it
# (ca.pem, server.pem, server.key), and a second, unrelated CA (other-ca.pem).
set -e
cd "$1"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 \
    -subj /CN=agent-sandbox-test-ca 2>/dev/null
openssl req -x509 $ec -keyout other-ca.key -out other-ca.pem -days 2 \
    -subj /CN=agent-sandbox-other-ca 2>/dev/null
openssl req $ec -keyout server.key -out server.csr -subj /CN=127.0.0.1 \
    2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
    -out server.pem -days 2 -extfile server.ext 2>/dev/null
