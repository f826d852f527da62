// keyshape serve's before/after page of a re-key: /api/compare's numbers for OLD and NEW, and
// both tables' write heat maps from /api/heatmap, drawn by the table page's own code (ksDraw).
"use strict";
(function () {
  var d = window.ksDraw, params = new URLSearchParams(location.search);
  var before = params.get("before") || "", after = params.get("after") || "", seconds = params.get("seconds") || "3600";
  var state = { body: null, maps: {} };
  window.ksCompare = state; // for the browser tests

  function fmtRate(x) { return x >= 100 ? x.toFixed(0) : x.toFixed(1); }
  function fill(which, s) {
    var cell = function (id, text, cls) { var e = document.getElementById(which + "-" + id); e.textContent = text; if (cls) e.className = cls; };
    cell("verdict", s.verdict.toUpperCase() + (s.stale ? " (saved)" : ""), s.verdict);
    cell("pattern", s.pattern || "—");
    cell("region", d.pct(s.busiest_region_share), "n");
    cell("server", d.pct(s.busiest_server_share), "n");
    cell("p99", fmtRate(s.p99_region_write_rate), "n");
    cell("regions", String(s.regions), "n");
    document.getElementById("h-" + which).textContent = s.table;
    document.getElementById("m-" + which).textContent = (which === "before" ? "before: " : "after: ") + s.table;
  }
  function heat(side, body) {
    if (!side.polled) return Promise.resolve(null); // NEW not polled yet: its map says so
    var table = side.table;
    var q = "api/heatmap?table=" + encodeURIComponent(table) + "&seconds=" + Math.max(1, Math.round(body.seconds)) +
      "&until=" + body.until.toFixed(0) + "&metric=write&cells=400";
    return d.api(q).then(function (h) {
      h.values = d.rows(d.decode(h.values_f32, Float32Array), h.shape);
      return h;
    });
  }
  function draw() {
    var a = state.maps.before, b = state.maps.after;
    var top = Math.max(a ? a.max : 0, b ? b.max : 0);
    [["before", a], ["after", b]].forEach(function (p) {
      var h = p[1];
      d.drawMatrix(document.getElementById("map-" + p[0]), h, h ? h.keys : [], h ? h.values : [], function (v) { return d.colour(v, top); }, "");
    });
  }
  function load() {
    if (!before || !after) {
      document.getElementById("note").textContent = "Give the two tables: compare?before=OLD&after=NEW.";
      return Promise.resolve();
    }
    document.getElementById("title").textContent = "before and after: " + before + " → " + after;
    return d.api("api/compare?before=" + encodeURIComponent(before) + "&after=" + encodeURIComponent(after) + "&seconds=" + encodeURIComponent(seconds))
      .then(function (body) {
        state.body = body;
        fill("before", body.before);
        fill("after", body.after);
        var note = "The last " + Math.round(body.seconds / 60) + " min of serve's history; the shares are serve's verdicts (a typical moment), " +
          "the p99 is over every region's write rate in every poll interval.";
        if (body.added_after) note += " serve was not watching " + after + ": it is now, from its next poll on.";
        document.getElementById("note").textContent = note;
        return Promise.all([heat(body.before, body), heat(body.after, body)]);
      })
      .then(function (maps) {
        if (!maps) return;
        state.maps = { before: maps[0], after: maps[1] };
        draw();
      })
      .catch(function (e) { document.getElementById("note").textContent = String(e.message || e); });
  }
  state.ready = load();
})();
