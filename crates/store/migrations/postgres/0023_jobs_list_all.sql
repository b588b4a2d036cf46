-- Lists of every status (`status=all`, the dashboard's All tab) in list order without a
-- sort: the list index leads with the status, so such a list sorted every job of the
-- organization. Covers the expiry check and the status, so a page reads only its rows.
CREATE INDEX jobs_list_all ON jobs(org_id, is_sticky DESC, created_at DESC, id DESC) INCLUDE (status, expires_at);
