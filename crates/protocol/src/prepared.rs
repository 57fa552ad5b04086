//! The connection's prepared statements as the protocol sees them: ids,
//! parameter counts, the parameter types remembered from the last execution
//! that bound them, and long data (COM_STMT_SEND_LONG_DATA) accumulated until
//! the next execution.
//!
//! COM_STMT_EXECUTE layout: statement id u32, cursor flags u8, iteration
//! count u32, then for statements with parameters the NULL bitmap
//! ((n + 7) / 8 bytes, column 0 = bit 0), the new-params-bound flag u8, the
//! types (2 bytes each) when bound, and the non-NULL values.

use std::collections::HashMap;
use std::sync::Arc;

use mysql_common::io::ParseBuf;

use crate::binary::{decode_parameter, ParameterType};
use crate::charset::ClientCharset;
use crate::errors::{MysqlError, ProtocolError};
use crate::registry::Registry;
use crate::value::Value;

/// MariaDB clients execute "the statement just prepared" with this id.
const LAST_PREPARED_STATEMENT_ID: u32 = u32::MAX;

#[derive(Debug)]
struct StatementState {
    param_count: u16,
    /// The statement's text, which the session keeps (parsed) too.
    text_bytes: usize,
    /// Types from the last execution that bound them.
    param_types: Option<Vec<ParameterType>>,
    /// Long data per parameter; empty until the first COM_STMT_SEND_LONG_DATA.
    long_data: Vec<Option<Vec<u8>>>,
    long_data_bytes: usize,
    /// COM_STMT_SEND_LONG_DATA has no response, so its errors wait for the
    /// next execution, as in MySQL.
    long_data_error: Option<MysqlError>,
}

impl StatementState {
    /// Forgets the long data; returns how many bytes it held.
    fn clear_long_data(&mut self) -> usize {
        self.long_data.clear();
        self.long_data_error = None;
        std::mem::take(&mut self.long_data_bytes)
    }
}

/// What a COM_STMT_EXECUTE asks for.
#[derive(Debug, PartialEq)]
pub(crate) struct Execution {
    pub statement_id: u32,
    pub params: Vec<Value>,
}

#[derive(Debug)]
pub(crate) struct StatementTable {
    statements: HashMap<u32, StatementState>,
    next_id: u32,
    last_prepared: Option<u32>,
    /// Where the whole server's statements are counted and bounded
    /// (max_prepared_stmt_count), as in MySQL.
    registry: Arc<Registry>,
    /// Bound on the long data the connection holds, all its statements
    /// together (max_allowed_packet, as MySQL's max_long_data_size was):
    /// one connection's statements cannot each hold that much.
    long_data_bytes_max: usize,
    /// Long data held now, every statement's.
    long_data_bytes: usize,
    /// Every statement's text, for the connection's memory figure.
    text_bytes: usize,
}

fn malformed(context: &'static str) -> ProtocolError {
    ProtocolError::malformed(context, "packet truncated")
}

impl StatementTable {
    pub fn new(registry: Arc<Registry>, long_data_bytes_max: usize) -> Self {
        StatementTable {
            statements: HashMap::new(),
            next_id: 1,
            last_prepared: None,
            registry,
            long_data_bytes_max,
            long_data_bytes: 0,
            text_bytes: 0,
        }
    }

    /// The id the next prepared statement will get, if the server's limit
    /// allows one more (checked again, atomically, by `insert`).
    pub fn next_id(&mut self) -> Result<u32, MysqlError> {
        if self.registry.prepared_statements() >= self.registry.prepared_statements_max() {
            return Err(MysqlError::too_many_prepared_statements(self.registry.prepared_statements_max()));
        }
        while self.next_id == 0 || self.next_id == LAST_PREPARED_STATEMENT_ID || self.statements.contains_key(&self.next_id) {
            self.next_id = self.next_id.wrapping_add(1);
        }
        Ok(self.next_id)
    }

