// The tournament report: renders the embedded data (referee/report/tournament_data.py) once, then opens
// games in the replay viewer on demand. Every string from the data is set as text, never as markup.
"use strict";

(() => {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const $ = (id) => document.getElementById(id);
  // The leaderboard's columns: keys of `durak leaderboard --format json` rows, labels of its legend
  // (referee/leaderboard.py LEGEND, embedded as data.legend: one text for the command and the page).
  const COLUMNS = [["rank", "Rank"], ["bot", "Bot"], ["elo", "Elo"], ["ci95", "+-95%"], ["games", "Games"],
    ["score_pct", "Score%"], ["fool_pct", "Fool%"], ["avg_place", "AvgPlace"], ["draws", "Draws"],
    ["los_next_pct", "LOS(next)"]];
  const LEGEND = new Map(data.legend || []);
  const shownLabel = (label) => label.replace("+-", "\u00b1");

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function cell(row, text, cls) {
    const td = el("td", cls || "", text);
    row.append(td);
    return td;
  }

  function fixed(value, digits) {
    return value === null || value === undefined ? "" : Number(value).toFixed(digits);
  }

  // Every field of a JSON row as a data attribute (data-fool-pct-by-seat="[...]"), so what the page holds
  // can be checked against the command's JSON.
  function dataAttributes(node, row) {
    for (const [key, value] of Object.entries(row)) {
      const text = value === null ? "" : typeof value === "object" ? JSON.stringify(value) : String(value);
      node.setAttribute("data-" + key.replace(/_/g, "-"), text);
    }
  }

  function kv(dl, key, value) {
    dl.append(el("dt", "", key), el("dd", "", value));
  }

  function header() {
    const h = data.header;
    $("title").textContent = h.name;
    document.title = "Durak tournament: " + h.name;
    const dl = $("header-kv");
    const rules = Object.entries(h.rules).filter(([k, v]) => k !== "variant" && v !== null)
      .map(([k, v]) => k + "=" + JSON.stringify(v)).join(", ");
    kv(dl, "variant", h.variant + " (" + rules + ")");
    kv(dl, "table", h.players + " players, " + h.format + ", " + h.deals + " deals \u00d7 " + h.rotations +
      " rotations \u00d7 series of " + h.series);
    const t = h.time;
    kv(dl, "time controls", "move " + t.move + " s + grace " + t.grace + " s, startup " + t.startup + " s" +
      (t.bank === null ? ", no time bank" : ", bank " + t.bank + " s per game"));
    kv(dl, "games", h.games + " stored" + (h.shown < h.games ? ", " + h.shown +
      " shown (a deal's games appear once all its seat rotations are stored)" : ""));
    kv(dl, "referee", "report by durak-referee " + h.referee);
    kv(dl, "tournament", "id " + h.id + ", started " + h.created);
    const body = $("bots-table").querySelector("tbody");
    for (const b of h.bots) {
      const tr = el("tr");
      tr.dataset.bot = b.name;
      tr.dataset.sha256 = b.sha256;
      cell(tr, b.name + (b.disqualified ? " (disqualified)" : ""), "text");
      cell(tr, b.version, "text");
      cell(tr, b.sha256, "text mono");
      const files = Object.entries(b.files || {});
      const td = cell(tr, files.length ? "" : "\u2013", "text mono");
      if (files.length) {
        const details = el("details", "files");
        details.append(el("summary", "", files.length + " file(s)"));
        const list = el("ul");
        for (const [path, digest] of files) {
          const item = el("li");
          item.dataset.path = path;
          item.dataset.sha256 = digest;
          item.append(el("bdi", "", path), el("span", "", " " + digest));
          list.append(item);
        }
        details.append(list);
        td.append(details);
      }
      body.append(tr);
    }
  }

  function leaderboard() {
    const lb = data.leaderboard;
    if (!lb) {
      $("leaderboard").append(el("p", "", "No games yet."));
      return;
    }
    const table = $("leaderboard-table");
    const headRow = table.querySelector("thead tr");
    const legend = $("leaderboard-legend");
    for (const [key, label] of COLUMNS) {
      const th = el("th", key === "bot" ? "text" : "", shownLabel(label));
      if (LEGEND.has(label)) {
        th.title = LEGEND.get(label);
        legend.append(el("dt", "", shownLabel(label)), el("dd", "", LEGEND.get(label)));
      }
      headRow.append(th);
    }
    if (LEGEND.has("footer")) legend.append(el("dt", "", "below"), el("dd", "", LEGEND.get("footer")));
    const body = table.querySelector("tbody");
    for (const r of lb.rows) {
      const tr = el("tr");
      tr.className = "lb-row";
      dataAttributes(tr, r);
      const elo = r.bound === "lower" ? "> " + fixed(r.elo, 0) : r.bound === "upper" ? "< " + fixed(r.elo, 0)
        : (r.identified ? "" : "~") + fixed(r.elo, 0);
      const texts = [r.rank, r.bot + (r.mark ? " (" + r.mark + ")" : ""), elo, fixed(r.ci95, 0), r.games,
        fixed(r.score_pct, 1), fixed(r.fool_pct, 1), fixed(r.avg_place, 2), r.draws,
        r.los_next_pct === null ? "" : fixed(r.los_next_pct, 1) + "%"];
      texts.forEach((text, i) => cell(tr, text, i === 1 ? "text" : ""));
      body.append(tr);
    }
    // The command's own footer (referee/leaderboard.py footer): model, mode, anchor, games, errors, any prior
    // and every disqualification with its reason, one line each.
    const meta = $("leaderboard-meta");
    data.footer.split("\n").forEach((line, i) => {
      if (i) meta.append(el("br"));
      meta.append(el("span", line.startsWith("disqualified: ") ? "disqualified" : "", line));
    });
    new Chart($("elo-chart"), {
      data: {
        labels: lb.rows.map((r) => r.bot),
        datasets: [
          { type: "bar", label: "95% interval", data: lb.rows.map((r) => r.ci95 === null ? null : [r.elo - r.ci95, r.elo + r.ci95]),
            backgroundColor: "rgba(74, 120, 194, 0.35)", borderColor: "#4a78c2", borderWidth: 1, barPercentage: 0.5 },
          { type: "line", label: "Elo", data: lb.rows.map((r) => r.elo), showLine: false, pointRadius: 6,
            pointStyle: "rectRot", backgroundColor: "#1b3f7a", borderColor: "#1b3f7a" },
        ],
      },
      options: { indexAxis: "y", animation: false, maintainAspectRatio: false, responsive: true,
        scales: { x: { beginAtZero: false, title: { display: true, text: "Elo (95% interval)" } } } },
    });
  }

  function h2h() {
    // The leaderboard document's h2h list (`durak leaderboard --format json --h2h`): ordered pairs that met.
    const lb = data.leaderboard;
    if (!lb || !lb.h2h) return;
    const bots = lb.rows.map((r) => r.bot);
    const pairs = new Map(lb.h2h.map((p) => [JSON.stringify([p.bot, p.opponent]), p]));
    const table = $("h2h-table");
    const head = el("tr");
    head.append(el("th", "text", "row vs column"));
    for (const b of bots) head.append(el("th", "", b));
    table.querySelector("thead").append(head);
    const body = table.querySelector("tbody");
    for (const a of bots) {
      const tr = el("tr");
      tr.append(el("th", "text", a));
      for (const b of bots) {
        const p = pairs.get(JSON.stringify([a, b]));
        const td = cell(tr, a === b ? "\u2013" : p ? Math.round(p.score_pct) + "% (" + Math.round(p.comparisons) + ")" : "");
        if (p) {
          const score = p.score_pct / 100;
          td.className = "h2h-pair";
          td.style.background = "hsl(" + Math.round(120 * score) + ", 60%, " + Math.round(92 - 30 * Math.abs(score - 0.5)) + "%)";
          dataAttributes(td, p);
        }
      }
      body.append(tr);
    }
    $("h2h-note").textContent = "the row bot's points against the column bot over their pairwise comparisons (" +
      lb.meta.mode + " mode)";
  }

  function history() {
    const h = data.history;
    if (!h) return;
    const palette = ["#4a78c2", "#d1495b", "#edae49", "#00798c", "#30638e", "#66a182", "#8d6a9f", "#c45baa"];
    new Chart($("history-chart"), {
      type: "line",
      data: {
        labels: h.games,
        datasets: Object.entries(h.elo).map(([bot, values], i) => ({
          label: bot, data: values, borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length],
          pointRadius: 2, spanGaps: true, tension: 0.2 })),
      },
      options: { animation: false, maintainAspectRatio: false, responsive: true,
        scales: { x: { title: { display: true, text: "games played" } }, y: { title: { display: true, text: "Elo" } } } },
    });
  }

  // -- the games list --------------------------------------------------------------------

  const games = data.games;
  const PAGE = 200;
  let shownRows = PAGE;

  function option(select, value, label) {
    const o = el("option", "", label);
    o.value = value;
    select.append(o);
  }

  function filters() {
    for (const id of ["filter-bot", "filter-fool"]) {
      const select = $(id);
      option(select, "", id === "filter-bot" ? "any bot" : "any fool");
      if (id === "filter-fool") option(select, "none", "no fool (draw)");
      games.bots.forEach((b, i) => option(select, String(i), b));
    }
    const kinds = new Set();
    const ends = new Set();
    for (const r of games.rows) {
      ends.add(r[4]);
      for (const v of r[5]) kinds.add(v[0]);
    }
    option($("filter-verdict"), "", "any verdicts");
    option($("filter-verdict"), "none", "no verdict");
    option($("filter-verdict"), "some", "some verdict");
    for (const k of [...kinds].sort()) option($("filter-verdict"), k, k);
    option($("filter-end"), "", "any end");
    for (const e of [...ends].sort()) option($("filter-end"), e, e);
    for (const id of ["filter-bot", "filter-fool", "filter-verdict", "filter-end"]) {
      $(id).addEventListener("change", () => { shownRows = PAGE; gameList(); });
    }
    $("more-games").addEventListener("click", () => { shownRows += PAGE; gameList(); });
    $("games-note").textContent = "# is the game's number as durak games DB --tournament " + data.header.id +
      " lists it: durak replay DB N --tournament " + data.header.id + " tells game N, and #game=N in this " +
      "page's address opens it.";
  }

  function matches(r) {
    const bot = $("filter-bot").value, fool = $("filter-fool").value;
    const verdict = $("filter-verdict").value, end = $("filter-end").value;
    if (bot && !r[2].includes(Number(bot))) return false;
    if (fool === "none" ? r[3].length > 0 : fool && !r[3].includes(Number(fool))) return false;
    if (verdict === "none" && r[5].length) return false;
    if (verdict === "some" && !r[5].length) return false;
    if (verdict && verdict !== "none" && verdict !== "some" && !r[5].some((v) => v[0] === verdict)) return false;
    return !end || r[4] === end;
  }

  function gameList() {
    const body = $("games-table").querySelector("tbody");
    body.textContent = "";
    const names = games.bots;
    let count = 0;
    for (const r of games.rows) {
      if (!matches(r)) continue;
      count++;
      if (count > shownRows) continue;
      const tr = el("tr", "game-row");
      tr.dataset.number = String(r[0]);
      cell(tr, r[0]);
      // who played, in seat order, as the replay's title has it (referee/report/game_data.py game_title); a link
      // to the replay (#game=N), which the row's click opens too; the referee's key of the game in its tooltip
      const link = el("a", "replay-link", r[2].map((b) => names[b]).join(" vs "));
      link.href = "#game=" + r[0];
      link.title = "replay game " + r[0] + " (" + r[1] + ")";
      link.addEventListener("click", (e) => e.preventDefault());  // the row's click opens it, once
      cell(tr, "", "text").append(link);
      cell(tr, r[3].map((b) => names[b]).join(", ") || "\u2013", "text");
      cell(tr, r[4], "text");
      cell(tr, r[5].map((v) => v[0] + " (" + names[v[1]] + ")").join(", "), "text");
      tr.addEventListener("click", () => openGame(r[0], 0));
      body.append(tr);
    }
    $("games-count").textContent = count + " of " + games.rows.length + " games" + (count > shownRows ? ", first " + shownRows + " listed" : "");
    $("more-games").hidden = count <= shownRows;
  }

  // -- games in the viewer ---------------------------------------------------------------

  // A chunk is base64 of zlib-compressed JSON, {id: game}: inline in a script element, or in a file beside
  // the page that calls durakChunk(k, text) (a <script src> loads from file://, where fetch cannot).
  const chunks = new Map();
  const arrived = new Map();
  window.durakChunk = (k, text) => { const done = arrived.get(k); if (done) done(text); };

  function chunkText(k) {
    const inline = document.getElementById("chunk-" + k);
    if (inline) return Promise.resolve(JSON.parse(inline.textContent));
    return new Promise((resolve, reject) => {
      arrived.set(k, resolve);
      const script = document.createElement("script");
      script.src = data.chunks.folder + "chunk-" + k + ".js";
      script.onerror = () => reject(new Error("cannot load " + script.src));
      document.body.append(script);
    });
  }

  function chunk(k) {
    if (!chunks.has(k)) chunks.set(k, chunkText(k).then(inflate));
    return chunks.get(k);
  }

  async function inflate(b64) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return JSON.parse(await new Response(stream).text());
  }

  let viewer = null;
  let opening = 0;  // the latest game asked for: a game that loads after a later one was asked for is not shown
  async function openGame(id, step) {  // id: the game's number, as `durak games` has it
    const panel = $("viewer-panel");
    const status = $("viewer-status");
    const asked = ++opening;
    panel.hidden = false;
    delete panel.dataset.game;  // until this game is drawn: the viewer still shows the one before
    status.textContent = "loading game " + id + "\u2026";
    try {
      const content = await chunk(Math.floor(id / data.chunks.size));
      if (asked !== opening) return;
      if (!(String(id) in content)) throw new Error("game " + id + " is not in this report");
      const game = content[String(id)];
      status.textContent = "";
      viewer = new DurakViewer.Viewer($("viewer"), game, {
        step,
        onStep: (s) => history_replace("game=" + id + "&step=" + s),
      });
      viewer.root.focus({ preventScroll: true });
      panel.dataset.game = String(id);
      panel.scrollIntoView({ block: "start" });
    } catch (error) {
      if (asked === opening) status.textContent = String(error.message || error);
    }
  }

  function history_replace(where) {
    window.history.replaceState(null, "", "#" + where);
  }

  function fromFragment() {
    const params = new URLSearchParams(location.hash.slice(1));
    if (!params.has("game")) return;
    const id = Number(params.get("game"));
    const step = Number(params.get("step") || 0);
    if (viewer && $("viewer-panel").dataset.game === String(id)) viewer.go(step);
    else openGame(id, step);
  }

  $("close-viewer").addEventListener("click", () => {
    $("viewer-panel").hidden = true;
    history_replace("");
  });
  window.addEventListener("hashchange", fromFragment);

  header();
  leaderboard();
  h2h();
  history();
  if (window.DurakStats) window.DurakStats(data, $("stats"), dataAttributes);
  filters();
  gameList();
  if (data.live) {
    // A live tournament: reload for fresh data, but never under a reader who has a game open.
    $("live").textContent = "live: the tournament is running; this page reloads itself every " + data.live +
      " s while no game is open";
    setInterval(() => { if ($("viewer-panel").hidden) location.reload(); }, data.live * 1000);
  }
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";
  fromFragment();
})();
