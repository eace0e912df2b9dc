/*
 * Java Paimon, driven by the interop tests: one JSON command per line on stdin, one JSON answer
 * per line on stdout ({"ok": true, ...} or {"ok": false, "error": "..."}). Logging goes to stderr.
 *
 * It writes tables the way Flink and Spark jobs do (stream writes with commit identifiers,
 * compaction, changelog producers, deletion vectors, dynamic buckets, expiry, tags, consumers)
 * and is the oracle the feed is checked against: a batch read at a snapshot, and the changes a
 * Java streaming read delivers between two snapshots.
 *
 * Only APIs that Paimon 0.9 and 1.x share are used here, so the same file compiles against
 * both jars; what needs 1.x lives in PaimonModern.java, loaded by name when it was compiled.
 */

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.consumer.Consumer;
import org.apache.paimon.consumer.ConsumerManager;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.schema.SchemaManager;
import org.apache.paimon.schema.TableSchema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.sink.TableWrite;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableScan;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

public class PaimonDriver {

    /** Commands that need Paimon 1.x, implemented in PaimonModern.java. */
    public interface Modern {
        /** Full compaction of a bucket-unaware (bucket = -1) append table. */
        List<CommitMessage> compactUnawareAppend(FileStoreTable table, String commitUser)
                throws Exception;

        /** Assigns dynamic buckets (bucket = -1 primary-key tables) as Flink's assigner does. */
        BucketAssigner dynamicBuckets(FileStoreTable table, String commitUser);

        Map<String, Object> snapshotInfo(FileStoreTable table) throws Exception;

        /** ALTER TABLE ... DROP PARTITION: an OVERWRITE snapshot deleting the partitions. */
        void dropPartitions(FileStoreTable table, List<Map<String, String>> partitions)
                throws Exception;
    }

    /** Data evolution (Paimon 1.3+), implemented in PaimonEvolution.java. */
    public interface Evolution {
        /** Rewrites {@code writeType}'s columns of the rows from {@code firstRowId} on (a whole
         * file's range), as Spark's MERGE INTO does on a data-evolution table; one commit. */
        void updateColumns(
                FileStoreTable table, RowType writeType, List<InternalRow> rows, long firstRowId)
                throws Exception;
    }

    /** A dynamic-bucket assigner for the rows of one commit. */
    public interface BucketAssigner {
        int assign(InternalRow row);

        void prepareCommit(long commitIdentifier);
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String COMMIT_USER = "paimon-feed-interop";
    // Commit identifiers only have to grow per commit user; time keeps them growing across runs.
    private static final AtomicLong COMMIT_IDS = new AtomicLong(System.currentTimeMillis());

    private final Map<String, Catalog> catalogs = new HashMap<>();
    private final Modern modern = (Modern) load("PaimonModern");
    private final Evolution evolution = (Evolution) load("PaimonEvolution");
    private IOManager ioManager;
    private Path ioDir;

    public static void main(String[] args) throws Exception {
        // Anything a library prints must not corrupt the protocol on stdout.
        PrintStream protocol = new PrintStream(System.out, true, "UTF-8");
        System.setOut(System.err);
        PaimonDriver driver = new PaimonDriver();
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Map<String, Object> ready = new LinkedHashMap<>();
        ready.put("ok", true);
        ready.put("ready", true);
        ready.put("paimon_version", paimonVersion());
        ready.put("modern", driver.modern != null);
        protocol.println(JSON.writeValueAsString(ready));
        try {
            serve(driver, in, protocol);
        } finally {
            driver.closeIoManager();
        }
    }

