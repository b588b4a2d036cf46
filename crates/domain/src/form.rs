//! How a model's client-writable fields appear on forms, written beside each field in
//! its [`crate::model!`] line (`=> Field::line("Job title").group(Group::Job)`): the
//! label, the hint, the input, the fieldset, whether the field is for staff only, and
//! the JSON-LD property it feeds. Every form of a resource (the board's, the
//! dashboard's, a member's) is derived from this list, so the doors cannot disagree
//! about which fields exist or how they are typed. Nothing here knows HTML: the pages
//! draw it.

use uuid::Uuid;

use crate::{CategoryId, Countries, MemberId, TextEnum, Ts};

/// How a field is typed.
#[derive(Debug, Clone, Copy)]
pub enum Input {
    /// One line of text.
    Line,
    /// Long text typed as prose: plain text whose blank lines separate paragraphs, or
    /// simple HTML (see [`crate::html::from_prose`]).
    Prose,
    /// Several lines of text, sent as typed.
    Lines,
    Email,
    Url,
    /// A decimal amount (thousands separators are accepted).
    Number,
    Checkbox,
    /// A date and time, in UTC.
    DateTime,
    /// A three-letter currency code, sent upper case.
    Currency,
    /// Country codes typed on one line, separated by commas or spaces (`DE, FR`), sent
    /// as an array.
    Countries,
    /// One of a closed set.
    Select(Choices),
}

/// Where a select's choices come from.
#[derive(Debug, Clone, Copy)]
pub enum Choices {
    /// A closed set of values: (value, label, offered on public forms).
    Values(fn() -> Vec<(&'static str, &'static str, bool)>),
    /// The organization's categories.
    Categories,
}

/// The fieldsets of a form, in the order they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    Job,
    /// Where the job is done.
    Place,
    Company,
    Salary,
    Applications,
    /// How the job is listed: staff decide.
    Listing,
}

impl Group {
    pub const ALL: [Group; 6] = [
        Group::Job,
        Group::Place,
        Group::Company,
        Group::Salary,
        Group::Applications,
        Group::Listing,
    ];

    /// The fieldset's legend.
    pub fn legend(self) -> &'static str {
        match self {
            Group::Job => "The job",
            Group::Place => "Where",
            Group::Company => "The company",
            Group::Salary => "Salary",
            Group::Applications => "Applications",
            Group::Listing => "Listing",
        }
    }
}

/// What a field feeds in the page's structured data (schema.org JSON-LD).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ld {
    /// Not yet said: a field must say one of the others (a test checks).
    Unsaid,
    /// The dotted path of the property it fills (`hiringOrganization.name`).
    Path(&'static str),
    /// Nothing: the field is not part of the public posting.
    Nothing,
}

/// One field of a form, as its model line describes it.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The field's name in the API (set by the model).
    pub name: &'static str,
    pub label: &'static str,
    pub hint: Option<&'static str>,
    pub input: Input,
    pub group: Group,
    /// Set by the model from the field's class (`required`, `flag` or `optional`).
    pub class: Class,
    /// Set by staff only: not on the forms of the public board or of members.
    pub staff_only: bool,
    /// The browser's autocomplete hint (`organization`, `email`, `url`).
    pub autocomplete: Option<&'static str>,
    pub ld: Ld,
}

