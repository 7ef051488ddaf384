package io.sluice.dnstap;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * The Frame Streams protocol (fstrm) a dnstap reader speaks on its socket, as the writer of a
 * bidirectional stream: READY naming the content type, the reader's ACCEPT, START, then data
 * frames (a 32-bit big-endian length and the bytes), and STOP at the end, which the reader
 * answers with FINISH. A control frame is an escape (a zero length), its own length, its type and
 * its fields; the only field is the content type.
 */
final class FrameStreams {
    static final byte[] DNSTAP = "protobuf:dnstap.Dnstap".getBytes(StandardCharsets.US_ASCII);
    static final int ACCEPT = 0x01;
    static final int START = 0x02;
    static final int STOP = 0x03;
    static final int READY = 0x04;
    static final int FINISH = 0x05;
    private static final int FIELD_CONTENT_TYPE = 0x01;
    /** A control frame longer than this is no reader's: fstrm's own bound. */
    private static final int MAX_CONTROL = 512;

    private FrameStreams() {
    }

    /** The control frame {@code type}, with the dnstap content type unless it is STOP. */
    static ByteBuffer control(int type) {
        boolean typed = type != STOP && type != FINISH;
        int length = 4 + (typed ? 8 + DNSTAP.length : 0);
        ByteBuffer b = ByteBuffer.allocate(8 + length);
        b.putInt(0).putInt(length).putInt(type);
        if (typed) {
            b.putInt(FIELD_CONTENT_TYPE).putInt(DNSTAP.length).put(DNSTAP);
        }
        return b.flip();
    }

    /**
     * Reads one control frame and says its type.
     *
     * @throws IOException when the stream ends, or what comes is not a control frame
     */
    static int readControl(ByteChannel in) throws IOException {
        ByteBuffer head = readFully(in, ByteBuffer.allocate(8));
        if (head.getInt(0) != 0) {
            throw new IOException("the reader sent data where a control frame was due");
        }
        int length = head.getInt(4);
        if (length < 4 || length > MAX_CONTROL) {
            throw new IOException("the reader sent a control frame of " + length + " bytes");
        }
        return readFully(in, ByteBuffer.allocate(length)).getInt(0);
    }

    /** Writes all of {@code b}. */
    static void writeFully(ByteChannel out, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            out.write(b);
        }
    }

    private static ByteBuffer readFully(ByteChannel in, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (in.read(b) < 0) {
                throw new EOFException("the reader closed the connection");
            }
        }
        return b.flip();
    }
}
