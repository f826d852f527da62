import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.io.ImmutableBytesWritable;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.Pair;
import org.apache.phoenix.compile.QueryPlan;
import org.apache.phoenix.jdbc.PhoenixConnection;
import org.apache.phoenix.jdbc.PhoenixPreparedStatement;
import org.apache.phoenix.schema.PColumn;
import org.apache.phoenix.schema.PTable;
import org.apache.phoenix.schema.RowKeySchema;
import org.apache.phoenix.schema.ValueSchema;
import org.apache.phoenix.util.PhoenixRuntime;

/**
 * Phoenix 5.2.1 itself, in connectionless mode (jdbc:phoenix:none: no HBase, no ports), as an oracle
 * for keyshape's Phoenix row-key codec. One request per stdin line, one answer per stdout line,
 * fields separated by tabs:
 *
 *   EXEC  sql                      -> OK | ERR msg
 *   KEYS  sql  param...            -> KEYS table=hex ... (the rows the statement would write, indexes
 *                                     included; rolled back) | ERR msg
 *   DECODE table hex               -> VALUES v... (Phoenix's RowKeySchema walk + PDataType.toObject)
 *   REGIONS table                  -> REGIONS start,end ... (hex; the processed split points)
 *   COMMIT                         -> OK (commits what EXEC/GENERATE upserted on a live cluster)
 *   QUERY sql param...             -> ROWS row... (each row's typed values joined by '|')
 *   GENERATE sql n param...        -> OK n (runs sql n times, i = 0..n-1; a param "i8:{i}" or
 *                                     "txt:name{i}" takes i; commits every 1000 rows)
 *   COLUMNS table                  -> COLUMNS name:type:maxLength:scale:sortOrder:nullable ... (the
 *                                     PColumns whose DATA_TYPE, COLUMN_SIZE, DECIMAL_DIGITS, SORT_ORDER
 *                                     and NULLABLE MetaDataClient writes into SYSTEM.CATALOG)
 *   SCAN  sql param...             -> SCANS start,stop ... (hex; the scans Phoenix's optimised plan
 *                                     for the query would run, one per region and salt bucket)
 *   TENANT id REQUEST field...     -> REQUEST's answer through a tenant-specific connection
 *                                     (TenantId=id; one per id, kept open) of a MULTI_TENANT table
 *
 * The first argument is the JDBC URL (default jdbc:phoenix:none, connectionless; a live cluster is
 * jdbc:phoenix:127.0.0.1:PORT).
 * Params and values are typed strings: i1: i2: i4: i8: (decimal integers), f4: f8: (hex of the IEEE
 * bits), dec: (BigDecimal text), bool:, str: (hex of UTF-8), bin: (hex), date: time: (epoch ms),
 * ts:ms:nanos, null:TYPE (java.sql.Types number); a null decoded value is "null:".
 */
