//! The closed sets of members, plans, access records and payments (stored as text).

pub use crate::domain::Money;
use crate::text_enum;

text_enum!(
    /// What a member does on the board.
    Role { Employee = "employee", Business = "business", Both = "both", Jobseeker = "jobseeker", Employer = "employer" }
);

text_enum!(
    /// Whether a member is admitted to the board.
    ApprovalStatus { Approved = "approved", Pending = "pending", Rejected = "rejected" }
);

text_enum!(
    /// State of an access (subscription) record.
    AccessStatus { Active = "active", Trialing = "trialing", PastDue = "past_due", Canceled = "canceled", Expired = "expired" }
);

text_enum!(
    /// State of a payment.
    PaymentStatus { Pending = "pending", Succeeded = "succeeded", Failed = "failed", Refunded = "refunded" }
);

text_enum!(
    /// Who took a payment: the card processor, the second provider, or recorded by hand.
    PaymentProvider { Processor = "processor", AltProcessor = "alt_processor", Manual = "manual" }
);

text_enum!(
    /// How often a plan is billed.
    PlanInterval { Month = "month", Year = "year", OneTime = "one_time" }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip() {
        for v in AccessStatus::ALL {
            let parsed = AccessStatus::parse(v).unwrap();
            assert_eq!(serde_json::to_value(parsed).unwrap(), *v);
        }
        for v in PaymentProvider::ALL.iter().chain(PlanInterval::ALL) {
            assert!(serde_json::to_string(v).unwrap().contains(v));
        }
        assert_eq!(AccessStatus::parse("past_due"), Some(AccessStatus::PastDue));
        assert_eq!(AccessStatus::PastDue.as_str(), "past_due");
        assert_eq!(
            serde_json::to_string(&PaymentProvider::AltProcessor).unwrap(),
            "\"alt_processor\""
        );
        assert_eq!(PlanInterval::parse("weekly"), None);
    }
}
