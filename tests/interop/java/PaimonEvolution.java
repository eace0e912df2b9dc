/*
 * Data evolution for the interop driver: a partial-column update the way Spark's MERGE INTO
 * writes one on a data-evolution.enabled table (DataEvolutionTableDataWrite): a file holding only
 * the updated columns for a whole file's row-id range, committed with that range's first row id.
 * Compiled only against Paimon versions that have data evolution (1.3 and later).
 */

import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.operation.AbstractFileStoreWrite;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.TableWriteImpl;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.CommitIncrement;
import org.apache.paimon.utils.RecordWriter;

import java.util.Collections;
import java.util.List;

public class PaimonEvolution implements PaimonDriver.Evolution {

    @Override
    @SuppressWarnings("unchecked")
    public void updateColumns(
            FileStoreTable table, RowType writeType, List<InternalRow> rows, long firstRowId)
            throws Exception {
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        CommitMessage message;
        try (TableWriteImpl<InternalRow> write =
                (TableWriteImpl<InternalRow>) builder.newWrite().withWriteType(writeType)) {
            RecordWriter<InternalRow> writer =
                    ((AbstractFileStoreWrite<InternalRow>) write.getWrite())
                            .createWriter(BinaryRow.EMPTY_ROW, 0);
            try {
                for (InternalRow row : rows) {
                    writer.write(row);
                }
                CommitIncrement result = writer.prepareCommit(false);
                List<DataFileMeta> files = result.newFilesIncrement().newFiles();
                if (files.size() != 1) {
                    throw new IllegalStateException("expected one file, wrote " + files.size());
                }
                DataFileMeta file = files.get(0).assignFirstRowId(firstRowId);
                message =
                        new CommitMessageImpl(
                                BinaryRow.EMPTY_ROW,
                                0,
                                null,
                                new DataIncrement(
                                        Collections.singletonList(file),
                                        Collections.emptyList(),
                                        Collections.emptyList()),
                                CompactIncrement.emptyIncrement());
            } finally {
                writer.close();
            }
        }
        try (BatchTableCommit commit = builder.newCommit()) {
            commit.commit(Collections.singletonList(message));
        }
    }
}
