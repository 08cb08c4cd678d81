/* SPDX-License-Identifier: ISC */
/*
 * Scrubbing: a fixture of secret-shaped strings in every position a
 * field can hold them (values, keys, nested objects, arrays, inside
 * longer text) must all be gone, and what an auditor needs must stay.
 */
#include <atf-c.h>
#include <stdlib.h>
#include <string.h>

#include "../../auditd/auditd.h"

static const char *const secrets[] = {
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
	    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	"hvs.CAESIGqjNbpzV7FmWqZyLUvX2kWvGq0yS6Ww1jZf",
	"s.Ga8jKp2Rz7XqWmNb3LcVdTyH",
	"AKIAIOSFODNN7EXAMPLE",
	"ASIAY34FZKBOKMUTVV7A",
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
	    "4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u\n"
	    "-----END RSA PRIVATE KEY-----",
};
#define NSECRETS	(sizeof(secrets) / sizeof(secrets[0]))

/* before, secret, after, kind: before and after stay byte for byte. */
static const struct sample {
	const char	*before, *secret, *after, *kind;
} positives[] = {
	{ "echo ",
	    "ghp_mHtGpGL43CKhh0tuH4gLHyreE3IwETcUHZ9l",
	    "\n", "github-token" },
	{ "git clone https://",
	    "ghp_0kmTyv8am04Nwo7g4xHAAGjekvxHm7Z1G3op",
	    "@github.com/o/r.git", "github-token" },
	{ "token is [",
	    "gho_k5Y8wJVzpAXIG70cOKfaAFDLUHU1PkByBRJ9",
	    "]", "github-token" },
	{ "Using ",
	    "ghu_vu6puiatngoQr2S9eIMhxRUJyjSPOXu1rz6a",
	    " for the app", "github-token" },
	{ "\"",
	    "ghs_UUsJJMT7BepRK7F9BEmP36sEl9mdtQq4zUK8",
	    "\"", "github-token" },
	{ "refresh with ",
	    "ghr_ossX6WyVIOul5J9WvGGcJvzwDq6g7YSNZB7dUws0SZgODZ2Yks47et"
	    "kI4Eyyvgh6sMLWls28ZP0M",
	    ".", "github-token" },
	{ "gh auth login --with-token <<< ",
	    "github_pat_fSNajvqLcRkjYeuWFx8L8X_JvO8hEjZ4fJfJdnBb6HGKJfj"
	    "yy76BuqynayOzKlQBG7tKBUAajYco5ldwrh",
	    "", "github-token" },
	{ "pat\t",
	    "github_pat_tWNfF5CmZlNAjw7HBkaTrE_bMWIexH2P3zQkTJCCbqKp7oZ"
	    "LK0G4wXR7gvBdknN938Wwhr648Pj6uprLIU",
	    "\t2026", "github-token" },
	{ "glab: ",
	    "glpat-jOZeT_yd4_LmXsWRVf1s",
	    "", "gitlab-token" },
	{ "curl --header 'PRIVATE: ",
	    "glpat-vusYxVQoorhQk64pYoewmGo4D7",
	    "' https://gitlab.example", "gitlab-token" },
	{ "slack: ",
	    "xoxb-1234567890-2345678901234-lKS6bVa7SK9ZsUtfnFXPgdk6",
	    " ok", "slack-token" },
	{ "(",
	    "xoxp-1234567890-1234567890-1234567890123-wmwcpoat9rqknmrv8"
	    "fjarqzcmqz1il8g1",
	    ")", "slack-token" },
	{ "app ",
	    "xoxa-2-rniH3T74RBPK7pSMcF4QHqTYXVXkPtvJH9n5jIt9",
	    "", "slack-token" },
	{ "refresh ",
	    "xoxr-e7svLTLsgse6mjSiLV5xr9-yXliIGZhGdlAdHEdg3zpspDAhTcckD"
	    "dvRUGXS",
	    "", "slack-token" },
	{ "session ",
	    "xoxs-1234567890-up7ZMMJX7UsG6XztQcp9pYtvjwW1wOILLu8o9AQq",
	    "\n", "slack-token" },
	{ "stripe.api_key: ",
	    "sk_live_MDhxdmq7J2lu6g9Gf1quf87h",
	    "", "stripe-key" },
	{ "Stripe key ",
	    "sk_live_OTG3gUZsXf0yHt8eBnnPurg4va37Oys5POOnUEl5Zmuuy3AWzL"
	    "g07vmsTHqTYliAOiz60mqORhEGM8FDCbutZstyzteHliJaACH",
	    " loaded", "stripe-key" },
	{ "restricted ",
	    "rk_live_8PExzBxLuFfwo59WP7a6ayYJ",
	    "", "stripe-key" },
	{ "test mode ",
	    "sk_test_FWTfGisidePgCVG9718EcOmE",
	    ", ok", "stripe-key" },
	{ "[",
	    "rk_test_jSoDklbCsKzbTnq6LhslhMY85XxXkP2Qb5MbFrhr",
	    "]", "stripe-key" },
	{ "https://maps.googleapis.com/maps/api/geocode/json?key=",
	    "AIzabfau630SFkJYMcIPdrGFkXlZ963WyNV8bVQ",
	    "&address=x", "google-api-key" },
	{ "GOOGLE_API_KEY=",
	    "AIzarr5ubs-v90T2BlagYRiD4acxFORDTaaoT7K",
	    "", "google-api-key" },
	{ "maps ",
	    "AIza6tekyttbx2Caq_xMODdU4x4bR9uKc1bkqoS",
	    " ", "google-api-key" },
	{ "//registry.npmjs.org/:_authToken=",
	    "npm_MkRbhVXF8sJXQzUeDbwPUvyTnOlayCRznded",
	    "\n", "npm-token" },
	{ "npm publish with ",
	    "npm_8ZLprQexOSCB49ErhZ54u4wzfeHk0qVKBPYD",
	    "", "npm-token" },
	{ "OPENAI ",
	    "sk-3FJSNHzPpBaFU7oU3FLtzB9rnfarG3RzszGbteXyMYoUIDXH",
	    "", "openai-key" },
	{ "client = OpenAI(",
	    "sk-proj-H66nIlXIn4u50Q2AHLDdFuUC_qKLQ9XaXUVeqoGSSbhv-lPtzY"
	    "e8FLY0wMLJN44nDGAhvjVxdxRkB0oHdsxKR09OLHf8z0hcp_bnHLIARrnc"
	    "0QXrdkBZBbKT",
	    ")", "openai-key" },
	{ "svc ",
	    "sk-svcacct-EDe59YwpTYNso6l70mjVOeIShe9P9qTvSfHzWRGrKGGQfh4"
	    "HIjTpPXZ7GVf0UjU_i9bSVNQyXLxkKdx4",
	    "", "openai-key" },
	{ "x-api ",
	    "sk-ant-api03-rVfFCXidGWZ-fznbO0guS0xJo4QeMxpDIFbkzknsoUkNo"
	    "xGrD3TmegFXrpVVE_Ln0M6ufdMXg5EbU59TxABd4OMiMbCZhAA",
	    "", "anthropic-key" },
	{ "claude ",
	    "sk-ant-oat01-9FlG9E15oIweX8CfzDDlMYTwJV-aQ_f76ZuPguYk00C-O"
	    "tJzfbfX3g8FFOLH4vAZoVC40SSwJDO7Ht_uxT-q2Y0Nc0qv6AA",
	    " ok", "anthropic-key" },
	{ "psql postgres://app:",
	    "Pg5ecret-2026",
	    "@db.internal:5432/app", "url-password" },
	{ "mysql://root:",
	    "r00tPw",
	    "@127.0.0.1/mysql", "url-password" },
	{ "redis://:",
	    "Redis%40pw9",
	    "@cache:6379/0", "url-password" },
	{ "git push https://x-access-token:",
	    "Xq9secretvalue",
	    "@github.com/o/r", "url-password" },
	{ "amqp://guest:",
	    "gu3st!",
	    "@rabbit/vhost", "url-password" },
	{ "DATABASE_URL=mongodb+srv://svc:",
	    "M0ngoPass",
	    "@cluster0.mongodb.net/db", "url-password" },
	{ "mysql -u root password=",
	    "Hunt3r2x",
	    " -h db", "secret-value" },
	{ "passwd=",
	    "s3cr3tpw",
	    "", "secret-value" },
	{ "secret: ",
	    "Tr0ub4dor",
	    "\nnext: 1", "secret-value" },
	{ "token: ",
	    "abcDEF123xyz",
	    "", "secret-value" },
	{ "{\"api_key\": \"",
	    "Zk8mQ2pL9v",
	    "\", \"n\": 1}", "secret-value" },
	{ "private_key='",
	    "MIIBVgIBADAN Bgkq",
	    "'", "secret-value" },
	{ "PGPASSWORD=",
	    "Postgr3sPw",
	    " psql -h db", "secret-value" },
	{ "export DB_PASSWORD=",
	    "dbPw-778",
	    "\n", "secret-value" },
	{ "mysqldump --password=",
	    "Dump3rPw",
	    " app", "secret-value" },
	{ "Authorization: Bearer ",
	    "opaque-Tok3n-value",
	    "\r\n", "secret-value" },
	{ "authorization: Basic ",
	    "YWxhZGRpbjpvcGVuc2VzYW1l",
	    "", "secret-value" },
	{ "apiKey: ",
	    "k3yValue99",
	    "", "secret-value" },
	{ "client_secret=\"",
	    "two words here",
	    "\" next", "secret-value" },
	{ "{\"password\":\"",
	    "a\\\"quoted\\\"pw",
	    "\"}", "secret-value" },
	{ "url?user=a&password=",
	    "Qs9pw",
	    "&x=1", "secret-value" },
	{ "SECRET_KEY = '",
	    "dj4ngo-s3cret-k3y",
	    "'", "secret-value" },
	{ "data:\n  tls.key: ",
	    "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0"
	    "NBUUVBWGxvODhuaGNJb01qSHNKQ0MzUFB4bDV3RVhCYlRGWVhEWVM2YTNh"
	    "OWtJZklwWjdQSW15ZVpvbTgxQXoxRkc0Vwp6a1VkeFhFMjVEOTlVYm5pbH"
	    "NoYmRFMWJlZW84N1RHWVZKN3BqYmxSUlo1WUVjSWhGMFhaRktvcEp1dlNI"
	    "TnJOCi0tLS0tRU5EIFJTQSBQUklWQVRFIEtFWS0tLS0t",
	    "\n", "private-key" },
	{ "echo '",
	    "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0"
	    "NBUUVBWGxvODhuaGNJ\nb01qSHNKQ0MzUFB4bDV3RVhCYlRGWVhEWVM2YT"
	    "NhOWtJZklwWjdQSW15ZVpvbTgxQXoxRkc0Vwp6\na1VkeFhFMjVEOTlVYm"
	    "5pbHNoYmRFMWJlZW84N1RHWVZKN3BqYmxSUlo1WUVjSWhGMFhaRktvcEp1"
	    "\ndlNITnJOCi0tLS0tRU5EIFJTQSBQUklWQVRFIEtFWS0tLS0t",
	    "' | base64 -d", "private-key" },
	{ "key:\n",
	    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAA"
	    "AAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxO"
	    "QAAACD6qcpi7EWGB9sQQTiCwS094ev9IoKbt2MJwBPod98JUpEWhHC0r\n"
	    "-----END OPENSSH PRIVATE KEY-----",
	    "\n", "private-key" },
	{ "",
	    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAXlo88nhcI"
	    "oMjHsJCC3PPxl5wEXBbTFYXDYS6a3a9kIfIpZ7PImyeZom81Az1FG4W\nz"
	    "kUdxXE25D99UbnilshbdE1beeo87TGYVJ7pjblRRZ5YEcIhF0XZFKopJuv"
	    "SHNrN\n-----END RSA PRIVATE KEY-----",
	    "", "private-key" },
	{ "ec=",
	    "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIj6X28fpZKejYL59ez"
	    "LjtaCskntVLd3ro9XdZma9tGPpKeAD8kQsIoHJgmrb5\n-----END EC P"
	    "RIVATE KEY-----",
	    " end", "private-key" },
	{ "vault login ",
	    "hvs.CAESIsQBJ3gGCArqScu-eRMpulTWEltoLvGuehcrCySx4quXb7oYNk"
	    "frkrf12k9Pi8UWXmA0OpZ1ck_nnXNcV",
	    "", "vault-token" },
	{ "batch ",
	    "hvb.AAAAAQhvTQAwhgy_vpzQYiC0V047aJ1OWVwkzuWVAE3xOT5_fk-VWv"
	    "0bfR89dBOgfRGlUeYrZSwwTaHRvaT1PsrcAXC5GWzug3q76UF4iUKeV4wd"
	    "vI2KpnPZNgvT1o",
	    "", "vault-token" },
	{ "legacy ",
	    "s.ig6D5a7YX9QycalEtN9AbxUu",
	    " ok", "vault-token" },
	{ "id=",
	    "AKIANYAEY3D4AFK6I2OW",
	    "", "aws-key-id" },
	{ "session ",
	    "ASIA44DXJG4H61FXY6GS",
	    ",", "aws-key-id" },
	{ "aws_access_key_id ",
	    "AKIA7IRLTH1SSARQ3YL4",
	    "", "aws-key-id" },
	{ "export AWS_SECRET_ACCESS_KEY ",
	    "JPPCWwVt3apfB+mexoTG/jKWIrS3Ov4s8gItTQPC",
	    "\n", "aws-secret" },
	{ "bearer ",
	    "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJrdWJlcm5ldGV"
	    "zIn0.jyCy7o5ocFuyIEfwFiwJCPLewubiCErT6S9l-SuFER4",
	    " done", "jwt" },
	{ "[",
	    "eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9."
	    "h0xjNPOdz0u3dztzBG52m-dQUyUZQF8NtdtWFy6OO5CizFTpEXCkBK7_Ql"
	    "vQsdbl_4RUUkSGCYvUT5LQdG5HcL",
	    "]", "jwt" },
	/*
	 * Issue 30: glued to a word, after an escape in text that is itself
	 * JSON (a backslash and an n), after %3D in a logged URL.
	 */
	{ "{\"stdout\": \"Cloning into 'app'...\\n",
	    "ghp_IZsNbNP0nqdzyPifDaH7pbek610MH6z1PwI4",
	    "\\n\"}", "github-token" },
	{ "\"ACCESSKEYS\\t2026-11-30T10:02:11Z\\t",
	    "AKIAEZBPR1GR9H5TITTQ",
	    "\\tActive\\tdeploy\"", "aws-key-id" },
	{ "GET /oauth/callback?state=af31&id_token%3D",
	    "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJvcHMiLCJhdWQiOiJn"
	    "cmFmYW5hIiwiZXhwIjoxNzY0NTYwMDAwfQ.Xq3v9Lw2mKp8Rz5Tn7Yb4Hc6Jd1F"
	    "g0Se2Ua9Wo3Ix5Qk7Mr8Nt1Pv4Ly6Bz0Cj2Dh",
	    "%26scope%3Dopenid HTTP/1.1", "jwt" },
	{ "{\"text\": \"rotated the bot token:\\n",
	    "xoxb-8123510684-2827587585101-E4Fq7EqLq5S4RkRl0lGsAQo7",
	    "\"}", "slack-token" },
	{ "2026/12/01 03:39:05 client: using key",
	    "sk-ant-api03-B9V3MWWM8VNruLPcypQeGYe4as_VH4rrXjQdy08as2iWFLMbORa"
	    "95mT-9wpFQ9Xnyz9mnYowuScvVMyStDyrs4pCPsyvM1z",
	    "\n", "anthropic-key" },
	{ "\"Key\\tValue\\ntoken\\t",
	    "hvs.CAESIKd1LaZJp9Im17l8jEf5Aaro9GcjSx4P950iyiwda",
	    "\\ntoken_duration\\t768h\"", "vault-token" },
	{ "{\"log\": \"login ok\\n",
	    "s.eguOlsbMCS9wSI8ymcI2Ha3ZO4",
	    "\\n\"}", "vault-token" },
	{ "\"$ aws configure get aws_secret_access_key\\n",
	    "o3LJoYwIioX2qUT0jfx9aVu7RYxwVDQGcclscO/F",
	    "\\n$ \"", "aws-secret" },
	{ "{\"tls.crt\": \"-----BEGIN CERTIFICATE-----\\nMIIBszCCAVmgAwIBAgIU"
	    "\\n-----END CERTIFICATE-----\\n",
	    "-----BEGIN PRIVATE KEY-----\\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49Aw"
	    "EHBG0wawIBAQQg\\n-----END PRIVATE KEY-----",
	    "\\n\"}", "private-key" },
	{ "{\"body\": \"{\\\"user\\\":\\\"ops\\\",\\\"password\\\":\\\"",
	    "Hunt3r2x",
	    "\\\"}\"}", "secret-value" },
	{ "GET /login?next=https%3A%2F%2Fadmin%3A",
	    "S3cretPw",
	    "%40grafana.internal%2Fd%2Fx HTTP/1.1", "url-password" },
	{ "GET /auth?next=%2Fsettings%3Fpassword%3D",
	    "Hunt3r2x",
	    "%26tab%3D2 HTTP/1.1", "secret-value" },
	{ "{\"url\":\"https://maps.example/v1/geo?q=oslo\\u0026api_key=",
	    "Zk8mQ2pL9vRt",
	    "\\u0026lang=no\"}", "secret-value" },
	/* Issue 30: shapes outside the first list. */
	{ "export DB_PASS=",
	    "Pg5ecret-2026",
	    "\n", "secret-value" },
	{ "      REDIS_PASS: \"",
	    "r3dis!pw",
	    "\"", "secret-value" },
	{ "SMTP_PASS='",
	    "m4il pw 9",
	    "' ./send.sh", "secret-value" },
	{ "docker login registry.example.com --username ci --password ",
	    "Dock3rPw",
	    " 2>&1", "secret-value" },
	{ "kubeadm join 10.0.0.5:6443 --token ",
	    "abcdef.0123456789abcdef",
	    " --control-plane", "secret-value" },
	{ "az login --service-principal --username 7f1c0a2e-9b4d-4e8a-a1c3-"
	    "5d6e7f8a9b0c --password ",
	    "Az9~sEcr3t.Val",
	    " --tenant 72f988bf-86f1-41af-91ab-2d7cd011db47", "secret-value" },
	{ "mysql -h db.internal -u root -p",
	    "S3cretPw",
	    " app < dump.sql", "secret-value" },
	{ "docker exec db mysqldump -uroot -p",
	    "Dump3r!x",
	    " --all-databases > all.sql", "secret-value" },
	{ "kubectl exec -it mariadb-0 -- mariadb -uroot -p'",
	    "My Pw 2026",
	    "' -e 'SHOW DATABASES'", "secret-value" },
	{ "curl -fsS -u admin:",
	    "S3cr3tPw",
	    " https://jenkins.example/api/json", "secret-value" },
	{ "curl --user deploy:",
	    "Tok3n-99x",
	    " -X POST https://ci.example/job/build", "secret-value" },
	{ "/usr/bin/curl -u 'ops:",
	    "two words",
	    "' https://x.example/", "secret-value" },
	{ "{\"auths\": {\"registry.example.com\": {\"auth\": \"",
	    "Y2k6RG9jazNyUHch",
	    "\"}}}", "registry-auth" },
	{ "\t\t\"quay.io\": {\n\t\t\t\"auth\": \"",
	    "cXVheStyb2JvdDpROVhLWjJQTDRNN1dKMFJU",
	    "\",\n", "registry-auth" },
};

