//! COM_CHANGE_USER: log in again on an open connection. The new account
//! authenticates with its own plugin against the handshake's scramble
//! (switching the client to that plugin when it answered for another), the
//! session is reset and goes on as that account. A refused change ends the
//! connection, as MySQL's does.

use mysql_common::constants::CapabilityFlags;

use crate::auth::Authenticator;
use crate::authentication::{authenticate, Exchange};
use crate::connection::{Connection, Flow};
use crate::errors::ProtocolError;
use crate::handshake::ClientHello;
use crate::registry::client_host;
use crate::response::{write_err, write_ok, OkResponse};
use crate::session::{ConnectionInfo, Session};

/// The fields of a COM_CHANGE_USER payload (after the command byte).
fn parse(payload: &[u8], capabilities: CapabilityFlags, collation: u8) -> Result<ClientHello, ProtocolError> {
    let malformed = || ProtocolError::malformed("COM_CHANGE_USER", "packet truncated");
    let nul_terminated = |bytes: &[u8]| -> Result<(String, usize), ProtocolError> {
        let end = bytes.iter().position(|&byte| byte == 0).ok_or_else(malformed)?;
        Ok((String::from_utf8_lossy(&bytes[..end]).into_owned(), end + 1))
    };
    let (user, mut offset) = nul_terminated(payload)?;
    let auth_bytes = usize::from(*payload.get(offset).ok_or_else(malformed)?);
    offset += 1;
    let auth_response = payload.get(offset..offset + auth_bytes).ok_or_else(malformed)?.to_vec();
    offset += auth_bytes;
    let (database, used) = nul_terminated(&payload[offset..])?;
    offset += used;
    let mut hello = ClientHello {
        capabilities,
        collation,
        user,
        auth_response,
        database: (!database.is_empty()).then_some(database),
        auth_plugin: None,
        attributes: Vec::new(),
    };
    if let Some(charset) = payload.get(offset..offset + 2) {
        hello.collation = charset[0];
        offset += 2;
        if capabilities.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH) && offset < payload.len() {
            let (plugin, _) = nul_terminated(&payload[offset..])?;
            hello.auth_plugin = (!plugin.is_empty()).then_some(plugin);
        }
    }
    Ok(hello)
}

impl Connection {
    pub(crate) fn com_change_user<S: Session>(
        &mut self,
        session: &mut S,
        payload: &[u8],
        authenticator: &dyn Authenticator,
    ) -> Result<Flow, ProtocolError> {
        let hello = parse(payload, self.capabilities, 0)?;
        self.handle.begin_command("Change user", None);
        let host = client_host(self.peer);
        let exchange = Exchange { authenticator, cache: &self.config.sha2_cache, rsa: self.config.rsa.as_deref(), tls: self.tls.as_ref() };
        let scramble = self.scramble;
        let account = match authenticate(&mut self.stream, &hello, &host, &scramble, &exchange)? {
            Ok(account) => account,
            Err(error) => {
                write_err(&mut self.stream, &error, self.capabilities)?;
                return Ok(Flow::Quit);
            }
        };
        for id in self.statements.drain_ids() {
            session.close_statement(id);
        }
        self.multi_statements = self.capabilities.contains(CapabilityFlags::CLIENT_MULTI_STATEMENTS);
        let info = ConnectionInfo {
            connection_id: self.id(),
            user: hello.user.clone(),
            host,
            peer: self.peer,
            account,
            database: hello.database.clone(),
            capabilities: self.capabilities,
            collation: hello.collation,
            attributes: hello.attributes,
            handle: self.handle.clone(),
            system_thread: false,
            tls: self.tls.clone(),
        };
        if let Err(error) = session.change_user(&info) {
            write_err(&mut self.stream, &error, self.capabilities)?;
            return Ok(Flow::Quit);
        }
        self.handle.set_user(&hello.user);
        self.handle.set_db(hello.database.as_deref());
        self.last_status = session.server_status();
        write_ok(&mut self.stream, &OkResponse::default(), self.last_status)?;
        Ok(Flow::Continue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::packets::{ComChangeUser, ComChangeUserMoreData};
    use mysql_common::proto::MySerialize;

    #[test]
    fn parses_what_mysql_common_sends() {
        let packet = ComChangeUser::new()
            .with_user(Some(&b"alice"[..]))
            .with_auth_plugin_data(Some(&[7u8; 32][..]))
            .with_database(Some(&b"shop"[..]))
            .with_more_data(Some(
                ComChangeUserMoreData::new(45).with_auth_plugin(Some(mysql_common::packets::AuthPlugin::CachingSha2Password)),
            ));
        let mut bytes = Vec::new();
        packet.serialize(&mut bytes);
        let capabilities =
            CapabilityFlags::CLIENT_PROTOCOL_41 | CapabilityFlags::CLIENT_PLUGIN_AUTH | CapabilityFlags::CLIENT_CONNECT_ATTRS;
        let hello = parse(&bytes[1..], capabilities, 0).unwrap();
        assert_eq!(hello.user, "alice");
        assert_eq!(hello.auth_response, vec![7u8; 32]);
        assert_eq!(hello.database.as_deref(), Some("shop"));
        assert_eq!(hello.collation, 45);
        assert_eq!(hello.auth_plugin.as_deref(), Some("caching_sha2_password"));
        assert!(parse(&bytes[1..4], capabilities, 0).is_err());
    }
}
