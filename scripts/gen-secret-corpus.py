#!/usr/bin/env python3
"""Generates the redaction corpus: FAKE secrets in the documented formats of
each provider, each set in a line of the kind a tool prints (a shell export, a
config file, JSON, a log line, a curl command, a URL).

Written from the providers' format descriptions (prefix, length, alphabet),
not from toolgate's patterns, so the corpus tests the patterns rather than
echoing them. Every value is random: none is a real credential.

    python3 scripts/gen-secret-corpus.py > crates/toolgate-core/tests/data/output_check/secrets.jsonl

One JSON object a line: {"kind": ..., "secret": ..., "text": ...}; `secret`
is the part that must not survive redaction (for a connection string, the
password; for a PEM block, its body).
"""
import base64
import json
import random
import string

rng = random.Random(20261205)
UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LO + DIG
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def r(alphabet, n):
    return "".join(rng.choice(alphabet) for _ in range(n))


def between(lo, hi):
    return rng.randint(lo, hi)


# (kind, generator, variable name used in contexts)
FORMATS = [
    ("aws-access-key-id", lambda: rng.choice(["AKIA", "ASIA"]) + r(UP + "234567", 16), "AWS_ACCESS_KEY_ID"),
    ("google-api-key", lambda: "AIza" + r(URLSAFE, 35), "GOOGLE_API_KEY"),
    ("google-oauth-client-secret", lambda: "GOCSPX-" + r(URLSAFE, 28), "GOOGLE_CLIENT_SECRET"),
    ("google-oauth-access-token", lambda: "ya29." + r(URLSAFE, between(100, 200)), "GOOGLE_ACCESS_TOKEN"),
    ("digitalocean-token", lambda: rng.choice(["dop", "doo", "dor"]) + "_v1_" + r(HEX, 64), "DIGITALOCEAN_TOKEN"),
    ("hashicorp-vault-token", lambda: rng.choice(["hvs.", "hvb."]) + r(URLSAFE, between(24, 120)), "VAULT_TOKEN"),
    ("terraform-cloud-token", lambda: r(ALNUM, 14) + ".atlasv1." + r(URLSAFE, 67), "TFE_TOKEN"),
    ("github-token", lambda: rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + r(ALNUM, 36), "GITHUB_TOKEN"),
    ("github-fine-grained-token", lambda: "github_pat_" + r(ALNUM, 22) + "_" + r(ALNUM, 59), "GH_TOKEN"),
    ("gitlab-token", lambda: rng.choice(["glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glcbt-"]) + r(URLSAFE, 20), "GITLAB_TOKEN"),
    ("gitlab-runner-registration-token", lambda: "GR1348941" + r(URLSAFE, 20), "REGISTRATION_TOKEN"),
    ("atlassian-api-token", lambda: "ATATT3" + r(URLSAFE, 170) + "=" + r(HEX.upper(), 8), "JIRA_API_TOKEN"),
    ("slack-token", lambda: rng.choice(["xoxb-", "xoxp-"]) + r(DIG, between(10, 13)) + "-" + r(DIG, between(10, 13)) + "-" + r(ALNUM, 24), "SLACK_BOT_TOKEN"),
    ("slack-token", lambda: "xoxe.xoxp-1-" + r(ALNUM, 140), "SLACK_USER_TOKEN"),
    ("slack-app-token", lambda: "xapp-1-A" + r(UP + DIG, 10) + "-" + r(DIG, 13) + "-" + r(HEX, 64), "SLACK_APP_TOKEN"),
    ("slack-webhook", lambda: "https://hooks.slack.com/services/T" + r(UP + DIG, 8) + "/B" + r(UP + DIG, 10) + "/" + r(ALNUM, 24), "SLACK_WEBHOOK_URL"),
    ("discord-webhook", lambda: "https://discord.com/api/webhooks/" + r(DIG, 18) + "/" + r(URLSAFE, 68), "DISCORD_WEBHOOK"),
    ("stripe-secret-key", lambda: rng.choice(["sk_live_", "rk_live_"]) + r(ALNUM, rng.choice([24, 99])), "STRIPE_SECRET_KEY"),
    ("stripe-webhook-secret", lambda: "whsec_" + r(ALNUM, 32), "STRIPE_WEBHOOK_SECRET"),
    ("shopify-token", lambda: rng.choice(["shpat_", "shpca_", "shppa_", "shpss_"]) + r(HEX, 32), "SHOPIFY_ACCESS_TOKEN"),
    ("anthropic-api-key", lambda: "sk-ant-api03-" + r(URLSAFE, 93) + "AA", "ANTHROPIC_API_KEY"),
    ("anthropic-api-key", lambda: "sk-ant-admin01-" + r(URLSAFE, 93) + "AA", "ANTHROPIC_ADMIN_KEY"),
    ("openai-api-key", lambda: "sk-proj-" + r(URLSAFE, 156), "OPENAI_API_KEY"),
    ("openai-api-key", lambda: "sk-svcacct-" + r(URLSAFE, 156), "OPENAI_API_KEY"),
    ("openai-api-key", lambda: "sk-" + r(ALNUM, 20) + "T3BlbkFJ" + r(ALNUM, 20), "OPENAI_API_KEY"),
    ("openai-api-key", lambda: "sk-" + r(ALNUM, 48), "OPENAI_KEY"),
    ("huggingface-token", lambda: "hf_" + r(UP + LO, 34), "HF_TOKEN"),
    ("huggingface-org-token", lambda: "api_org_" + r(UP + LO, 34), "HF_ORG_TOKEN"),
    ("groq-api-key", lambda: "gsk_" + r(ALNUM, 52), "GROQ_API_KEY"),
    ("replicate-api-token", lambda: "r8_" + r(ALNUM, 37), "REPLICATE_API_TOKEN"),
    ("xai-api-key", lambda: "xai-" + r(ALNUM, 80), "XAI_API_KEY"),
    ("npm-token", lambda: "npm_" + r(ALNUM, 36), "NPM_TOKEN"),
    ("pypi-token", lambda: "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, between(120, 180)), "PYPI_TOKEN"),
    ("docker-hub-token", lambda: "dckr_pat_" + r(URLSAFE, 27), "DOCKERHUB_TOKEN"),
    ("rubygems-api-key", lambda: "rubygems_" + r(HEX, 48), "GEM_HOST_API_KEY"),
    ("twilio-api-key-sid", lambda: "SK" + r(HEX, 32), "TWILIO_API_KEY"),
    ("sendgrid-api-key", lambda: "SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43), "SENDGRID_API_KEY"),
    ("mailchimp-api-key", lambda: r(HEX, 32) + "-us" + str(between(1, 21)), "MAILCHIMP_API_KEY"),
    ("postman-api-key", lambda: "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34), "POSTMAN_API_KEY"),
    ("new-relic-key", lambda: "NRAK-" + r(UP + DIG, 27), "NEW_RELIC_API_KEY"),
    ("sentry-token", lambda: "sntrys_" + base64.b64encode(r(ALNUM, 60).encode()).decode().rstrip("=") + "_" + r(ALNUM, 43), "SENTRY_AUTH_TOKEN"),
    ("grafana-token", lambda: "glsa_" + r(ALNUM, 32) + "_" + r(HEX, 8), "GRAFANA_TOKEN"),
    ("linear-api-key", lambda: "lin_api_" + r(ALNUM, 40), "LINEAR_API_KEY"),
    ("databricks-token", lambda: "dapi" + r(HEX, 32), "DATABRICKS_TOKEN"),
    ("age-secret-key", lambda: "AGE-SECRET-KEY-1" + r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58), "AGE_KEY"),
]

# Formats with no prefix of their own: recognised only next to their name.
CONTEXT_ONLY = [
    ("aws-secret-access-key", lambda: r(ALNUM + "/+", 40), [
        "aws_secret_access_key = {}",
        "AWS_SECRET_ACCESS_KEY={}",
        'export AWS_SECRET_ACCESS_KEY="{}"',
        '    "SecretAccessKey": "{}",',
    ]),
    ("twilio-auth-token", lambda: r(HEX, 32), [
        "TWILIO_AUTH_TOKEN={}",
        "export TWILIO_AUTH_TOKEN='{}'",
    ]),
    ("azure-storage-account-key", lambda: r(B64, 86) + "==", [
        "DefaultEndpointsProtocol=https;AccountName=acme{n};AccountKey={};EndpointSuffix=core.windows.net",
    ]),
    ("azure-shared-access-key", lambda: r(B64, 43) + "=", [
        "Endpoint=sb://acme{n}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={}",
    ]),
]

CONTEXTS = [
    "export {name}={v}",
    '{name}="{v}"',
    "{name}={v}",
    '  "{lname}": "{v}",',
    "{lname}: {v}",
    "{lname} = '{v}'",
    'curl -H "Authorization: Bearer {v}" https://api.example.test/v1/items',
    "2026-05-01T12:00:0{n}Z INFO client configured with key {v} (expires never)",
    "Using token `{v}` for the upload.",
    "+{name}={v}",
    "    token: {v}   # rotate me",
    "env: {{ {name}: {v} }}",
    "https://example.test/callback?token={v}&state=abc",
    "[{v}]",
    "(key: {v})",
]

SCHEMES = ["postgres", "postgresql", "mysql", "mongodb+srv", "mongodb", "redis", "rediss", "amqp", "amqps",
           "mssql", "https", "http", "ftp", "smtp", "mariadb", "clickhouse", "cockroachdb", "nats", "ldap"]
PW_ALPHABET = ALNUM + "-_.~!"
CONN_CONTEXTS = [
    "DATABASE_URL={v}",
    'url = "{v}"',
    "  uri: {v}",
    "connecting to {v} ...",
    "export REDIS_URL='{v}'",
    '{{"dsn": "{v}"}}',
    "git remote add origin {v}",
]

PEM_TYPES = ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
             "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"]


def pem_block(kind, nbytes):
    body = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(nbytes))).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return lines