static const char *const negatives[] = {
	"sha256 9f4c6b51ff487c32d9aa740540e50d1b2ec0fbaa82e01d5ba30"
	    "21e91cfa7b617",
	"sha256:42a462b9c8388814bbccd717129df8a726c433ea61cdd45ba89"
	    "22ead17e0b989",
	"commit 3f786850e387550fdab836ed7e6dc881de23001b",
	"request req-0123456789abcdef done",
	"approval apr-c2c19bb2d26e902e704b39b06048167c",
	"session ses-00ff00ff00ff00ff claimed",
	"uuid 123e4567-e89b-12d3-a456-426614174000",
	"plan_digest=n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=",
	"digest sha256-ShKZipk7ni2qyiJ/yIomeDhfrpTKz8kxpTy3yrZ5lEY=",
	"run task-runner now",
	"pip install sk-learn scikit-learn",
	"the sk-learn-based-classifier-for-everything-you-need",
	"/var/lib/agent-sandbox/secrets/token",
	"/home/user/.ssh/id_ed25519 and ~/.aws/credentials",
	"token_ttl: 600",
	"secret_name=db-creds",
	"tokens_used_count=12",
	"https://github.com:443/org/repo",
	"ssh://git@github.com/org/repo.git",
	"git@github.com:org/repo.git",
	"mail alice@example.com",
	"AKIA alone, AKIA1234 short",
	"ghp_short gho_ xoxb-1 AIzaShort npm_x",
	"s.short hvs.short",
	"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----EN"
	    "D CERTIFICATE-----",
	"-----BEGIN PUBLIC KEY-----",
	"header eyJhbGciOiJIUzI1NiJ9 alone",
	"password:\n",
	"Error: token expired, retry",
	"scope k8s-pod-reader lease kubernetes/creds/x/q1W2e3",
	"version: 1.2.3 at 2026-12-01T03:39:05Z",
	"if (password == NULL)",
	"npm_config_cache=/tmp/npm",
	"lease aws/creds/deploy/AbCd1234",
	"Terraform will perform the following actions: aws_s3_bucke"
	    "t.b",
	"x=y a==b k: v",
	"echo \"$PW\" | docker login -u ci --password-stdin registry.example",
	"psql --no-password -h db.internal app",
	"restic --password-file /etc/restic/pw backup /srv",
	"GIT_ASKPASS=/usr/bin/true git fetch",
	"{\"pass\": 12, \"fail\": 0, \"skip\": 1}",
	"llm --model claude --max-tokens 1024 'hi'",
	"ssh -p2222 deploy@bastion.example",
	"docker run --name mysql -p3306:3306 -d mysql:8",
	"mysql -h db -P3306 -u root -p app",
	"cp -pR src dst; mkdir -p /tmp/build; ssh -pX",
	"docker run -u 1000:1000 -v /srv:/srv alpine id",
	"curl -u admin https://jenkins.example/api/json",
	"{\"auth\": \"token\", \"path\": \"auth/token\"}",
	"{\"auth\": \"aGVsbG8gd29ybGQ=\"}",
	"{\"log\": \"pulled\\nsha256:42a462b9c8388814bbccd717129df8a726c433ea"
	    "61cdd45ba8922ead17e0b989\\nreq-0123456789abcdef\\t123e4567-e89b-"
	    "12d3-a456-426614174000\"}",
	"GET /search?q=sk-learn%20tutorial%26page%3D2 HTTP/1.1",
	"\"icon\": \"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42"
	    "mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\"",
	"C:\\new\\temp\\token.txt",
};
#define NPOSITIVES	(sizeof(positives) / sizeof(positives[0]))
#define NNEGATIVES	(sizeof(negatives) / sizeof(negatives[0]))

