//! Forms made from a CMS collection's schema, shared by the board's submission form and
//! the dashboard's item form: one control per schema field (named `data_<field>`, so that
//! no schema field meets a form's own fields), the `data` object a posted form makes, and
//! the operation's problems named by the form's controls. Drawn by
//! `web/schema_fields.html`.

use serde_json::{Map, Value};

use super::forms::{FieldMessages, FormData, FormValue};
use jobboard_domain::{
    FieldError,
    cms::{FieldDef, FieldType},
};

/// One control of the form, from a schema field.
pub struct SchemaField {
    /// `data_` and the schema field's name.
    pub name: String,
    pub label: String,
    /// `text`, `textarea`, `number`, `checkbox`, `date`, `url` or `select`.
    pub control: &'static str,
    pub hint: String,
    pub required: bool,
    pub value: String,
    /// For selects: (value, selected).
    pub options: Vec<(String, bool)>,
    pub min: Option<String>,
    pub max: Option<String>,
    pub maxlength: Option<i64>,
    pub error: Option<String>,
}

impl SchemaField {
    pub fn checked(&self) -> bool {
        !self.value.is_empty()
    }
}

/// How dates are typed: a date picker (`YYYY-MM-DD` only), or a text box that also keeps
/// a stored date-time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dates {
    Picker,
    Text,
}

/// The control name of a schema field.
pub fn control_name(def: &FieldDef) -> String {
    format!("data_{}", def.name)
}

/// `release_date` → "Release date".
pub fn label_of(name: &str) -> String {
    let s = name.replace('_', " ");
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => s,
    }
}

fn form_value(kind: FieldType) -> FormValue {
    match kind {
        FieldType::Number => FormValue::Number,
        FieldType::Boolean => FormValue::Checkbox,
        _ => FormValue::Text,
    }
}

/// The controls of `schema`, holding `form`'s values and `errors`.
pub fn fields(
    schema: &[FieldDef],
    form: &FormData,
    errors: &FieldMessages,
    dates: Dates,
) -> Vec<SchemaField> {
    schema
        .iter()
        .map(|def| {
            let name = control_name(def);
            let (control, hint) = match def.kind {
                FieldType::Text => ("text", ""),
                FieldType::Longtext => ("textarea", ""),
                FieldType::Number => ("number", ""),
                FieldType::Boolean => ("checkbox", ""),
                FieldType::Date if dates == Dates::Picker => ("date", ""),
                FieldType::Date => (
                    "text",
                    "A date (2026-01-31) or a date and time with its offset.",
                ),
                FieldType::Url => ("url", "An address starting with https://"),
                FieldType::Image => ("url", "The https:// address of an image."),
                FieldType::Select => ("select", ""),
            };
            let value = form.get(&name).unwrap_or("").to_string();
            let options = def
                .options
                .iter()
                .flatten()
                .map(|o| (o.clone(), *o == value))
                .collect();
            SchemaField {
                label: label_of(&def.name),
                control,
                hint: hint.to_string(),
                required: def.required && def.kind != FieldType::Boolean,
                options,
                min: def.min.map(|v| v.to_string()),
                max: def.max.map(|v| v.to_string()),
                maxlength: def.max_length,
                error: errors.get(&name).map(str::to_string),
                value,
                name,
            }
        })
        .collect()
}

/// The `data` object of a posted form: each schema field's value typed as its field says
/// (an empty box is not sent; an unticked box is `false`).
pub fn data_of(schema: &[FieldDef], form: &FormData) -> Map<String, Value> {
    let mut data = Map::new();
    for def in schema {
        if let Some(v) = form_value(def.kind).convert(form.get(&control_name(def))) {
            data.insert(def.name.clone(), v);
        }
    }
    data
}

/// The form values of a stored item's `data` (to edit it).
pub fn form_of(schema: &[FieldDef], data: &Map<String, Value>) -> FormData {
    let mut out = Vec::new();
    for def in schema {
        let text = match data.get(&def.name) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(true)) => "on".to_string(),
            Some(Value::Bool(false)) => continue,
            Some(other) => other.to_string(),
        };
        out.push((control_name(def), text));
    }
    FormData(out)
}

/// The operation's problems named by the form's controls (`data.title` → `data_title`).
pub fn on_controls(errors: Vec<FieldError>) -> Vec<FieldError> {
    errors
        .into_iter()
        .map(|mut e| {
            if let Some(rest) = e.field.strip_prefix("data.") {
                e.field = format!("data_{}", rest.split('.').next().unwrap_or(rest));
            }
            e
        })
        .collect()
}
