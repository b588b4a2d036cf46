//! What an organization's export holds: every table with every column and the kind of
//! value it stores, in the order the file lists them (a row's parents before it), and the
//! tables it leaves out, each with the reason. A test compares these lists with the
//! schema of both backends, so a migration that adds a table or a column fails it until
//! this file says what an export does with it.

/// The kind of a column's values, which fixes how they are written in the file (the same
/// from either backend) and bound on import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The organization's id (`organizations.id` and every `org_id`): the header's in the
    /// file, the organization's on this server once imported.
    Org,
    /// A UUID, as its hyphenated text.
    Id,
    /// An instant, as RFC 3339 text in UTC with up to microseconds.
    Ts,
    Bool,
    /// A 64-bit integer.
    Int,
    Float,
    Text,
    /// A JSON document, written as itself.
    Json,
    /// Bytes, as lowercase hexadecimal text.
    Bytes,
    /// An exact decimal amount, as a JSON number with exactly its digits.
    Money,
    /// A position in this server's log of jobs that went live (a job alert's progress):
    /// meaningless on another server, so an import sets it to the newest entry there
    /// (the alert goes on from the jobs that go live after the import).
    Cursor,
}

impl Kind {
    fn parse(s: &str) -> Kind {
        match s {
            "org" => Kind::Org,
            "id" => Kind::Id,
            "ts" => Kind::Ts,
            "bool" => Kind::Bool,
            "int" => Kind::Int,
            "float" => Kind::Float,
            "text" => Kind::Text,
            "json" => Kind::Json,
            "bytes" => Kind::Bytes,
            "money" => Kind::Money,
            "cursor" => Kind::Cursor,
            other => panic!("unknown column kind {other}"),
        }
    }
}

/// One column of an exported table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    /// May hold NULL (`null` in the file).
    pub nullable: bool,
}

/// One exported table.
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    /// `name kind` pairs, a `?` after the kind of a column that may be NULL.
    columns: &'static str,
    /// The condition that selects the organization's rows (`$1` is its id).
    pub rows: &'static str,
    /// The order of the rows in the file.
    pub order: &'static str,
}

impl Table {
    /// Its columns, read once from their text.
    pub fn columns(&self) -> &'static [Column] {
        static READ: std::sync::LazyLock<Vec<Vec<Column>>> =
            std::sync::LazyLock::new(|| TABLES.iter().map(Table::read_columns).collect());
        let i = TABLES
            .iter()
            .position(|t| t.name == self.name)
            .expect("an exported table");
        &READ[i]
    }

    fn read_columns(&self) -> Vec<Column> {
        self.columns
            .split(',')
            .map(|c| {
                let (name, kind) = c.trim().split_once(' ').expect("`name kind`");
                let nullable = kind.ends_with('?');
                Column {
                    name,
                    kind: Kind::parse(kind.trim_end_matches('?')),
                    nullable,
                }
            })
            .collect()
    }

    /// The table named `name`.
    pub fn named(name: &str) -> Option<(usize, &'static Table)> {
        TABLES.iter().enumerate().find(|(_, t)| t.name == name)
    }
}

const OF_ORG: &str = "org_id = $1";

