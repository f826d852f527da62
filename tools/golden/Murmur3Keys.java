// Prints test vectors of the murmur3 prefix strategy from HBase's own MurmurHash3
// (org.apache.hadoop.hbase.util.MurmurHash3 in hbase-common), called as HBase's Hash API is:
//   MurmurHash3.getInstance().hash(new ByteArrayHashKey(j, 0, j.length), seed)
// and the prefix a writer builds from it:
//   String.format("%0" + N + "d", (hash & 0x7FFFFFFF) % buckets), N = max(2, digits of buckets - 1)
// For each (buckets, seed): the hash and prefix of sample byte strings (every length 0..40, so each
// tail length and block count occurs, UTF-8 and arbitrary bytes), and the set of distinct prefixes
// over enough generated strings to reach every bucket (count + SHA-256 of the sorted hex prefixes,
// as UpstreamSalts.saltSet digests them).
// Run: javac -cp HBASE_CP Murmur3Keys.java && java -cp .:HBASE_CP Murmur3Keys > tests/data/murmur3_golden.json
// (HBASE_CP: the hbase profile's classpath of tools/golden/pom.xml, as run.sh resolves it).
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.*;
import org.apache.hadoop.hbase.util.ByteArrayHashKey;
import org.apache.hadoop.hbase.util.Hash;
import org.apache.hadoop.hbase.util.MurmurHash3;

public class Murmur3Keys {
  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x", x & 0xff));
    return s.toString();
  }

  static int hash(byte[] j, int seed) {
    Hash h = MurmurHash3.getInstance();
    return h.hash(new ByteArrayHashKey(j, 0, j.length), seed);
  }

  static String prefix(byte[] j, int buckets, int seed) {
    int width = Math.max(2, Integer.toString(buckets - 1).length());
    return String.format("%0" + width + "d", (hash(j, seed) & 0x7FFFFFFF) % buckets);
  }

  public static void main(String[] args) throws Exception {
    List<byte[]> samples = new ArrayList<>();
    Random rnd = new Random(29);
    for (int len = 0; len <= 40; len++) {
      byte[] b = new byte[len];
      rnd.nextBytes(b);
      samples.add(b);
      samples.add(("user" + "0123456789abcdefghijklmnopqrstuvwxyz0123".substring(0, len)).getBytes(StandardCharsets.UTF_8));
    }
    samples.add("ümlaut_ключ_😀".getBytes(StandardCharsets.UTF_8));
    int[][] configs = {{16, 0}, {100, 0}, {1000, 42}, {7, -1}};
    StringBuilder out = new StringBuilder();
    out.append("{\n  \"jar\": \"").append(MurmurHash3.class.getProtectionDomain().getCodeSource().getLocation().getPath().replaceAll(".*/", ""))
        .append("\",\n  \"call\": \"MurmurHash3.getInstance().hash(new ByteArrayHashKey(j, 0, j.length), seed)\",\n  \"functions\": [");
    String sep = "\n";
    for (int[] c : configs) {
      int buckets = c[0], seed = c[1];
      out.append(sep).append("    {\"buckets\": ").append(buckets).append(", \"seed\": ").append(seed).append(", \"cases\": [");
      String csep = "";
      for (byte[] j : samples) {
        out.append(csep).append("{\"j\": \"").append(hex(j)).append("\", \"hash\": ").append(hash(j, seed))
            .append(", \"prefix\": \"").append(prefix(j, buckets, seed)).append("\"}");
        csep = ", ";
      }
      TreeSet<String> seen = new TreeSet<>();
      for (int i = 0; i < 50 * buckets; i++) seen.add(hex(prefix(("entity" + i).getBytes(StandardCharsets.UTF_8), buckets, seed).getBytes(StandardCharsets.US_ASCII)));
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      String digest = hex(sha.digest(String.join(",", seen).getBytes(StandardCharsets.US_ASCII)));
      out.append("], \"count\": ").append(seen.size()).append(", \"sha256\": \"").append(digest).append("\"}");
      sep = ",\n";
    }
    out.append("\n  ]\n}\n");
    System.out.print(out);
  }
}
