import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.MiniDFSNNTopology;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;
import org.apache.hadoop.hdfs.server.namenode.FSEditLog;
import org.apache.hadoop.hdfs.server.protocol.NamenodeProtocols;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * A real HDFS for the tests: Hadoop's MiniDFSCluster on 127.0.0.1 and free ports, one DataNode,
 * its storage under the folder given as the first argument, in one of three topologies:
 * <ul>
 *   <li>{@code single}: one NameNode;</li>
 *   <li>{@code ha}: MiniDFSNNTopology.simpleHATopology(), a logical nameservice with two NameNodes
 *       (the first active) and shared edits;</li>
 *   <li>{@code federated}: MiniDFSNNTopology.simpleFederatedTopology(2), two nameservices, and a
 *       viewfs mount table {@code viewfs://feedfed/} with {@code /ns0} and {@code /ns1} mounted on
 *       each nameservice's {@code /shared}.</li>
 * </ul>
 * Writes the clients' {@code core-site.xml} and {@code hdfs-site.xml} (HA nameservice, mount
 * table) into the folder given as the third argument (a HADOOP_CONF_DIR), then prints one JSON line:
 * {"url": ..., "urls": [...], "http": PORT, "superuser": USER}. The NameNode's HTTP port serves
 * /jmx, whose per-method RPC metrics the tests count NameNode calls with.
 *
 * <p>Then reads commands from stdin, one a line, and answers each with one JSON line:
 * {@code failover} (the active NameNode becomes standby, the other active), {@code kill-active}
 * (the active NameNode is shut down and the other made active; it stays down), {@code purge} (checkpoint and purge every edit log segment before
 * it), {@code txid}. Stops the cluster cleanly and exits when stdin closes, so a test session that
 * dies leaves no NameNode behind.
 */
