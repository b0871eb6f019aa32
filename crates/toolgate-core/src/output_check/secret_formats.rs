//! The secret formats the bounding step redacts, as data: one row per
//! format, with the literal anchors that find candidates fast, the pattern that
//! confirms one, and where the provider documents the format.
//!
//! A row's pattern is matched where one of its anchors occurs (an anchor is
//! the start of the match unless `before` says the match may begin earlier).
//! When the pattern has a capture group, only the group is redacted (a
//! connection string keeps its user and host; only the password goes).
//! Rows are kept as narrow as the documentation allows: a prefix, a length, an
//! alphabet. Formats with no prefix (an AWS secret key, a Twilio auth token) are
//! only recognised next to the name that introduces them.

/// One secret format.
#[derive(Clone, Copy, Debug)]
pub struct SecretFormat {
    /// The kind reported in a redaction (`github-token`, `pem-private-key`, …).
    pub kind: &'static str,
    /// Literal strings, one of which every match contains (case-sensitive).
    pub anchors: &'static [&'static str],
    /// How many bytes before its anchor a match may start (`0`: it starts at
    /// the anchor).
    pub before: usize,
    /// The longest match, in bytes, counted from the anchor.
    pub max_len: usize,
    /// The pattern (Rust `regex` syntax). A first capture group, when there is
    /// one, is the part redacted.
    pub pattern: &'static str,
    /// Where the format is documented.
    pub documented: &'static str,
}

/// The kind reported for the credentials of an HTTP `Authorization` header
/// that no token format knows (a token format that covers the same
/// credentials names it instead).
pub const HTTP_AUTHORIZATION_KIND: &str = "http-authorization";

/// The kind reported for a PEM private-key block (matched by its own code, not
/// by a row: its body runs until the END line).
pub const PEM_KIND: &str = "pem-private-key";

/// Where the PEM private-key block is documented.
pub const PEM_DOCUMENTED: &str = "RFC 7468 (textual encodings: PRIVATE KEY, ENCRYPTED PRIVATE KEY); \
     RFC 1421 headers (Proc-Type, DEK-Info) for the traditional RSA/EC forms; \
     OpenSSH PROTOCOL.key (OPENSSH PRIVATE KEY); RFC 4880 section 6.2 (PGP PRIVATE KEY BLOCK)";