/* Bits of each shape that no scrubbed output may still contain. */
static const char *const fragments[] = {
	"eyJhbGci", "hvs.", "Ga8jKp2R", "AKIA", "ASIAY34", "wJalrXUt",
	"PRIVATE KEY", "MIIEpAIB",
};

static char *
scrubbed(const json_t *in)
{
	json_t *out;
	char *s;

	out = scrub_value(in);
	ATF_REQUIRE(out != NULL);
	s = cjson_dump(out);
	ATF_REQUIRE(s != NULL);
	json_decref(out);
	return s;
}

static void
check_clean(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(fragments) / sizeof(fragments[0]); i++)
		ATF_CHECK_MSG(strstr(s, fragments[i]) == NULL,
		    "\"%s\" left in %s", fragments[i], s);
}

ATF_TC_WITHOUT_HEAD(every_position);
ATF_TC_BODY(every_position, tc)
{
	json_t *fx, *nested, *arr;
	char *s, text[4096];
	size_t i;

	for (i = 0; i < NSECRETS; i++) {
		snprintf(text, sizeof(text), "Error: login with key=%s; "
		    "retry later", secrets[i]);
		nested = json_pack("{s:{s:[s, {s:s}]}}", "deep", "list",
		    secrets[i], "inner", text);
		arr = json_pack("[s, s, [s]]", secrets[i], text, secrets[i]);
		fx = json_pack("{s:s, s:s, s:o, s:o, s:i, s:s}",
		    "value", secrets[i], "output", text, "nested", nested,
		    "array", arr, secrets[i], 1, "scope", "k8s-read");
		ATF_REQUIRE(fx != NULL);
		s = scrubbed(fx);
		check_clean(s);
		ATF_CHECK_MSG(strstr(s, "\"scope\":\"k8s-read\"") != NULL, "%s",
		    s);
		ATF_CHECK_MSG(strstr(s, "retry later") != NULL, "%s", s);
		free(s);
		json_decref(fx);
	}
}