out = []
n = 0
for kind, gen, name in FORMATS:
    for ctx in rng.sample(CONTEXTS, 12):
        v = gen()
        n += 1
        text = ctx.format(name=name, lname=name.lower(), v=v, n=n % 10)
        # A webhook URL's secret is its path: the host stays readable.
        secret = v
        if kind == "slack-webhook":
            secret = v.split("/services/", 1)[1]
        elif kind == "discord-webhook":
            secret = v.rsplit("/", 1)[1]
        out.append({"kind": kind, "secret": secret, "text": text})

for kind, gen, contexts in CONTEXT_ONLY:
    for i in range(12):
        v = gen()
        ctx = contexts[i % len(contexts)]
        out.append({"kind": kind, "secret": v, "text": ctx.format(v, n=i)})

for i in range(60):
    scheme = SCHEMES[i % len(SCHEMES)]
    user = rng.choice(["app", "admin", "svc_" + r(LO, 4), "deploy", r(LO, 6), "u" + r(DIG, 3)])
    pw = r(PW_ALPHABET, between(8, 32))
    if i % 7 == 3:
        pw = pw[:5] + "%40" + pw[5:]  # a percent-encoded @
    host = rng.choice(["db.internal", "10.0.0.%d" % between(2, 250), "localhost", "cache-%d.example.test" % i,
                       "cluster0.ab%s.mongodb.net" % r(LO + DIG, 5), "[::1]"])
    port = rng.choice(["", ":5432", ":3306", ":6379", ":27017", ":5672"])
    url = "%s://%s:%s@%s%s/%s" % (scheme, user, pw, host, port, rng.choice(["app", "prod", "", "db?sslmode=require"]))
    ctx = CONN_CONTEXTS[i % len(CONN_CONTEXTS)]
    out.append({"kind": "connection-string-password", "secret": pw, "text": ctx.format(v=url)})

