// Prints salt test vectors computed by the REAL released jars of Phoenix, OpenTSDB or HBaseWD (one
// per run: `java UpstreamSalts phoenix|opentsdb|hbasewd`, with that upstream's Maven classpath).
// Every upstream call goes through reflection, so this file compiles against the JDK alone and
// each upstream runs in its own JVM with its own Guava/HBase. Nothing here restates a formula:
// the only arithmetic is building keys whose Arrays.hashCode hits chosen edge values.
// Run: tools/golden/run.sh (writes tests/data/salt_golden.json).
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.*;

public class UpstreamSalts {
  static final int[] EDGE_HASHES = {Integer.MIN_VALUE, Integer.MIN_VALUE + 1, Integer.MAX_VALUE, -1, 0, 1,
      -7, -10, -255, -256, -257, -65536, 256, 65535};

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x", x & 0xff));
    return s.toString();
  }

  static String q(String s) { return "\"" + s + "\""; }

  static byte[] utf8(String s) { return s.getBytes(StandardCharsets.UTF_8); }

  static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) n += p.length;
    byte[] out = new byte[n];
    int at = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }

  // prefix + 7 bytes whose Arrays.hashCode is `target`: the 7 bytes are the balanced base-31 digits
  // (each in -15..15) of target - 31^7 * hash(prefix), which covers every int since 31^7 > 2^32.
  static byte[] keyWithHash(byte[] prefix, int target) {
    int pow = 1;
    for (int i = 0; i < 7; i++) pow *= 31;
    long d = target - pow * Arrays.hashCode(prefix);  // int wrap-around, then widened
    byte[] tail = new byte[7];
    for (int i = 6; i >= 0; i--) {
      long r = Math.floorMod(d, 31L);
      if (r > 15) r -= 31;
      tail[i] = (byte) r;
      d = (d - r) / 31;
    }
    byte[] key = concat(prefix, tail);
    if (Arrays.hashCode(key) != target) throw new AssertionError("keyWithHash failed for " + target);
    return key;
  }

  static List<byte[]> sampleKeys() {
    List<byte[]> keys = new ArrayList<>();
    keys.add(new byte[0]);
    for (int b : new int[] {0x00, 0x01, 0x7f, 0x80, 0xff}) keys.add(new byte[] {(byte) b});
    keys.add(utf8("hello"));
    keys.add(utf8("row-00042"));
    keys.add(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
    byte[][] prefixes = {new byte[0], utf8("user"), {(byte) 0xe1, (byte) 0x80}};
    for (int i = 0; i < EDGE_HASHES.length; i++) keys.add(keyWithHash(prefixes[i % prefixes.length], EDGE_HASHES[i]));
    keys.add(concat(new byte[] {(byte) 0xe1}, utf8("polygenelubricants")));  // hash == MIN_VALUE, short of the 7-byte tail
    Random r = new Random(42);
    while (keys.size() < 50) {
      byte[] b = new byte[r.nextInt(24)];
      r.nextBytes(b);
      keys.add(b);
    }
    return keys;
  }

  // The set of distinct salts a real function produced, as JSON: count, first/last, and the
  // SHA-256 of the sorted lower-case hex salts joined by ",", so the test compares whole sets
  // without a megabyte of JSON.
  static String saltSet(String params, TreeSet<String> salts) throws Exception {
    java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
    byte[] digest = sha.digest(String.join(",", salts).getBytes(StandardCharsets.US_ASCII));
    List<String> all = new ArrayList<>(salts);
    List<String> head = new ArrayList<>(), tail = new ArrayList<>();
    for (String x : all.subList(0, Math.min(4, all.size()))) head.add(q(x));
    for (String x : all.subList(Math.max(0, all.size() - 4), all.size())) tail.add(q(x));
    return "{" + params + ", \"count\": " + salts.size() + ", \"sha256\": " + q(hex(digest))
        + ", \"first\": [" + String.join(", ", head) + "], \"last\": [" + String.join(", ", tail) + "]}";
  }

  // Keys that reach every bucket: their Arrays.hashCode takes each value in -n..n, which are all
  // the remainders |hash % n| the salt functions can take, plus random keys as a cross-check.
  static List<byte[]> coveringKeys(byte[] prefix, int n) {
    List<byte[]> keys = new ArrayList<>();
    for (int h = 0; h < n; h++) {
      keys.add(keyWithHash(prefix, h));
      keys.add(keyWithHash(prefix, -h));
    }
    keys.add(keyWithHash(prefix, Integer.MIN_VALUE));
    keys.add(keyWithHash(prefix, Integer.MAX_VALUE));
    Random r = new Random(n);
    for (int i = 0; i < 2000; i++) {
      byte[] b = new byte[1 + r.nextInt(16)];
      r.nextBytes(b);
      keys.add(concat(prefix, b));
    }
    return keys;
  }

  static String jarOf(Class<?> c) {
    String p = c.getProtectionDomain().getCodeSource().getLocation().getPath();
    return p.substring(p.lastIndexOf('/') + 1);
  }

  static String header(Class<?> c, String call) {
    return "{\"jar\": " + q(jarOf(c)) + ", \"call\": " + q(call) + ", \"cases\": [\n    ";
  }

  static void phoenix() throws Exception {
    Class<?> c = Class.forName("org.apache.phoenix.schema.SaltingUtil");
    Method m = c.getMethod("getSaltingByte", byte[].class, int.class, int.class, int.class);
    int[] buckets = {1, 2, 3, 7, 10, 16, 255, 256};
    List<String> rows = new ArrayList<>();
    for (byte[] key : sampleKeys()) {
      // Phoenix hashes the row key after its salt byte: pass it at offset 1 of a longer buffer so
      // offset/length handling is exercised too.
      byte[] buf = concat(new byte[] {0x55}, key, new byte[] {0x66});
      List<String> salts = new ArrayList<>();
      for (int n : buckets) salts.add(q(String.valueOf(n)) + ": " + (((byte) m.invoke(null, buf, 1, key.length, n)) & 0xff));
      rows.add("{\"key\": " + q(hex(key)) + ", \"hash\": " + Arrays.hashCode(key) + ", \"salt\": {" + String.join(", ", salts) + "}}");
    }
    List<String> sets = new ArrayList<>();
    for (int n : buckets) {
      TreeSet<String> salts = new TreeSet<>();
      for (byte[] key : coveringKeys(new byte[0], n)) salts.add(hex(new byte[] {(byte) m.invoke(null, key, 0, key.length, n)}));
      sets.add(saltSet("\"buckets\": " + n, salts));
    }
    System.out.print(header(c, "SaltingUtil.getSaltingByte(0x55 + key + 0x66, 1, key.length, buckets) & 0xff")
        + String.join(",\n    ", rows) + "\n  ],\n  \"salt_sets\": [\n    " + String.join(",\n    ", sets) + "\n  ]}");
  }

  static void hbasewd() throws Exception {
    Class<?> c = Class.forName("com.sematext.hbase.wd.RowKeyDistributorByHashPrefix$OneByteSimpleHash");
    int[] buckets = {1, 2, 3, 7, 10, 16, 255, 256};
    Method prefix = c.getMethod("getHashPrefix", byte[].class);
    List<String> rows = new ArrayList<>();
    for (byte[] key : sampleKeys()) {
      List<String> salts = new ArrayList<>();
      for (int n : buckets) {
        byte[] p = (byte[]) prefix.invoke(c.getConstructor(int.class).newInstance(n), (Object) key);
        if (p.length != 1) throw new AssertionError("prefix length " + p.length);
        salts.add(q(String.valueOf(n)) + ": " + (p[0] & 0xff));
      }
      rows.add("{\"key\": " + q(hex(key)) + ", \"hash\": " + Arrays.hashCode(key) + ", \"salt\": {" + String.join(", ", salts) + "}}");
    }
    System.out.print(header(c, "new OneByteSimpleHash(buckets).getHashPrefix(key)[0] & 0xff")
        + String.join(",\n    ", rows) + "\n  ]}");
  }

  static void opentsdb() throws Exception {
    Class<?> rowKey = Class.forName("net.opentsdb.core.RowKey");
    Class<?> konst = Class.forName("net.opentsdb.core.Const");
    Class<?> tsdb = Class.forName("net.opentsdb.core.TSDB");
    Method prefix = rowKey.getMethod("prefixKeyWithSalt", byte[].class);
    Method setWidth = konst.getDeclaredMethod("setSaltWidth", int.class);
    Method setBuckets = konst.getDeclaredMethod("setSaltBuckets", int.class);
    setWidth.setAccessible(true);
    setBuckets.setAccessible(true);
    Field metricsWidth = tsdb.getDeclaredField("METRICS_WIDTH");  // tsd.storage.uid.width.metric
    metricsWidth.setAccessible(true);

    // (metric, tags) pairs: the UIDs that prefixKeyWithSalt hashes (the timestamp is skipped).
    List<byte[][]> series = new ArrayList<>();
    Random r = new Random(7);
    byte[] ts = {0x5f, 0x5e, 0x10, 0x00};
    for (int i = 0; i < EDGE_HASHES.length; i++) {
      // metric(3) + 2 tag pairs of 3+3 bytes; the last 7 bytes are chosen to hit the edge hash.
      byte[] base = keyWithHash(new byte[] {0, 0, (byte) (i + 1), 0, 0, 1, 0, 0}, EDGE_HASHES[i]);
      series.add(new byte[][] {Arrays.copyOf(base, 3), Arrays.copyOfRange(base, 3, base.length)});
    }
    series.add(new byte[][] {{0, 0, 0}, {0, 0, 1, 0, 0, 2}});  // metric UID 0: annotation row, unsalted
    series.add(new byte[][] {{0, 0, 1}, {}});
    while (series.size() < 20) {
      byte[] metric = new byte[3];
      r.nextBytes(metric);
      byte[] tags = new byte[6 * (1 + r.nextInt(3))];
      r.nextBytes(tags);
      series.add(new byte[][] {metric, tags});
    }
    int[] bucketList = {1, 2, 3, 20, 256, 1000, 65536, Integer.MAX_VALUE};
    List<String> rows = new ArrayList<>();
    int k = 0;
    for (byte[][] s : series) {
      for (int width = 1; width <= 8; width++) {
        if (width > 4 && k % 3 != 0) continue;  // widths 5..8 (shift wrap-around) on every 3rd series
        int buckets = bucketList[(k + width) % bucketList.length];
        rows.add(tsdbCase(prefix, setWidth, setBuckets, metricsWidth, s[0], ts, s[1], width, buckets));
      }
      k++;
    }
    // Metric UID widths other than the default 3 (the salt hashes metrics_width bytes after the salt).
    for (int mw : new int[] {1, 4}) {
      byte[] metric = Arrays.copyOf(new byte[] {0x12, (byte) 0x80, 0x7f, 0x01}, mw);
      rows.add(tsdbCase(prefix, setWidth, setBuckets, metricsWidth, metric, ts, new byte[] {1, 2, 3, 4, 5, 6}, 1, 20));
      rows.add(tsdbCase(prefix, setWidth, setBuckets, metricsWidth, metric, ts, new byte[] {1, 2, 3, 4, 5, 6}, 2, 1000));
    }
    // Every salt the real prefixKeyWithSalt writes, per width and bucket count; and, where there
    // are too many to list, the salts at chosen positions of their sorted order.
    metricsWidth.setShort(null, (short) 3);
    List<String> sets = new ArrayList<>();
    List<String> picks = new ArrayList<>();
    for (int width = 1; width <= 8; width++) {
      for (int n : new int[] {1, 2, 20, 256, 300, 1000, 65536, 100000}) {
        if (n == 65536 && width != 2 && width != 5 && width != 8) continue;  // keep the run short
        TreeSet<String> salts = new TreeSet<>();
        setWidth.invoke(null, width);
        setBuckets.invoke(null, n);
        for (byte[] tail : coveringKeys(new byte[] {0, 0, 1}, n)) {
          byte[] row = concat(new byte[width], Arrays.copyOf(tail, 3), ts, Arrays.copyOfRange(tail, 3, tail.length));
          prefix.invoke(null, (Object) row);
          salts.add(hex(Arrays.copyOf(row, width)));
        }
        byte[] zero = concat(new byte[width], new byte[3], ts, new byte[] {0, 0, 1, 0, 0, 2});  // unsalted row
        prefix.invoke(null, (Object) zero);
        salts.add(hex(Arrays.copyOf(zero, width)));
        String params = "\"width\": " + width + ", \"buckets\": " + n;
        if (n <= 65536) sets.add(saltSet(params, salts));
        if (n > 65536 || (width > 4 && n >= 1000)) {
          List<String> all = new ArrayList<>(salts);
          List<String> at = new ArrayList<>();
          for (int j = 0; j < 16; j++) {
            int i = (int) ((long) j * (all.size() - 1) / 15);
            at.add("\"" + i + "\": " + q(all.get(i)));
          }
          picks.add("{" + params + ", \"count\": " + all.size() + ", \"sorted_at\": {" + String.join(", ", at) + "}}");
        }
      }
    }
    System.out.print(header(rowKey, "Const.setSaltWidth(width); Const.setSaltBuckets(buckets); TSDB.METRICS_WIDTH = len(metric);"
        + " row = width zero bytes + metric + timestamp + tags; RowKey.prefixKeyWithSalt(row)")
        + String.join(",\n    ", rows) + "\n  ],\n  \"salt_sets\": [\n    " + String.join(",\n    ", sets)
        + "\n  ],\n  \"sorted_salts\": [\n    " + String.join(",\n    ", picks) + "\n  ]}");
  }

  static String tsdbCase(Method prefix, Method setWidth, Method setBuckets, Field metricsWidth, byte[] metric,
      byte[] ts, byte[] tags, int width, int buckets) throws Exception {
    setWidth.invoke(null, width);
    setBuckets.invoke(null, buckets);
    metricsWidth.setShort(null, (short) metric.length);
    byte[] row = concat(new byte[width], metric, ts, tags);
    prefix.invoke(null, (Object) row);
    return "{\"metric\": " + q(hex(metric)) + ", \"timestamp\": " + q(hex(ts)) + ", \"tags\": " + q(hex(tags))
        + ", \"hash\": " + Arrays.hashCode(concat(metric, tags)) + ", \"width\": " + width + ", \"buckets\": " + buckets
        + ", \"row\": " + q(hex(row)) + "}";
  }

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "phoenix": phoenix(); break;
      case "opentsdb": opentsdb(); break;
      case "hbasewd": hbasewd(); break;
      default: throw new IllegalArgumentException("usage: UpstreamSalts phoenix|opentsdb|hbasewd");
    }
  }
}
