//! Forms derived from a model's field list ([`jobboard_domain::form`]): the board's
//! post form and the dashboard's job form are both drawn from `Job::form_fields()`, and
//! both read a posted form into the body the API takes with the same conversions (prose
//! into paragraphs, currency codes upper case, a zone-less date and time as UTC). A door
//! only chooses which fields it shows (staff-only ones are the dashboard's) and whether
//! an empty box clears a stored value (the dashboard and a member's account edit; the
//! board only creates).

use std::collections::HashMap;

use jobboard_domain::{
    Input as Body,
    categories::Category,
    form::{Choices, Class, Field, Group, Input},
    html,
};

use super::{
    fields::{Choice, FieldView, Problem, fill},
    forms::{FieldMessages, FormData, FormValue},
};

/// Who fills the form in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// Visitors of the board: no staff-only fields or choices; the form creates.
    Public,
    /// A signed-in member (an employer): no staff-only fields, but every choice (they
    /// read their own applications); the form creates and edits.
    Member,
    /// An organization's staff: every field; the form creates and edits.
    Staff,
}

/// A fieldset to draw.
pub struct Fieldset {
    pub legend: &'static str,
    pub fields: Vec<FieldView>,
}

/// The fields `door` shows, in model order.
pub fn shown(fields: &[Field], door: Door) -> impl Iterator<Item = &Field> {
    fields
        .iter()
        .filter(move |f| door == Door::Staff || !f.staff_only)
}

/// The `<input>` type (or `textarea`, `select`, `checkbox`) of an input.
fn control(input: Input) -> &'static str {
    match input {
        Input::Line | Input::Currency | Input::Countries => "text",
        Input::Prose | Input::Lines => "textarea",
        Input::Email => "email",
        Input::Url => "url",
        Input::Number => "number",
        Input::Checkbox => "checkbox",
        Input::DateTime => "datetime-local",
        Input::Select(_) => "select",
    }
}

/// The choices of a select (after an empty one for a field that may be left unset), or
/// `None` when it has nothing to choose from.
fn choices(field: &Field, door: Door, categories: &[Category]) -> Option<Vec<Choice>> {
    let Input::Select(from) = field.input else {
        return Some(Vec::new());
    };
    let mut out = Vec::new();
    match from {
        Choices::Values(values) => {
            if field.class == Class::Optional {
                out.push(Choice::new("", "Not specified"));
            }
            out.extend(
                values()
                    .into_iter()
                    .filter(|(_, _, public)| door != Door::Public || *public)
                    .map(|(v, l, _)| Choice::new(v, l)),
            );
        }
        Choices::Categories => {
            if categories.is_empty() && door != Door::Staff {
                return None;
            }
            out.push(Choice::new("", "No category"));
            out.extend(
                categories
                    .iter()
                    .map(|c| Choice::new(c.id.to_string(), c.name.clone())),
            );
        }
    }
    Some(out)
}

/// The field as drawn, empty.
fn view(field: &Field, choices: Vec<Choice>) -> FieldView {
    let input = control(field.input);
    let mut v = FieldView::new(field.name, field.label, input).choices(choices);
    if let Some(h) = field.hint {
        v = v.hint(h);
    }
    if field.required() {
        v = v.required();
    }
    if !matches!(input, "checkbox" | "select" | "textarea") {
        v = v.autocomplete(field.autocomplete.unwrap_or("off"));
    }
    match field.input {
        Input::Number => v = v.inputmode("decimal"),
        Input::Prose => v.rows = Some(12),
        Input::Lines => v.rows = Some(3),
        _ => {}
    }
    v
}

