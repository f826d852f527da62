// Prints golden vectors for row keys built the classic hand-written way: the String columns
// concatenated with NO separator (variable-width fields run together, "user" + "142"), then a
// hash prefix or an MD5 of the whole, with HBase's own Bytes and MD5Hash (hbase-common).
// keyshape reproduces these bytes with an encode-only schema (tests/test_encode_only.py).
// Run: tools/golden/concat_keys.sh (writes tests/data/concat_golden.json).
import java.util.*;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.MD5Hash;

public class ConcatKeys {
  static String join(String... column) {
    StringBuilder sb = new StringBuilder();
    for (String c : column) sb.append(c);
    return sb.toString();
  }

  // The classic writers, as they are commonly written against HBase's Bytes utilities.
  static byte[] rowKeyWithHashPrefix(String... column) {
    String k = join(column);
    short hash = (short) (k.hashCode() & 0x7FFF);
    return Bytes.add(Bytes.toBytes(hash), Bytes.toBytes(k));
  }

  static byte[] rowKeyByMD5(String... column) {
    return Bytes.toBytes(MD5Hash.getMD5AsHex(Bytes.toBytes(join(column))));
  }

  static byte[] rowKeyConcat(String... column) {
    return Bytes.toBytes(join(column));
  }

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x", x & 0xff));
    return s.toString();
  }

  static String js(String s) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20 || c > 0x7e) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }

  public static void main(String[] args) {
    String[][] rows = {
      {"user", "142"}, {"user1", "42"}, {"user14", "2"}, {"", "42"}, {"user", ""},
      {"u", "2026-01-01T03:00:00", "click"}, {"caf\u00e9", "\u6771\u4eac", "9"},
      {"Aa", "BB"}, {"zzzzzzzzzzzzzzzzzzzz", "0000000000000000000001"},
    };
    StringBuilder out = new StringBuilder("[");
    String sep = "\n";
    for (String[] r : rows) {
      StringBuilder cols = new StringBuilder("[");
      for (int i = 0; i < r.length; i++) cols.append(i == 0 ? "" : ", ").append(js(r[i]));
      cols.append("]");
      out.append(sep).append("  {\"columns\": ").append(cols)
         .append(", \"rowKeyWithHashPrefix\": \"").append(hex(rowKeyWithHashPrefix(r)))
         .append("\", \"rowKeyByMD5\": \"").append(hex(rowKeyByMD5(r)))
         .append("\", \"concat\": \"").append(hex(rowKeyConcat(r))).append("\"}");
      sep = ",\n";
    }
    System.out.println(out.append("\n]"));
  }
}