public class PhoenixOracle {
  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x", x & 0xff));
    return s.toString();
  }

  static byte[] unhex(String h) {
    byte[] out = new byte[h.length() / 2];
    for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
    return out;
  }

  static void bind(PreparedStatement ps, int i, String p) throws SQLException {
    int colon = p.indexOf(':');
    String kind = p.substring(0, colon), v = p.substring(colon + 1);
    switch (kind) {
      case "i1": ps.setByte(i, Byte.parseByte(v)); break;
      case "i2": ps.setShort(i, Short.parseShort(v)); break;
      case "i4": ps.setInt(i, Integer.parseInt(v)); break;
      case "i8": ps.setLong(i, Long.parseLong(v)); break;
      case "f4": ps.setFloat(i, Float.intBitsToFloat((int) Long.parseLong(v, 16))); break;
      case "f8": ps.setDouble(i, Double.longBitsToDouble(Long.parseUnsignedLong(v, 16))); break;
      case "dec": ps.setBigDecimal(i, new BigDecimal(v)); break;
      case "bool": ps.setBoolean(i, Boolean.parseBoolean(v)); break;
      case "str": ps.setString(i, new String(unhex(v), StandardCharsets.UTF_8)); break;
      case "bin": ps.setBytes(i, unhex(v)); break;
      case "date": ps.setDate(i, new java.sql.Date(Long.parseLong(v))); break;
      case "time": ps.setTime(i, new java.sql.Time(Long.parseLong(v))); break;
      case "ts": {
        String[] parts = v.split(":");
        Timestamp ts = new Timestamp(Long.parseLong(parts[0]));
        ts.setNanos(Integer.parseInt(parts[1]));
        ps.setTimestamp(i, ts);
        break;
      }
      case "null": ps.setNull(i, Integer.parseInt(v)); break;
      case "txt": ps.setString(i, v); break;
      default: throw new IllegalArgumentException("unknown param kind " + kind);
    }
  }

  static String show(Object o) {
    if (o == null) return "null:";
    if (o instanceof byte[]) return "bin:" + hex((byte[]) o);
    if (o instanceof String) return "str:" + hex(((String) o).getBytes(StandardCharsets.UTF_8));
    if (o instanceof Timestamp) {
      Timestamp t = (Timestamp) o;
      return "ts:" + t.getTime() + ":" + t.getNanos();
    }
    if (o instanceof java.sql.Time) return "time:" + ((java.util.Date) o).getTime();
    if (o instanceof java.util.Date) return "date:" + ((java.util.Date) o).getTime();
    if (o instanceof Float) return "f4:" + Integer.toHexString(Float.floatToRawIntBits((Float) o));
    if (o instanceof Double) return "f8:" + Long.toHexString(Double.doubleToRawLongBits((Double) o));
    if (o instanceof BigDecimal) return "dec:" + ((BigDecimal) o).toString();
    if (o instanceof Boolean) return "bool:" + o;
    if (o instanceof Byte) return "i1:" + o;
    if (o instanceof Short) return "i2:" + o;
    if (o instanceof Integer) return "i4:" + o;
    if (o instanceof Long) return "i8:" + o;
    return "obj:" + o.getClass().getSimpleName() + ":" + o;
  }

  static String keys(Connection c, String[] f) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(f[1])) {
      for (int i = 2; i < f.length; i++) bind(ps, i - 1, f[i]);
      ps.executeUpdate();
    }
    StringBuilder sb = new StringBuilder("KEYS");
    Iterator<Pair<byte[], List<Cell>>> it = PhoenixRuntime.getUncommittedDataIterator(c, true);
    while (it.hasNext()) {
      Pair<byte[], List<Cell>> p = it.next();
      TreeSet<String> rows = new TreeSet<>();
      for (Cell cell : p.getSecond()) rows.add(hex(CellUtil.cloneRow(cell)));
      for (String r : rows) sb.append('\t').append(Bytes.toString(p.getFirst())).append('=').append(r);
    }
    c.rollback();
    return sb.toString();
  }

  static String decode(Connection c, String table, byte[] key) throws Exception {
    PTable t = PhoenixRuntime.getTable(c, table);
    RowKeySchema schema = t.getRowKeySchema();
    ImmutableBytesWritable ptr = new ImmutableBytesWritable();
    int maxOffset = schema.iterator(key, ptr);
    StringBuilder sb = new StringBuilder("VALUES");
    for (int i = 0; i < schema.getFieldCount(); i++) {
      Boolean has = schema.next(ptr, i, maxOffset);
      if (has == null) break;
      ValueSchema.Field field = schema.getField(i);
      Object o = has ? field.getDataType().toObject(ptr, field.getDataType(), field.getSortOrder()) : null;
      sb.append('\t').append(show(o));
    }
    return sb.toString();
  }

  static String regions(Connection c, String table) throws Exception {
    PhoenixConnection pc = c.unwrap(PhoenixConnection.class);
    StringBuilder sb = new StringBuilder("REGIONS");
    for (HRegionLocation r : pc.getQueryServices().getAllTableRegions(Bytes.toBytes(table))) {
      sb.append('\t').append(hex(r.getRegion().getStartKey())).append(',').append(hex(r.getRegion().getEndKey()));
    }
    return sb.toString();
  }

  static String query(Connection c, String[] f) throws Exception {
    StringBuilder sb = new StringBuilder("ROWS");
    try (PreparedStatement ps = c.prepareStatement(f[1])) {
      for (int i = 2; i < f.length; i++) bind(ps, i - 1, f[i]);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
          sb.append('\t');
          for (int k = 1; k <= n; k++) {
            if (k > 1) sb.append('|');
            sb.append(show(rs.getObject(k)));
          }
        }
      }
    }
    return sb.toString();
  }

  static String columns(Connection c, String table) throws Exception {
    StringBuilder sb = new StringBuilder("COLUMNS");
    for (PColumn col : PhoenixRuntime.getTable(c, table).getColumns()) {
      sb.append('\t').append(col.getName().getString()).append(':').append(col.getDataType().getSqlTypeName())
        .append(':').append(col.getMaxLength()).append(':').append(col.getScale())
        .append(':').append(col.getSortOrder()).append(':').append(col.isNullable());
    }
    return sb.toString();
  }

  static String scan(Connection c, String[] f) throws Exception {
    StringBuilder sb = new StringBuilder("SCANS");
    try (PreparedStatement ps = c.prepareStatement(f[1])) {
      for (int i = 2; i < f.length; i++) bind(ps, i - 1, f[i]);
      QueryPlan plan = ps.unwrap(PhoenixPreparedStatement.class).optimizeQuery();
      plan.getExplainPlan();  // builds the parallel scans (nothing runs)
      List<List<Scan>> scans = plan.getScans();
      if (scans == null || scans.isEmpty()) {  // a plan that needs no parallel scans: its one scan
        Scan s = plan.getContext().getScan();
        return sb.append('\t').append(hex(s.getStartRow())).append(',').append(hex(s.getStopRow())).toString();
      }
      for (List<Scan> group : scans) {
        for (Scan s : group) sb.append('\t').append(hex(s.getStartRow())).append(',').append(hex(s.getStopRow()));
      }
    }
    return sb.toString();
  }

  static String generate(Connection c, String[] f) throws Exception {
    int n = Integer.parseInt(f[2]);
    try (PreparedStatement ps = c.prepareStatement(f[1])) {
      for (int row = 0; row < n; row++) {
        for (int k = 3; k < f.length; k++) bind(ps, k - 2, f[k].replace("{i}", Integer.toString(row)));
        ps.executeUpdate();
        if (row % 1000 == 999) c.commit();
      }
    }
    c.commit();
    return "OK " + n;
  }

  static final java.util.Map<String, Connection> TENANTS = new java.util.HashMap<>();
  static String url;

  static Connection tenant(String id) throws SQLException {
    Connection t = TENANTS.get(id);
    if (t == null) {
      java.util.Properties props = new java.util.Properties();
      props.setProperty(PhoenixRuntime.TENANT_ID_ATTRIB, id);
      t = DriverManager.getConnection(url, props);
      t.setAutoCommit(false);
      TENANTS.put(id, t);
    }
    return t;
  }

  static String answer(Connection c, String[] f) throws Exception {
    switch (f[0]) {
      case "EXEC":
        c.createStatement().execute(f[1]);
        return "OK";
      case "KEYS": return keys(c, f);
      case "DECODE": return decode(c, f[1], unhex(f[2]));
      case "REGIONS": return regions(c, f[1]);
      case "COMMIT": c.commit(); return "OK";
      case "QUERY": return query(c, f);
      case "GENERATE": return generate(c, f);
      case "SCAN": return scan(c, f);
      case "COLUMNS": return columns(c, f[1]);
      case "TENANT": return answer(tenant(f[1]), java.util.Arrays.copyOfRange(f, 2, f.length));
      default: return "ERR unknown request " + f[0];
    }
  }

  public static void main(String[] args) throws Exception {
    url = args.length > 0 ? args[0] : "jdbc:phoenix:none";
    Connection c = DriverManager.getConnection(url);
    c.setAutoCommit(false);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println("READY");
    System.out.flush();
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      String[] f = line.split("\t", -1);
      String answer;
      try {
        answer = answer(c, f);
      } catch (Exception e) {
        try { c.rollback(); } catch (SQLException ignored) { }
        for (Connection t : TENANTS.values()) {
          try { t.rollback(); } catch (SQLException ignored) { }
        }
        String msg = String.valueOf(e.getMessage()).replace('\n', ' ').replace('\t', ' ');
        answer = "ERR " + e.getClass().getSimpleName() + ": " + msg;
      }
      System.out.println(answer);
      System.out.flush();
    }
  }
}
