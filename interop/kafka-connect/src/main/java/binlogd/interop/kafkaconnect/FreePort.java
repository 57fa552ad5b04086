package binlogd.interop.kafkaconnect;

import java.io.IOException;
import java.net.ServerSocket;

/** A port on 127.0.0.1 that nothing listens on now, kept for a server's whole life so restarts reuse it. */
final class FreePort {
    private FreePort() {
    }

    static int pick() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
