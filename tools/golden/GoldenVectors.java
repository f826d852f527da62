// Prints test vectors computed by the REAL HBase classes (hbase-common / hbase-server jars) as
// JSON, so keyshape's tests pin HBase's behaviour rather than our reading of it. The Phoenix,
// OpenTSDB and HBaseWD salt vectors come from their own jars: see UpstreamSalts.java.
// Run: tools/golden/run.sh (writes tests/data/hbase_golden.json)
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.zip.CRC32;
import org.apache.hadoop.hbase.util.Bytes;
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

  // Admin.createTable(desc, startKey, endKey, numRegions) -> split keys (RawAsyncHBaseAdmin.getSplitKeys)
  static String rangeCase(byte[] start, byte[] end, int n) {
    String res;
    try {
      if (n < 3) throw new IllegalArgumentException("Must create at least three regions");
      if (Bytes.compareTo(start, end) >= 0) throw new IllegalArgumentException("Start key must be smaller than end key");
      byte[][] keys = n == 3 ? new byte[][] {start, end} : Bytes.split(start, end, n - 3);
      res = "\"out\": " + hexList(keys);
    } catch (IllegalArgumentException e) {
      res = "\"error\": " + js(e.getMessage());
    }
    return "{\"start\": " + js(hex(start)) + ", \"end\": " + js(hex(end)) + ", \"regions\": " + n + ", " + res + "}";
  }

  public static void main(String[] args) {
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
        "\u20ac", "\\y", "\\", "x\\x7F\\x80", "\\x5C", "\\X41", "\\x4g1"};
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
    byte[][][] rpairs = {{{0, 0}, {0x7f, (byte) 0xff}}, {{'a'}, {'z'}}, {{0x01}, {0x02}}, {{'0', '0', '0'}, {'9', '9', '9'}}, {{0x10}, {0x10}}, {{0x20}, {0x10}}, {{0x00}, {0x00, 0x00}}};
    int[] rn = {2, 3, 4, 5, 10, 16, 100};
    for (byte[][] p : rpairs) for (int n : rn) rows.add(rangeCase(p[0], p[1], n));
    section("range_split", rows);

    out.append("\n}\n");
    System.out.print(out);
  }

  static long crc(byte[] b) {
    CRC32 c = new CRC32();
    c.update(b);
    return c.getValue();
  }
}