    /// Records a statement the session prepared under `id` (from
    /// `next_id`) from `text_bytes` of text, taking one of the server's
    /// slots; 1461 when another connection took the last one since
    /// `next_id`.
    pub fn insert(&mut self, id: u32, param_count: u16, text_bytes: usize) -> Result<(), MysqlError> {
        if !self.statements.contains_key(&id) {
            self.registry.open_prepared_statement()?;
        }
        let state =
            StatementState { param_count, text_bytes, param_types: None, long_data: Vec::new(), long_data_bytes: 0, long_data_error: None };
        self.text_bytes += text_bytes;
        if let Some(replaced) = self.statements.insert(id, state) {
            self.text_bytes -= replaced.text_bytes;
            self.long_data_bytes -= replaced.long_data_bytes;
        }
        self.next_id = id.wrapping_add(1);
        self.last_prepared = Some(id);
        Ok(())
    }

    pub fn remove(&mut self, id: u32) -> bool {
        let Some(state) = self.statements.remove(&id) else {
            return false;
        };
        self.long_data_bytes -= state.long_data_bytes;
        self.text_bytes -= state.text_bytes;
        self.registry.close_prepared_statements(1);
        true
    }

    /// What the statements hold: their text and long data, in bytes.
    pub fn held_bytes(&self) -> usize {
        self.text_bytes + self.long_data_bytes
    }

    /// Every open statement id (to close them all on reset or disconnect).
    pub fn drain_ids(&mut self) -> Vec<u32> {
        self.last_prepared = None;
        self.registry.close_prepared_statements(self.statements.len());
        self.long_data_bytes = 0;
        self.text_bytes = 0;
        self.statements.drain().map(|(id, _)| id).collect()
    }

    /// COM_STMT_RESET: forget long data.
    pub fn reset(&mut self, id: u32) -> Result<(), MysqlError> {
        let state = self.statements.get_mut(&id).ok_or_else(|| MysqlError::unknown_statement(id, "mysqld_stmt_reset"))?;
        self.long_data_bytes -= state.clear_long_data();
        Ok(())
    }

    /// COM_STMT_SEND_LONG_DATA (command byte included): statement id u32,
    /// parameter index u16, data. Unknown statements are ignored (there is no
    /// response to carry an error, and no execution to report it at).
    pub fn append_long_data(&mut self, packet: &[u8]) -> Result<(), ProtocolError> {
        let mut buf = ParseBuf(packet.get(1..).ok_or_else(|| malformed("COM_STMT_SEND_LONG_DATA"))?);
        let id = buf.checked_eat_u32_le().ok_or_else(|| malformed("COM_STMT_SEND_LONG_DATA"))?;
        let index = buf.checked_eat_u16_le().ok_or_else(|| malformed("COM_STMT_SEND_LONG_DATA"))?;
        let data = buf.eat_all();
        let Some(state) = self.statements.get_mut(&id) else {
            return Ok(());
        };
        if state.long_data_error.is_some() {
            return Ok(());
        }
        if index >= state.param_count {
            state.long_data_error = Some(MysqlError::wrong_arguments("mysqld_stmt_send_long_data"));
            return Ok(());
        }
        if self.long_data_bytes + data.len() > self.long_data_bytes_max {
            self.long_data_bytes -= state.clear_long_data();
            state.long_data_error = Some(MysqlError::packet_too_large());
            return Ok(());
        }
        if state.long_data.is_empty() {
            state.long_data.resize(state.param_count.into(), None);
        }
        state.long_data[usize::from(index)].get_or_insert_with(Vec::new).extend_from_slice(data);
        state.long_data_bytes += data.len();
        self.long_data_bytes += data.len();
        Ok(())
    }

