//! A VRM model's meta (who made it, what it is called) and its licence terms, read from VRM 1.0
//! (`VRMC_vrm.meta`) or VRM 0.x (`VRM.meta`) and put in the same plain words for both, so import
//! can show them and the look picker can keep showing them.

use serde::Serialize;
use serde_json::Value;

/// Which VRM the file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum VrmVersion {
    /// VRM 1.0 (`VRMC_vrm`).
    #[serde(rename = "1.0")]
    V1,
    /// VRM 0.x (`VRM`).
    #[serde(rename = "0.x")]
    V0,
}

/// Who may use the model and how, in plain words (the model's own terms).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Licence {
    /// The licence the terms come from ("VRM Public License 1.0", "CC BY 4.0", …).
    pub name: String,
    /// Who may use it as an avatar.
    pub avatar_use: String,
    /// Commercial use.
    pub commercial: String,
    /// Whether the file may be passed on.
    pub redistribution: String,
    /// Whether it may be changed.
    pub modification: String,
    /// Whether the author must be credited.
    pub credit: String,
    /// Violent and sexual use, as the model says (VRM 1.0 and 0.x both say).
    pub violent_use: String,
    pub sexual_use: String,
    /// The licence's page, and a page with further terms, when the model names them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_terms: Option<String>,
}

/// What the model says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Meta {
    pub vrm: VrmVersion,
    /// The model's name (`name`, 0.x `title`); may be empty.
    pub name: String,
    pub authors: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contact: Option<String>,
    pub licence: Licence,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

fn allowed(v: Option<bool>) -> String {
    match v {
        Some(true) => "allowed",
        Some(false) => "not allowed",
        None => "not stated",
    }
    .into()
}

/// The VRM 1.0 meta (`VRMC_vrm.meta`). Defaults are the specification's.
pub fn v1(meta: &Value) -> Meta {
    let flag = |k: &str| meta.get(k).and_then(Value::as_bool);
    let avatar_use = match meta.get("avatarPermission").and_then(Value::as_str) {
        Some("everyone") => "everyone",
        Some("onlySeparatelyLicensedPerson") => "only people the author licenses separately",
        _ => "only the author",
    };
    let commercial = match meta.get("commercialUsage").and_then(Value::as_str) {
        Some("corporation") => "allowed, companies included",
        Some("personalProfit") => "allowed for individuals, not for companies",
        _ => "not allowed (personal, non-profit use only)",
    };
    let modification = match meta.get("modification").and_then(Value::as_str) {
        Some("allowModificationRedistribution") => "allowed, and changed copies may be passed on",
        Some("allowModification") => "allowed, but changed copies may not be passed on",
        _ => "not allowed",
    };
    let credit = match meta.get("creditNotation").and_then(Value::as_str) {
        Some("unnecessary") => "not needed",
        _ => "required",
    };
    Meta {
        vrm: VrmVersion::V1,
        name: text(meta, "name").unwrap_or_default(),
        authors: meta
            .get("authors")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default(),
        version: text(meta, "version"),
        contact: text(meta, "contactInformation"),
        licence: Licence {
            name: "VRM Public License 1.0".into(),
            avatar_use: avatar_use.into(),
            commercial: commercial.into(),
            redistribution: allowed(Some(flag("allowRedistribution").unwrap_or(false))),
            modification: modification.into(),
            credit: credit.into(),
            violent_use: allowed(Some(flag("allowExcessivelyViolentUsage").unwrap_or(false))),
            sexual_use: allowed(Some(flag("allowExcessivelySexualUsage").unwrap_or(false))),
            url: text(meta, "licenseUrl"),
            other_terms: text(meta, "otherLicenseUrl"),
        },
    }
}

/// The VRM 0.x meta (`VRM.meta`): its `licenseName` says redistribution, modification and
/// credit; `commercialUssageName` (sic) and the usage names say the rest.
pub fn v0(meta: &Value) -> Meta {
    let allow = |k: &str| match meta.get(k).and_then(Value::as_str) {
        Some("Allow") => Some(true),
        Some("Disallow") => Some(false),
        _ => None,
    };
    let avatar_use = match meta.get("allowedUserName").and_then(Value::as_str) {
        Some("Everyone") => "everyone",
        Some("ExplicitlyLicensedPerson") => "only people the author licenses separately",
        Some("OnlyAuthor") => "only the author",
        _ => "not stated",
    };
    let licence = meta
        .get("licenseName")
        .and_then(Value::as_str)
        .unwrap_or("Other");
    let (name, redistribution, modification, credit) = match licence {
        "Redistribution_Prohibited" => (
            "Redistribution prohibited",
            "not allowed",
            "not stated",
            "not stated",
        ),
        "CC0" => ("CC0", "allowed", "allowed", "not needed"),
        "CC_BY" => ("CC BY", "allowed", "allowed", "required"),
        "CC_BY_NC" => ("CC BY-NC", "allowed", "allowed", "required"),
        "CC_BY_SA" => ("CC BY-SA", "allowed", "allowed (same licence)", "required"),
        "CC_BY_NC_SA" => (
            "CC BY-NC-SA",
            "allowed",
            "allowed (same licence)",
            "required",
        ),
        "CC_BY_ND" => ("CC BY-ND", "allowed", "not allowed", "required"),
        "CC_BY_NC_ND" => ("CC BY-NC-ND", "allowed", "not allowed", "required"),
        _ => (
            "Other (see the model's licence page)",
            "see the licence",
            "see the licence",
            "see the licence",
        ),
    };
    let commercial = if licence.contains("_NC") {
        "not allowed".to_string()
    } else {
        allowed(allow("commercialUssageName"))
    };
    Meta {
        vrm: VrmVersion::V0,
        name: text(meta, "title").unwrap_or_default(),
        authors: text(meta, "author").into_iter().collect(),
        version: text(meta, "version"),
        contact: text(meta, "contactInformation"),
        licence: Licence {
            name: name.into(),
            avatar_use: avatar_use.into(),
            commercial,
            redistribution: redistribution.into(),
            modification: modification.into(),
            credit: credit.into(),
            violent_use: allowed(allow("violentUssageName")),
            sexual_use: allowed(allow("sexualUssageName")),
            url: text(meta, "otherLicenseUrl"),
            other_terms: text(meta, "otherPermissionUrl"),
        },
    }
}

impl Licence {
    /// The terms as lines for a terminal or a settings page ("Avatar use: everyone", …).
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![
            format!("Licence: {}", self.name),
            format!("Avatar use: {}", self.avatar_use),
            format!("Commercial use: {}", self.commercial),
            format!("Redistribution: {}", self.redistribution),
            format!("Modification: {}", self.modification),
            format!("Credit: {}", self.credit),
            format!("Excessively violent use: {}", self.violent_use),
            format!("Excessively sexual use: {}", self.sexual_use),
        ];
        if let Some(u) = &self.url {
            out.push(format!("Licence page: {u}"));
        }
        if let Some(u) = &self.other_terms {
            out.push(format!("Further terms: {u}"));
        }
        out
    }
}
