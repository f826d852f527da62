// Prints test vectors of the classic hand-written Java row-key functions that keyshape's prefix
// strategies claim to reproduce, written the way HBase applications write them (JDK only):
//   md5             md5Hex(J).substring(0, length) + sep + K
//   java-hash-short ByteBuffer.putShort((short) (J.hashCode() & 0x7FFF)) + K  (= Bytes.toBytes(short))
//   crc32           String.format("%04x", crc32(J) & 0xFFFF) + sep + K
//   mod             String.format("%02d", (J.hashCode() & 0x7FFFFFFF) % buckets) + sep + K
// J is a Java String (the hashed fields joined by the separator); the hashes read its UTF-8 bytes.
// For each function: the prefix of sample strings, and the set of distinct prefixes it produced
// over enough generated strings to reach every one (count + SHA-256, as UpstreamSalts.saltSet).
// Run: tools/golden/run.sh (writes tests/data/classic_golden.json).
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.*;
import java.util.zip.CRC32;

public class ClassicKeys {
  interface KeyFn { byte[] prefix(String j) throws Exception; }

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

  static String md5Hex(String s) throws Exception {
    byte[] d = MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8));
    return hex(d);
  }

  static long crc32(String s) {
    CRC32 c = new CRC32();
    c.update(s.getBytes(StandardCharsets.UTF_8));
    return c.getValue();
  }

  static byte[] ascii(String s) { return s.getBytes(StandardCharsets.US_ASCII); }

  static KeyFn md5(int length) { return j -> ascii(md5Hex(j).substring(0, length)); }

  static final KeyFn SHORT = j -> ByteBuffer.allocate(2).putShort((short) (j.hashCode() & 0x7FFF)).array();

  static final KeyFn CRC = j -> ascii(String.format("%04x", crc32(j) & 0xFFFF));

  static KeyFn mod(int buckets, int digits) {
    return j -> ascii(String.format("%0" + digits + "d", (j.hashCode() & 0x7FFFFFFF) % buckets));
  }

  static List<String> samples() {
    List<String> s = new ArrayList<>(Arrays.asList("", "a", "user42", "user42|2024-01-01", "\u00e9t\u00e9",
        "\u4e2d\u6587", "\ud83d\ude00", "polygenelubricants", "GydZG_", "DESIGNING WORKHOUSES", "orders|0000042",
        "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "a,b", "\u0000"));
    Random r = new Random(11);
    while (s.size() < 60) {
      StringBuilder b = new StringBuilder();
      int n = r.nextInt(20);
      for (int i = 0; i < n; i++) b.append((char) (r.nextBoolean() ? 0x20 + r.nextInt(95) : 0xa0 + r.nextInt(0x2000)));
      s.add(b.toString());
    }
    return s;
  }

  static String saltSet(KeyFn fn, int expected) throws Exception {
    TreeSet<String> salts = new TreeSet<>();
    // Sequential strings until every prefix has shown up (or a generous cap: then the count
    // says what was reached and the test fails loudly rather than passing a partial set).
    for (long i = 0; i < 40L * expected + 1000 && salts.size() < expected; i++) salts.add(hex(fn.prefix("key-" + i)));
    byte[] digest = MessageDigest.getInstance("SHA-256").digest(String.join(",", salts).getBytes(StandardCharsets.US_ASCII));
    List<String> all = new ArrayList<>(salts);
    return "\"count\": " + salts.size() + ", \"sha256\": " + js(hex(digest)) + ", \"first\": " + js(all.get(0))
        + ", \"last\": " + js(all.get(all.size() - 1));
  }

  static String function(String strategy, String options, KeyFn fn, int expected) throws Exception {
    List<String> rows = new ArrayList<>();
    for (String j : samples()) rows.add("{\"j\": " + js(j) + ", \"prefix\": " + js(hex(fn.prefix(j))) + "}");
    return "{\"strategy\": " + js(strategy) + ", \"options\": {" + options + "}, " + saltSet(fn, expected)
        + ", \"cases\": [\n      " + String.join(",\n      ", rows) + "\n    ]}";
  }

  public static void main(String[] args) throws Exception {
    List<String> fns = new ArrayList<>();
    fns.add(function("md5", "\"length\": 4", md5(4), 1 << 16));
    fns.add(function("java-hash-short", "", SHORT, 1 << 15));
    fns.add(function("crc32", "", CRC, 1 << 16));
    for (int n : new int[] {2, 10, 16, 100}) fns.add(function("mod", "\"buckets\": " + n, mod(n, 2), n));
    fns.add(function("mod", "\"buckets\": 1000", mod(1000, 3), 1000));
    System.out.print("{\"functions\": [\n    " + String.join(",\n    ", fns) + "\n  ]}\n");
  }
}