ATF_TC_WITHOUT_HEAD(many_in_one_string);
ATF_TC_BODY(many_in_one_string, tc)
{
	char text[8192] = "", *s;
	json_t *fx;
	size_t i;

	for (i = 0; i < NSECRETS; i++) {
		strlcat(text, i % 2 ? "\"" : " x=", sizeof(text));
		strlcat(text, secrets[i], sizeof(text));
	}
	fx = json_pack("{s:s}", "stdout", text);
	s = scrubbed(fx);
	check_clean(s);
	free(s);
	json_decref(fx);
}

/* Output holds NUL bytes: a secret after one goes, the NULs stay. */
ATF_TC_WITHOUT_HEAD(nul_in_output);
ATF_TC_BODY(nul_in_output, tc)
{
	const char *head = "{\"stdout\":\"a\\u0000x=<redacted:";
	char text[4096], *s;
	json_t *fx;
	size_t i;
	int n;

	for (i = 0; i < NSECRETS; i++) {
		n = snprintf(text, sizeof(text), "a%cx=%s%cb", '\0',
		    secrets[i], '\0');
		ATF_REQUIRE(n > 0 && (size_t)n < sizeof(text));
		fx = json_pack("{s:s%}", "stdout", text, (size_t)n);
		ATF_REQUIRE(fx != NULL);
		s = scrubbed(fx);
		check_clean(s);
		ATF_CHECK_MSG(strncmp(s, head, strlen(head)) == 0 &&
		    strstr(s, ">\\u0000b\"}") != NULL, "%s", s);
		free(s);
		json_decref(fx);
	}
}

