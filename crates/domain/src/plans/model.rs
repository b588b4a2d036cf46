//! The plan: its billing interval, its stored row, the body that creates one, and how a
//! member sync names one.

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    Money, OrgId, Ts,
    kind::{Cash, Currency, Enum, Int, Text, Trimmed},
    request, text_enum,
};

text_enum!(
    /// How often a plan is billed.
    PlanInterval { Month = "month", Year = "year", OneTime = "one_time" }
);

/// A plan as returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub id: Uuid,
    /// The organization the plan belongs to.
    #[schema(value_type = i64)]
    pub organization_id: OrgId,
    /// Unique per organization.
    pub name: String,
    /// The price id at the card processor, unique per organization.
    pub processor_price_id: Option<String>,
    /// The plan id at the second payment provider, unique per organization.
    pub alt_processor_plan_id: Option<String>,
    pub price: Money,
    /// ISO 4217 code, upper case.
    #[schema(pattern = "^[A-Z]{3}$")]
    pub currency: String,
    pub interval: PlanInterval,
    /// Job posts an access record on this plan starts with.
    pub jobs_included: i64,
    pub created_at: Ts,
    pub updated_at: Ts,
}

request! {
    /// Body of `POST /plans`.
    pub struct PlanIn {
        /// 1 to 100 characters, unique per organization; stored without surrounding white
        /// space.
        pub name: required Trimmed<1, 100>,
        /// The price id at the card processor; unique per organization. `null` counts as
        /// absent.
        #[json = "processorPriceId"]
        pub processor_price_id: optional Text<1, 255>,
        /// The plan id at the second payment provider; unique per organization. `null`
        /// counts as absent.
        #[json = "altProcessorPlanId"]
        pub alt_processor_plan_id: optional Text<1, 255>,
        /// Exact decimal, 0 or more, at most 4 digits after the point.
        pub price: required Cash,
        /// Three letters (ISO 4217); stored and returned upper-case.
        pub currency: required Currency,
        pub interval: required Enum<PlanInterval>,
        /// Job posts an access record on this plan starts with.
        #[json = "jobsIncluded"]
        pub jobs_included: required Int<0, 1_000_000_000>,
    }
}

/// How a member sync names a plan. Every identifier given must match the same plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanRef {
    pub id: Option<Uuid>,
    pub processor_price_id: Option<String>,
    pub alt_processor_plan_id: Option<String>,
    pub name: Option<String>,
}

impl PlanRef {
    pub fn is_empty(&self) -> bool {
        *self == PlanRef::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_round_trip() {
        for v in PlanInterval::ALL {
            let parsed = PlanInterval::parse(v).unwrap();
            assert_eq!(serde_json::to_value(parsed).unwrap(), *v);
        }
        assert_eq!(PlanInterval::parse("weekly"), None);
    }
}