public final class HdfsCluster {
    private static final String MOUNT_TABLE = "feedfed";

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: HdfsCluster <base dir> single|ha|federated <client conf dir>");
            System.exit(2);
        }
        String topology = args[1];
        Configuration conf = new HdfsConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(args[0]).getAbsolutePath());
        // Small blocks and one replica: the tests' files are tiny and there is one DataNode.
        conf.setInt("dfs.replication", 1);
        conf.setLong("dfs.blocksize", 1024 * 1024);
        conf.setLong("dfs.namenode.fs-limits.min-block-size", 1024);
        // A checkpoint (`purge`) keeps no older image and no older edits: the inotify stream's
        // old transactions are then gone, as on a cluster whose retention passed them.
        conf.setInt("dfs.namenode.num.checkpoints.retained", 1);
        conf.setLong("dfs.namenode.num.extra.edits.retained", 0);
        conf.setInt("dfs.namenode.max.extra.edits.segments.retained", 0);
        // A standby tails the shared edits often, so a failover has little to catch up on.
        conf.setInt("dfs.ha.tail-edits.period", 1);
        MiniDFSNNTopology nnTopology;
        switch (topology) {
            case "single": nnTopology = MiniDFSNNTopology.simpleSingleNN(0, 0); break;
            case "ha": nnTopology = MiniDFSNNTopology.simpleHATopology(); break;
            case "federated": nnTopology = MiniDFSNNTopology.simpleFederatedTopology(2); break;
            default: throw new IllegalArgumentException("unknown topology " + topology);
        }
        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf)
            .nnTopology(nnTopology)
            .numDataNodes(1)
            .build();
        int nameNodes = nnTopology.countNameNodes();
        if (topology.equals("ha")) {
            cluster.transitionToActive(0);
        }
        cluster.waitActive();
        List<String> urls = new ArrayList<>();
        StringBuilder hdfsSite = new StringBuilder();
        StringBuilder coreSite = new StringBuilder();
        String ns = nnTopology.getNameservices().get(0).getId();
        if (topology.equals("ha")) {
            urls.add("hdfs://" + ns);
            StringBuilder ids = new StringBuilder();
            for (int i = 0; i < nameNodes; i++) {
                String nn = nnTopology.getNameservices().get(0).getNNs().get(i).getNnId();
                ids.append(i == 0 ? "" : ",").append(nn);
                property(hdfsSite, "dfs.namenode.rpc-address." + ns + "." + nn,
                    "127.0.0.1:" + cluster.getNameNodePort(i));
            }
            property(hdfsSite, "dfs.nameservices", ns);
            property(hdfsSite, "dfs.ha.namenodes." + ns, ids.toString());
            property(hdfsSite, "dfs.client.failover.proxy.provider." + ns,
                "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider");
            // Fail over in a fraction of a second (the defaults back off up to 15 s).
            property(hdfsSite, "dfs.client.failover.sleep.base.millis", "100");
            property(hdfsSite, "dfs.client.failover.sleep.max.millis", "1000");
        } else {
            for (int i = 0; i < nameNodes; i++) {
                urls.add("hdfs://127.0.0.1:" + cluster.getNameNodePort(i));
            }
        }
        if (topology.equals("federated")) {
            for (int i = 0; i < nameNodes; i++) {
                property(coreSite, "fs.viewfs.mounttable." + MOUNT_TABLE + ".link./ns" + i, urls.get(i) + "/shared");
            }
        }
        // A world-writable /tmp-like root for tables (on each nameservice), so a feed running as
        // another (not super) user can write its consumer file, as on a cluster where tables
        // belong to a group.
        for (int i = 0; i < (topology.equals("federated") ? nameNodes : 1); i++) {
            FileSystem fs = topology.equals("ha") ? cluster.getFileSystem(0) : cluster.getFileSystem(i);
            Path shared = new Path("/shared");
            fs.mkdirs(shared);
            fs.setPermission(shared, new FsPermission((short) 01777));
        }
        writeSite(new File(args[2], "hdfs-site.xml"), hdfsSite);
        writeSite(new File(args[2], "core-site.xml"), coreSite);
        StringBuilder started = new StringBuilder("{\"url\": \"").append(urls.get(0)).append("\", \"urls\": [");
        for (int i = 0; i < urls.size(); i++) {
            started.append(i == 0 ? "\"" : ", \"").append(urls.get(i)).append('"');
        }
        if (topology.equals("federated")) {
            started.append("], \"viewfs\": \"viewfs://" + MOUNT_TABLE);
            started.append("\", \"mounts\": [\"/ns0\", \"/ns1\"");
        }
        int http = cluster.getNameNode(0).getHttpAddress().getPort();
        int rpc = cluster.getNameNodePort(0);
        String user = UserGroupInformation.getCurrentUser().getShortUserName();
        started.append("], \"http\": ").append(http).append(", \"rpc\": ").append(rpc)
            .append(", \"superuser\": \"").append(user).append("\"}");
        answer(started.toString());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            try {
                answer(command(cluster, nameNodes, line.trim().split(" ")));
            } catch (Exception e) {
                String message = String.valueOf(e).replace("\\", "\\\\").replace("\"", "'").replace("\n", " ");
                answer("{\"error\": \"" + message + "\"}");
            }
        }
        cluster.shutdown(true);
        System.exit(0);
    }

    private static String command(MiniDFSCluster cluster, int nameNodes, String[] words) throws Exception {
        switch (words[0]) {
            case "failover": {
                int active = active(cluster, nameNodes);
                cluster.transitionToStandby(active);
                cluster.transitionToActive(1 - active);
                return "{\"active\": " + (1 - active) + "}";
            }
            case "kill-active": {
                int active = active(cluster, nameNodes);
                cluster.shutdownNameNode(active);
                cluster.transitionToActive(1 - active);
                return "{\"active\": " + (1 - active) + ", \"killed\": " + active + "}";
            }
            case "purge": {
                int active = active(cluster, nameNodes);
                NamenodeProtocols rpc = cluster.getNameNodeRpc(active);
                rpc.setSafeMode(HdfsConstants.SafeModeAction.SAFEMODE_ENTER, false);
                rpc.saveNamespace(0, 0);
                rpc.setSafeMode(HdfsConstants.SafeModeAction.SAFEMODE_LEAVE, false);
                // The checkpoint's own purge keeps the edits here (MiniDFSCluster's retention):
                // drop every finalized segment, as a cluster's retention eventually does.
                FSEditLog log = cluster.getNameNode(active).getFSImage().getEditLog();
                long kept = log.getCurSegmentTxId();
                log.purgeLogsOlderThan(kept);
                return "{\"txid\": " + rpc.getCurrentEditLogTxid() + ", \"oldest\": " + kept + "}";
            }
            case "txid":
                return "{\"txid\": " + cluster.getNameNodeRpc(active(cluster, nameNodes)).getCurrentEditLogTxid() + "}";
            default:
                throw new IllegalArgumentException("unknown command " + words[0]);
        }
    }

    private static int active(MiniDFSCluster cluster, int nameNodes) {
        for (int i = 0; i < nameNodes; i++) {
            if (cluster.getNameNode(i) != null && cluster.getNameNode(i).isActiveState()) {
                return i;
            }
        }
        return 0;
    }

    private static void property(StringBuilder site, String name, String value) {
        site.append("  <property><name>").append(name).append("</name><value>").append(value)
            .append("</value></property>\n");
    }

    private static void writeSite(File file, StringBuilder properties) throws Exception {
        try (OutputStream out = new FileOutputStream(file)) {
            out.write(("<?xml version=\"1.0\"?>\n<configuration>\n" + properties + "</configuration>\n")
                .getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void answer(String json) {
        System.out.println(json);
        System.out.flush();
    }
}
