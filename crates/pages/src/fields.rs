//! Form fields as the pages draw them (the dashboard's `dashboard/field.html`, the
//! board's post form): a label, an optional hint, the input with the value to show, and
//! the operation's message beside it when the form was refused, tied to the input for
//! screen readers.

use std::collections::HashMap;

use jobboard_domain::FieldError;

use crate::{error::PageError, forms::FieldMessages};

/// One choice of a select.
#[derive(Debug, Clone)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

impl Choice {
    pub fn new(value: impl Into<String>, label: impl Into<String>) -> Choice {
        Choice {
            value: value.into(),
            label: label.into(),
        }
    }
}

/// A field to draw.
#[derive(Debug, Clone)]
pub struct FieldView {
    pub name: &'static str,
    pub label: &'static str,
    pub hint: Option<String>,
    /// An `<input>` type (`text`, `email`, `url`, `number`, `password`,
    /// `datetime-local`), or `textarea`, `select`, `checkbox`.
    pub input: &'static str,
    pub value: String,
    pub choices: Vec<Choice>,
    pub required: bool,
    /// The browser's autocomplete hint (`email`, `current-password`, `off`).
    pub autocomplete: Option<&'static str>,
    /// The keyboard a phone shows (`numeric`).
    pub inputmode: Option<&'static str>,
    /// The height of a textarea, in lines.
    pub rows: Option<u8>,
    pub error: Option<String>,
}

impl FieldView {
    pub fn new(name: &'static str, label: &'static str, input: &'static str) -> FieldView {
        FieldView {
            name,
            label,
            hint: None,
            input,
            value: String::new(),
            choices: Vec::new(),
            required: false,
            autocomplete: None,
            inputmode: None,
            rows: None,
            error: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> FieldView {
        self.hint = Some(hint.into());
        self
    }

    pub fn required(mut self) -> FieldView {
        self.required = true;
        self
    }

    pub fn choices(mut self, choices: Vec<Choice>) -> FieldView {
        self.choices = choices;
        self
    }

    pub fn autocomplete(mut self, v: &'static str) -> FieldView {
        self.autocomplete = Some(v);
        self
    }

    pub fn inputmode(mut self, v: &'static str) -> FieldView {
        self.inputmode = Some(v);
        self
    }

    /// True for a checked checkbox.
    pub fn checked(&self) -> bool {
        matches!(self.value.as_str(), "on" | "true")
    }

    /// The ids the input is described by (its hint and its error).
    pub fn described_by(&self) -> String {
        let mut ids = Vec::new();
        if self.hint.is_some() {
            ids.push(format!("f-{}-hint", self.name));
        }
        if self.error.is_some() {
            ids.push(format!("f-{}-error", self.name));
        }
        ids.join(" ")
    }
}

/// A problem listed at the top of a refused form, linking to its field.
#[derive(Debug, Clone)]
pub struct Problem {
    /// The id of the field's input (`f-title`), or empty for a problem of the whole form.
    pub target: String,
    pub label: String,
    pub message: String,
}

/// Fills `fields` with `values` and `messages`; the problems to list (those of fields
/// not on the form included).
pub fn fill(
    fields: &mut [FieldView],
    values: &HashMap<String, String>,
    messages: &FieldMessages,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for f in fields.iter_mut() {
        if let Some(v) = values.get(f.name) {
            f.value.clone_from(v);
        }
        if let Some(m) = messages.get(f.name) {
            f.error = Some(m.to_string());
            problems.push(Problem {
                target: format!("f-{}", f.name),
                label: f.label.to_string(),
                message: m.to_string(),
            });
        }
    }
    let mut others: Vec<(&String, &String)> = messages
        .0
        .iter()
        .filter(|(k, _)| !fields.iter().any(|f| f.name == k.as_str()))
        .collect();
    others.sort();
    for (field, message) in others {
        problems.push(Problem {
            target: String::new(),
            label: field.clone(),
            message: message.clone(),
        });
    }
    problems
}

/// The values of a posted form, by name (the first of each).
pub fn values_of(form: &crate::forms::FormData) -> HashMap<String, String> {
    let mut m = HashMap::new();
    for (k, v) in &form.0 {
        m.entry(k.clone()).or_insert_with(|| v.clone());
    }
    m
}

/// The messages to show beside a refused form's fields; `Err` for a failure that is not
/// about the form (not found, storage): the page to answer.
pub fn messages_of(e: jobboard_domain::Error) -> Result<FieldMessages, PageError> {
    match e {
        jobboard_domain::Error::Invalid(fields) | jobboard_domain::Error::Schema(fields) => {
            Ok(FieldMessages::of(&fields))
        }
        jobboard_domain::Error::Conflict { message, details } => {
            let field = details
                .get("field")
                .and_then(|f| f.as_str())
                .unwrap_or("form")
                .to_string();
            Ok(FieldMessages::of(&[FieldError::new(
                field, "conflict", message,
            )]))
        }
        other => Err(PageError::from(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_go_beside_their_fields() {
        let mut fields = vec![
            FieldView::new("title", "Title", "text"),
            FieldView::new("company_name", "Company", "text"),
        ];
        let values = HashMap::from([("title".to_string(), "<b>x</b>".to_string())]);
        let messages = FieldMessages::of(&[
            FieldError::new("company_name", "required", "This field is required."),
            FieldError::new("body", "required", "Send at least one field."),
        ]);
        let problems = fill(&mut fields, &values, &messages);
        assert_eq!(fields[0].value, "<b>x</b>");
        assert_eq!(fields[0].error, None);
        assert_eq!(fields[1].error.as_deref(), Some("This field is required."));
        assert_eq!(fields[1].described_by(), "f-company_name-error");
        assert_eq!(problems.len(), 2);
        assert_eq!(problems[0].target, "f-company_name");
        assert_eq!(problems[1].target, "");
    }
}
