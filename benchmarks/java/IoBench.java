// The Java reference client for benchmarks/bench_hbase_io.py: what every other HBase tool is
// measured by. Writes rows with a BufferedMutator (the client's defaults: 2 MB write buffer,
// several region servers' batches in flight) and reads them back with a plain full scan.
//
// Usage: java -cp 'tools/hbase/lines/2.6.4/lib/*:benchmarks/java/build' IoBench QUORUM ROWS_FILE FAMILY TABLE...
//   QUORUM     host:port of ZooKeeper
//   ROWS_FILE  records of: 2-byte big-endian key length, key, 8-byte value
//   TABLE...   one or more pre-split tables: the rows are written to each in turn, then each is
//              scanned, all in this one JVM, so the second table measures a warm JVM.
// Prints one JSON line per table and operation: {"op", "table", "round", "rows", "seconds"}.
// A scan of a table that does not hold exactly the rows written exits non-zero.
// -Dkeyshape.iobench.scan=false: writes only (bench_migrate measures the region server's CPU of
// the writes alone).

import java.io.DataInputStream;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.FileInputStream;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;

public final class IoBench {
    private IoBench() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: IoBench QUORUM ROWS_FILE FAMILY TABLE...");
            System.exit(2);
        }
        String[] hostPort = args[0].split(":");
        List<byte[]> keys = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(args[1]), 1 << 20))) {
            while (true) {
                int n;
                try {
                    n = in.readUnsignedShort();
                } catch (EOFException end) {
                    break;
                }
                byte[] key = new byte[n];
                in.readFully(key);
                byte[] value = new byte[8];
                in.readFully(value);
                keys.add(key);
                values.add(value);
            }
        }
        byte[] family = args[2].getBytes("UTF-8");
        byte[] qualifier = "v".getBytes("UTF-8");
        Configuration conf = HBaseConfiguration.create();
        conf.set("hbase.zookeeper.quorum", hostPort[0]);
        conf.set("hbase.zookeeper.property.clientPort", hostPort.length > 1 ? hostPort[1] : "2181");
        try (Connection connection = ConnectionFactory.createConnection(conf)) {
            for (int t = 3; t < args.length; t++) {
                TableName name = TableName.valueOf(args[t]);
                long t0 = System.nanoTime();
                try (BufferedMutator mutator = connection.getBufferedMutator(name)) {
                    for (int i = 0; i < keys.size(); i++) {
                        Put put = new Put(keys.get(i));
                        put.addColumn(family, qualifier, values.get(i));
                        mutator.mutate(put);
                    }
                }  // close() flushes and waits for every mutation
                report("write", args[t], t - 3, keys.size(), System.nanoTime() - t0);
            }
            boolean scan = Boolean.parseBoolean(System.getProperty("keyshape.iobench.scan", "true"));
            for (int t = 3; scan && t < args.length; t++) {
                TableName name = TableName.valueOf(args[t]);
                long t0 = System.nanoTime();
                long rows = 0;
                long bytes = 0;
                try (Table table = connection.getTable(name);
                     ResultScanner scanner = table.getScanner(new Scan().setCaching(1000))) {
                    for (Result result : scanner) {
                        rows++;
                        bytes += result.getRow().length + result.getValue(family, qualifier).length;
                    }
                }
                report("scan", args[t], t - 3, rows, System.nanoTime() - t0);
                if (rows != keys.size()) {
                    System.err.println("scan of " + args[t] + " found " + rows + " rows, wrote " + keys.size());
                    System.exit(1);
                }
            }
        }
    }

    private static void report(String op, String table, int round, long rows, long nanos) {
        System.out.println("{\"op\": \"" + op + "\", \"table\": \"" + table + "\", \"round\": " + round
                + ", \"rows\": " + rows + ", \"seconds\": " + (nanos / 1e9) + "}");
        System.out.flush();
    }
}