impl Field {
    pub const fn new(label: &'static str, input: Input) -> Field {
        Field {
            name: "",
            label,
            hint: None,
            input,
            group: Group::Job,
            class: Class::Optional,
            staff_only: false,
            autocomplete: None,
            ld: Ld::Unsaid,
        }
    }
    pub const fn line(label: &'static str) -> Field {
        Field::new(label, Input::Line)
    }
    pub const fn prose(label: &'static str) -> Field {
        Field::new(label, Input::Prose)
    }
    pub const fn lines(label: &'static str) -> Field {
        Field::new(label, Input::Lines)
    }
    pub const fn email(label: &'static str) -> Field {
        Field::new(label, Input::Email)
    }
    pub const fn url(label: &'static str) -> Field {
        Field::new(label, Input::Url)
    }
    pub const fn number(label: &'static str) -> Field {
        Field::new(label, Input::Number)
    }
    pub const fn checkbox(label: &'static str) -> Field {
        Field::new(label, Input::Checkbox)
    }
    pub const fn date_time(label: &'static str) -> Field {
        Field::new(label, Input::DateTime)
    }
    pub const fn currency(label: &'static str) -> Field {
        Field::new(label, Input::Currency)
    }
    /// A select of the values of `E`, labelled as [`Labelled`] says.
    pub const fn choice<E: Labelled>(label: &'static str) -> Field {
        Field::new(label, Input::Select(Choices::Values(choices::<E>)))
    }
    /// A select of every country, by name.
    pub const fn country(label: &'static str) -> Field {
        Field::new(label, Input::Select(Choices::Values(country_choices)))
    }
    pub const fn countries(label: &'static str) -> Field {
        Field::new(label, Input::Countries)
    }
    pub const fn categories(label: &'static str) -> Field {
        Field::new(label, Input::Select(Choices::Categories))
    }
    pub const fn hint(mut self, hint: &'static str) -> Field {
        self.hint = Some(hint);
        self
    }
    pub const fn group(mut self, group: Group) -> Field {
        self.group = group;
        self
    }
    pub const fn staff_only(mut self) -> Field {
        self.staff_only = true;
        self
    }
    pub const fn autocomplete(mut self, a: &'static str) -> Field {
        self.autocomplete = Some(a);
        self
    }
    /// The JSON-LD property the field fills (a dotted path).
    pub const fn ld(mut self, path: &'static str) -> Field {
        self.ld = Ld::Path(path);
        self
    }
    /// The field is not part of the structured data.
    pub const fn no_ld(mut self) -> Field {
        self.ld = Ld::Nothing;
        self
    }
    /// Names the field (the model does, from its line).
    pub const fn named(mut self, name: &'static str, class: Class) -> Field {
        self.name = name;
        self.class = class;
        self
    }
    /// Must be sent when the record is created.
    pub fn required(&self) -> bool {
        self.class == Class::Required
    }
}

/// A field's class in its model: whether it must be sent, has a default, or may be
/// cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Required,
    Flag,
    Optional,
}

/// A closed set whose values have labels for people.
pub trait Labelled: TextEnum {
    fn label(self) -> &'static str;
    /// False for a value only staff may choose (the forms of the public board and of
    /// members do not offer it).
    fn public(self) -> bool {
        true
    }
}

/// The (value, label, public) triples of `E`, in documentation order.
pub fn choices<E: Labelled>() -> Vec<(&'static str, &'static str, bool)> {
    E::ALL
        .iter()
        .filter_map(|v| E::parse(v))
        .map(|e| (e.as_str(), e.label(), e.public()))
        .collect()
}

/// Every country as a choice: (code, name, offered on public forms).
fn country_choices() -> Vec<(&'static str, &'static str, bool)> {
    crate::countries::COUNTRIES
        .iter()
        .map(|(c, n)| (*c, *n, true))
        .collect()
}

/// A stored value as a form shows it for editing.
pub trait FormText {
    fn form_text(&self) -> String;
}

impl FormText for String {
    fn form_text(&self) -> String {
        self.clone()
    }
}

impl FormText for bool {
    /// A ticked box sends `on`.
    fn form_text(&self) -> String {
        if *self { "on" } else { "" }.to_string()
    }
}

impl FormText for f64 {
    fn form_text(&self) -> String {
        self.to_string()
    }
}

impl FormText for Uuid {
    fn form_text(&self) -> String {
        self.to_string()
    }
}

impl FormText for CategoryId {
    fn form_text(&self) -> String {
        self.to_string()
    }
}

impl FormText for MemberId {
    fn form_text(&self) -> String {
        self.to_string()
    }
}

impl FormText for Countries {
    /// The codes, separated by commas.
    fn form_text(&self) -> String {
        self.0.join(", ")
    }
}

impl FormText for Ts {
    /// What a `datetime-local` input holds: minutes, no zone (UTC).
    fn form_text(&self) -> String {
        self.0.format("%Y-%m-%dT%H:%M").to_string()
    }
}

impl<T: FormText> FormText for Option<T> {
    fn form_text(&self) -> String {
        self.as_ref().map(FormText::form_text).unwrap_or_default()
    }
}

/// Implements [`FormText`] for closed sets: their value.
#[macro_export]
macro_rules! form_text_enum {
    ($($t:ty),+) => {
        $(impl $crate::form::FormText for $t {
            fn form_text(&self) -> String {
                $crate::TextEnum::as_str(*self).to_string()
            }
        })+
    };
}
