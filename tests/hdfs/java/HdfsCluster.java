import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * A real HDFS for the tests: Hadoop's MiniDFSCluster, one NameNode and one DataNode on
 * 127.0.0.1 and free ports, its storage under the folder given as the only argument.
 *
 * <p>Prints one JSON line once the cluster serves: {"url": "hdfs://127.0.0.1:PORT",
 * "http": PORT, "superuser": USER} (the NameNode's HTTP port serves /jmx, whose per-method RPC
 * metrics the tests count NameNode calls with). Stops the cluster cleanly and exits when its
 * stdin closes, so a test session that dies leaves no NameNode behind.
 */
public final class HdfsCluster {
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: HdfsCluster <base dir>");
            System.exit(2);
        }
        Configuration conf = new HdfsConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(args[0]).getAbsolutePath());
        // Small blocks and one replica: the tests' files are tiny and there is one DataNode.
        conf.setInt("dfs.replication", 1);
        conf.setLong("dfs.blocksize", 1024 * 1024);
        conf.setLong("dfs.namenode.fs-limits.min-block-size", 1024);
        // Per-method RPC metrics (RpcDetailedActivity) are always on; the tests read them.
        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf)
            .numDataNodes(1)
            .nameNodePort(0)
            .nameNodeHttpPort(0)
            .build();
        cluster.waitActive();
        // A world-writable /tmp-like root for tables, so a feed running as another (not super)
        // user can write its consumer file, as on a cluster where tables belong to a group.
        FileSystem fs = cluster.getFileSystem();
        Path shared = new Path("/shared");
        fs.mkdirs(shared);
        fs.setPermission(shared, new FsPermission((short) 01777));
        String url = "hdfs://127.0.0.1:" + cluster.getNameNodePort();
        int http = cluster.getNameNode().getHttpAddress().getPort();
        String user = UserGroupInformation.getCurrentUser().getShortUserName();
        System.out.println("{\"url\": \"" + url + "\", \"http\": " + http + ", \"superuser\": \"" + user + "\"}");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.readLine() != null) {
            // Nothing to do on a line: the cluster runs until stdin closes.
        }
        cluster.shutdown(true);
        System.exit(0);
    }
}
