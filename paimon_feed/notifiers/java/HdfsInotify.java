import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSClient;
import org.apache.hadoop.hdfs.DFSInotifyEventInputStream;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.client.HdfsAdmin;
import org.apache.hadoop.hdfs.inotify.Event;
import org.apache.hadoop.hdfs.inotify.EventBatch;
import org.apache.hadoop.hdfs.inotify.MissingEventsException;
import org.apache.hadoop.security.AccessControlException;

/**
 * paimon-feed's reader of an HDFS namespace's inotify stream (HdfsAdmin.getInotifyEventStream).
 *
 * <p>Usage: HdfsInotify NAMESPACE_URI LAST_TXID POLL_MS. Starts after LAST_TXID (-1: at the
 * NameNode's current transaction) and prints one JSON line per event the feed can use:
 * <pre>
 *   {"ready": true, "txid": N}            the stream is open after transaction N (rights checked)
 *   {"txid": N, "path": "/wh/db.db/t/snapshot/snapshot-7"}   a RENAME to a snapshot file
 *   {"txid": N}                           progress: the last transaction read, once caught up
 *   {"missed": true, "from": F, "first": R, "txid": N}   the NameNode no longer has the edits
 *                                         from transaction F (its oldest is R): the stream
 *                                         starts again at the current transaction N
 *   {"error": "superuser"|"io", "message": "..."}   then exits (3: no superuser rights, 1: other)
 * </pre>
 * Every empty poll is one getEditsFromTxid call to the NameNode; POLL_MS apart. Exits when
 * stdin closes. Compiled and run by paimon_feed/notifiers/hdfs.py.
 */
public final class HdfsInotify {
    private static final Pattern SNAPSHOT = Pattern.compile(".*/snapshot/snapshot-[0-9]+");

    private static HdfsAdmin admin;
    private static URI uri;
    private static Configuration conf;
    private static DFSInotifyEventInputStream stream;
    /** The last transaction the stream read (or starts after). */
    private static long position;

    public static void main(String[] args) throws Exception {
        long lastTxid = Long.parseLong(args[1]);
        long pollMs = Long.parseLong(args[2]);
        Thread watchdog = new Thread(() -> {
            try {
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                while (in.readLine() != null) {
                    // lines mean nothing; EOF means stop
                }
            } catch (Exception e) {
                // stdin broken: stop as on EOF
            }
            System.exit(0);
        });
        watchdog.setDaemon(true);
        watchdog.start();
        uri = URI.create(args[0]);
        conf = new HdfsConfiguration();
        EventBatch first;
        try {
            admin = new HdfsAdmin(uri, conf);
            position = lastTxid < 0 ? currentTxid() : lastTxid;
            stream = admin.getInotifyEventStream(position);
            // getInotifyEventStream(txid) makes no call; this first poll checks the rights.
            first = pollOnce();
        } catch (AccessControlException e) {
            fail("superuser", e, 3);
            return;
        } catch (Exception e) {
            fail("io", e, 1);
            return;
        }
        System.out.println("{\"ready\": true, \"txid\": " + position + "}");
        System.out.flush();
        long reported = position;
        EventBatch batch = first;
        while (true) {
            if (batch != null) {
                position = emit(batch);
            } else {
                if (position != reported) {
                    System.out.println("{\"txid\": " + position + "}");
                    System.out.flush();
                    reported = position;
                }
                Thread.sleep(pollMs);
            }
            try {
                batch = pollOnce();
            } catch (Exception e) {
                fail("io", e, 1);
                return;
            }
        }
    }

    /** The NameNode's current transaction (a superuser call, like the stream's). */
    private static long currentTxid() throws Exception {
        try (DFSClient client = new DFSClient(uri, conf)) {
            return client.getNamenode().getCurrentEditLogTxid();
        }
    }

    /**
     * One poll of the stream. If the NameNode purged edits the stream had not read yet, the
     * stream starts again at the current transaction (reading every retained transaction in
     * between would only replay old events, up to millions of them): says so, returns null.
     */
    private static EventBatch pollOnce() throws Exception {
        try {
            return stream.poll();
        } catch (MissingEventsException e) {
            position = currentTxid();
            stream = admin.getInotifyEventStream(position);
            System.out.println("{\"missed\": true, \"from\": " + e.getExpectedTxid() + ", \"first\": "
                + e.getActualTxid() + ", \"txid\": " + position + "}");
            System.out.flush();
            return null;
        }
    }

    private static long emit(EventBatch batch) {
        long txid = batch.getTxid();
        for (Event event : batch.getEvents()) {
            if (event.getEventType() == Event.EventType.RENAME) {
                String dst = ((Event.RenameEvent) event).getDstPath();
                if (SNAPSHOT.matcher(dst).matches()) {
                    System.out.println("{\"txid\": " + txid + ", \"path\": " + quote(dst) + "}");
                    System.out.flush();
                }
            }
        }
        return txid;
    }

    private static void fail(String kind, Exception e, int status) {
        // A RemoteException's message carries the NameNode's stack trace: its first line says it.
        String message = e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).split("\n", 2)[0];
        System.out.println("{\"error\": \"" + kind + "\", \"message\": " + quote(message) + "}");
        System.out.flush();
        System.exit(status);
    }

    private static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