ATF_TC_WITHOUT_HEAD(secret_keys);
ATF_TC_BODY(secret_keys, tc)
{
	static const char *const keys[] = { "token", "client_token",
	    "service_account_token", "secret_access_key", "password",
	    "Authorization", "X-Api-Key", "privateKey", "secretId",
	    "aws_secret_access_key", "vault.token", "db_passwd" };
	json_t *fx, *out;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		ATF_CHECK_MSG(scrub_key_is_secret(keys[i]), "%s", keys[i]);
		fx = json_pack("{s:{s:s, s:{s:s}}}", "auth", keys[i],
		    "plain-looking", "inner", keys[i], "hunter2");
		out = scrub_value(fx);
		ATF_REQUIRE(out != NULL);
		ATF_CHECK_STREQ(json_string_value(json_object_get(
		    json_object_get(out, "auth"), keys[i])), AUDIT_REDACTED);
		ATF_CHECK_STREQ(json_string_value(json_object_get(
		    json_object_get(json_object_get(out, "auth"), "inner"),
		    keys[i])), AUDIT_REDACTED);
		json_decref(out);
		json_decref(fx);
	}
}

/* What auditors read stays: scope, lease id, TTL, digests, ids. */
ATF_TC_WITHOUT_HEAD(kept);
ATF_TC_BODY(kept, tc)
{
	static const char *const plain[] = { "scope", "lease_id", "ttl",
	    "token_ttl", "secret_name", "namespace", "plan_digest",
	    "approval_id", "tokens_used_count" };
	const char *keep = "commit 3f786850e387550fdab836ed7e6dc881de23001b "
	    "uuid 123e4567-e89b-12d3-a456-426614174000 file results.json "
	    "sha256 9f4c6b51ff487c32d9aa740540e50d1b2ec0fbaa82e01d5ba3021e91c"
	    "fa7b617 lease aws/creds/deploy/AbCd1234 AKIA alone";
	json_t *fx, *out;
	size_t i, len;
	char *t;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		ATF_CHECK_MSG(!scrub_key_is_secret(plain[i]), "%s", plain[i]);
	ATF_CHECK((t = scrub_text(keep, strlen(keep), &len)) == NULL);
	free(t);
	fx = json_pack("{s:s, s:s, s:i, s:i, s:b, s:n}", "scope",
	    "k8s-pod-reader", "lease_id", "kubernetes/creds/x/q1W2e3", "ttl",
	    600, "token_ttl", 600, "password_set", 1, "token", NULL);
	out = scrub_value(fx);
	ATF_REQUIRE(json_equal(out, fx));
	json_decref(out);
	json_decref(fx);
}

