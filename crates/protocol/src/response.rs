//! The generic responses: OK, ERR and EOF packets, and the result-set
//! terminator, which is an EOF packet or, with CLIENT_DEPRECATE_EOF, an OK
//! packet with the 0xFE header.

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::BufMutExt;
use mysql_common::packets::{ErrPacket, ServerError, SqlState};
use mysql_common::proto::MySerialize;

use crate::errors::{MysqlError, ProtocolError};
use crate::packet::PacketStream;

/// What a statement that returns no rows reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OkResponse {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub warnings: u16,
    /// Shown by the `mysql` client after the statement, e.g.
    /// `Records: 3  Duplicates: 0  Warnings: 0`.
    pub info: String,
}

impl OkResponse {
    pub fn affected(affected_rows: u64) -> Self {
        OkResponse { affected_rows, ..Default::default() }
    }
}

const OK_HEADER: u8 = 0x00;
const EOF_HEADER: u8 = 0xFE;

/// An OK packet; `header` is 0x00, or 0xFE when it terminates a result set
/// under CLIENT_DEPRECATE_EOF.
pub(crate) fn encode_ok(ok: &OkResponse, status: StatusFlags, header: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + ok.info.len());
    out.push(header);
    out.put_lenenc_int(ok.affected_rows);
    out.put_lenenc_int(ok.last_insert_id);
    out.extend_from_slice(&status.bits().to_le_bytes());
    out.extend_from_slice(&ok.warnings.to_le_bytes());
    // Without CLIENT_SESSION_TRACK the info is sent length-encoded all the
    // same (MySQL's net_send_ok does, and clients read it that way).
    if !ok.info.is_empty() {
        out.put_lenenc_str(ok.info.as_bytes());
    }
    out
}

/// An ERR packet. Before the client has said it speaks protocol 4.1 (e.g. a
/// "Too many connections" sent instead of the handshake) the SQLSTATE is left
/// out, because such a client would print it as part of the message.
pub(crate) fn encode_err(error: &MysqlError, capabilities: CapabilityFlags) -> Vec<u8> {
    let state = capabilities.contains(CapabilityFlags::CLIENT_PROTOCOL_41).then(|| SqlState::new(error.sql_state));
    let packet = ErrPacket::Error(ServerError::new(error.code, state, error.message.as_bytes()));
    let mut out = Vec::with_capacity(9 + error.message.len());
    packet.serialize(&mut out);
    out
}

/// The classic 5-byte EOF packet.
pub(crate) fn encode_eof(warnings: u16, status: StatusFlags) -> [u8; 5] {
    let w = warnings.to_le_bytes();
    let s = status.bits().to_le_bytes();
    [EOF_HEADER, w[0], w[1], s[0], s[1]]
}

pub(crate) fn write_ok(stream: &mut PacketStream, ok: &OkResponse, status: StatusFlags) -> Result<(), ProtocolError> {
    stream.write_packet(&encode_ok(ok, status, OK_HEADER))
}

pub(crate) fn write_err(stream: &mut PacketStream, error: &MysqlError, capabilities: CapabilityFlags) -> Result<(), ProtocolError> {
    stream.write_packet(&encode_err(error, capabilities))
}

/// Ends a list of column definitions or rows: EOF, or nothing/OK-0xFE under
/// CLIENT_DEPRECATE_EOF. `final_terminator` is false for the EOF between
/// column definitions and rows, which CLIENT_DEPRECATE_EOF drops entirely.
pub(crate) fn write_terminator(
    stream: &mut PacketStream,
    capabilities: CapabilityFlags,
    warnings: u16,
    status: StatusFlags,
    final_terminator: bool,
) -> Result<(), ProtocolError> {
    if !capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
        return stream.write_packet(&encode_eof(warnings, status));
    }
    if final_terminator {
        let ok = OkResponse { warnings, ..Default::default() };
        return stream.write_packet(&encode_ok(&ok, status, EOF_HEADER));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::io::ParseBuf;
    use mysql_common::packets::{CommonOkPacket, OkPacketDeserializer, ResultSetTerminator};

    #[test]
    fn ok_packets_decode_with_mysql_common() {
        let ok = OkResponse { affected_rows: 300, last_insert_id: 7, warnings: 2, info: "Rows matched: 1".into() };
        let status = StatusFlags::SERVER_STATUS_AUTOCOMMIT | StatusFlags::SERVER_MORE_RESULTS_EXISTS;
        let bytes = encode_ok(&ok, status, OK_HEADER);
        let decoded: OkPacketDeserializer<'_, CommonOkPacket> = ParseBuf(&bytes).parse(CapabilityFlags::CLIENT_PROTOCOL_41).unwrap();
        let decoded = decoded.into_inner();
        assert_eq!(decoded.affected_rows(), 300);
        assert_eq!(decoded.last_insert_id(), Some(7));
        assert_eq!(decoded.warnings(), 2);
        assert_eq!(decoded.status_flags(), status);
        assert_eq!(decoded.info_str().unwrap(), "Rows matched: 1");

        let bytes = encode_ok(&OkResponse::default(), StatusFlags::SERVER_STATUS_IN_TRANS, EOF_HEADER);
        let decoded: OkPacketDeserializer<'_, ResultSetTerminator> = ParseBuf(&bytes).parse(CapabilityFlags::CLIENT_PROTOCOL_41).unwrap();
        assert_eq!(decoded.into_inner().status_flags(), StatusFlags::SERVER_STATUS_IN_TRANS);
    }

    #[test]
    fn err_packets_decode_with_mysql_common() {
        let error = MysqlError::access_denied("u", "h", false);
        let bytes = encode_err(&error, CapabilityFlags::CLIENT_PROTOCOL_41);
        let decoded: ErrPacket<'_> = ParseBuf(&bytes).parse(CapabilityFlags::CLIENT_PROTOCOL_41).unwrap();
        let decoded = decoded.server_error();
        assert_eq!(decoded.error_code(), 1045);
        assert_eq!(decoded.sql_state_ref().unwrap().as_str(), "28000");
        assert_eq!(decoded.message_str(), error.message);
        let bytes = encode_err(&error, CapabilityFlags::empty());
        assert_eq!(&bytes[3..], error.message.as_bytes());
    }
}
