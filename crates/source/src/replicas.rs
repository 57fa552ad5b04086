//! Replicas that announced themselves with COM_REGISTER_SLAVE, listed by
//! SHOW REPLICAS / SHOW SLAVE HOSTS. One entry per connection (bounded by
//! `max_connections`), removed when the connection ends, as MySQL removes a
//! replica when its dump thread ends.

use std::collections::BTreeMap;

use parking_lot::Mutex;
use protocol::RegisterReplica;

/// What SHOW REPLICAS shows of one registered replica.
#[derive(Debug, Clone)]
pub struct RegisteredReplica {
    pub server_id: u32,
    pub host: String,
    pub port: u16,
    pub source_id: u32,
    /// `@replica_uuid` / `@slave_uuid` of the registering session, if set.
    pub uuid: String,
}

#[derive(Default)]
pub struct Replicas {
    by_connection: Mutex<BTreeMap<u32, RegisteredReplica>>,
}

impl Replicas {
    pub fn register(&self, connection_id: u32, request: &RegisterReplica, uuid: String) {
        let replica = RegisteredReplica {
            server_id: request.server_id,
            host: request.host.clone(),
            port: request.port,
            source_id: request.source_id,
            uuid,
        };
        let mut by_connection = self.by_connection.lock();
        // MySQL keys its list by server id: a replica that reconnects
        // replaces its old entry.
        by_connection.retain(|_, existing| existing.server_id != replica.server_id);
        by_connection.insert(connection_id, replica);
    }

    pub fn unregister(&self, connection_id: u32) {
        self.by_connection.lock().remove(&connection_id);
    }

    pub fn list(&self) -> Vec<RegisteredReplica> {
        let mut replicas: Vec<RegisteredReplica> = self.by_connection.lock().values().cloned().collect();
        replicas.sort_by_key(|replica| replica.server_id);
        replicas
    }
}