/// The fieldsets of `fields` as `door` shows them, holding `values` and `messages`, and
/// the problems to list above the form.
pub fn fieldsets(
    fields: &[Field],
    door: Door,
    categories: &[Category],
    values: &HashMap<String, String>,
    messages: &FieldMessages,
) -> (Vec<Fieldset>, Vec<Problem>) {
    let mut groups = Vec::new();
    let mut views = Vec::new();
    for f in shown(fields, door) {
        if let Some(c) = choices(f, door, categories) {
            groups.push(f.group);
            views.push(view(f, c));
        }
    }
    let problems = fill(&mut views, values, messages);
    let mut sets: Vec<Fieldset> = Group::ALL
        .iter()
        .map(|g| Fieldset {
            legend: g.legend(),
            fields: Vec::new(),
        })
        .collect();
    for (g, v) in groups.into_iter().zip(views) {
        let i = Group::ALL.iter().position(|x| *x == g).unwrap_or(0);
        sets[i].fields.push(v);
    }
    sets.retain(|s| !s.fields.is_empty());
    (sets, problems)
}

/// How a field's box becomes a JSON value on `door`.
fn form_value(field: &Field, door: Door) -> FormValue {
    let edits = door != Door::Public;
    match (field.input, field.class) {
        (Input::Checkbox, _) => FormValue::Checkbox,
        (Input::Countries, _) if edits => FormValue::ClearableCodes,
        (Input::Countries, _) => FormValue::Codes,
        (Input::Number, _) if edits => FormValue::ClearableNumber,
        (Input::Number, _) => FormValue::Number,
        (_, Class::Required) if edits => FormValue::Required,
        (_, Class::Optional) if edits => FormValue::Clearable,
        _ => FormValue::Text,
    }
}

/// What a field's input does to the text typed before the operation reads it.
fn typed(input: Input, text: &str) -> String {
    match input {
        Input::Prose => html::from_prose(text),
        Input::Currency => text.trim().to_ascii_uppercase(),
        // A browser's date and time without a zone (`2026-01-31T12:00`) is read as UTC,
        // as the label says.
        Input::DateTime => {
            let t = text.trim();
            let shaped = |n: usize| t.len() == n && t.as_bytes().get(10) == Some(&b'T');
            if shaped(16) {
                format!("{t}:00Z")
            } else if shaped(19) {
                format!("{t}Z")
            } else {
                text.to_string()
            }
        }
        _ => text.to_string(),
    }
}

/// The body of the operation from a posted form: the fields `door` shows, each typed as
/// its input says (fields the door does not show are not taken).
pub fn body_of(fields: &[Field], door: Door, form: &FormData) -> Body {
    let mut typed_form = form.clone();
    for (k, v) in &mut typed_form.0 {
        if let Some(f) = fields.iter().find(|f| f.name == k.as_str()) {
            *v = typed(f.input, v);
        }
    }
    let spec: Vec<(&str, FormValue)> = shown(fields, door)
        .map(|f| (f.name, form_value(f, door)))
        .collect();
    typed_form.to_input(&spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobboard_domain::jobs::Job;
    use serde_json::json;

    #[test]
    fn the_public_door_takes_no_staff_field() {
        let fields = Job::form_fields();
        let form = FormData(vec![
            ("title".into(), "Baker".into()),
            ("status".into(), "active".into()),
            ("is_sticky".into(), "on".into()),
            ("salary_currency".into(), " eur ".into()),
            ("expires_at".into(), "2026-01-31T12:00".into()),
            ("location".into(), " ".into()),
        ]);
        let public = body_of(&fields, Door::Public, &form);
        assert_eq!(public.peek("title"), Some(&json!("Baker")));
        assert_eq!(public.peek("status"), None);
        assert_eq!(public.peek("is_sticky"), None);
        assert_eq!(public.peek("expires_at"), None);
        assert_eq!(public.peek("salary_currency"), Some(&json!("EUR")));
        assert_eq!(public.peek("location"), None);
        let staff = body_of(&fields, Door::Staff, &form);
        assert_eq!(staff.peek("status"), Some(&json!("active")));
        assert_eq!(staff.peek("is_sticky"), Some(&json!(true)));
        assert_eq!(staff.peek("salary_currency"), Some(&json!("EUR")));
        assert_eq!(
            staff.peek("expires_at"),
            Some(&json!("2026-01-31T12:00:00Z"))
        );
        // An empty optional box clears on the dashboard.
        assert_eq!(staff.peek("location"), Some(&json!(null)));
    }
}