/* A truncated PEM block (capped output) is cut to the end. */
ATF_TC_WITHOUT_HEAD(pem_truncated);
ATF_TC_BODY(pem_truncated, tc)
{
	const char *in = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz"
	    "aC1rZXktdjEAAAAABG5vbmUAAAAEbm9u";
	size_t len;
	char *t;

	t = scrub_text(in, strlen(in), &len);
	ATF_REQUIRE(t != NULL);
	ATF_CHECK_STREQ(t, "key:\n<redacted:private-key>");
	free(t);
}

/*
 * A full chain as a pod's secret holds it, in text that is itself JSON:
 * every private key goes, wherever it stands, and the certificate
 * between them stays.
 */
ATF_TC_WITHOUT_HEAD(pem_every_block);
ATF_TC_BODY(pem_every_block, tc)
{
	const char *key1 = "-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCA"
	    "QEAXlo88nhcIoMjHsJCC3PPxl5wEXBbTFYX\\n-----END RSA PRIVATE KEY"
	    "-----";
	const char *cert = "-----BEGIN CERTIFICATE-----\\nMIIBszCCAVmgAwIBAg"
	    "IU\\n-----END CERTIFICATE-----";
	const char *key2 = "-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEEIj6X28fp"
	    "ZKejYL59ezLjtaCskntVLd3ro9XdZma9tGPp\\n-----END EC PRIVATE KEY---"
	    "--";
	char in[1024], want[1024], *t;
	size_t len;

	snprintf(in, sizeof(in), "{\"tls.pem\": \"%s\\n%s\\n%s\\n\"}",
	    key1, cert, key2);
	snprintf(want, sizeof(want), "{\"tls.pem\": \"<redacted:private-key>"
	    "\\n%s\\n<redacted:private-key>\\n\"}", cert);
	t = scrub_text(in, strlen(in), &len);
	ATF_REQUIRE(t != NULL);
	ATF_CHECK_STREQ(t, want);
	free(t);
}