for i in range(42):
    t = PEM_TYPES[i % len(PEM_TYPES)]
    lines = pem_block(t, rng.choice([121, 280, 1190, 1218, 2350]))
    secret = "\n".join(lines)
    style = i % 6
    if style == 0:
        text = "-----BEGIN %s-----\n%s\n-----END %s-----\n" % (t, "\n".join(lines), t)
    elif style == 1:  # a service-account JSON file read raw: line breaks escaped
        text = '  "private_key": "-----BEGIN %s-----\\n%s\\n-----END %s-----\\n",' % (t, "\\n".join(lines), t)
        secret = "\\n".join(lines)
    elif style == 2:  # cut before the END line (a truncated or partial print)
        text = "$ cat id_key\n-----BEGIN %s-----\n%s\n" % (t, "\n".join(lines[: max(2, len(lines) // 2)]))
        secret = "\n".join(lines[: max(2, len(lines) // 2)])
    elif style == 3:  # CRLF
        text = "-----BEGIN %s-----\r\n%s\r\n-----END %s-----\r\n" % (t, "\r\n".join(lines), t)
        secret = "\r\n".join(lines)
    elif style == 4:  # encrypted traditional form with RFC 1421 headers
        hdr = "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,%s\n\n" % r(HEX.upper(), 32)
        text = "-----BEGIN %s-----\n%s%s\n-----END %s-----" % (t, hdr, "\n".join(lines), t)
    else:  # an environment variable with the line breaks turned into spaces
        text = 'PRIVATE_KEY="-----BEGIN %s----- %s -----END %s-----"' % (t, " ".join(lines), t)
        secret = " ".join(lines)
    out.append({"kind": "pem-private-key", "secret": secret, "text": text})

for o in out:
    print(json.dumps(o))