    /// Parses COM_STMT_EXECUTE (command byte included). The outer error is a
    /// malformed packet (fatal to the connection); the inner one is an error
    /// for the client (unknown statement, unbound types, long-data failure).
    /// String parameters (not BLOB-typed ones, which are bytes) arrive in
    /// `client` and are handed on as UTF-8.
    pub fn parse_execute(&mut self, packet: &[u8], client: ClientCharset) -> Result<Result<Execution, MysqlError>, ProtocolError> {
        const CONTEXT: &str = "COM_STMT_EXECUTE";
        let mut buf = ParseBuf(packet.get(1..).ok_or_else(|| malformed(CONTEXT))?);
        let mut id = buf.checked_eat_u32_le().ok_or_else(|| malformed(CONTEXT))?;
        let _cursor_flags = buf.checked_eat_u8().ok_or_else(|| malformed(CONTEXT))?;
        let _iteration_count = buf.checked_eat_u32_le().ok_or_else(|| malformed(CONTEXT))?;
        if id == LAST_PREPARED_STATEMENT_ID {
            id = self.last_prepared.unwrap_or(id);
        }
        let Some(state) = self.statements.get_mut(&id) else {
            return Ok(Err(MysqlError::unknown_statement(id, "mysqld_stmt_execute")));
        };
        // Long data belongs to this execution only, whatever its outcome.
        let long_data = std::mem::take(&mut state.long_data);
        self.long_data_bytes -= std::mem::take(&mut state.long_data_bytes);
        if let Some(error) = state.long_data_error.take() {
            return Ok(Err(error));
        }
        let count = usize::from(state.param_count);
        if count == 0 {
            return Ok(Ok(Execution { statement_id: id, params: Vec::new() }));
        }
        let null_bitmap = buf.checked_eat(count.div_ceil(8)).ok_or_else(|| malformed(CONTEXT))?;
        let new_params_bound = buf.checked_eat_u8().ok_or_else(|| malformed(CONTEXT))?;
        if new_params_bound == 1 {
            let raw_types = buf.checked_eat(2 * count).ok_or_else(|| malformed(CONTEXT))?;
            let types = raw_types.chunks_exact(2).map(|pair| ParameterType::from_wire(pair[0], pair[1])).collect::<Result<Vec<_>, _>>()?;
            state.param_types = Some(types);
        }
        let Some(types) = &state.param_types else {
            return Ok(Err(MysqlError::wrong_arguments("mysqld_stmt_execute")));
        };
        let mut params = Vec::with_capacity(count);
        for (index, parameter_type) in types.iter().enumerate() {
            // Long data replaces the value; the client sends none for it.
            let param = if let Some(Some(data)) = long_data.get(index) {
                Value::Bytes(data.clone())
            } else if null_bitmap[index / 8] & (1 << (index % 8)) != 0 {
                Value::Null
            } else {
                decode_parameter(&mut buf, *parameter_type)?
            };
            match param {
                Value::Bytes(bytes) if client != ClientCharset::Utf8mb4 && parameter_type.is_text() => match client.decode(&bytes) {
                    Ok(text) => params.push(Value::Bytes(text.into_owned().into_bytes())),
                    Err(error) => return Ok(Err(error)),
                },
                param => params.push(param),
            }
        }
        Ok(Ok(Execution { statement_id: id, params }))
    }
}

