// Per-bot statistics: the "stats" rows of `durak leaderboard --stats --format json` (referee/stats.py) and
// the distribution of move times, one bar series per bot over log-spaced bins.
"use strict";

// dataAttributes(node, row): the report's, which puts a JSON row's fields on its element.
window.DurakStats = (data, section, dataAttributes) => {
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };
  const stats = data.leaderboard && data.leaderboard.stats;
  if (!stats || !stats.length) {
    section.append(el("p", "", data.leaderboard ? "No statistics in this report." : "No games yet."));
    return;
  }
  const fixed = (v, d) => (v === null || v === undefined ? "" : Number(v).toFixed(d));
  const seats = Math.max(...stats.map((r) => r.games_by_seat.length));
  const kinds = Object.keys(stats[0].verdicts);
  const places = new Map((data.leaderboard.rows || []).map((r) => [r.bot, r.avg_place]));
  const table = el("table", "stats-table");
  table.id = "stats-table";
  const head = el("tr");
  const headers = ["Bot", "Games", "Fool%"];
  for (let s = 0; s < seats; s++) headers.push("Fool%@" + s);
  headers.push("AvgPlace", "Moves", "Median ms", "p99 ms", "Max ms", ...kinds, "Disqualified");
  headers.forEach((h, i) => head.append(el("th", i === 0 || i === headers.length - 1 ? "text" : "", h)));
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const r of stats) {
    const tr = el("tr", "stats-row");
    dataAttributes(tr, r);
    const cells = [r.bot, r.games, fixed(r.fool_pct, 1)];
    for (let s = 0; s < seats; s++) cells.push(fixed(r.fool_pct_by_seat[s], 1));
    cells.push(fixed(places.get(r.bot), 2), r.moves, fixed(r.move_median_ms, 2), fixed(r.move_p99_ms, 2),
      fixed(r.move_max_ms, 2), ...kinds.map((k) => r.verdicts[k]), r.disqualified || "");
    cells.forEach((c, i) => tr.append(el("td", i === 0 ? "text" : i === cells.length - 1 ? "text reason" : "", c)));
    body.append(tr);
  }
  table.append(thead, body);
  const wrap = el("div", "wide");  // scrolls sideways on its own when the columns outgrow the page
  wrap.append(table);
  section.append(wrap, el("p", "legend", "Fool%@s: the fool rate over the games the bot sat in that seat (seat 0 " +
    "is the dealer's left in the first game). Move times are every decision's, on the referee's clock; " +
    "strikes are replies after the move time but inside the grace."));
  const hist = data.move_times;
  if (!hist || !Object.keys(hist.bots).length) return;
  const box = el("div", "chart");
  const canvas = el("canvas");
  canvas.id = "move-time-chart";
  canvas.setAttribute("aria-label", "move-time distribution per bot");
  canvas.dataset.edgesMs = JSON.stringify(hist.edges_ms);
  canvas.dataset.bots = JSON.stringify(hist.bots);
  box.append(canvas);
  section.append(el("h3", "", "Move times"), box);
  const palette = ["#4a78c2", "#d1495b", "#edae49", "#00798c", "#30638e", "#66a182", "#8d6a9f", "#c45baa"];
  const labels = hist.edges_ms.slice(0, -1).map((e, i) => e + "\u2013" + hist.edges_ms[i + 1] + " ms");
  new Chart(canvas, {
    type: "bar",
    data: {
      labels,
      datasets: Object.entries(hist.bots).map(([bot, counts], i) => {
        const total = counts.reduce((a, b) => a + b, 0) || 1;
        return { label: bot, data: counts.map((c) => 100 * c / total), backgroundColor: palette[i % palette.length] };
      }),
    },
    options: { animation: false, maintainAspectRatio: false, responsive: true,
      scales: { y: { title: { display: true, text: "% of the bot's moves" } },
        x: { title: { display: true, text: "move time (each bin from its first edge up to its second)" } } } },
  });
};
