use std::net::TcpListener;

/// A loopback port nothing listened on a moment ago. Another process may
/// take it before the caller binds it: servers that can bind port 0 and
/// report the port they got should do that instead.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