/// The table. Order matters only between rows sharing an anchor position: a
/// longer anchor is tried first.
pub const SECRET_FORMATS: &[SecretFormat] = &[
    // HTTP credentials.
    SecretFormat {
        kind: HTTP_AUTHORIZATION_KIND,
        anchors: &["AUTHORIZATION:", "Authorization:", "authorization:"],
        before: 0,
        max_len: 1100,
        // The scheme's credentials: at least 12 characters of token68 with
        // a digit in them (a placeholder such as `YOUR_TOKEN` or `$TOKEN`
        // is not one).
        pattern: r"(?:AUTHORIZATION|Authorization|authorization):[ \t]*(?i:basic|bearer|token|digest)[ \t]+([A-Za-z0-9+/=._~-]{11,}[0-9][A-Za-z0-9+/=._~-]*|[A-Za-z0-9+/=._~-]*[0-9][A-Za-z0-9+/=._~-]{11,})",
        documented: "RFC 9110 section 11.6.2 (Authorization: scheme and credentials); git-config(1) http.extraHeader, where actions/checkout persists `AUTHORIZATION: basic <base64 of x-access-token:TOKEN>`",
    },
    // Cloud keys.
    SecretFormat {
        kind: "aws-access-key-id",
        anchors: &["AKIA", "ASIA", "ABIA", "ACCA"],
        before: 0,
        max_len: 20,
        pattern: r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}",
        documented: "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids (AKIA: access key, ASIA: temporary access key)",
    },
    SecretFormat {
        kind: "aws-secret-access-key",
        anchors: &[
            "aws_secret_access_key",
            "AWS_SECRET_ACCESS_KEY",
            "SecretAccessKey",
            "secretAccessKey",
        ],
        before: 0,
        max_len: 120,
        pattern: r#"(?i:aws_secret_access_key|secretaccesskey)["']?[ \t]*[:=][ \t]*["']?([A-Za-z0-9/+]{40})"#,
        documented: "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html (aws_secret_access_key, 40 characters); https://docs.aws.amazon.com/STS/latest/APIReference/API_Credentials.html (SecretAccessKey)",
    },
    SecretFormat {
        kind: "google-api-key",
        anchors: &["AIza"],
        before: 0,
        max_len: 39,
        pattern: r"AIza[0-9A-Za-z_-]{35}",
        documented: "https://cloud.google.com/docs/authentication/api-keys (keys start with AIza, 39 characters)",
    },
    SecretFormat {
        kind: "google-oauth-client-secret",
        anchors: &["GOCSPX-"],
        before: 0,
        max_len: 40,
        pattern: r"GOCSPX-[0-9A-Za-z_-]{28}",
        documented: "https://developers.google.com/identity/protocols/oauth2 (client secrets issued since 2021 start with GOCSPX-)",
    },
    SecretFormat {
        kind: "google-oauth-access-token",
        anchors: &["ya29."],
        before: 0,
        max_len: 2048,
        pattern: r"ya29\.[0-9A-Za-z_-]{30,2040}",
        documented: "https://cloud.google.com/docs/authentication/token-types#access (access tokens start with ya29.)",
    },
    SecretFormat {
        kind: "azure-storage-account-key",
        anchors: &["AccountKey="],
        before: 0,
        max_len: 110,
        pattern: r"AccountKey=([A-Za-z0-9+/]{86}==)",
        documented: "https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string (AccountKey, 512-bit base64)",
    },
    SecretFormat {
        kind: "azure-shared-access-key",
        anchors: &["SharedAccessKey="],
        before: 0,
        max_len: 80,
        pattern: r"SharedAccessKey=([A-Za-z0-9+/]{43}=)",
        documented: "https://learn.microsoft.com/en-us/azure/service-bus-messaging/service-bus-sas (connection string SharedAccessKey, 256-bit base64)",
    },
    SecretFormat {
        kind: "digitalocean-token",
        anchors: &["dop_v1_", "doo_v1_", "dor_v1_"],
        before: 0,
        max_len: 71,
        pattern: r"do[opr]_v1_[a-f0-9]{64}",
        documented: "https://docs.digitalocean.com/reference/api/create-personal-access-token/ (dop_v1_ personal, doo_v1_ OAuth, dor_v1_ refresh)",
    },
    SecretFormat {
        kind: "hashicorp-vault-token",
        anchors: &["hvs.", "hvb.", "hvr."],
        before: 0,
        max_len: 400,
        pattern: r"hv[sbr]\.[A-Za-z0-9_-]{24,396}",
        documented: "https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes (hvs. service, hvb. batch, hvr. recovery)",
    },
    SecretFormat {
        kind: "terraform-cloud-token",
        anchors: &[".atlasv1."],
        before: 14,
        max_len: 200,
        pattern: r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,180}",
        documented: "https://developer.hashicorp.com/terraform/cloud-docs/users-teams-organizations/api-tokens (tokens of the form <id>.atlasv1.<secret>)",
    },
    // Source hosts.
    SecretFormat {
        kind: "github-token",
        anchors: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        before: 0,
        max_len: 255,
        pattern: r"gh[pousr]_[A-Za-z0-9]{36,251}",
        documented: "https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/ (ghp_ personal, gho_ OAuth, ghu_ user-to-server, ghs_ server-to-server, ghr_ refresh; 36 characters after the prefix, the last 6 a checksum)",
    },
    SecretFormat {
        kind: "github-fine-grained-token",
        anchors: &["github_pat_"],
        before: 0,
        max_len: 255,
        pattern: r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59,233}",
        documented: "https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/managing-your-personal-access-tokens (fine-grained tokens, github_pat_)",
    },
    SecretFormat {
        kind: "gitlab-token",
        anchors: &[
            "glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glimt-", "glagent-", "gloas-",
            "glcbt-", "glsoat-", "glffct-", "glwt-",
        ],
        before: 0,
        max_len: 300,
        pattern: r"gl(?:pat|dt|rt|ptt|ft|imt|agent|oas|cbt|soat|ffct|wt)-[A-Za-z0-9_-]{20,280}(?:\.[0-9]{1,4}\.[A-Za-z0-9]{6,40})?",
        documented: "https://docs.gitlab.com/security/tokens/#token-prefixes (glpat- personal/project/group, gldt- deploy, glrt- runner, glptt- pipeline trigger, glft- feed, glimt- incoming mail, glagent- agent, gloas- OAuth app secret, glcbt- CI/CD job, glsoat- SCIM, glffct- feature flags client, glwt- workspace)",
    },
    SecretFormat {
        kind: "gitlab-runner-registration-token",
        anchors: &["GR1348941"],
        before: 0,
        max_len: 60,
        pattern: r"GR1348941[A-Za-z0-9_-]{20,50}",
        documented: "https://docs.gitlab.com/security/tokens/#token-prefixes (runner registration tokens, GR1348941)",
    },
    SecretFormat {
        kind: "atlassian-api-token",
        anchors: &["ATATT3"],
        before: 0,
        max_len: 300,
        pattern: r"ATATT3[A-Za-z0-9_=-]{150,290}",
        documented: "https://support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account/ (tokens as issued start with ATATT3)",
    },
    // Chat.
    SecretFormat {
        kind: "slack-token",
        anchors: &[
            "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-", "xoxe.xox",
        ],
        before: 0,
        max_len: 300,
        pattern: r"xox[abprse](?:\.xox[abprse])?-[0-9A-Za-z-]{20,290}",
        documented: "https://api.slack.com/authentication/token-types (xoxb- bot, xoxp- user, xoxa-/xoxr- app and refresh, xoxe.xoxp- rotating)",
    },
    SecretFormat {
        kind: "slack-app-token",
        anchors: &["xapp-"],
        before: 0,
        max_len: 200,
        pattern: r"xapp-[0-9]-[A-Za-z0-9-]{20,190}",
        documented: "https://api.slack.com/authentication/token-types#app-level (xapp-)",
    },
    SecretFormat {
        kind: "slack-webhook",
        anchors: &["hooks.slack.com/"],
        before: 0,
        max_len: 200,
        pattern: r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9/_]{20,180})",
        documented: "https://api.slack.com/messaging/webhooks (the URL is the secret)",
    },
    SecretFormat {
        kind: "discord-webhook",
        anchors: &["discord.com/api/webhooks/", "discordapp.com/api/webhooks/"],
        before: 0,
        max_len: 200,
        pattern: r"discord(?:app)?\.com/api/webhooks/[0-9]{15,21}/([A-Za-z0-9_-]{60,100})",
        documented: "https://discord.com/developers/docs/resources/webhook#execute-webhook (the token in the URL is the secret)",
    },
    // Payments.
    SecretFormat {
        kind: "stripe-secret-key",
        anchors: &["sk_live_", "rk_live_"],
        before: 0,
        max_len: 255,
        pattern: r"[sr]k_live_[A-Za-z0-9]{20,247}",
        documented: "https://docs.stripe.com/keys (sk_live_ secret keys, rk_live_ restricted keys)",
    },
    SecretFormat {
        kind: "stripe-webhook-secret",
        anchors: &["whsec_"],
        before: 0,
        max_len: 100,
        pattern: r"whsec_[A-Za-z0-9+/=]{32,94}",
        documented: "https://docs.stripe.com/webhooks#verify-official-libraries (endpoint secrets start with whsec_)",
    },
    SecretFormat {
        kind: "shopify-token",
        anchors: &["shpat_", "shpca_", "shppa_", "shpss_"],
        before: 0,
        max_len: 38,
        pattern: r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        documented: "https://shopify.dev/changelog/app-secret-key-and-access-token-length-changes (shpat_ admin API, shpca_ custom app, shppa_ private app, shpss_ shared secret; 32 hex characters)",
    },
    // Model APIs.
    SecretFormat {
        kind: "anthropic-api-key",
        anchors: &["sk-ant-"],
        before: 0,
        max_len: 300,
        pattern: r"sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{32,280}",
        documented: "https://docs.anthropic.com/en/api/admin-api/apikeys/get-api-key (keys as issued: sk-ant-api03- for the API, sk-ant-admin01- for the admin API)",
    },
    SecretFormat {
        kind: "openai-api-key",
        anchors: &["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"],
        before: 0,
        max_len: 300,
        pattern: r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,280}",
        documented: "https://platform.openai.com/docs/api-reference/authentication and https://help.openai.com/en/articles/9186755 (project keys sk-proj-, service accounts sk-svcacct-, admin keys sk-admin-)",
    },
    SecretFormat {
        kind: "openai-api-key",
        anchors: &["T3BlbkFJ"],
        before: 60,
        max_len: 120,
        pattern: r"sk-[A-Za-z0-9_-]{16,56}T3BlbkFJ[A-Za-z0-9_-]{16,56}",
        documented: "https://platform.openai.com/docs/api-reference/authentication (user keys as issued: sk-, with T3BlbkFJ, base64 of \"OpenAI\", inside)",
    },
    SecretFormat {
        kind: "openai-api-key",
        anchors: &["sk-"],
        before: 0,
        max_len: 51,
        pattern: r"sk-[A-Za-z0-9]{48}",
        documented: "https://platform.openai.com/docs/api-reference/authentication (legacy user keys: sk- and 48 letters and digits)",
    },
    SecretFormat {
        kind: "huggingface-token",
        anchors: &["hf_"],
        before: 0,
        max_len: 40,
        pattern: r"hf_[A-Za-z0-9]{34,37}",
        documented: "https://huggingface.co/docs/hub/security-tokens (user access tokens start with hf_)",
    },
    SecretFormat {
        kind: "huggingface-org-token",
        anchors: &["api_org_"],
        before: 0,
        max_len: 42,
        pattern: r"api_org_[A-Za-z0-9]{34}",
        documented: "https://huggingface.co/docs/hub/security-tokens (organization API tokens, api_org_)",
    },
    SecretFormat {
        kind: "groq-api-key",
        anchors: &["gsk_"],
        before: 0,
        max_len: 56,
        pattern: r"gsk_[A-Za-z0-9]{52}",
        documented: "https://console.groq.com/docs/api-keys (keys start with gsk_)",
    },
    SecretFormat {
        kind: "replicate-api-token",
        anchors: &["r8_"],
        before: 0,
        max_len: 40,
        pattern: r"r8_[A-Za-z0-9]{37}",
        documented: "https://replicate.com/docs/topics/security/api-tokens (tokens start with r8_)",
    },
    SecretFormat {
        kind: "xai-api-key",
        anchors: &["xai-"],
        before: 0,
        max_len: 84,
        pattern: r"xai-[A-Za-z0-9]{80}",
        documented: "https://docs.x.ai/docs/overview (keys start with xai-)",
    },
    // Package registries.
    SecretFormat {
        kind: "npm-token",
        anchors: &["npm_"],
        before: 0,
        max_len: 40,
        pattern: r"npm_[A-Za-z0-9]{36}",
        documented: "https://github.blog/changelog/2021-09-23-npm-has-a-new-access-token-format/ (npm_, 36 characters, the last 6 a checksum)",
    },
    SecretFormat {
        kind: "pypi-token",
        anchors: &["pypi-AgE"],
        before: 0,
        max_len: 400,
        pattern: r"pypi-AgE[A-Za-z0-9_-]{50,392}",
        documented: "https://pypi.org/help/#apitoken (tokens start with pypi-; the rest is a base64 macaroon, AgEI… on pypi.org and test.pypi.org)",
    },
    SecretFormat {
        kind: "docker-hub-token",
        anchors: &["dckr_pat_", "dckr_oat_"],
        before: 0,
        max_len: 80,
        pattern: r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,71}",
        documented: "https://docs.docker.com/security/for-developers/access-tokens/ (personal access tokens dckr_pat_, organization tokens dckr_oat_)",
    },
    SecretFormat {
        kind: "rubygems-api-key",
        anchors: &["rubygems_"],
        before: 0,
        max_len: 58,
        pattern: r"rubygems_[a-f0-9]{48}",
        documented: "https://guides.rubygems.org/api-key-scopes/ (keys start with rubygems_)",
    },
    // Messaging, email, observability and other services.
    SecretFormat {
        kind: "twilio-api-key-sid",
        anchors: &["SK"],
        before: 0,
        max_len: 34,
        pattern: r"SK[0-9a-f]{32}",
        documented: "https://www.twilio.com/docs/iam/api-keys (API key SIDs: SK and 32 hex characters)",
    },
    SecretFormat {
        kind: "twilio-auth-token",
        anchors: &["TWILIO_AUTH_TOKEN", "twilio_auth_token"],
        before: 0,
        max_len: 80,
        pattern: r#"(?i:twilio_auth_token)["']?[ \t]*[:=][ \t]*["']?([0-9a-f]{32})"#,
        documented: "https://www.twilio.com/docs/iam/credentials/api (auth token: 32 hex characters, TWILIO_AUTH_TOKEN by convention)",
    },
    SecretFormat {
        kind: "sendgrid-api-key",
        anchors: &["SG."],
        before: 0,
        max_len: 69,
        pattern: r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
        documented: "https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys (SG., a 22-character id, a 43-character secret)",
    },
    SecretFormat {
        kind: "mailchimp-api-key",
        anchors: &["-us"],
        before: 32,
        max_len: 8,
        pattern: r"[a-f0-9]{32}-us[0-9]{1,2}",
        documented: "https://mailchimp.com/developer/marketing/guides/quick-start/ (API key: 32 hex characters, a dash and the data center, usN)",
    },
    SecretFormat {
        kind: "postman-api-key",
        anchors: &["PMAK-"],
        before: 0,
        max_len: 64,
        pattern: r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
        documented: "https://learning.postman.com/docs/developer/postman-api/authentication/ (keys start with PMAK-)",
    },
    SecretFormat {
        kind: "new-relic-key",
        anchors: &["NRAK-", "NRII-"],
        before: 0,
        max_len: 40,
        pattern: r"NR(?:AK|II)-[A-Z0-9]{27,32}",
        documented: "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/ (user keys NRAK-, ingest license keys NRII-)",
    },
    SecretFormat {
        kind: "sentry-token",
        anchors: &["sntrys_", "sntryu_"],
        before: 0,
        max_len: 400,
        pattern: r"sntry[su]_[A-Za-z0-9+/=_]{40,390}",
        documented: "https://docs.sentry.io/account/auth-tokens/ (organization tokens sntrys_, user tokens sntryu_)",
    },
    SecretFormat {
        kind: "grafana-token",
        anchors: &["glsa_", "glc_"],
        before: 0,
        max_len: 200,
        pattern: r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,180}={0,2})",
        documented: "https://grafana.com/docs/grafana/latest/administration/service-accounts/ (service account tokens glsa_); https://grafana.com/docs/grafana-cloud/account-management/authentication-and-permissions/access-policies/ (Cloud tokens glc_)",
    },
    SecretFormat {
        kind: "linear-api-key",
        anchors: &["lin_api_"],
        before: 0,
        max_len: 48,
        pattern: r"lin_api_[A-Za-z0-9]{40}",
        documented: "https://developers.linear.app/docs/graphql/working-with-the-graphql-api#personal-api-keys (lin_api_)",
    },
    SecretFormat {
        kind: "databricks-token",
        anchors: &["dapi"],
        before: 0,
        max_len: 38,
        pattern: r"dapi[a-f0-9]{32}(?:-[0-9])?",
        documented: "https://docs.databricks.com/en/dev-tools/auth/pat.html (personal access tokens: dapi and 32 hex characters)",
    },
    SecretFormat {
        kind: "age-secret-key",
        anchors: &["AGE-SECRET-KEY-1"],
        before: 0,
        max_len: 74,
        pattern: r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        documented: "https://age-encryption.org/v1 (X25519 identities: Bech32, HRP AGE-SECRET-KEY-)",
    },
    // Connection strings with a password, any scheme.
    SecretFormat {
        kind: "connection-string-password",
        anchors: &["://"],
        before: 40,
        max_len: 400,
        pattern: r#"[A-Za-z][A-Za-z0-9+.-]{1,39}://[^\s:/?#@"'<>\[\]`\\{}|^]{1,128}:([^\s@/?#"'<>`\[\]\\{}|^]{1,256})@[A-Za-z0-9\[._-]"#,
        documented: "RFC 3986 section 3.2.1 (userinfo user:password@host); https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING-URIS; https://www.mongodb.com/docs/manual/reference/connection-string/; https://dev.mysql.com/doc/refman/8.0/en/connecting-using-uri-or-key-value-pairs.html",
    },
];