    private static void serve(PaimonDriver driver, BufferedReader in, PrintStream protocol)
            throws Exception {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) {
                continue;
            }
            Map<String, Object> answer;
            try {
                JsonNode request = JSON.readTree(line);
                answer = driver.handle(request);
                answer.put("ok", true);
            } catch (Throwable t) {
                answer = new LinkedHashMap<>();
                answer.put("ok", false);
                answer.put("error", t.getClass().getName() + ": " + t.getMessage());
                StringWriter trace = new StringWriter();
                t.printStackTrace(new PrintWriter(trace));
                answer.put("trace", trace.toString());
            }
            protocol.println(JSON.writeValueAsString(answer));
        }
    }

    private static String paimonVersion() {
        Package p = FileStoreTable.class.getPackage();
        String version = p == null ? null : p.getImplementationVersion();
        return version == null ? "unknown" : version;
    }

    private static Object load(String className) {
        try {
            return Class.forName(className).getDeclaredConstructor().newInstance();
        } catch (ClassNotFoundException e) {
            return null;
        } catch (ReflectiveOperationException e) {
            throw new RuntimeException(e);
        }
    }

    private Modern modern(String what) {
        if (modern == null) {
            throw new UnsupportedOperationException(what + " needs Paimon 1.x in this driver");
        }
        return modern;
    }

    private Map<String, Object> handle(JsonNode req) throws Exception {
        String cmd = req.get("cmd").asText();
        switch (cmd) {
            case "ping":
                return new LinkedHashMap<>();
            case "create_table":
                return createTable(req);
            case "alter_table":
                return alterTable(req);
            case "write":
                return write(req);
            case "compact":
                return compact(req);
            case "overwrite":
                return overwrite(req);
            case "drop_partitions":
                return dropPartitions(req);
            case "expire_snapshots":
                return expireSnapshots(req);
            case "create_tag":
                table(req).createTag(req.get("tag").asText(), req.get("snapshot").asLong());
                return snapshotResult(table(req));
            case "rollback":  // {"snapshot": N} or {"tag": name}: Java's rollbackTo
                if (req.has("tag")) {
                    table(req).rollbackTo(req.get("tag").asText());
                } else {
                    table(req).rollbackTo(req.get("snapshot").asLong());
                }
                return snapshotResult(table(req));
            case "drop_table":
                catalog(req).dropTable(Identifier.fromString(req.get("table").asText()), false);
                return new LinkedHashMap<>();
            case "create_branch":  // {"branch": name, "tag": from}
                table(req).createBranch(req.get("branch").asText(), req.get("tag").asText());
                return new LinkedHashMap<>();
            case "fast_forward":  // {"branch": name}: the branch's snapshots replace main's
                table(req).fastForward(req.get("branch").asText());
                return snapshotResult(table(req));
            case "update_columns":
                return updateColumns(req);
            case "read":
                return read(req);
            case "changes":
                return changes(req);
            case "consumer":
                return consumer(req);
            case "snapshot_info":
                return snapshotInfo(req);
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    // catalog and tables -----------------------------------------------------------------------

    private Catalog catalog(JsonNode req) {
        Map<String, String> options = new HashMap<>(strings(req.get("catalog_options")));
        options.put("warehouse", req.get("warehouse").asText());
        // Every command must see the files as they are now, including the feed's consumer files.
        options.put("cache-enabled", "false");
        String key = new java.util.TreeMap<>(options).toString();
        return catalogs.computeIfAbsent(
                key, k -> CatalogFactory.createCatalog(CatalogContext.create(Options.fromMap(options))));
    }

    /**
     * The table with {"options": {...}} as dynamic options; with {"schema_id": N} it reads and
     * plans with schema N (the schema a snapshot was committed with) instead of the latest.
     */
    private FileStoreTable table(JsonNode req) throws Exception {
        FileStoreTable table =
                (FileStoreTable) catalog(req).getTable(Identifier.fromString(req.get("table").asText()));
        if (req.has("schema_id")) {
            SchemaManager schemas = new SchemaManager(table.fileIO(), table.location());
            table = table.copy(schemas.schema(req.get("schema_id").asLong()));
        }
        Map<String, String> dynamic = strings(req.get("options"));
        return dynamic.isEmpty() ? table : table.copy(dynamic);
    }

    private IOManager ioManager() throws Exception {
        if (ioManager == null) {
            ioDir = Files.createTempDirectory("paimon-interop-io");
            ioManager = IOManager.create(ioDir.toString());
        }
        return ioManager;
    }

    /** At exit (stdin closed): the IOManager's spill files and its directory go with it. */
    private void closeIoManager() throws Exception {
        if (ioManager == null) {
            return;
        }
        ioManager.close();
        try (java.util.stream.Stream<Path> paths = Files.walk(ioDir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    private Map<String, Object> createTable(JsonNode req) throws Exception {
        Identifier id = Identifier.fromString(req.get("table").asText());
        Catalog catalog = catalog(req);
        catalog.createDatabase(id.getDatabaseName(), true);
        Schema.Builder schema = Schema.newBuilder();
        for (JsonNode column : req.get("columns")) {
            schema.column(column.get(0).asText(), parseType(column.get(1).asText()));
        }
        List<String> primaryKeys = texts(req.get("primary_keys"));
        if (!primaryKeys.isEmpty()) {
            schema.primaryKey(primaryKeys);
        }
        List<String> partitionKeys = texts(req.get("partition_keys"));
        if (!partitionKeys.isEmpty()) {
            schema.partitionKeys(partitionKeys);
        }
        schema.options(strings(req.get("table_options")));
        catalog.createTable(id, schema.build(), false);
        return new LinkedHashMap<>();
    }

    /**
     * ALTER TABLE with Paimon's SchemaChanges, in order: {"changes": [{"add": name, "type": T},
     * {"rename": old, "to": new}, {"update_type": name, "type": T}]}. Answers the new schema.
     */
    private Map<String, Object> alterTable(JsonNode req) throws Exception {
        List<SchemaChange> changes = new ArrayList<>();
        for (JsonNode change : req.get("changes")) {
            if (change.has("add")) {
                changes.add(SchemaChange.addColumn(change.get("add").asText(), parseType(change.get("type").asText())));
            } else if (change.has("rename")) {
                changes.add(SchemaChange.renameColumn(change.get("rename").asText(), change.get("to").asText()));
            } else if (change.has("update_type")) {
                changes.add(
                        SchemaChange.updateColumnType(
                                change.get("update_type").asText(), parseType(change.get("type").asText())));
            } else {
                throw new IllegalArgumentException("unknown schema change " + change);
            }
        }
        catalog(req).alterTable(Identifier.fromString(req.get("table").asText()), changes, false);
        return schemaResult(table(req).schema());
    }

    private static Map<String, Object> schemaResult(TableSchema schema) {
        List<List<String>> fields = new ArrayList<>();
        for (DataField field : schema.fields()) {
            List<String> pair = new ArrayList<>();
            pair.add(field.name());
            pair.add(field.type().toString());
            fields.add(pair);
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("schema_id", schema.id());
        result.put("fields", fields);
        return result;
    }

    private static final Map<String, DataType> TYPES = new HashMap<>();

    static {
        TYPES.put("BIGINT", DataTypes.BIGINT());
        TYPES.put("INT", DataTypes.INT());
        TYPES.put("STRING", DataTypes.STRING());
        TYPES.put("DOUBLE", DataTypes.DOUBLE());
        TYPES.put("BOOLEAN", DataTypes.BOOLEAN());
    }

    private static DataType parseType(String text) {
        String upper = text.trim().toUpperCase();
        boolean notNull = upper.endsWith(" NOT NULL");
        String name = notNull ? upper.substring(0, upper.length() - 9).trim() : upper;
        DataType type = TYPES.get(name);
        java.util.regex.Matcher sized = java.util.regex.Pattern.compile("(CHAR|VARCHAR|TIMESTAMP)\\((\\d+)\\)").matcher(name);
        if (type == null && sized.matches()) {
            int size = Integer.parseInt(sized.group(2));
            type = sized.group(1).equals("CHAR") ? DataTypes.CHAR(size)
                    : sized.group(1).equals("VARCHAR") ? DataTypes.VARCHAR(size)
                    : DataTypes.TIMESTAMP(size);
        }
        if (type == null) {
            type = parseOtherType(notNull ? text.trim().substring(0, text.trim().length() - 9).trim() : text.trim());
        }
        return notNull ? type.notNull() : type;
    }

    /**
     * Nested types ("ARRAY<INT>", "MAP<STRING, BIGINT>", "ROW<x INT, s STRING>", field names
     * keep their case), "TIMESTAMP_LTZ(n)", and any other atomic type in Paimon's SQL syntax
     * ("DECIMAL(38, 18)", "TINYINT", "BYTES").
     */
    private static DataType parseOtherType(String text) {
        String upper = text.toUpperCase();
        if (upper.startsWith("ARRAY<") && upper.endsWith(">")) {
            return DataTypes.ARRAY(parseType(text.substring(6, text.length() - 1)));
        }
        if (upper.startsWith("MAP<") && upper.endsWith(">")) {
            List<String> parts = splitTopLevel(text.substring(4, text.length() - 1));
            return DataTypes.MAP(parseType(parts.get(0)), parseType(parts.get(1)));
        }
        if (upper.startsWith("ROW<") && upper.endsWith(">")) {
            List<DataField> fields = new ArrayList<>();
            for (String part : splitTopLevel(text.substring(4, text.length() - 1))) {
                String field = part.trim();
                int space = field.indexOf(' ');
                fields.add(DataTypes.FIELD(fields.size(), field.substring(0, space), parseType(field.substring(space + 1))));
            }
            return DataTypes.ROW(fields.toArray(new DataField[0]));
        }
        java.util.regex.Matcher ltz = java.util.regex.Pattern.compile("TIMESTAMP_LTZ\\((\\d+)\\)").matcher(upper);
        if (ltz.matches()) {
            return DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(Integer.parseInt(ltz.group(1)));
        }
        try {
            return org.apache.paimon.types.DataTypeJsonParser.parseAtomicTypeSQLString(upper);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("unsupported type " + text, e);
        }
    }

    private static List<String> splitTopLevel(String text) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '<' || c == '(') {
                depth++;
            } else if (c == '>' || c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                parts.add(text.substring(start, i).trim());
                start = i + 1;
            }
        }
        parts.add(text.substring(start).trim());
        return parts;
    }

    // writing ----------------------------------------------------------------------------------

    /**
     * Commits {"rows": [...]} (each row an object, "_kind" an optional row kind such as "-D") as
     * a stream write does: one commit identifier, compaction finished before the commit when
     * the table's options ask for it (lookup changelog, deletion vectors).
     */
    private Map<String, Object> write(JsonNode req) throws Exception {
        FileStoreTable table = table(req);
        boolean waitCompaction = !req.has("wait_compaction") || req.get("wait_compaction").asBoolean();
        StreamWriteBuilder builder = table.newStreamWriteBuilder().withCommitUser(COMMIT_USER);
        BucketAssigner assigner = dynamicBucketAssigner(table);
        long identifier = COMMIT_IDS.incrementAndGet();
        try (StreamTableWrite write = builder.newWrite();
                StreamTableCommit commit = builder.newCommit()) {
            writeRows(table, write, assigner, req.get("rows"));
            List<CommitMessage> messages = write.prepareCommit(waitCompaction, identifier);
            if (assigner != null) {
                assigner.prepareCommit(identifier);
            }
            commit.commit(identifier, messages);
        }
        return snapshotResult(table);
    }

    private void writeRows(
            FileStoreTable table, TableWrite write, BucketAssigner assigner, JsonNode rows)
            throws Exception {
        write.withIOManager(ioManager());
        for (JsonNode row : rows) {
            InternalRow internal = toRow(table.rowType(), row);
            if (assigner == null) {
                write.write(internal);
            } else {
                write.write(internal, assigner.assign(internal));
            }
        }
    }

    private BucketAssigner dynamicBucketAssigner(FileStoreTable table) {
        boolean dynamic =
                !table.primaryKeys().isEmpty()
                        && "-1".equals(table.options().getOrDefault("bucket", "-1"));
        if (!dynamic) {
            return null;
        }
        return modern("dynamic-bucket writes").dynamicBuckets(table, COMMIT_USER);
    }

    /** Full compaction of every bucket that holds data, committed as one COMPACT snapshot. */
    private Map<String, Object> compact(JsonNode req) throws Exception {
        FileStoreTable table = table(req);
        boolean unawareAppend =
                table.primaryKeys().isEmpty()
                        && "-1".equals(table.options().getOrDefault("bucket", "-1"));
        long identifier = COMMIT_IDS.incrementAndGet();
        StreamWriteBuilder builder = table.newStreamWriteBuilder().withCommitUser(COMMIT_USER);
        List<CommitMessage> messages;
        if (unawareAppend) {
            messages = modern("append compaction").compactUnawareAppend(table, COMMIT_USER);
        } else {
            try (StreamTableWrite write = builder.newWrite()) {
                write.withIOManager(ioManager());
                for (Map.Entry<BinaryRow, Set<Integer>> entry : buckets(table).entrySet()) {
                    for (int bucket : entry.getValue()) {
                        write.compact(entry.getKey(), bucket, true);
                    }
                }
                messages = write.prepareCommit(true, identifier);
            }
        }
        try (StreamTableCommit commit = builder.newCommit()) {
            commit.commit(identifier, messages);
        }
        return snapshotResult(table);
    }

    private static Map<BinaryRow, Set<Integer>> buckets(FileStoreTable table) throws Exception {
        Map<BinaryRow, Set<Integer>> buckets = new LinkedHashMap<>();
        for (Split split : table.newReadBuilder().newScan().plan().splits()) {
            DataSplit data = (DataSplit) split;
            buckets.computeIfAbsent(data.partition().copy(), k -> new LinkedHashSet<>())
                    .add(data.bucket());
        }
        return buckets;
    }

    /** INSERT OVERWRITE: {"partition": {...}} overwrites one partition, none the whole table. */
    private Map<String, Object> overwrite(JsonNode req) throws Exception {
        FileStoreTable table = table(req);
        BatchWriteBuilder builder =
                table.newBatchWriteBuilder().withOverwrite(strings(req.get("partition")));
        BucketAssigner assigner = dynamicBucketAssigner(table);
        try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
            writeRows(table, write, assigner, req.get("rows"));
            commit.commit(write.prepareCommit());
        }
        return snapshotResult(table);
    }

    private Map<String, Object> dropPartitions(JsonNode req) throws Exception {
        FileStoreTable table = table(req);
        List<Map<String, String>> partitions = new ArrayList<>();
        for (JsonNode spec : req.get("partitions")) {
            partitions.add(strings(spec));
        }
        modern("drop_partitions").dropPartitions(table, partitions);
        return snapshotResult(table);
    }

    /** Java's expire-snapshots: keeps what consumers have not read, like every commit does. */
    private Map<String, Object> expireSnapshots(JsonNode req) throws Exception {
        FileStoreTable table = table(req);
        ExpireConfig config =
                ExpireConfig.builder()
                        .snapshotRetainMax(req.get("retain_max").asInt())
                        .snapshotRetainMin(req.has("retain_min") ? req.get("retain_min").asInt() : 1)
                        .snapshotTimeRetain(Duration.ZERO)
                        .build();
        int expired = table.newExpireSnapshots().config(config).expire();
        Map<String, Object> result = snapshotResult(table);
        result.put("expired", expired);
        return result;
    }

    // reading: the oracle ----------------------------------------------------------------------

    /**
     * The table's rows at {"snapshot": N} (default: latest), as a batch read gives them; with
     * {"options": {"scan.tag-name": T}} at a tag. Time travel reads with the schema of the
     * snapshot it travels to; the answer names that schema ("schema_id", "fields").
     * {"with_kind": true} adds each merged row's kind ("_kind").
     */
    /** {"columns": [names], "rows": [...], "first_row_id": N}: see {@link Evolution}. */
    private Map<String, Object> updateColumns(JsonNode req) throws Exception {
        if (evolution == null) {
            throw new UnsupportedOperationException("update_columns needs Paimon 1.3+ in this driver");
        }
        FileStoreTable table = table(req);
        RowType writeType = table.rowType().project(texts(req.get("columns")));
        List<InternalRow> rows = new ArrayList<>();
        for (JsonNode row : req.get("rows")) {
            rows.add(toRow(writeType, row));
        }
        evolution.updateColumns(table, writeType, rows, req.get("first_row_id").asLong());
        return snapshotResult(table);
    }

    private Map<String, Object> read(JsonNode req) throws Exception {
        FileStoreTable table = table(req);
        if (req.has("snapshot")) {
            Map<String, String> at = new HashMap<>();
            at.put("scan.snapshot-id", req.get("snapshot").asText());
            table = table.copy(at);
        }
        ReadBuilder builder = table.newReadBuilder();
        TableScan.Plan plan = builder.newScan().plan();
        Map<String, Object> result = schemaResult(table.schema());
        boolean withKind = req.has("with_kind") && req.get("with_kind").asBoolean();
        result.put("rows", rows(table.rowType(), builder, plan.splits(), withKind));
        return result;
    }

    /**
     * What a Java streaming read (Flink's source) delivers for the snapshots after
     * {"after": A} up to {"to": B} inclusive: deltas or changelogs by changelog-producer,
     * rows with their row kind in "_kind". Dynamic options pass through (e.g.
     * streaming-read-overwrite=true); {"schema_id": N} reads with schema N. The answer also has
     * the schema read with and each planned snapshot's schema id ("snapshot_schema_ids"; none
     * for a changelog read after its snapshot expired).
     */
    private Map<String, Object> changes(JsonNode req) throws Exception {
        FileStoreTable table = table(req);
        long after = req.get("after").asLong();
        long to = req.get("to").asLong();
        ReadBuilder builder = table.newReadBuilder();
        StreamTableScan scan = builder.newStreamScan();
        scan.restore(after + 1);
        List<Map<String, Object>> rows = new ArrayList<>();
        List<Long> snapshots = new ArrayList<>();
        Map<String, Long> schemaIds = new LinkedHashMap<>();
        while (scan.checkpoint() <= to) {
            long before = scan.checkpoint();
            List<Split> splits = scan.plan().splits();
            if (scan.checkpoint() == before) {
                break; // the next snapshot does not exist (yet)
            }
            // Before 1.1 a snapshot without changes gives an empty plan; later ones skip it.
            long planned = scan.checkpoint() - 1;
            if (planned > to) {
                break;
            }
            if (!splits.isEmpty()) {
                snapshots.add(planned);
                if (table.snapshotManager().snapshotExists(planned)) { // not for a retained changelog
                    schemaIds.put(Long.toString(planned), table.snapshotManager().snapshot(planned).schemaId());
                }
                rows.addAll(rows(table.rowType(), builder, splits, true));
            }
        }
        Map<String, Object> result = schemaResult(table.schema());
        result.put("rows", rows);
        result.put("snapshots", snapshots);
        result.put("snapshot_schema_ids", schemaIds);
        result.put("next_snapshot", scan.checkpoint());
        return result;
    }

    private static List<Map<String, Object>> rows(
            RowType type, ReadBuilder builder, List<Split> splits, boolean withKind)
            throws Exception {
        List<Map<String, Object>> rows = new ArrayList<>();
        List<DataField> fields = type.getFields();
        InternalRow.FieldGetter[] getters = new InternalRow.FieldGetter[fields.size()];
        for (int i = 0; i < getters.length; i++) {
            getters[i] = InternalRow.createFieldGetter(fields.get(i).type(), i);
        }
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(splits)) {
            reader.forEachRemaining(
                    row -> {
                        Map<String, Object> out = new LinkedHashMap<>();
                        for (int i = 0; i < getters.length; i++) {
                            Object value = getters[i].getFieldOrNull(row);
                            out.put(fields.get(i).name(), toJsonValue(fields.get(i).type(), value));
                        }
                        if (withKind) {
                            out.put("_kind", row.getRowKind().shortString());
                        }
                        rows.add(out);
                    });
        }
        return rows;
    }

    // consumers and snapshots ------------------------------------------------------------------

    /**
     * Java's ConsumerManager: {"set": N} writes consumer {"id"}, {"expire_before_ms": T} runs
     * consumer expiration; the answer has the consumer's next snapshot (or null) and the
     * smallest next snapshot of all consumers, which bounds snapshot expiration.
     */
    private Map<String, Object> consumer(JsonNode req) throws Exception {
        FileStoreTable table = table(req);
        ConsumerManager manager = new ConsumerManager(table.fileIO(), table.location());
        String id = req.get("id").asText();
        if (req.has("set")) {
            manager.resetConsumer(id, new Consumer(req.get("set").asLong()));
        }
        if (req.has("expire_before_ms")) {
            manager.expire(
                    java.time.LocalDateTime.ofInstant(
                            java.time.Instant.ofEpochMilli(req.get("expire_before_ms").asLong()),
                            java.time.ZoneId.systemDefault()));
        }
        Optional<Consumer> consumer = manager.consumer(id);
        OptionalLong min = manager.minNextSnapshot();
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("next_snapshot", consumer.isPresent() ? consumer.get().nextSnapshot() : null);
        result.put("min_next_snapshot", min.isPresent() ? min.getAsLong() : null);
        return result;
    }

    private Map<String, Object> snapshotInfo(JsonNode req) throws Exception {
        FileStoreTable table = table(req);
        if (modern != null) {
            return modern.snapshotInfo(table);
        }
        return snapshotResult(table);
    }

    private static Map<String, Object> snapshotResult(FileStoreTable table) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("snapshot", table.snapshotManager().latestSnapshotId());
        result.put("earliest", table.snapshotManager().earliestSnapshotId());
        return result;
    }

    // JSON <-> rows ----------------------------------------------------------------------------

    private static InternalRow toRow(RowType type, JsonNode json) {
        List<DataField> fields = type.getFields();
        RowKind kind =
                json.has("_kind") ? RowKind.fromShortString(json.get("_kind").asText()) : RowKind.INSERT;
        GenericRow row = new GenericRow(kind, fields.size());
        for (int i = 0; i < fields.size(); i++) {
            JsonNode value = json.get(fields.get(i).name());
            row.setField(i, value == null || value.isNull() ? null : toValue(fields.get(i).type(), value));
        }
        return row;
    }

    private static Object toValue(DataType type, JsonNode value) {
        switch (type.getTypeRoot()) {
            case BIGINT:
                return value.asLong();
            case INTEGER:
                return value.asInt();
            case SMALLINT:
                return (short) value.asInt();
            case TINYINT:
                return (byte) value.asInt();
            case DOUBLE:
                return value.asDouble();
            case FLOAT:
                return (float) value.asDouble();
            case BOOLEAN:
                return value.asBoolean();
            case VARCHAR:
            case CHAR:
                return BinaryString.fromString(value.asText());
            case BINARY:
            case VARBINARY: // base64 text
                return java.util.Base64.getDecoder().decode(value.asText());
            case DECIMAL: // decimal text
                {
                    org.apache.paimon.types.DecimalType decimal = (org.apache.paimon.types.DecimalType) type;
                    return org.apache.paimon.data.Decimal.fromBigDecimal(
                            new java.math.BigDecimal(value.asText()), decimal.getPrecision(), decimal.getScale());
                }
            case DATE: // days since 1970-01-01
                return value.asInt();
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE: // the UTC wall clock
                return Timestamp.fromLocalDateTime(java.time.LocalDateTime.parse(value.asText()));
            case ARRAY:
                {
                    DataType element = ((org.apache.paimon.types.ArrayType) type).getElementType();
                    Object[] items = new Object[value.size()];
                    for (int i = 0; i < items.length; i++) {
                        JsonNode item = value.get(i);
                        items[i] = item.isNull() ? null : toValue(element, item);
                    }
                    return new org.apache.paimon.data.GenericArray(items);
                }
            case MAP: // a JSON object (string keys)
                {
                    org.apache.paimon.types.MapType map = (org.apache.paimon.types.MapType) type;
                    Map<Object, Object> entries = new LinkedHashMap<>();
                    Iterator<Map.Entry<String, JsonNode>> it = value.fields();
                    while (it.hasNext()) {
                        Map.Entry<String, JsonNode> entry = it.next();
                        entries.put(
                                BinaryString.fromString(entry.getKey()),
                                entry.getValue().isNull() ? null : toValue(map.getValueType(), entry.getValue()));
                    }
                    return new org.apache.paimon.data.GenericMap(entries);
                }
            case ROW:
                return toRow((RowType) type, value);
            default:
                throw new IllegalArgumentException("unsupported type " + type);
        }
    }

    /**
     * A read value as JSON: strings as text, timestamps as "yyyy-MM-ddTHH:mm:ss.nnnnnnnnn",
     * decimals as plain text, binary as base64, dates as days, nested values recursively (maps
     * as objects keyed by the key's text).
     */
    private static Object toJsonValue(DataType type, Object value) {
        if (value == null) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case DECIMAL:
                return ((org.apache.paimon.data.Decimal) value).toBigDecimal().toPlainString();
            case BINARY:
            case VARBINARY:
                return java.util.Base64.getEncoder().encodeToString((byte[]) value);
            case ARRAY:
                {
                    DataType element = ((org.apache.paimon.types.ArrayType) type).getElementType();
                    org.apache.paimon.data.InternalArray array = (org.apache.paimon.data.InternalArray) value;
                    org.apache.paimon.data.InternalArray.ElementGetter getter =
                            org.apache.paimon.data.InternalArray.createElementGetter(element);
                    List<Object> items = new ArrayList<>();
                    for (int i = 0; i < array.size(); i++) {
                        items.add(toJsonValue(element, getter.getElementOrNull(array, i)));
                    }
                    return items;
                }
            case MAP:
                {
                    org.apache.paimon.types.MapType type2 = (org.apache.paimon.types.MapType) type;
                    org.apache.paimon.data.InternalMap map = (org.apache.paimon.data.InternalMap) value;
                    org.apache.paimon.data.InternalArray.ElementGetter keys =
                            org.apache.paimon.data.InternalArray.createElementGetter(type2.getKeyType());
                    org.apache.paimon.data.InternalArray.ElementGetter values =
                            org.apache.paimon.data.InternalArray.createElementGetter(type2.getValueType());
                    Map<String, Object> out = new java.util.TreeMap<>();
                    for (int i = 0; i < map.size(); i++) {
                        out.put(
                                String.valueOf(toJsonValue(type2.getKeyType(), keys.getElementOrNull(map.keyArray(), i))),
                                toJsonValue(type2.getValueType(), values.getElementOrNull(map.valueArray(), i)));
                    }
                    return out;
                }
            case ROW:
                {
                    List<DataField> fields = ((RowType) type).getFields();
                    InternalRow row = (InternalRow) value;
                    Map<String, Object> out = new LinkedHashMap<>();
                    for (int i = 0; i < fields.size(); i++) {
                        Object field = InternalRow.createFieldGetter(fields.get(i).type(), i).getFieldOrNull(row);
                        out.put(fields.get(i).name(), toJsonValue(fields.get(i).type(), field));
                    }
                    return out;
                }
            default:
                return toJsonValue(value);
        }
    }

    private static Object toJsonValue(Object value) {
        if (value instanceof BinaryString) {
            return value.toString();
        }
        if (value instanceof Timestamp) {
            return ((Timestamp) value).toLocalDateTime().format(NANOS);
        }
        return value;
    }

    private static final java.time.format.DateTimeFormatter NANOS =
            java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSS");

    private static Map<String, String> strings(JsonNode node) {
        Map<String, String> map = new LinkedHashMap<>();
        if (node != null && !node.isNull()) {
            Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> field = fields.next();
                map.put(field.getKey(), field.getValue().asText());
            }
        }
        return map;
    }

    private static List<String> texts(JsonNode node) {
        List<String> list = new ArrayList<>();
        if (node != null && !node.isNull()) {
            for (JsonNode item : node) {
                list.add(item.asText());
            }
        }
        return list;
    }
}
