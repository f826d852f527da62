// Prints test vectors computed by the REAL HBase classes (hbase-common / hbase-server jars) as
// JSON, so keyshape's tests pin HBase's behaviour rather than our reading of it. The Phoenix,
// OpenTSDB and HBaseWD salt vectors come from their own jars: see UpstreamSalts.java.
// Run: tools/golden/run.sh (writes tests/data/hbase_golden.json)
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.zip.CRC32;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.Order;
import org.apache.hadoop.hbase.util.OrderedBytes;
import org.apache.hadoop.hbase.util.PositionedByteRange;
import org.apache.hadoop.hbase.util.SimplePositionedMutableByteRange;
import org.apache.hadoop.hbase.util.MD5Hash;
import org.apache.hadoop.hbase.util.MurmurHash3;
import org.apache.hadoop.hbase.util.RegionSplitter;

public class GoldenVectors {
  static StringBuilder out = new StringBuilder();
  static boolean firstSection = true;

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x", x & 0xff));
    return s.toString();
  }

  static String js(String s) {
    StringBuilder r = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') r.append('\\').append(c);
      else if (c < 0x20 || c > 0x7e) r.append(String.format("\\u%04x", (int) c));
      else r.append(c);
    }
    return r.append('"').toString();
  }

  static String hexList(byte[][] keys) {
    List<String> l = new ArrayList<>();
    for (byte[] k : keys) l.add(js(hex(k)));
    return "[" + String.join(", ", l) + "]";
  }

  static void section(String name, List<String> rows) {
    out.append(firstSection ? "{\n" : ",\n");
    firstSection = false;
    out.append("  ").append(js(name)).append(": [\n    ");
    out.append(String.join(",\n    ", rows)).append("\n  ]");
  }

  static List<byte[]> samples() {
    List<byte[]> s = new ArrayList<>();
    s.add(new byte[0]);
    for (int i = 0; i < 256; i++) s.add(new byte[] {(byte) i});
    s.add("hello".getBytes(StandardCharsets.UTF_8));
    s.add("row-00042".getBytes(StandardCharsets.UTF_8));
    s.add(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
    s.add(new byte[] {0, 0, 0, 1, (byte) 0x80, 0x5c, 0x27, 0x22});
    Random r = new Random(42);
    for (int i = 0; i < 40; i++) {
      byte[] b = new byte[r.nextInt(24)];
      r.nextBytes(b);
      s.add(b);
    }
    return s;
  }

  static int javaBytesHash(byte[] b) { return Arrays.hashCode(b); }

  static String splitCase(byte[] a, byte[] b, int num, boolean inclusive) {
    String res;
    try {
      res = "\"out\": " + hexList(Bytes.split(a, b, inclusive, num));
    } catch (IllegalArgumentException e) {
      res = "\"error\": " + js(e.getMessage());
    }
    return "{\"a\": " + js(hex(a)) + ", \"b\": " + js(hex(b)) + ", \"num\": " + num
        + ", \"inclusive\": " + inclusive + ", " + res + "}";
  }

  static String algoCase(String kind, RegionSplitter.SplitAlgorithm algo, String first, String last, int n) {
    if (first != null) algo.setFirstRow(first);
    if (last != null) algo.setLastRow(last);
    String res;
    try {
      res = "\"out\": " + hexList(algo.split(n));
    } catch (IllegalArgumentException | IllegalStateException e) {
      res = "\"error\": " + js(String.valueOf(e.getMessage()));
    }
    return "{\"algo\": " + js(kind) + ", \"first\": " + (first == null ? "null" : js(first))
        + ", \"last\": " + (last == null ? "null" : js(last)) + ", \"regions\": " + n + ", " + res + "}";
  }

  // Admin.createTable(desc, startKey, endKey, numRegions): the split keys come from the REAL
  // RawAsyncHBaseAdmin.getSplitKeys, then the REAL verifySplitKeys that createTable runs on them
  // before it ever talks to the master. Both are private instance methods that read no field, so
  // they run on an instance made without a constructor (no cluster needed).
  static Object admin;
  static Method getSplitKeys, verifySplitKeys;

  static void loadAdmin() throws Exception {
    Class<?> c = Class.forName("org.apache.hadoop.hbase.client.RawAsyncHBaseAdmin");
    Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
    f.setAccessible(true);
    Object unsafe = f.get(null);
    admin = unsafe.getClass().getMethod("allocateInstance", Class.class).invoke(unsafe, c);
    getSplitKeys = c.getDeclaredMethod("getSplitKeys", byte[].class, byte[].class, int.class);
    verifySplitKeys = c.getDeclaredMethod("verifySplitKeys", byte[][].class);
    getSplitKeys.setAccessible(true);
    verifySplitKeys.setAccessible(true);
  }

  static String rangeCase(byte[] start, byte[] end, int n) throws Exception {
    String res;
    try {
      byte[][] keys = (byte[][]) getSplitKeys.invoke(admin, start, end, n);
      res = "\"out\": " + hexList(keys);
      try {
        verifySplitKeys.invoke(admin, (Object) keys.clone());
      } catch (InvocationTargetException e) {
        res += ", \"create_error\": " + js(e.getCause().getMessage());
      }
    } catch (InvocationTargetException e) {
      res = "\"error\": " + js(e.getCause().getMessage());
    }
    return "{\"start\": " + js(hex(start)) + ", \"end\": " + js(hex(end)) + ", \"regions\": " + n + ", " + res + "}";
  }

  // ---------------------------------------------------------------- OrderedBytes (hbase-common)

  interface Enc { void put(PositionedByteRange r, Order o); }

  static byte[] enc(Enc e, Order o) {
    PositionedByteRange r = new SimplePositionedMutableByteRange(64);
    e.put(r, o);
    return Arrays.copyOf(r.getBytes(), r.getPosition());
  }

  static String orderedCase(String type, String value, Enc e, Order o) {
    return "{\"type\": " + js(type) + ", \"value\": " + value + ", \"descending\": " + (o == Order.DESCENDING)
        + ", \"bytes\": " + js(hex(enc(e, o))) + "}";
  }

  static String dbl(double d) {  // JSON has no NaN/Infinity: name them
    if (Double.isNaN(d)) return "\"nan\"";
    if (Double.isInfinite(d)) return d > 0 ? "\"inf\"" : "\"-inf\"";
    if (d == 0 && 1 / d < 0) return "\"-0.0\"";
    return Double.toString(d);
  }

  static List<String> orderedRows() {
    List<String> rows = new ArrayList<>();
    for (Order o : new Order[] {Order.ASCENDING, Order.DESCENDING}) {
      rows.add(orderedCase("null", "null", (r, ord) -> OrderedBytes.encodeNull(r, ord), o));
      for (long v : new long[] {0, 1, -1, 100, Byte.MIN_VALUE, Byte.MAX_VALUE})
        rows.add(orderedCase("int8", Long.toString(v), (r, ord) -> OrderedBytes.encodeInt8(r, (byte) v, ord), o));
      for (long v : new long[] {0, 1, -1, 100, Short.MIN_VALUE, Short.MAX_VALUE})
        rows.add(orderedCase("int16", Long.toString(v), (r, ord) -> OrderedBytes.encodeInt16(r, (short) v, ord), o));
      for (long v : new long[] {0, 1, -1, 100, Integer.MIN_VALUE, Integer.MAX_VALUE, -123456789})
        rows.add(orderedCase("int32", Long.toString(v), (r, ord) -> OrderedBytes.encodeInt32(r, (int) v, ord), o));
      for (long v : new long[] {0, 1, -1, 5, Long.MIN_VALUE, Long.MAX_VALUE, 1234567890123456789L})
        rows.add(orderedCase("int64", Long.toString(v), (r, ord) -> OrderedBytes.encodeInt64(r, v, ord), o));
      for (double v : new double[] {0.0, -0.0, 1.0, -1.0, 1.5, Float.MIN_VALUE, Float.MAX_VALUE, Double.NaN,
          Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY}) {
        rows.add(orderedCase("float32", dbl((float) v), (r, ord) -> OrderedBytes.encodeFloat32(r, (float) v, ord), o));
      }
      for (double v : new double[] {0.0, -0.0, 1.0, -1.0, 0.1, Double.MIN_VALUE, Double.MAX_VALUE, Double.NaN,
          Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -1e300}) {
        rows.add(orderedCase("float64", dbl(v), (r, ord) -> OrderedBytes.encodeFloat64(r, v, ord), o));
      }
      for (String v : new String[] {"", "a", "hello", "\u00e9t\u00e9", "\u4e2d\u6587", "\ud83d\ude00", "\u00ff\u0100"})
        rows.add(orderedCase("string", js(v), (r, ord) -> OrderedBytes.encodeString(r, v, ord), o));
      byte[][] blobs = {{}, {0}, {1, 2, 3}, {(byte) 0xff}, {0, 0, 0}, {(byte) 0x80, 0x7f, 0x00, (byte) 0xff, 0x10, 0x20, 0x30, 0x40},
          "hello world".getBytes(StandardCharsets.UTF_8)};
      for (byte[] v : blobs)
        rows.add(orderedCase("blob_var", js(hex(v)), (r, ord) -> OrderedBytes.encodeBlobVar(r, v, ord), o));
      for (byte[] v : blobs) {
        if (o == Order.DESCENDING && Bytes.indexOf(v, (byte) 0) >= 0) continue;  // HBase refuses 0x00 there
        rows.add(orderedCase("blob_copy", js(hex(v)), (r, ord) -> OrderedBytes.encodeBlobCopy(r, v, ord), o));
      }
      rows.add(orderedCase("blob_copy", "null", (r, ord) -> OrderedBytes.encodeBlobCopy(r, null, ord), o));
      rows.add(orderedCase("blob_var", "null", (r, ord) -> OrderedBytes.encodeBlobVar(r, null, ord), o));
      rows.add(orderedCase("string", "null", (r, ord) -> OrderedBytes.encodeString(r, null, ord), o));
    }
    return rows;
  }

  // OrderedBytes.skip over the first value of a buffer: how many bytes the value takes, which is
  // where a composite key's next field starts. A descending NULL (0xfa) followed by 0xff is the
  // case where reading the bytes could suggest two.
  static List<String> skipRows() {
    byte[][] bufs = {
      {(byte) 0xfa, (byte) 0xff}, {(byte) 0xfa, (byte) 0xff, (byte) 0xff, 0x01}, {(byte) 0xfa, (byte) 0xd4, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xfe},
      {0x05, (byte) 0xff}, {0x05, 0x2b, (byte) 0x80, 0, 0, 1}, {(byte) 0xfa},
      enc((r, o) -> OrderedBytes.encodeBlobCopy(r, null, o), Order.DESCENDING),
      Bytes.add(enc((r, o) -> OrderedBytes.encodeString(r, "ab", o), Order.DESCENDING), new byte[] {(byte) 0xff, 0x01}),
      Bytes.add(enc((r, o) -> OrderedBytes.encodeBlobCopy(r, new byte[] {1, 2}, o), Order.DESCENDING), new byte[] {(byte) 0xff}),
      Bytes.add(enc((r, o) -> OrderedBytes.encodeInt32(r, 7, o), Order.DESCENDING), new byte[] {(byte) 0xff}),
      Bytes.add(enc((r, o) -> OrderedBytes.encodeBlobVar(r, new byte[] {9, 8, 7}, o), Order.DESCENDING), new byte[] {(byte) 0xff}),
    };
    List<String> rows = new ArrayList<>();
    for (byte[] b : bufs) {
      int skipped = OrderedBytes.skip(new SimplePositionedMutableByteRange(b));
      PositionedByteRange r = new SimplePositionedMutableByteRange(b);
      String blobCopy = "";
      if ((b[0] & 0xff) == 0xfa || b[0] == 0x05) {  // NULL: where decodeBlobCopy leaves the position too
        OrderedBytes.decodeBlobCopy(r);
        blobCopy = ", \"decode_blob_copy_consumed\": " + r.getPosition();
      }
      rows.add("{\"bytes\": " + js(hex(b)) + ", \"skip\": " + skipped + blobCopy + "}");
    }
    return rows;
  }

  public static void main(String[] args) throws Exception {
    loadAdmin();
    List<byte[]> samples = samples();
    List<String> rows = new ArrayList<>();
    for (byte[] b : samples) {
      rows.add("{\"bytes\": " + js(hex(b)) + ", \"text\": " + js(Bytes.toStringBinary(b))
          + ", \"java_bytes_hash\": " + javaBytesHash(b) + ", \"md5\": " + js(MD5Hash.getMD5AsHex(b))
          + ", \"murmur3\": " + MurmurHash3.getInstance().hash(new org.apache.hadoop.hbase.util.ByteArrayHashKey(b, 0, b.length), 0)
          + ", \"murmur3_seed_42\": " + MurmurHash3.getInstance().hash(new org.apache.hadoop.hbase.util.ByteArrayHashKey(b, 0, b.length), 42)
          + ", \"crc32\": " + crc(b) + "}");
    }
    section("bytes", rows);

    rows = new ArrayList<>();
    String[] texts = {"", "abc", "\\x00\\xFF", "\\xab", "\\xZZ", "a\\x4", "\\x41\\x42C", "\\\\x41", "\u00e9", "\u0100",
        "\u20ac", "\ud83d\ude00", "a\ud83d\ude00\\x41", "\ud800", "\\y", "\\", "x\\x7F\\x80", "\\x5C", "\\X41", "\\x4g1"};
    for (String t : texts) {
      String res;
      try {
        res = "\"bytes\": " + js(hex(Bytes.toBytesBinary(t)));
      } catch (RuntimeException e) {
        res = "\"error\": " + js(e.getClass().getSimpleName());
      }
      rows.add("{\"text\": " + js(t) + ", " + res + "}");
    }
    section("to_bytes_binary", rows);

    rows = new ArrayList<>();
    String[] strs = {"", "hello", "a", "Hello, World!", "\u00e9t\u00e9", "\ud83d\ude00", "\u4e2d\u6587", "polygenelubricants", "zzzzzzzzzzzzzzzzzzzz"};
    for (String s : strs) rows.add("{\"s\": " + js(s) + ", \"hash\": " + s.hashCode() + "}");
    section("java_string_hash", rows);

    rows = new ArrayList<>();
    long[] longs = {0L, 1L, -1L, 42L, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 32, 1234567890123456789L, -987654321L, Integer.MIN_VALUE};
    for (long v : longs) rows.add("{\"v\": " + v + ", \"hash\": " + Long.hashCode(v) + ", \"bytes\": " + js(hex(Bytes.toBytes(v))) + "}");
    section("long", rows);

    rows = new ArrayList<>();
    int[] ints = {0, 1, -1, 255, 256, Integer.MAX_VALUE, Integer.MIN_VALUE, -123456};
    for (int v : ints) rows.add("{\"v\": " + v + ", \"bytes\": " + js(hex(Bytes.toBytes(v))) + "}");
    section("int", rows);

    rows = new ArrayList<>();
    short[] shorts = {0, 1, -1, 0x7fff, (short) 0x8000, 255, -256};
    for (short v : shorts) rows.add("{\"v\": " + v + ", \"bytes\": " + js(hex(Bytes.toBytes(v))) + "}");
    section("short", rows);

    rows = new ArrayList<>();
    byte[][][] pairs = {
      {{}, {(byte) 0xff}}, {{0x10}, {0x30}}, {{'a', 'a', 'a'}, {'a', 'a', 'b'}}, {{}, {1}},
      {{0x00}, {0x0a}}, {{0x00}, {0x02}}, {{0x12, 0x34}, {0x12}}, {{0x12}, {0x12, 0x34}},
      {{0x00, 0x00}, {0x7f, (byte) 0xff}}, {{'a'}, {'z', 'z'}}, {{0x05}, {0x05}}, {{0x30}, {0x10}},
      {{0x00}, {0x00, 0x00}}, {{(byte) 0xdf, (byte) 0xff}, {(byte) 0xff, (byte) 0xff}}, {{}, {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff}},
    };
    int[] nums = {0, 1, 2, 3, 9, 10, 11, 15};
    for (byte[][] p : pairs) for (int num : nums) for (boolean inc : new boolean[] {false, true}) rows.add(splitCase(p[0], p[1], num, inc));
    // Hundreds of splits only where the range is a few values wide (the extra-byte retry): the
    // output of a wide range just grows, and the JSON with it.
    for (byte[][] p : new byte[][][] {{{0x00}, {0x02}}, {{0x10}, {0x30}}}) for (int num : new int[] {255, 300}) for (boolean inc : new boolean[] {false, true}) rows.add(splitCase(p[0], p[1], num, inc));
    section("split", rows);

    rows = new ArrayList<>();
    int[] ns = {1, 2, 3, 4, 5, 7, 10, 16, 17, 100};
    for (int n : ns) {
      rows.add(algoCase("hex", new RegionSplitter.HexStringSplit(), null, null, n));
      rows.add(algoCase("decimal", new RegionSplitter.DecimalStringSplit(), null, null, n));
      rows.add(algoCase("uniform", new RegionSplitter.UniformSplit(), null, null, n));
    }
    String[][] hexRanges = {{"00", "AA"}, {"AA", "00"}, {"AA", "AA"}, {"0", "2"}, {"0", "A"}, {"0", "a"}, {"1000", "ffff"}, {"0000", "FFFF"}, {"5", "FFFFFFFFFF"}};
    String[][] decRanges = {{"00", "99"}, {"0", "9"}, {"100", "999"}, {"0000", "0100"}, {"5", "5"}};
    String[][] uniRanges = {{"\\x00", "\\xAA"}, {"\\xAA", "\\x00"}, {"\\xAA", "\\xAA"}, {"\\x00", "\\x02"}, {"\\x00", "\\x0A"}, {"a", "b"}, {"row-1", "row-9"}, {"", "\\xFF\\xFF"}};
    int[] ns2 = {2, 3, 4, 10, 11, 12};
    for (int n : ns2) {
      for (String[] r : hexRanges) rows.add(algoCase("hex", new RegionSplitter.HexStringSplit(), r[0], r[1], n));
      for (String[] r : decRanges) rows.add(algoCase("decimal", new RegionSplitter.DecimalStringSplit(), r[0], r[1], n));
      for (String[] r : uniRanges) rows.add(algoCase("uniform", new RegionSplitter.UniformSplit(), r[0], r[1], n));
    }
    section("region_splitter", rows);

    rows = new ArrayList<>();
    byte[][][] rpairs = {{{0, 0}, {0x7f, (byte) 0xff}}, {{'a'}, {'z'}}, {{0x01}, {0x02}}, {{'0', '0', '0'}, {'9', '9', '9'}}, {{0x10}, {0x10}}, {{0x20}, {0x10}}, {{0x00}, {0x00, 0x00}},
        {{}, {0x10}}, {{}, {(byte) 0xff, (byte) 0xff}}, {{}, {0x00}}, {{}, {}}, {{0x10}, {}}};
    int[] rn = {2, 3, 4, 5, 10, 16, 100};
    for (byte[][] p : rpairs) for (int n : rn) rows.add(rangeCase(p[0], p[1], n));
    section("range_split", rows);

    section("ordered", orderedRows());
    section("ordered_skip", skipRows());

    out.append("\n}\n");
    System.out.print(out);
  }

  static long crc(byte[] b) {
    CRC32 c = new CRC32();
    c.update(b);
    return c.getValue();
  }
}