/// The exported tables, parents first.
pub const TABLES: &[Table] = &[
    Table {
        name: "organizations",
        columns: "id org, name text, created_at ts, domain text?, tagline text?, logo_url text?, \
            accent_color text?, public_posting bool, mail_job_live bool, mail_expiry_days int, \
            mail_applications bool, require_2fa bool, keep_applications_days int, \
            keep_applications_after_job_days int, \
            member_signup text, member_approval text, member_posts text, paid_posts text, \
            refund_unpublishes bool, require_salary bool, require_remote_countries bool, \
            listing_days int, indexing bool, indexnow_key text?, google_indexing_key text?, \
            google_indexing_quota int",
        rows: "id = $1",
        order: "id",
    },
    Table {
        name: "payment_accounts",
        columns: "org_id org, api_url text, secret_key text, webhook_secret text, updated_at ts",
        rows: OF_ORG,
        order: "org_id",
    },
    Table {
        name: "domain_claims",
        columns: "org_id org, domain text, token text, created_at ts",
        rows: OF_ORG,
        order: "org_id",
    },
    Table {
        name: "api_keys",
        columns: "id id, org_id org, name text, prefix text, key_hash bytes, scopes text, \
            read_limit int, write_limit int, created_at ts, last_used_at ts?, revoked_at ts?",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "dashboard_users",
        columns: "id id, org_id org, email text, email_identity text, password_hash text, \
            created_at ts, last_login_at ts?",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "dashboard_two_factor",
        columns: "user_id id, secret text?, pending_secret text?, last_step int, enabled_at ts?",
        rows: "user_id IN (SELECT id FROM dashboard_users WHERE org_id = $1)",
        order: "user_id",
    },
    Table {
        name: "dashboard_recovery_codes",
        columns: "user_id id, code_hash bytes",
        rows: "user_id IN (SELECT id FROM dashboard_users WHERE org_id = $1)",
        order: "user_id, code_hash",
    },
    Table {
        name: "categories",
        columns: "id id, org_id org, name text, slug text, created_at ts",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "plans",
        columns: "id id, org_id org, name text, processor_price_id text?, \
            alt_processor_plan_id text?, price money, currency text, billing_interval text, \
            jobs_included int, created_at ts, updated_at ts",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "prices",
        columns: "id id, org_id org, name text, amount int, currency text, days int, \
            featured_days int?, archived_at ts?, created_at ts",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "members",
        columns: "id id, org_id org, email text, email_lower text, name text, role text, \
            approval_status text, profile_picture text?, description text?, \
            custom_fields json?, created_at ts, updated_at ts",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "jobs",
        columns: "id id, org_id org, title text, description text, description_text text, \
            company_name text, slug text, job_type text?, location text?, \
            location_restricted bool, is_remote bool, is_highlighted bool, is_sticky bool, \
            how_to_apply text?, how_to_apply_method text?, category_id id?, \
            company_website text?, company_logo_url text?, salary_min float?, \
            salary_max float?, salary_currency text?, salary_period text?, \
            contact_email text?, expires_at ts?, status text, created_at ts, updated_at ts, \
            expiry_reminder_for ts?, owner_user_id id?, featured_until ts?, country text?, \
            region text?, city text?, postal_code text?, remote_countries text?",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "member_access",
        columns: "id id, org_id org, user_id id, plan_id id, status text, \
            processor_subscription_id text?, current_period_start ts?, \
            current_period_end ts?, cancel_at ts?, canceled_at ts?, jobs_remaining int, \
            metadata json, created_at ts, updated_at ts",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "payments",
        columns: "id id, org_id org, user_id id?, job_id id?, plan_id id?, amount money, \
            currency text, status text, payment_provider text, processor_session_id text?, \
            processor_payment_intent_id text?, metadata json, created_at ts, updated_at ts",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "orders",
        columns: "id id, org_id org, job_id id?, price_id id?, kind text, member_id id?, \
            email text?, status text, amount int, currency text, session_id text?, \
            session_url text?, created_at ts, updated_at ts, fulfilled_at ts?, plan_id id?, \
            access_id id?",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "saved_jobs",
        columns: "org_id org, member_id id, job_id id, created_at ts",
        rows: OF_ORG,
        order: "created_at, member_id, job_id",
    },
    Table {
        name: "cms_collections",
        columns: "id id, org_id org, slug text, name text, visibility text, schema json, \
            version int, created_at ts, updated_at ts, allow_public_submit bool, \
            moderation text, sort_by text?, sort_dir text",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "cms_items",
        columns: "id id, org_id org, collection_id id, data json, status text, starts_at ts?, \
            expires_at ts?, position int, owner_user_id id?, created_at ts, updated_at ts",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "webhook_subscriptions",
        columns: "id id, org_id org, event text, target_type text, target_url text, \
            secret text?, is_enabled bool, failing_since ts?, created_at ts, updated_at ts, \
            previous_secret text?, previous_secret_until ts?",
        rows: OF_ORG,
        order: "created_at, id",
    },
    // The delivery log: finished deliveries only (a pending one is the work of the server
    // it was queued on, see docs/operating.md).
    Table {
        name: "webhook_deliveries",
        columns: "id id, subscription_id id, org_id org, event_id id?, event_type text, \
            payload text, status text, attempts int, retry_step int, next_attempt_at ts?, \
            lease_owner id?, lease_until ts?, created_at ts, updated_at ts",
        rows: "org_id = $1 AND status <> 'pending'",
        order: "created_at, id",
    },
    Table {
        name: "webhook_attempts",
        columns: "id id, delivery_id id, attempt int, status_code int?, error text?, \
            duration_ms int, response_excerpt text?, attempted_at ts",
        rows: "delivery_id IN (SELECT id FROM webhook_deliveries \
            WHERE org_id = $1 AND status <> 'pending')",
        order: "attempted_at, id",
    },
    Table {
        name: "applications",
        columns: "id id, org_id org, job_id id, job_title text, name text, email text, \
            resume_url text?, cover_letter text?, answers json?, status text, created_at ts, \
            updated_at ts",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "analytics_daily",
        columns: "org_id org, day text, job_id id, page_views int, job_views int, \
            apply_clicks int, visitors int, sketch bytes?",
        rows: OF_ORG,
        order: "day, job_id",
    },
    // The distinct visitors of each day as this server hashed them (salted; the salts
    // stay here): what exact visitor counts over recent days are counted from.
    Table {
        name: "analytics_visitors",
        columns: "org_id org, job_id id, day text, visitor bytes",
        rows: OF_ORG,
        order: "day, job_id, visitor",
    },
    Table {
        name: "job_alerts",
        columns: "id id, org_id org, email text, email_lower text, frequency text, query text, \
            status text, cursor cursor, created_at ts, confirmed_at ts?, last_run_at ts?, \
            last_sent_at ts?, last_error text?, last_error_at ts?",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "import_sources",
        columns: "id id, org_id org, kind text, url text, every_minutes int, job_status text, \
            category_id id?, etag text?, last_modified text?, next_run_at ts, \
            last_run_at ts?, last_result json?, created_at ts",
        rows: OF_ORG,
        order: "created_at, id",
    },
    Table {
        name: "import_items",
        columns: "source_id id, external_id text, job_id id, digest text",
        rows: "source_id IN (SELECT id FROM import_sources WHERE org_id = $1)",
        order: "source_id, external_id",
    },
    Table {
        name: "audit_log",
        columns: "id id, org_id org, at ts, actor_user_id id?, actor_email text, action text, \
            target text?, detail text?, ip text?",
        rows: OF_ORG,
        order: "at, id",
    },
];

