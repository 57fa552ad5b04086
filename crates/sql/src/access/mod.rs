//! Users and privileges: the account table and users.json (`accounts.rs`),
//! host patterns (`hosts.rs`), privileges, levels and grants
//! (`privileges.rs`), what each statement needs, checked before it runs
//! (`authorize.rs`), and the account statements: CREATE / ALTER / DROP
//! USER, GRANT, REVOKE, SHOW GRANTS (`users.rs`; parsed in `parse/users.rs`).

pub mod accounts;
pub mod authorize;
pub mod hosts;
pub mod privileges;
pub(crate) mod users;