/*
 * A body with no length limit is judged on its first part but cut
 * whole, however long, glued or not.
 */
ATF_TC_WITHOUT_HEAD(long_bodies);
ATF_TC_BODY(long_bodies, tc)
{
	static const char *const prefixes[] = { "glpat-", "sk-ant-api03-",
	    "xoxp-", "hvs." };
	char in[4096], want[256], *t;
	size_t i, j, n, len;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		n = (size_t)snprintf(in, sizeof(in), "key%s", prefixes[i]);
		for (j = 0; j < 3000; j++)
			in[n++] = "aB3-x_Q9"[j % 8];
		strlcpy(in + n, " end", sizeof(in) - n);
		snprintf(want, sizeof(want), "key<redacted:%s> end",
		    i == 0 ? "gitlab-token" : i == 1 ? "anthropic-key" :
		    i == 2 ? "slack-token" : "vault-token");
		t = scrub_text(in, strlen(in), &len);
		ATF_CHECK_MSG(t != NULL && strcmp(t, want) == 0, "%s: %s",
		    prefixes[i], t != NULL ? t : "(unchanged)");
		free(t);
	}
}

/* Two keys that scrub alike both survive, numbered. */
ATF_TC_WITHOUT_HEAD(key_clash);
ATF_TC_BODY(key_clash, tc)
{
	json_t *fx, *out;

	fx = json_pack("{s:i, s:i}", secrets[3], 1, secrets[4], 2);
	out = scrub_value(fx);
	ATF_REQUIRE(out != NULL);
	ATF_CHECK_EQ(json_object_size(out), 2);
	ATF_CHECK(json_object_get(out, "<redacted:aws-key-id>") != NULL);
	ATF_CHECK(json_object_get(out, "<redacted:aws-key-id>#2") != NULL);
	json_decref(out);
	json_decref(fx);
}

