/*
 * The parts of the interop driver that need Paimon 1.x APIs: compaction of bucket-unaware
 * append tables, Flink's dynamic-bucket assigner, and the changelog files of a table whose
 * changelog outlives its snapshots. Compiled only against the 1.x jars.
 */

import org.apache.paimon.append.AppendCompactCoordinator;
import org.apache.paimon.append.AppendCompactTask;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.operation.BaseAppendFileStoreWrite;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.RowPartitionKeyExtractor;
import org.apache.paimon.utils.ChangelogManager;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class PaimonModern implements PaimonDriver.Modern {

    @Override
    public List<CommitMessage> compactUnawareAppend(FileStoreTable table, String commitUser)
            throws Exception {
        List<CommitMessage> messages = new ArrayList<>();
        List<AppendCompactTask> tasks = new AppendCompactCoordinator(table, false).run();
        BaseAppendFileStoreWrite write = (BaseAppendFileStoreWrite) table.store().newWrite(commitUser);
        try {
            for (AppendCompactTask task : tasks) {
                messages.add(task.doCompact(table, write));
            }
        } finally {
            write.close();
        }
        return messages;
    }

    @Override
    public PaimonDriver.BucketAssigner dynamicBuckets(FileStoreTable table, String commitUser) {
        Integer maxBuckets = table.coreOptions().dynamicBucketMaxBuckets();
        HashBucketAssigner assigner =
                new HashBucketAssigner(
                        table.snapshotManager(),
                        commitUser,
                        table.store().newIndexFileHandler(),
                        1,
                        1,
                        0,
                        table.coreOptions().dynamicBucketTargetRowNum(),
                        maxBuckets == null ? -1 : maxBuckets);
        RowPartitionKeyExtractor extractor = new RowPartitionKeyExtractor(table.schema());
        return new PaimonDriver.BucketAssigner() {
            @Override
            public int assign(InternalRow row) {
                return assigner.assign(
                        extractor.partition(row), extractor.trimmedPrimaryKey(row).hashCode());
            }

            @Override
            public void prepareCommit(long commitIdentifier) {
                assigner.prepareCommit(commitIdentifier);
            }
        };
    }

    @Override
    public void dropPartitions(FileStoreTable table, List<Map<String, String>> partitions)
            throws Exception {
        try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
            commit.truncatePartitions(partitions);
        }
    }

    @Override
    public Map<String, Object> snapshotInfo(FileStoreTable table) {
        ChangelogManager changelogs = table.changelogManager();
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("snapshot", table.snapshotManager().latestSnapshotId());
        result.put("earliest", table.snapshotManager().earliestSnapshotId());
        result.put("earliest_changelog", changelogs.earliestLongLivedChangelogId());
        result.put("latest_changelog", changelogs.latestLongLivedChangelogId());
        return result;
    }
}
