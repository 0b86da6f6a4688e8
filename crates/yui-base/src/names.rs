//! The contract's client tool names (../shared/spec/client-tools.md), byte for byte.

pub const GENERATE_EXPRESS: &str = "generate_express";
pub const RATE_RELATION: &str = "rate_relation";
pub const ADDRESS_CHARACTER: &str = "address_character";
pub const BROWSER: &str = "browser";
pub const BODY_ACTION: &str = "body_action";
pub const LOOK: &str = "look";
/// Not in the contract: YUI's own (docs/proactive.md, "The remind tool").
pub const REMIND: &str = "remind";