/*
 * Every shape, in the contexts it turns up in (command lines, shell
 * output, config files, URLs): the secret becomes <redacted:kind> and
 * everything around it stays, at top level and nested in an event.
 */
ATF_TC_WITHOUT_HEAD(shapes);
ATF_TC_BODY(shapes, tc)
{
	const struct sample *p;
	char in[4096], want[4096], *t;
	json_t *fx, *out;
	size_t i, len;

	ATF_REQUIRE(NPOSITIVES >= 90);
	for (i = 0; i < NPOSITIVES; i++) {
		p = &positives[i];
		snprintf(in, sizeof(in), "%s%s%s", p->before, p->secret,
		    p->after);
		snprintf(want, sizeof(want), "%s<redacted:%s>%s", p->before,
		    p->kind, p->after);
		t = scrub_text(in, strlen(in), &len);
		ATF_CHECK_MSG(t != NULL && strcmp(t, want) == 0,
		    "sample %zu: %s\nbecame %s\nwanted %s", i, in,
		    t != NULL ? t : "(unchanged)", want);
		ATF_CHECK(t == NULL || len == strlen(t));
		free(t);
		fx = json_pack("{s:{s:[s]}}", "result", "stdout", in);
		ATF_REQUIRE(fx != NULL && (out = scrub_value(fx)) != NULL);
		ATF_CHECK_STREQ(json_string_value(json_array_get(
		    json_object_get(json_object_get(out, "result"), "stdout"),
		    0)), want);
		json_decref(out);
		json_decref(fx);
	}
}

/* Ids, digests, paths and words that look a little like secrets stay. */
ATF_TC_WITHOUT_HEAD(negatives);
ATF_TC_BODY(negatives, tc)
{
	size_t i, len;
	char *t;

	ATF_REQUIRE(NNEGATIVES >= 50);
	for (i = 0; i < NNEGATIVES; i++) {
		t = scrub_text(negatives[i], strlen(negatives[i]), &len);
		ATF_CHECK_MSG(t == NULL, "\"%s\" became \"%s\"", negatives[i],
		    t);
		free(t);
	}
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, every_position);
	ATF_TP_ADD_TC(tp, many_in_one_string);
	ATF_TP_ADD_TC(tp, nul_in_output);
	ATF_TP_ADD_TC(tp, secret_keys);
	ATF_TP_ADD_TC(tp, kept);
	ATF_TP_ADD_TC(tp, pem_truncated);
	ATF_TP_ADD_TC(tp, pem_every_block);
	ATF_TP_ADD_TC(tp, long_bodies);
	ATF_TP_ADD_TC(tp, key_clash);
	ATF_TP_ADD_TC(tp, shapes);
	ATF_TP_ADD_TC(tp, negatives);
	return atf_no_error();
}