/// A connection that ends gives its statements back to the server's count.
impl Drop for StatementTable {
    fn drop(&mut self) {
        self.registry.close_prepared_statements(self.statements.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::packets::ComStmtExecuteRequestBuilder;
    use mysql_common::proto::MySerialize;
    use mysql_common::Value as M;

    fn registry(statements_max: usize) -> Arc<Registry> {
        let registry = Registry::new();
        registry.set_prepared_statements_max(statements_max);
        registry
    }

    fn execute_packet(id: u32, params: &[M]) -> Vec<u8> {
        let (request, _) = ComStmtExecuteRequestBuilder::new(id).build(params);
        let mut bytes = Vec::new();
        request.serialize(&mut bytes);
        bytes
    }

    #[test]
    fn executes_decode_like_mysql_commons_client_encodes() {
        let mut table = StatementTable::new(registry(10), 1 << 20);
        let id = table.next_id().unwrap();
        table.insert(id, 5, 0).unwrap();
        let params = [M::Int(-3), M::UInt(u64::MAX), M::Bytes(b"abc".to_vec()), M::NULL, M::Double(2.5)];
        let execution = table.parse_execute(&execute_packet(id, &params), ClientCharset::Utf8mb4).unwrap().unwrap();
        assert_eq!(
            execution.params,
            vec![Value::Int(-3), Value::UInt(u64::MAX), Value::Bytes(b"abc".to_vec()), Value::Null, Value::Double(2.5)]
        );

        // Without new types, the remembered ones apply.
        let mut packet = execute_packet(id, &[M::Int(1), M::UInt(2), M::Bytes(b"x".to_vec()), M::NULL, M::Double(0.5)]);
        let bound_flag_at = 1 + 4 + 1 + 4 + 1;
        packet[bound_flag_at] = 0;
        packet.drain(bound_flag_at + 1..bound_flag_at + 1 + 10);
        let execution = table.parse_execute(&packet, ClientCharset::Utf8mb4).unwrap().unwrap();
        assert_eq!(execution.params[2], Value::Bytes(b"x".to_vec()));
    }

    #[test]
    fn long_data_replaces_the_value_once() {
        let mut table = StatementTable::new(registry(10), 8);
        let id = table.next_id().unwrap();
        table.insert(id, 2, 0).unwrap();
        let mut long_data = vec![0x18];
        long_data.extend_from_slice(&id.to_le_bytes());
        long_data.extend_from_slice(&1u16.to_le_bytes());
        long_data.extend_from_slice(b"abcd");
        table.append_long_data(&long_data).unwrap();
        table.append_long_data(&long_data).unwrap();
        let packet = execute_packet(id, &[M::Int(1), M::NULL]);
        let execution = table.parse_execute(&packet, ClientCharset::Utf8mb4).unwrap().unwrap();
        assert_eq!(execution.params, vec![Value::Int(1), Value::Bytes(b"abcdabcd".to_vec())]);
        let execution = table.parse_execute(&packet, ClientCharset::Utf8mb4).unwrap().unwrap();
        assert_eq!(execution.params, vec![Value::Int(1), Value::Null]);

        // Over the bound: the next execution fails with 1153.
        for _ in 0..3 {
            table.append_long_data(&long_data).unwrap();
        }
        assert_eq!(table.parse_execute(&packet, ClientCharset::Utf8mb4).unwrap().unwrap_err().code, 1153);
    }

    #[test]
    fn long_data_is_bounded_for_the_whole_connection() {
        let mut table = StatementTable::new(registry(10), 10);
        let first = table.next_id().unwrap();
        table.insert(first, 1, 0).unwrap();
        let second = table.next_id().unwrap();
        table.insert(second, 1, 0).unwrap();
        let long_data = |id: u32, data: &[u8]| {
            let mut packet = vec![0x18];
            packet.extend_from_slice(&id.to_le_bytes());
            packet.extend_from_slice(&0u16.to_le_bytes());
            packet.extend_from_slice(data);
            packet
        };
        table.append_long_data(&long_data(first, b"123456")).unwrap();
        // Six bytes held by the first statement leave four for the second.
        table.append_long_data(&long_data(second, b"abcde")).unwrap();
        assert_eq!(table.parse_execute(&execute_packet(second, &[M::NULL]), ClientCharset::Utf8mb4).unwrap().unwrap_err().code, 1153);
        table.append_long_data(&long_data(second, b"abcd")).unwrap();
        assert_eq!(
            table.parse_execute(&execute_packet(second, &[M::NULL]), ClientCharset::Utf8mb4).unwrap().unwrap().params,
            vec![Value::Bytes(b"abcd".to_vec())]
        );
        // An execution, a reset or a close gives the bytes back.
        assert_eq!(
            table.parse_execute(&execute_packet(first, &[M::NULL]), ClientCharset::Utf8mb4).unwrap().unwrap().params,
            vec![Value::Bytes(b"123456".to_vec())]
        );
        table.append_long_data(&long_data(first, b"0123456789")).unwrap();
        table.reset(first).unwrap();
        table.append_long_data(&long_data(second, b"0123456789")).unwrap();
        assert!(table.remove(second));
        table.append_long_data(&long_data(first, b"0123456789")).unwrap();
        assert_eq!(
            table.parse_execute(&execute_packet(first, &[M::NULL]), ClientCharset::Utf8mb4).unwrap().unwrap().params,
            vec![Value::Bytes(b"0123456789".to_vec())]
        );
    }

    #[test]
    fn the_statement_limit_is_the_whole_servers() {
        let server = registry(3);
        let mut first = StatementTable::new(Arc::clone(&server), 1 << 20);
        let mut second = StatementTable::new(Arc::clone(&server), 1 << 20);
        for _ in 0..2 {
            let id = first.next_id().unwrap();
            first.insert(id, 0, 0).unwrap();
        }
        let id = second.next_id().unwrap();
        second.insert(id, 0, 0).unwrap();
        assert_eq!(second.next_id().unwrap_err().code, 1461, "two on the first connection and one here fill the server's three");
        assert_eq!(first.next_id().unwrap_err().code, 1461);
        assert_eq!(second.insert(99, 0, 0).unwrap_err().code, 1461, "the slot is taken atomically, whatever next_id said");
        assert!(second.remove(id));
        assert!(!second.remove(id));
        let id = first.next_id().unwrap();
        first.insert(id, 0, 0).unwrap();
        assert_eq!(server.prepared_statements(), 3);
        assert_eq!(first.drain_ids().len(), 3);
        assert_eq!(server.prepared_statements(), 0);
        let id = first.next_id().unwrap();
        first.insert(id, 0, 0).unwrap();
        drop(first);
        assert_eq!(server.prepared_statements(), 0, "a connection that ends gives its statements back");
    }

    #[test]
    fn errors_for_the_client_and_fatal_ones() {
        let mut table = StatementTable::new(registry(1), 1 << 20);
        let id = table.next_id().unwrap();
        table.insert(id, 1, 0).unwrap();
        assert_eq!(table.next_id().unwrap_err().code, 1461);
        assert_eq!(table.parse_execute(&execute_packet(99, &[]), ClientCharset::Utf8mb4).unwrap().unwrap_err().code, 1243);
        let mut unbound = execute_packet(id, &[M::Int(1)]);
        unbound.truncate(1 + 4 + 1 + 4 + 1);
        unbound.push(0);
        assert_eq!(table.parse_execute(&unbound, ClientCharset::Utf8mb4).unwrap().unwrap_err().code, 1210);
        let truncated = &execute_packet(id, &[M::Int(1)])[..14];
        assert!(table.parse_execute(truncated, ClientCharset::Utf8mb4).is_err());
        assert_eq!(table.reset(77).unwrap_err().code, 1243);
    }

    #[test]
    fn random_execute_and_long_data_packets_never_panic() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut table = StatementTable::new(registry(4), 1 << 16);
        for params in [0u16, 1, 3, 9] {
            let id = table.next_id().unwrap();
            table.insert(id, params, 0).unwrap();
        }
        for _ in 0..20_000 {
            let mut packet = vec![if rng.gen() { 0x17 } else { 0x18 }];
            packet.extend_from_slice(&rng.gen_range(0u32..6).to_le_bytes());
            packet.extend((0..rng.gen_range(0..40)).map(|_| rng.gen::<u8>()));
            if packet[0] == 0x17 {
                let _ = table.parse_execute(&packet, ClientCharset::Utf8mb4);
            } else {
                let _ = table.append_long_data(&packet);
            }
        }
    }
}
