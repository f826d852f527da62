// Prints which table and namespace names the REAL HBase accepts (hbase-common's TableName), as
// JSON, so keyshape.core.names is pinned to HBase's rules rather than to our reading of them.
// Run: tools/golden/table_names.sh (writes tests/data/table_names_golden.json)
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.hbase.TableName;

public class TableNames {
  static final String[] TABLES = {
    "t", "orders", "ns:orders", "my table!", "bad ns:t", "hbase:meta", "hbase:orders", "default:t",
    "", ":t", "ns:", "a:b:c", ".hidden", "-dash", "_under", "9lives", "a.b-c_d", "SYSTEM.CATALOG",
    "-ROOT-", ".META.", "zookeeper:t", "zookeeper", "t$", "t/x", "t'q", "caf\u00e9", "\u65e5\u672c",
    "ns_1:t.2", "n-s:t", "n.s:t", "tab\tle", "x\u00b2", "\u0661\u0662", "\u2167", "a b"
  };
  static final String[] NAMESPACES = {
    "ns", "default", "hbase", "", "bad ns", "n-s", "n.s", "_x", "9", "zookeeper", "caf\u00e9", "x\u00b2"
  };

  static String js(String s) {
    StringBuilder r = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') r.append('\\').append(c);
      else if (c < 0x20 || c > 0x7e) r.append(String.format("\\u%04x", (int) c));
      else r.append(c);
    }
    return r.append('"').toString();
  }

  public static void main(String[] args) {
    StringBuilder out = new StringBuilder("{\n  \"jar\": \"hbase-common 2.6.4-hadoop3\",\n");
    out.append("  \"call\": \"TableName.valueOf(String) / TableName.isLegalNamespaceName(byte[])\",\n  \"tables\": [\n");
    for (int i = 0; i < TABLES.length; i++) {
      String error = null;
      try {
        TableName.valueOf(TABLES[i]);
      } catch (IllegalArgumentException e) {
        error = String.valueOf(e.getMessage());
      }
      out.append("    {\"name\": ").append(js(TABLES[i])).append(", \"legal\": ").append(error == null);
      if (error != null) out.append(", \"error\": ").append(js(error));
      out.append(i + 1 < TABLES.length ? "},\n" : "}\n");
    }
    out.append("  ],\n  \"namespaces\": [\n");
    for (int i = 0; i < NAMESPACES.length; i++) {
      String error = null;
      try {
        TableName.isLegalNamespaceName(NAMESPACES[i].getBytes(StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        error = String.valueOf(e.getMessage());
      }
      out.append("    {\"name\": ").append(js(NAMESPACES[i])).append(", \"legal\": ").append(error == null);
      if (error != null) out.append(", \"error\": ").append(js(error));
      out.append(i + 1 < NAMESPACES.length ? "},\n" : "}\n");
    }
    out.append("  ]\n}\n");
    System.out.print(out);
  }
}
