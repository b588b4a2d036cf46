-- Access records whose cancelAt is set and which are not canceled or expired yet: what the
-- scheduler's cancellation step reads every second.
CREATE INDEX member_access_cancel_due ON member_access (cancel_at)
    WHERE cancel_at IS NOT NULL AND status IN ('active', 'trialing', 'past_due');