/// The tables an export leaves out, and why (docs/operating.md says the same).
pub const LEFT_OUT: &[(&str, &str)] = &[
    (
        "events",
        "the webhook outbox: in-flight work of the server that wrote it",
    ),
    (
        "mail_outbox",
        "mail waiting to be sent by the server that queued it",
    ),
    (
        "index_notices",
        "search engine notices waiting on the server that queued them",
    ),
    (
        "index_quota",
        "a search engine's daily quota as this server spent it",
    ),
    (
        "job_changes",
        "the search index's feed, rebuilt from the jobs",
    ),
    ("job_counts", "counts kept from the jobs by the database"),
    ("job_list_versions", "cache versions kept by the database"),
    (
        "job_live_log",
        "this server's log of jobs that went live (alerts go on from the import)",
    ),
    ("job_locations", "places kept from the jobs by the database"),
    ("analytics_salts", "this server's secret salts"),
    (
        "dashboard_sessions",
        "sign-ins on this server: staff sign in again",
    ),
    ("dashboard_setup_tokens", "one-time links of this server"),
    ("dashboard_reset_tokens", "one-time links of this server"),
    (
        "dashboard_pending_logins",
        "sign-ins in progress on this server",
    ),
    ("dashboard_login_attempts", "this server's sign-in throttle"),
    ("dashboard_login_pairs", "this server's sign-in throttle"),
    (
        "member_sessions",
        "sign-ins on this server: members sign in again",
    ),
    ("member_sign_in_links", "one-time links of this server"),
    ("rate_limits", "this server's rate-limit state"),
    ("instance_secrets", "this server's own secrets"),
    ("alert_runs", "this server's alert schedule"),
    ("maintenance_tasks", "this server's schema work"),
    ("schema_migrations", "this server's schema version"),
];

/// Columns added to the format after its first version: the table, the column, the
/// version that added it, and the value (JSON) a file of an earlier version means by its
/// absence. An import reads every version from 1 to [`super::FORMAT_VERSION`].
pub const ADDED: &[(&str, &str, i64, &str)] =
    &[("organizations", "keep_applications_after_job_days", 2, "0")];

/// The value a file of format `version` means by leaving `column` of `table` out, when
/// that version came before the column did.
pub fn absent_means(table: &str, column: &str, version: i64) -> Option<serde_json::Value> {
    ADDED
        .iter()
        .find(|(t, c, since, _)| *t == table && *c == column && version < *since)
        .map(|(.., v)| serde_json::from_str(v).expect("a JSON default"))
}

/// Columns of one backend's tables that the database derives from the others (never
/// exported): SQLite's row number of a job, PostgreSQL's search vector.
pub const DERIVED: &[(&str, &str)] = &[("jobs", "seq"), ("jobs", "search")];
